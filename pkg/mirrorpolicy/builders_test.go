package mirrorpolicy

import (
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFromImageContentSources(t *testing.T) {
	tests := []struct {
		name    string
		srcs    []hyperv1.ImageContentSource
		want    []Rule
		wantErr string
	}{
		{
			name: "When sources have mirrors, it should return digest rules named by index",
			srcs: []hyperv1.ImageContentSource{
				{Source: release, Mirrors: []string{ecrRepo}},
				{Source: artDev, Mirrors: []string{ecrRepo}},
			},
			want: []Rule{
				{Source: release, Mirrors: []string{ecrRepo}, Kind: DigestMirrors, Origin: "HostedCluster.spec.imageContentSources[0]"},
				{Source: artDev, Mirrors: []string{ecrRepo}, Kind: DigestMirrors, Origin: "HostedCluster.spec.imageContentSources[1]"},
			},
		},
		{
			name: "When an entry has no mirror other than its source, it should be skipped like runtime-utils does",
			srcs: []hyperv1.ImageContentSource{{Source: release}, {Source: artDev, Mirrors: []string{artDev}}},
		},
		{
			name:    "When a mirror is invalid, it should fail naming the entry",
			srcs:    []hyperv1.ImageContentSource{{Source: release, Mirrors: []string{ecrRepo + ":4.18"}}},
			wantErr: `HostedCluster.spec.imageContentSources[0]: source "quay.io/openshift-release-dev/ocp-release": mirror`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromImageContentSources(tt.srcs)
			if tt.wantErr != "" {
				var re *RuleError
				require.ErrorAs(t, err, &re)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestFromImageDigestMirrorSets(t *testing.T) {
	idms := func(name string, ms ...configv1.ImageDigestMirrors) configv1.ImageDigestMirrorSet {
		return configv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configv1.ImageDigestMirrorSetSpec{ImageDigestMirrors: ms}}
	}
	tests := []struct {
		name    string
		sets    []configv1.ImageDigestMirrorSet
		want    []Rule
		wantErr string
	}{
		{
			name: "When sets have mirrors and policies, it should return digest rules with NeverContactSource",
			sets: []configv1.ImageDigestMirrorSet{
				idms("cluster", configv1.ImageDigestMirrors{Source: release, Mirrors: []configv1.ImageMirror{ecrRepo}, MirrorSourcePolicy: configv1.NeverContactSource}),
				idms("extra", configv1.ImageDigestMirrors{Source: artDev, Mirrors: []configv1.ImageMirror{ecrRepo}, MirrorSourcePolicy: configv1.AllowContactingSource}),
			},
			want: []Rule{
				{Source: release, Mirrors: []string{ecrRepo}, Kind: DigestMirrors, NeverContactSource: true, Origin: "ImageDigestMirrorSet/cluster"},
				{Source: artDev, Mirrors: []string{ecrRepo}, Kind: DigestMirrors, Origin: "ImageDigestMirrorSet/extra"},
			},
		},
		{
			name: "When an entry has no mirrors, it should be skipped with its NeverContactSource (runtime-utils addMirrorSet)",
			sets: []configv1.ImageDigestMirrorSet{idms("empty", configv1.ImageDigestMirrors{Source: release, MirrorSourcePolicy: configv1.NeverContactSource})},
		},
		{
			name:    "When mirrorSourcePolicy is unknown, it should fail",
			sets:    []configv1.ImageDigestMirrorSet{idms("bad", configv1.ImageDigestMirrors{Source: release, Mirrors: []configv1.ImageMirror{ecrRepo}, MirrorSourcePolicy: "Sometimes"})},
			wantErr: `unknown mirrorSourcePolicy "Sometimes"`,
		},
		{
			name:    "When a source is a bad wildcard, it should fail naming the set",
			sets:    []configv1.ImageDigestMirrorSet{idms("bad", configv1.ImageDigestMirrors{Source: "*.example.com/ns", Mirrors: []configv1.ImageMirror{ecrRepo}})},
			wantErr: "ImageDigestMirrorSet/bad",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromImageDigestMirrorSets(tt.sets...)
			if tt.wantErr != "" {
				var re *RuleError
				require.ErrorAs(t, err, &re)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestFromImageTagMirrorSets(t *testing.T) {
	t.Run("When a set has mirrors, it should return tag rules that serve tag pulls only", func(t *testing.T) {
		rules, err := FromImageTagMirrorSets(configv1.ImageTagMirrorSet{
			ObjectMeta: metav1.ObjectMeta{Name: "tags"},
			Spec: configv1.ImageTagMirrorSetSpec{ImageTagMirrors: []configv1.ImageTagMirrors{
				{Source: "registry.redhat.io", Mirrors: []configv1.ImageMirror{"mirror.local/redhat"}, MirrorSourcePolicy: configv1.NeverContactSource},
				{Source: "registry.access.redhat.com"},
			}},
		})
		require.NoError(t, err)
		require.Equal(t, []Rule{{Source: "registry.redhat.io", Mirrors: []string{"mirror.local/redhat"}, Kind: TagMirrors, NeverContactSource: true, Origin: "ImageTagMirrorSet/tags"}}, rules)

		p := mustNew(t, rules...)
		got, err := p.Candidates("registry.redhat.io/ubi9/ubi:9.4")
		require.NoError(t, err)
		require.Equal(t, []string{"mirror.local/redhat/ubi9/ubi:9.4"}, refs(got))
		_, err = p.Candidates("registry.redhat.io/ubi9/ubi@" + digest)
		require.ErrorIs(t, err, ErrBlocked)
	})
}

func TestFromImageContentSourcePolicies(t *testing.T) {
	t.Run("When a policy has mirrors, it should return digest rules that never block the source", func(t *testing.T) {
		rules, err := FromImageContentSourcePolicies(operatorv1alpha1.ImageContentSourcePolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "release"},
			Spec: operatorv1alpha1.ImageContentSourcePolicySpec{RepositoryDigestMirrors: []operatorv1alpha1.RepositoryDigestMirrors{
				{Source: release, Mirrors: []string{ecrRepo}},
				{Source: artDev, Mirrors: []string{}},
			}},
		})
		require.NoError(t, err)
		require.Equal(t, []Rule{{Source: release, Mirrors: []string{ecrRepo}, Kind: DigestMirrors, Origin: "ImageContentSourcePolicy/release"}}, rules)
	})
	t.Run("When a mirror has a digest, it should fail naming the policy", func(t *testing.T) {
		_, err := FromImageContentSourcePolicies(operatorv1alpha1.ImageContentSourcePolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "bad"},
			Spec: operatorv1alpha1.ImageContentSourcePolicySpec{RepositoryDigestMirrors: []operatorv1alpha1.RepositoryDigestMirrors{
				{Source: release, Mirrors: []string{ecrRepo + "@" + digest}},
			}},
		})
		var re *RuleError
		require.ErrorAs(t, err, &re)
		require.Equal(t, "ImageContentSourcePolicy/bad", re.Origin)
	})
}

func TestFromOverrides(t *testing.T) {
	tests := []struct {
		name    string
		in      map[string][]string
		want    []Rule
		wantErr bool
	}{
		{
			name: "When the map has several sources, it should return digest rules sorted by source",
			in: map[string][]string{
				release:                         {ecrRepo},
				"quay.io/openshift-release-dev": {ecrHost + "/ocp4", "mirror.example.com/ocp4", ecrHost + "/ocp4"},
			},
			want: []Rule{
				{Source: "quay.io/openshift-release-dev", Mirrors: []string{ecrHost + "/ocp4", "mirror.example.com/ocp4"}, Kind: DigestMirrors, Origin: "OpenShiftImageRegistryOverrides"},
				{Source: release, Mirrors: []string{ecrRepo}, Kind: DigestMirrors, Origin: "OpenShiftImageRegistryOverrides"},
			},
		},
		{
			name: "When a source has no mirrors, it should be skipped",
			in:   map[string][]string{release: nil},
		},
		{
			name:    "When a mirror is invalid, it should fail",
			in:      map[string][]string{release: {"https://" + ecrRepo}},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromOverrides(tt.in)
			if tt.wantErr {
				var re *RuleError
				require.ErrorAs(t, err, &re)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
	t.Run("When overrides are used, it should not apply them to tag pulls (unlike HyperShift)", func(t *testing.T) {
		rules, err := FromOverrides(map[string][]string{release: {ecrRepo}})
		require.NoError(t, err)
		got, err := mustNew(t, rules...).Candidates(releaseTag)
		require.NoError(t, err)
		require.Equal(t, []string{releaseTag}, refs(got))
	})
}

func TestECRPullThroughCache(t *testing.T) {
	tests := []struct {
		name      string
		upstream  string
		prefix    string
		image     string
		want      []string
		wantError bool
	}{
		{
			name:     "When quay.io is cached, it should map a release digest under the ECR prefix",
			upstream: "quay.io", prefix: ecrHost + "/quay",
			image: releaseDig,
			want:  []string{ecrHost + "/quay/openshift-release-dev/ocp-release@" + digest, releaseDig},
		},
		{
			name:     "When quay.io is cached, it should map tag references too",
			upstream: "quay.io", prefix: ecrHost + "/quay",
			image: releaseTag,
			want:  []string{ecrHost + "/quay/openshift-release-dev/ocp-release:4.18.1-x86_64", releaseTag},
		},
		{
			name:     "When Docker Hub is cached under its ECR upstream name, it should match docker.io images with library/",
			upstream: "registry-1.docker.io", prefix: ecrHost + "/docker-hub",
			image: "nginx:1.27",
			want:  []string{ecrHost + "/docker-hub/library/nginx:1.27", "docker.io/library/nginx:1.27"},
		},
		{
			name:     "When the prefix has a tag, it should fail",
			upstream: "quay.io", prefix: ecrHost + "/quay:latest",
			wantError: true,
		},
		{
			name:     "When the upstream is a wildcard with a path, it should fail",
			upstream: "*.quay.io/x", prefix: ecrHost + "/quay",
			wantError: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ECRPullThroughCache(tt.upstream, tt.prefix)
			if tt.wantError {
				var re *RuleError
				require.ErrorAs(t, err, &re)
				return
			}
			require.NoError(t, err)
			require.Equal(t, AllMirrors, r.Kind)
			got, err := mustNew(t, r).Candidates(tt.image)
			require.NoError(t, err)
			require.Equal(t, tt.want, refs(got))
		})
	}
}

func TestECRReleaseMirror(t *testing.T) {
	t.Run("When a release is mirrored to one ECR repository, it should map release and components to it", func(t *testing.T) {
		rules, err := ECRReleaseMirror(ecrRepo)
		require.NoError(t, err)
		require.Equal(t, []Rule{
			{Source: release, Mirrors: []string{ecrRepo}, Kind: DigestMirrors, Origin: "ECRReleaseMirror/" + ecrRepo},
			{Source: artDev, Mirrors: []string{ecrRepo}, Kind: DigestMirrors, Origin: "ECRReleaseMirror/" + ecrRepo},
		}, rules)
		p := mustNew(t, rules...)
		for _, img := range []string{releaseDig, artDev + "@" + digest} {
			got, err := p.Candidates(img)
			require.NoError(t, err)
			require.Equal(t, []string{ecrRepo + "@" + digest, img}, refs(got))
		}
	})
	t.Run("When the mirror is a bare host, it should fail", func(t *testing.T) {
		_, err := ECRReleaseMirror(ecrHost)
		var re *RuleError
		require.ErrorAs(t, err, &re)
		require.Contains(t, re.Reason, "bare registry host")
	})
	t.Run("When the mirror is invalid, it should fail", func(t *testing.T) {
		_, err := ECRReleaseMirror(ecrRepo + "@" + digest)
		var re *RuleError
		require.ErrorAs(t, err, &re)
	})
}
