//go:build conformance

package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kubelet/config/v1"
	v1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
	sigsjson "sigs.k8s.io/json"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/credentialprovider"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

// pluginEnv is what a kubelet's CredentialProviderConfig would pass the
// plugin on an EC2 node with static keys and an interface VPC endpoint for
// ECR: the SDK environment only. Everything else the caller's environment
// might hold for AWS is neutralised.
func pluginEnv(t *testing.T, ecrURL string) []configv1.ExecEnvVar {
	t.Helper()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	harness.must(t, "write empty shared config", os.WriteFile(empty, nil, 0o600))
	return []configv1.ExecEnvVar{
		{Name: "AWS_ACCESS_KEY_ID", Value: testAccessKeyID},
		{Name: "AWS_SECRET_ACCESS_KEY", Value: testSecretAccessKey},
		{Name: "AWS_SESSION_TOKEN", Value: ""},
		{Name: "AWS_REGION", Value: region},
		{Name: "AWS_ENDPOINT_URL_ECR", Value: ecrURL},
		{Name: "AWS_CONFIG_FILE", Value: empty},
		{Name: "AWS_SHARED_CREDENTIALS_FILE", Value: empty},
		{Name: "AWS_PROFILE", Value: ""},
		{Name: "AWS_EC2_METADATA_DISABLED", Value: "true"},
		{Name: "HOME", Value: dir},
		{Name: "GORACE", Value: "atexit_sleep_ms=0"},
	}
}

// kubeletRequest encodes a request as the kubelet's execPlugin does: the v1
// object with its TypeMeta through encoding/json's Encoder (apimachinery's
// JSON serializer), trailing newline included.
func kubeletRequest(t *testing.T, image string) []byte {
	t.Helper()
	var b bytes.Buffer
	harness.must(t, "encode kubelet request", json.NewEncoder(&b).Encode(&v1.CredentialProviderRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: v1.SchemeGroupVersion.String(), Kind: "CredentialProviderRequest"},
		Image:    image,
	}))
	return b.Bytes()
}

// kubeletExec runs a plugin binary the way the kubelet does: the request on
// stdin, the provider's env over the inherited environment, stdout and
// stderr kept apart, killed after the kubelet's one minute.
func kubeletExec(ctx context.Context, t *testing.T, who peer, binary string, env []configv1.ExecEnvVar, request []byte) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary)
	cmd.Env = os.Environ()
	for _, e := range env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	cmd.Stdin = bytes.NewReader(request)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		// stdout holds credentials when there are any: never print it.
		t.Fatalf("%s: run as the kubelet does: %v\nstderr: %s", who, err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// kubeletDecode decodes a response as the kubelet's strict codec does
// (case-sensitive, no unknown or duplicate field, a known cacheKeyType).
func kubeletDecode(t *testing.T, who peer, data []byte) *v1.CredentialProviderResponse {
	t.Helper()
	var resp v1.CredentialProviderResponse
	strict, err := sigsjson.UnmarshalStrict(data, &resp)
	who.must(t, "decode the response as the kubelet (strict)", err)
	who.check(t, "decode the response as the kubelet (strict)", len(strict) == 0, "strict decoding errors: %v", strict)
	who.check(t, "response type", resp.APIVersion == v1.SchemeGroupVersion.String() && resp.Kind == "CredentialProviderResponse",
		"apiVersion %q kind %q", resp.APIVersion, resp.Kind)
	switch resp.CacheKeyType {
	case v1.ImagePluginCacheKeyType, v1.RegistryPluginCacheKeyType, v1.GlobalPluginCacheKeyType:
	default:
		t.Fatalf("%s: response cacheKeyType: the kubelet refuses %q", who, resp.CacheKeyType)
	}
	return &resp
}

// checkECRAnswer checks the answer both plugins must give for an ECR image
// whose token has 12 hours left: cacheKeyType Registry, the registry host as
// the only auth key, user AWS with the given password, and a cacheDuration of
// half the token's life.
func checkECRAnswer(t *testing.T, who peer, resp *v1.CredentialProviderResponse, password string) {
	t.Helper()
	who.check(t, "cacheKeyType", resp.CacheKeyType == v1.RegistryPluginCacheKeyType, "%q, want Registry", resp.CacheKeyType)
	who.check(t, "cacheDuration", resp.CacheDuration != nil &&
		resp.CacheDuration.Duration > 6*time.Hour-2*time.Minute && resp.CacheDuration.Duration <= 6*time.Hour,
		"%v, want half of the 12h token life", resp.CacheDuration)
	auth, ok := resp.Auth[registryHost]
	who.check(t, "auth entries", ok && len(resp.Auth) == 1, "%d entries, want one for %s", len(resp.Auth), registryHost)
	who.check(t, "auth entry", auth.Username == "AWS" && auth.Password == password,
		"user %q, password is not the fake ECR's latest token", auth.Username)
}

// TestRealECRCredentialProvider proves our KEP-2133 client against the real
// ecr-credential-provider: the kubelet-shaped exchange, our strict parser on
// its real answer, our PluginSource running it (its request decoded by the
// plugin's apimachinery codec) and honouring its Registry cache key, and the
// credentials it returns reading a release from docker-registry.
func TestRealECRCredentialProvider(t *testing.T) {
	ecrProvider.need(t)
	ctx := t.Context()
	reg := startRegistry(t)
	e := startECR(t, reg, fakeecr.WithRequiredAccessKeyID(testAccessKeyID))
	env := pluginEnv(t, e.URL)
	payload := buildPayload(t)

	// 1. The kubelet's exchange, decoded by the kubelet's rules and by ours.
	out := kubeletExec(ctx, t, ecrProvider, ecrProvider.path, env, kubeletRequest(t, releaseTag))
	resp := kubeletDecode(t, ecrProvider, out)
	checkECRAnswer(t, ecrProvider, resp, fakeecr.Password(region, 1))
	ours, err := credentialprovider.ParseResponse(out)
	pluginSource.with(ecrProvider).must(t, "ParseResponse of the real answer", err)
	pluginSource.with(ecrProvider).check(t, "ParseResponse of the real answer",
		ours.CacheKeyType == v1.RegistryPluginCacheKeyType && ours.CacheDuration != nil && *ours.CacheDuration == *resp.CacheDuration &&
			ours.Auth[registryHost] == resp.Auth[registryHost],
		"our parser read cacheKeyType %q cacheDuration %v, not what the kubelet reads", ours.CacheKeyType, ours.CacheDuration)
	reqs := e.Requests()
	ecrProvider.check(t, "GetAuthorizationToken signed with the environment's keys", len(reqs) == 1 && reqs[0].AccessKeyID == testAccessKeyID && reqs[0].Region == region,
		"%d calls; want one signed by %s in %s", len(reqs), testAccessKeyID, region)

	// 2. Our PluginSource runs it as the kubelet would.
	src, err := credentialprovider.NewPluginSource(ecrProvider.path, credentialprovider.WithEnv(env...))
	pluginSource.must(t, "NewPluginSource", err)
	begin := time.Now()
	cred, err := src.Credential(ctx, releaseTag)
	pluginSource.with(ecrProvider).must(t, "Credential for "+registryHost, err)
	pluginSource.with(ecrProvider).check(t, "Credential for "+registryHost,
		cred.Registry == registryHost && cred.Username == "AWS" && cred.Password == fakeecr.Password(region, 2),
		"registry %q user %q, password is not the fake ECR's second token", cred.Registry, cred.Username)
	life := cred.ExpiresAt.Sub(begin)
	pluginSource.with(ecrProvider).check(t, "cache life from cacheDuration", life > 6*time.Hour-2*time.Minute && life < 6*time.Hour+time.Minute,
		"credential cached for %v, want the plugin's cacheDuration (about 6h)", life)
	// cacheKeyType Registry: another repository of the registry is served
	// from the cache, without running the plugin (or calling ECR) again.
	cred2, err := src.Credential(ctx, registryHost+"/openshift-release-dev/ocp-v4.0-art-dev@sha256:"+fakeDigest)
	pluginSource.with(ecrProvider).must(t, "Credential for another repository", err)
	pluginSource.with(ecrProvider).check(t, "Registry cache key", cred2.Password == cred.Password && e.Calls(region) == 2,
		"%d ECR calls after two lookups in one registry, want 2 (one per plugin run)", e.Calls(region))
	_, err = src.Credential(ctx, "quay.io/openshift-release-dev/ocp-release:4.10.0-x86_64")
	pluginSource.check(t, "Credential for a host no matchImages glob covers", err != nil && isNotECR(err),
		"error %v, want one matching registryauth.ErrNotECR", err)

	// 3. Those credentials push and read a release on the real registry.
	dockerRegistry.must(t, "push the fixture release with the plugin's credentials", reg.Push(ctx, releaseTag, payload, src))
	rel, err := newReader(t, reg, src).Lookup(ctx, releaseTag)
	reader.with(dockerRegistry).must(t, "release lookup with ecr-credential-provider's credentials", err)
	checkRelease(t, reader.with(dockerRegistry), "release lookup with ecr-credential-provider's credentials", rel, payload)
	ecrProvider.check(t, "no more plugin runs", e.Calls(region) == 2, "%d ECR calls, want 2", e.Calls(region))
}

// fakeDigest is a syntactically valid digest for lookups that never fetch.
const fakeDigest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestServeAsKubeletPlugin proves our plugin side, credentialprovider.Serve
// in a binary (this test binary re-executed), against the kubelet's protocol
// and against the real plugin: given the same kubelet request and the same
// SDK environment, both answer with the same cacheKeyType, auth key and
// cacheDuration (within seconds), decoded with the kubelet's own types, and
// our answer opens the real registry.
func TestServeAsKubeletPlugin(t *testing.T) {
	ctx := t.Context()
	reg := startRegistry(t)
	e := startECR(t, reg, fakeecr.WithRequiredAccessKeyID(testAccessKeyID))
	env := pluginEnv(t, e.URL)
	self, err := os.Executable()
	harness.must(t, "find the test binary", err)
	ourEnv := append(env, configv1.ExecEnvVar{Name: envPluginMode, Value: "serve"})

	var real *v1.CredentialProviderResponse
	if ecrProvider.missing == nil {
		real = kubeletDecode(t, ecrProvider, kubeletExec(ctx, t, ecrProvider, ecrProvider.path, env, kubeletRequest(t, releaseTag)))
		checkECRAnswer(t, ecrProvider, real, fakeecr.Password(region, 1))
	} else {
		t.Errorf("%s: locate: %v (the comparison with the real plugin is skipped)", ecrProvider.name, ecrProvider.missing)
	}

	resp := kubeletDecode(t, serve, kubeletExec(ctx, t, serve, self, ourEnv, kubeletRequest(t, releaseTag)))
	password := fakeecr.Password(region, e.Calls(region))
	checkECRAnswer(t, serve, resp, password)
	if real != nil {
		d := resp.CacheDuration.Duration - real.CacheDuration.Duration
		serve.with(ecrProvider).check(t, "same answer as the real plugin",
			resp.CacheKeyType == real.CacheKeyType && len(resp.Auth) == len(real.Auth) && d > -10*time.Second && d < 10*time.Second,
			"cacheKeyType %q vs %q, cacheDuration %v vs %v", resp.CacheKeyType, real.CacheKeyType, resp.CacheDuration, real.CacheDuration)
	}
	reqs := e.Requests()
	serve.with(awsSDK).check(t, "GetAuthorizationToken signed with the environment's keys", reqs[len(reqs)-1].AccessKeyID == testAccessKeyID,
		"access key id %q", reqs[len(reqs)-1].AccessKeyID)

	status, err := reg.Ping(ctx, resp.Auth[registryHost].Username, resp.Auth[registryHost].Password)
	dockerRegistry.must(t, "/v2/ with the credentials Serve answered", err)
	dockerRegistry.check(t, "/v2/ with the credentials Serve answered", status == http.StatusOK, "status %d, want 200", status)

	// Not ECR: a valid, empty answer that the kubelet caches, and no ECR call.
	calls := e.Calls(region)
	empty := kubeletDecode(t, serve, kubeletExec(ctx, t, serve, self, ourEnv, kubeletRequest(t, "quay.io/openshift-release-dev/ocp-release:4.10.0-x86_64")))
	serve.check(t, "answer for a registry that is not ECR", len(empty.Auth) == 0 && empty.CacheDuration != nil &&
		empty.CacheDuration.Duration == credentialprovider.DefaultNotECRCacheDuration && e.Calls(region) == calls,
		"%d auth entries, cacheDuration %v, %d ECR calls; want none, %v, none", len(empty.Auth), empty.CacheDuration, e.Calls(region)-calls, credentialprovider.DefaultNotECRCacheDuration)

	// And our client reads our server: PluginSource over the Serve binary.
	src, err := credentialprovider.NewPluginSource(self, credentialprovider.WithEnv(ourEnv...))
	pluginSource.must(t, "NewPluginSource over Serve", err)
	cred, err := src.Credential(ctx, releaseTag)
	pluginSource.with(serve).must(t, "Credential", err)
	status, err = reg.Ping(ctx, cred.Username, cred.Password)
	dockerRegistry.must(t, "/v2/ with PluginSource's credentials from Serve", err)
	dockerRegistry.check(t, "/v2/ with PluginSource's credentials from Serve", status == http.StatusOK, "status %d, want 200", status)
}

func isNotECR(err error) bool {
	return errors.Is(err, registryauth.ErrNotECR)
}
