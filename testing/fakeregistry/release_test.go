package fakeregistry_test

import (
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

func TestMirrorRelease(t *testing.T) {
	t.Parallel()
	const (
		componentRepo = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"
		mirrorRepo    = ecrHost + "/ocp4/openshift4"
	)
	p := buildPayload(t, releasepayload.WithVersion("4.10.3"), releasepayload.WithComponents(componentRepo))
	quay := fakeregistry.New(t, fakeregistry.WithHost("quay.io"), fakeregistry.WithAnonymous())
	ecr := fakeregistry.New(t)
	opts := []remote.Option{remote.WithAuthFromKeychain(staticKeychain{ecrHost: ecr.Auth()}),
		remote.WithTransport(fakeregistry.Transport(quay, ecr))}
	digestOf := func(t *testing.T, ref string) string {
		t.Helper()
		n, err := name.ParseReference(ref)
		require.NoError(t, err)
		desc, err := remote.Head(n, append(opts, remote.WithContext(t.Context()))...)
		require.NoError(t, err)
		return desc.Digest.String()
	}

	published, err := fakeregistry.MirrorRelease(t.Context(), quay, nil, p)
	require.NoError(t, err)
	digest := digestOf(t, "quay.io/openshift-release-dev/ocp-release:4.10.3-x86_64")
	t.Run("When no mirror is given, it should publish the release and its components on the source only", func(t *testing.T) {
		require.Equal(t, "quay.io/openshift-release-dev/ocp-release@"+digest, published.Release)
		require.Empty(t, published.Mirror)
		require.Len(t, published.Components, len(p.Components))
		for _, tag := range p.ImageStream.Spec.Tags {
			require.Equal(t, tag.From.Name, published.Components[tag.Name])
			require.Equal(t, strings.TrimPrefix(tag.From.Name, componentRepo+"@"), digestOf(t, tag.From.Name))
		}
		_, _, err := pullImage(t, mirrorRepo+":4.10.3-x86_64", opts...)
		require.Equal(t, 404, statusOf(err), "nothing is mirrored yet: %v", err)
	})

	mirrored, err := fakeregistry.MirrorRelease(t.Context(), quay, ecr, p)
	require.NoError(t, err)
	t.Run("When a mirror is given, it should copy everything into one repository as oc adm release mirror does", func(t *testing.T) {
		require.Equal(t, published.Release, mirrored.Release, "publishing again changes nothing")
		require.Equal(t, mirrorRepo+"@"+digest, mirrored.Mirror)
		require.Equal(t, digest, digestOf(t, mirrorRepo+":4.10.3-x86_64"))
		require.Len(t, mirrored.Components, len(p.Components))
		for tag, src := range published.Components {
			d := strings.TrimPrefix(src, componentRepo+"@")
			require.Equal(t, mirrorRepo+"@"+d, mirrored.Components[tag], "digests are kept")
			require.Equal(t, d, digestOf(t, mirrorRepo+":4.10.3-x86_64-"+tag), "oc's component tag")
		}
		_, _, err := pullImage(t, mirrored.Components["cli"], opts...)
		require.NoError(t, err)
	})

	t.Run("When the release is a manifest list and the places are named, it should use them", func(t *testing.T) {
		multi := buildPayload(t, releasepayload.WithVersion("4.10.3"), releasepayload.WithArchitectures("amd64", "arm64"))
		m, err := fakeregistry.MirrorRelease(t.Context(), quay, ecr, multi,
			fakeregistry.PublishAs("quay.io/openshift-release-dev/ocp-release:4.10.3-multi"), fakeregistry.MirrorTo(ecrHost+"/mirror/release"))
		require.NoError(t, err)
		d, err := multi.Index.Digest()
		require.NoError(t, err)
		require.Equal(t, "quay.io/openshift-release-dev/ocp-release@"+d.String(), m.Release)
		require.Equal(t, ecrHost+"/mirror/release@"+d.String(), m.Mirror)
		require.Equal(t, d.String(), digestOf(t, ecrHost+"/mirror/release:4.10.3-multi"))
		require.Empty(t, m.Components)
	})

	t.Run("When the release cannot be named, it should refuse", func(t *testing.T) {
		_, err := fakeregistry.MirrorRelease(t.Context(), quay, ecr, buildPayload(t, releasepayload.WithoutImageReferences()))
		require.ErrorContains(t, err, "PublishAs")
		_, err = fakeregistry.MirrorRelease(t.Context(), quay, ecr, p, fakeregistry.PublishAs(published.Release))
		require.ErrorContains(t, err, "tag")
		_, err = fakeregistry.MirrorRelease(t.Context(), quay, ecr, p, fakeregistry.PublishAs(ecrHost+"/ocp-release:4.10.3"))
		require.ErrorContains(t, err, "not on a host of this registry")
	})
}
