package nodeconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	credentialproviderv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
)

// The test binary doubles as the kubelet credential provider plugin the
// helper runs: with fakePluginEnv set it reads a CredentialProviderRequest
// on stdin and answers like ecr-credential-provider, shaped by the mode.
const (
	fakePluginEnv      = "NODECONFIG_FAKE_PLUGIN"       // the mode
	fakePluginLogEnv   = "NODECONFIG_FAKE_PLUGIN_LOG"   // a file to append each request's image to
	fakePluginCacheEnv = "NODECONFIG_FAKE_PLUGIN_CACHE" // cacheDuration; "none" leaves it out
	fakePluginSleepEnv = "NODECONFIG_FAKE_PLUGIN_SLEEP" // a delay before answering
	// fakeToken is what the fake plugin hands out: the password part of an
	// ECR authorization token.
	fakeToken = "eyJwYXlsb2FkIjoiZmFrZS1lY3ItdG9rZW4tZm9yLXRlc3RzIiwidmVyc2lvbiI6IjIifQ=="
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakePluginEnv); mode != "" {
		os.Exit(fakePlugin(mode))
	}
	os.Exit(m.Run())
}

func fakePlugin(mode string) int {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		return 2
	}
	var req credentialproviderv1.CredentialProviderRequest
	if err := json.Unmarshal(data, &req); err != nil || req.APIVersion != pluginAPIVersion ||
		req.Kind != "CredentialProviderRequest" || req.Image == "" {
		fmt.Fprintln(os.Stderr, "fake plugin: bad request")
		return 3
	}
	if log := os.Getenv(fakePluginLogEnv); log != "" {
		f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return 4
		}
		fmt.Fprintln(f, req.Image)
		f.Close()
	}
	if d, err := time.ParseDuration(os.Getenv(fakePluginSleepEnv)); err == nil {
		time.Sleep(d)
	}
	// ecr-credential-provider keys the answer by the host of the image.
	host, _, _ := strings.Cut(req.Image, "/")
	resp := credentialproviderv1.CredentialProviderResponse{
		TypeMeta:     metav1.TypeMeta{APIVersion: pluginAPIVersion, Kind: "CredentialProviderResponse"},
		CacheKeyType: credentialproviderv1.RegistryPluginCacheKeyType,
		Auth:         map[string]credentialproviderv1.AuthConfig{host: {Username: "AWS", Password: fakeToken}},
	}
	switch c := os.Getenv(fakePluginCacheEnv); c {
	case "none":
	case "":
		resp.CacheDuration = &metav1.Duration{Duration: 6 * time.Hour}
	default:
		d, err := time.ParseDuration(c)
		if err != nil {
			return 5
		}
		resp.CacheDuration = &metav1.Duration{Duration: d}
	}
	var out []byte
	switch mode {
	case "ok":
		out, _ = json.Marshal(resp)
		out = append(out, '\n')
	case "pretty":
		// Indented, keys in another order, unknown fields, a glob entry
		// that must lose to the exact host.
		out = fmt.Appendf(nil, "{\n  \"auth\" : {\n    \"*.dkr.ecr.*.amazonaws.com\": {\"username\": \"other\", \"password\": \"other\"},\n"+
			"    %q : {\n      \"password\" : %q,\n      \"username\" : \"AWS\",\n      \"extra\": [1, 2.5e3, {\"a\": null}, true]\n    }\n  },\n"+
			"  \"cacheKeyType\": \"Registry\",\r\n  \"apiVersion\": %q,\n  \"kind\": \"CredentialProviderResponse\"\n}\n",
			host, fakeToken, pluginAPIVersion)
	case "glob":
		resp.Auth = map[string]credentialproviderv1.AuthConfig{"*.dkr.ecr.*.amazonaws.com": {Username: "AWS", Password: fakeToken}}
		out, _ = json.Marshal(resp)
	case "escaped":
		resp.Auth[host] = credentialproviderv1.AuthConfig{Username: "AWS", Password: `a"b\c<d>&e/é` + "\u2028"}
		out, _ = json.Marshal(resp)
	case "fail":
		fmt.Fprintln(os.Stderr, "E0101 error running credential provider plugin: AccessDeniedException: not authorized to perform ecr:GetAuthorizationToken")
		return 1
	case "garbage":
		out = []byte("this is not JSON\n")
	case "truncated":
		out, _ = json.Marshal(resp)
		out = out[:len(out)-5]
	case "trailing":
		out, _ = json.Marshal(resp)
		out = append(out, " {}"...)
	case "wrongkind":
		resp.Kind = "CredentialProviderRequest"
		out, _ = json.Marshal(resp)
	case "wrongversion":
		resp.APIVersion = "credentialprovider.kubelet.k8s.io/v1beta1"
		out, _ = json.Marshal(resp)
	case "otherhost":
		resp.Auth = map[string]credentialproviderv1.AuthConfig{"210987654321.dkr.ecr.us-east-1.amazonaws.com": {Username: "AWS", Password: fakeToken}}
		out, _ = json.Marshal(resp)
	case "emptypassword":
		resp.Auth[host] = credentialproviderv1.AuthConfig{Username: "AWS"}
		out, _ = json.Marshal(resp)
	case "noauth":
		resp.Auth = nil
		out, _ = json.Marshal(resp)
	case "huge":
		resp.Auth["padding.example.com"] = credentialproviderv1.AuthConfig{Username: "x", Password: strings.Repeat("A", 70000)}
		out, _ = json.Marshal(resp)
	case "nul":
		// A NUL in a key: the kubelet refuses it; bash would silently drop
		// it from a captured answer, so the helper must refuse it first.
		out, _ = json.Marshal(resp)
		out = bytes.Replace(out, []byte(`"kind"`), []byte("\"\x00\":\"\",\"kind\""), 1)
	case "silent":
		return 0
	default:
		return 6
	}
	os.Stdout.Write(out)
	return 0
}
