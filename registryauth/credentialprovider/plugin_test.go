package credentialprovider_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kubelet/config/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/credentialprovider"
)

const (
	imageA     = "123456789012.dkr.ecr.us-east-1.amazonaws.com/team-a/app"
	imageB     = "123456789012.dkr.ecr.us-east-1.amazonaws.com/team-b/app"
	imageC     = "210987654321.dkr.ecr.eu-west-1.amazonaws.com/team-c/app"
	registryA  = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	releaseRef = "123456789012.dkr.ecr.us-east-1.amazonaws.com/openshift/release:4.18.0-x86_64@sha256:6b3b1a8b2d2a2b1f0c9b1d6a7e1f1f6a4f0e1c2d3b4a5968778695a4b3c2d1e0"
)

func TestPluginSourceRequest(t *testing.T) {
	t.Parallel()
	p := newTestPlugin(t)
	src := p.source(modeGood, map[string]string{envPassword: "pw-request", "TESTPLUGIN_EXTRA": "from-config"},
		credentialprovider.WithArgs("get-credentials", "--v=2"))

	cred, err := src.Credential(t.Context(), releaseRef)
	require.NoError(t, err)
	require.Equal(t, registryauth.Credential{
		Registry:  registryA,
		Username:  "AWS",
		Password:  "pw-request",
		ExpiresAt: cred.ExpiresAt,
	}, cred)

	runs := p.runs()
	require.Len(t, runs, 1)
	// Byte for byte what the kubelet writes: the repository without tag or
	// digest, no service account fields, a trailing newline.
	require.Equal(t, `{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"123456789012.dkr.ecr.us-east-1.amazonaws.com/openshift/release"}`+"\n", runs[0].Request)
	require.Equal(t, []string{"get-credentials", "--v=2"}, runs[0].Args)
	require.Equal(t, "from-config", runs[0].Env)
	require.True(t, runs[0].HasPath, "the plugin should inherit the environment")
}

func TestPluginSourceCacheKeyType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		keyType  string
		authKey  string
		images   []string
		wantRuns int
	}{
		{
			name:     "When the plugin answers per image, it should run once per repository",
			keyType:  "Image",
			images:   []string{imageA, imageA + ":v2", imageA + "@sha256:6b3b1a8b2d2a2b1f0c9b1d6a7e1f1f6a4f0e1c2d3b4a5968778695a4b3c2d1e0", imageB, imageC},
			wantRuns: 3,
		},
		{
			name:     "When the plugin answers per registry, it should run once per registry",
			keyType:  "Registry",
			images:   []string{imageA, imageB, registryA, imageC},
			wantRuns: 2,
		},
		{
			name:     "When the plugin answers globally, it should run once for every image",
			keyType:  "Global",
			authKey:  "*.dkr.ecr.*.amazonaws.com",
			images:   []string{imageA, imageB, imageC},
			wantRuns: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newTestPlugin(t)
			env := map[string]string{envPassword: "pw-keytype", envCacheKeyType: tc.keyType, envCacheDuration: "1h"}
			if tc.authKey != "" {
				env[envAuthKey] = tc.authKey
			}
			src := p.source(modeGood, env)
			for _, img := range tc.images {
				cred, err := src.Credential(t.Context(), img)
				require.NoError(t, err, img)
				require.Equal(t, "pw-keytype", cred.Password)
			}
			require.Len(t, p.runs(), tc.wantRuns)
		})
	}
}

func TestPluginSourceCacheDuration(t *testing.T) {
	t.Parallel()
	type step struct {
		advance  time.Duration
		wantRuns int
	}
	tests := []struct {
		name          string
		cacheDuration string // empty: the response has none
		opts          []credentialprovider.Option
		steps         []step
		wantExpiresIn time.Duration // of the first answer
	}{
		{
			name:          "When the response sets a cacheDuration, it should serve the cache until it lapses",
			cacheDuration: "1h0m0s",
			steps:         []step{{0, 1}, {59 * time.Minute, 1}, {2 * time.Minute, 2}},
			wantExpiresIn: time.Hour,
		},
		{
			name:          "When the response has no cacheDuration, it should cache for the default cache duration",
			opts:          []credentialprovider.Option{credentialprovider.WithDefaultCacheDuration(10 * time.Minute)},
			steps:         []step{{0, 1}, {9 * time.Minute, 1}, {2 * time.Minute, 2}},
			wantExpiresIn: 10 * time.Minute,
		},
		{
			name:          "When the response's cacheDuration is 0, it should not cache, as the kubelet does not",
			cacheDuration: "0s",
			opts:          []credentialprovider.Option{credentialprovider.WithDefaultCacheDuration(time.Hour)},
			steps:         []step{{0, 1}, {0, 2}, {time.Second, 3}},
		},
		{
			name:  "When the response has no cacheDuration and the default is 0, it should not cache",
			opts:  []credentialprovider.Option{credentialprovider.WithDefaultCacheDuration(0)},
			steps: []step{{0, 1}, {0, 2}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
			clk := clocktesting.NewFakePassiveClock(start)
			p := newTestPlugin(t)
			env := map[string]string{envPassword: "pw-duration"}
			if tc.cacheDuration != "" {
				env[envCacheDuration] = tc.cacheDuration
			}
			src := p.source(modeGood, env, append(tc.opts, credentialprovider.WithClock(clk))...)
			for i, s := range tc.steps {
				clk.SetTime(clk.Now().Add(s.advance))
				cred, err := src.Credential(t.Context(), imageA)
				require.NoError(t, err)
				require.Len(t, p.runs(), s.wantRuns, "step %d", i)
				if i == 0 {
					require.Equal(t, start.Add(tc.wantExpiresIn), cred.ExpiresAt)
				}
			}
		})
	}
}

func TestPluginSourceConcurrency(t *testing.T) {
	t.Parallel()
	p := newTestPlugin(t)
	src := p.source(modeGood, map[string]string{envPassword: "pw-concurrent", envDelay: "300ms", envCacheDuration: "1h"})
	const callers = 16
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			cred, err := src.Credential(context.Background(), imageA+":latest")
			if err == nil && cred.Password != "pw-concurrent" {
				err = fmt.Errorf("got another password")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, p.runs(), 1, "concurrent calls for one image should share one run")
}

func TestPluginSourceCallerGivesUp(t *testing.T) {
	t.Parallel()
	p := newTestPlugin(t)
	src := p.source(modeGood, map[string]string{envPassword: "pw-late", envDelay: "500ms", envCacheDuration: "1h"})

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_, err := src.Credential(ctx, imageA)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(begin), 400*time.Millisecond, "the caller should not wait for the plugin")

	// The run went on and serves the next caller (joining it or from cache).
	cred, err := src.Credential(t.Context(), imageA)
	require.NoError(t, err)
	require.Equal(t, "pw-late", cred.Password)
	require.Len(t, p.runs(), 1)
}

func TestPluginSourceNotMine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		mode           string
		env            map[string]string
		opts           []credentialprovider.Option
		image          string
		wantRuns       int
		wantNotMatched bool
	}{
		{
			name:           "When the image is not ECR, it should not run the plugin",
			image:          "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64",
			wantNotMatched: true,
		},
		{
			name:           "When the host only ends like ECR, it should not run the plugin",
			image:          "123456789012.dkr.ecr.us-east-1.amazonaws.com.attacker.example/app",
			wantNotMatched: true,
		},
		{
			name:           "When the image lacks the port a glob names, it should not run the plugin",
			opts:           []credentialprovider.Option{credentialprovider.WithMatchImages("registry.example.com:5000/team")},
			image:          "registry.example.com/team/app",
			wantNotMatched: true,
		},
		{
			name:           "When the image is outside the glob's path, it should not run the plugin",
			opts:           []credentialprovider.Option{credentialprovider.WithMatchImages("registry.example.com:5000/team")},
			image:          "registry.example.com:5000/other/app",
			wantNotMatched: true,
		},
		{
			name:     "When the plugin answers without auth, it should report no credentials",
			mode:     modeEmpty,
			image:    imageA,
			wantRuns: 1,
		},
		{
			name:     "When no auth key matches the image, it should report no credentials",
			env:      map[string]string{envAuthKey: "*.dkr.ecr.*.amazonaws.com.cn"},
			image:    imageA,
			wantRuns: 1,
		},
		{
			name:     "When an auth key names another path, it should report no credentials",
			env:      map[string]string{envAuthKey: registryA + "/team-b"},
			image:    imageA,
			wantRuns: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newTestPlugin(t)
			mode := tc.mode
			if mode == "" {
				mode = modeGood
			}
			env := map[string]string{envPassword: "pw-not-mine"}
			for k, v := range tc.env {
				env[k] = v
			}
			_, err := p.source(mode, env, tc.opts...).Credential(t.Context(), tc.image)
			require.ErrorIs(t, err, registryauth.ErrNotECR)
			var nc *credentialprovider.NoCredentialsError
			require.ErrorAs(t, err, &nc)
			require.Equal(t, tc.wantNotMatched, nc.NotMatched)
			require.Len(t, p.runs(), tc.wantRuns)
			require.NotContains(t, err.Error(), "pw-not-mine")
		})
	}
}

func TestPluginSourceMatchImages(t *testing.T) {
	t.Parallel()
	p := newTestPlugin(t)
	src := p.source(modeGood, map[string]string{envPassword: "pw-match", envAuthKey: "registry.example.com:5000/team"},
		credentialprovider.WithMatchImages("registry.example.com:5000/team", "*.dkr.ecr.*.amazonaws.com"))
	cred, err := src.Credential(t.Context(), "registry.example.com:5000/team/app:1.0")
	require.NoError(t, err)
	require.Equal(t, "registry.example.com:5000", cred.Registry)
	require.Equal(t, "pw-match", cred.Password)
}

func TestPluginSourceFailures(t *testing.T) {
	t.Parallel()
	const password = "pw-failure-0001"
	tests := []struct {
		name         string
		mode         string
		opts         []credentialprovider.Option
		wantKind     error
		wantExitCode int
		wantStderr   []string
	}{
		{
			name:         "When the plugin exits non-zero, it should report the exit code and redacted stderr",
			mode:         modeFail,
			wantKind:     credentialprovider.ErrPluginFailed,
			wantExitCode: 3,
			wantStderr:   []string{"ThrottlingException: rate exceeded", `"password":<redacted>`, "raw token <redacted>"},
		},
		{
			name:         "When the plugin writes broken JSON, it should report a malformed response",
			mode:         modeMalformed,
			wantKind:     credentialprovider.ErrMalformedResponse,
			wantExitCode: 0,
		},
		{
			name:         "When the plugin answers another apiVersion, it should report a malformed response naming it",
			mode:         modeWrongVersion,
			wantKind:     credentialprovider.ErrMalformedResponse,
			wantExitCode: 0,
		},
		{
			name:         "When the plugin hangs, it should kill it at the timeout",
			mode:         modeHang,
			opts:         []credentialprovider.Option{credentialprovider.WithTimeout(300 * time.Millisecond)},
			wantKind:     credentialprovider.ErrPluginTimeout,
			wantExitCode: -1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newTestPlugin(t)
			src := p.source(tc.mode, map[string]string{envPassword: password, envCacheDuration: "1h"}, tc.opts...)
			begin := time.Now()
			_, err := src.Credential(t.Context(), imageA)
			require.Less(t, time.Since(begin), 10*time.Second)
			require.ErrorIs(t, err, tc.wantKind)
			var perr *credentialprovider.PluginError
			require.ErrorAs(t, err, &perr)
			require.Equal(t, tc.wantExitCode, perr.ExitCode)
			require.Equal(t, filepath.Base(p.path), perr.Plugin)
			for _, s := range tc.wantStderr {
				require.Contains(t, perr.Stderr, s)
			}
			for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", perr)} {
				require.NotContains(t, text, password)
				require.NotContains(t, text, ecrLikePassword)
			}

			// Failures are not cached: the next call runs the plugin again.
			_, err = src.Credential(t.Context(), imageA)
			require.ErrorIs(t, err, tc.wantKind)
			require.Len(t, p.runs(), 2)
		})
	}
}

func TestPluginSourceRedactsCachedPasswords(t *testing.T) {
	t.Parallel()
	// A plain password no pattern would catch: only knowing it redacts it.
	const password = "plainlowercasepassword"
	p := newTestPlugin(t)
	modeFile := filepath.Join(t.TempDir(), "mode")
	require.NoError(t, os.WriteFile(modeFile, []byte(modeGood), 0o600))
	src := p.source("file:"+modeFile, map[string]string{envPassword: password, envCacheKeyType: "Image", envCacheDuration: "1h", envPrintBare: "1"})

	_, err := src.Credential(t.Context(), imageA)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(modeFile, []byte(modeFail), 0o600))
	_, err = src.Credential(t.Context(), imageB)
	require.ErrorIs(t, err, credentialprovider.ErrPluginFailed)
	require.NotContains(t, err.Error(), password)
	require.Contains(t, err.Error(), "cached <redacted>")
}

func TestNewPluginSource(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	require.NoError(t, err)
	notExecutable := filepath.Join(t.TempDir(), "ecr-credential-provider")
	require.NoError(t, os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o600))
	tests := []struct {
		name string
		path string
		opts []credentialprovider.Option
	}{
		{name: "When the binary does not exist, it should fail at once", path: filepath.Join(t.TempDir(), "missing")},
		{name: "When the binary is not executable, it should fail at once", path: notExecutable},
		{name: "When the path is empty, it should fail", path: ""},
		{name: "When the timeout is zero, it should fail", path: exe, opts: []credentialprovider.Option{credentialprovider.WithTimeout(0)}},
		{name: "When matchImages is empty, it should fail", path: exe, opts: []credentialprovider.Option{credentialprovider.WithMatchImages()}},
		{name: "When an env name holds '=', it should fail", path: exe, opts: []credentialprovider.Option{credentialprovider.WithEnv(configv1.ExecEnvVar{Name: "A=B", Value: "c"})}},
		{name: "When the default cache duration is negative, it should fail", path: exe, opts: []credentialprovider.Option{credentialprovider.WithDefaultCacheDuration(-time.Second)}},
		{name: "When the config names another apiVersion, it should fail", path: exe, opts: []credentialprovider.Option{credentialprovider.FromConfig(configv1.CredentialProvider{Name: "ecr-credential-provider", APIVersion: "credentialprovider.kubelet.k8s.io/v1beta1", MatchImages: []string{"*.dkr.ecr.*.amazonaws.com"}})}},
		{name: "When the config asks for service account tokens, it should fail", path: exe, opts: []credentialprovider.Option{credentialprovider.FromConfig(configv1.CredentialProvider{Name: "ecr-credential-provider", APIVersion: credentialprovider.APIVersion, MatchImages: []string{"*.dkr.ecr.*.amazonaws.com"}, TokenAttributes: &configv1.ServiceAccountTokenAttributes{ServiceAccountTokenAudience: "sts.amazonaws.com"}})}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := credentialprovider.NewPluginSource(tc.path, tc.opts...)
			require.Error(t, err)
		})
	}
}

func TestFromConfig(t *testing.T) {
	t.Parallel()
	p := newTestPlugin(t)
	// The OpenShift MCO's entry for ecr-credential-provider, pointed at the
	// test plugin.
	cfg := configv1.CredentialProvider{
		Name:                 "ecr-credential-provider",
		APIVersion:           credentialprovider.APIVersion,
		MatchImages:          []string{"*.dkr.ecr.*.amazonaws.com", "*.dkr.ecr.*.amazonaws.com.cn", "*.dkr.ecr-fips.*.amazonaws.com"},
		DefaultCacheDuration: &metav1.Duration{Duration: 12 * time.Hour},
		Args:                 []string{"get-credentials"},
		Env: []configv1.ExecEnvVar{
			{Name: envMode, Value: modeGood},
			{Name: envRecord, Value: p.record},
			{Name: envPassword, Value: "pw-config"},
			noRaceExitSleep,
		},
	}
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC))
	src, err := credentialprovider.NewPluginSource(p.path, credentialprovider.FromConfig(cfg), credentialprovider.WithClock(clk))
	require.NoError(t, err)

	cred, err := src.Credential(t.Context(), imageA)
	require.NoError(t, err)
	require.Equal(t, clk.Now().Add(12*time.Hour), cred.ExpiresAt, "no cacheDuration: the config's default applies")
	_, err = src.Credential(t.Context(), "123456789012.dkr-ecr.us-east-1.on.aws/app")
	require.ErrorIs(t, err, registryauth.ErrNotECR, "dual-stack hosts are not in this matchImages")
	runs := p.runs()
	require.Len(t, runs, 1)
	require.Equal(t, []string{"get-credentials"}, runs[0].Args)
}
