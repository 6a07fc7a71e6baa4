package credentialprovider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/require"
	configv1 "k8s.io/kubelet/config/v1"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/credentialprovider"
)

// The test binary doubles as the plugin: run with envMode set it answers
// one request and exits, so no toolchain call is needed to build a plugin.
const (
	envMode          = "TESTPLUGIN_MODE"           // a mode, or "file:<path>" of a file naming it
	envRecord        = "TESTPLUGIN_RECORD"         // file each run appends a record line to
	envPassword      = "TESTPLUGIN_PASSWORD"       // password to answer
	envCacheKeyType  = "TESTPLUGIN_CACHE_KEY_TYPE" // default Registry
	envCacheDuration = "TESTPLUGIN_CACHE_DURATION" // Go duration; unset: no cacheDuration
	envAuthKey       = "TESTPLUGIN_AUTH_KEY"       // default: the image's registry
	envDelay         = "TESTPLUGIN_DELAY"          // sleep before answering
	envECREndpoint   = "TESTPLUGIN_ECR_ENDPOINT"   // serve mode: fake ECR URL
	envPrintBare     = "TESTPLUGIN_PRINT_BARE"     // fail mode: print the password bare too
)

// Plugin modes.
const (
	modeGood         = "good"
	modeEmpty        = "empty"         // valid answer without auth
	modeMalformed    = "malformed"     // JSON cut short, password inside
	modeWrongVersion = "wrong-version" // a v1beta1 answer
	modeFail         = "fail"          // exit 3, secrets on stderr
	modeHang         = "hang"          // never answers
	modeServe        = "serve"         // credentialprovider.Serve over a Keychain
)

// ecrLikePassword is shaped like a real ECR password (base64 of a JSON
// blob), so that redaction is tested against what it will meet.
const ecrLikePassword = "eyJwYXlsb2FkIjoiMTIzNDU2Nzg5MGFiY2RlZiIsImRhdGFrZXkiOiJBUUVCQUhoK2RTNk5xT2k9In0="

func TestMain(m *testing.M) {
	if mode := os.Getenv(envMode); mode != "" {
		os.Exit(runPlugin(mode))
	}
	os.Exit(m.Run())
}

// record is what one plugin run saw.
type record struct {
	Args    []string `json:"args"`
	Request string   `json:"request"`
	Env     string   `json:"env"` // TESTPLUGIN_EXTRA, to prove env options
	HasPath bool     `json:"hasPath"`
}

func runPlugin(mode string) int {
	if path, ok := strings.CutPrefix(mode, "file:"); ok {
		// The test switches behaviour between runs through the file.
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		mode = strings.TrimSpace(string(b))
	}
	stdin, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if path := os.Getenv(envRecord); path != "" {
		line, _ := json.Marshal(record{Args: os.Args[1:], Request: string(stdin), Env: os.Getenv("TESTPLUGIN_EXTRA"), HasPath: os.Getenv("PATH") != ""})
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		_, _ = f.Write(append(line, '\n')) // one O_APPEND write: atomic between runs
		_ = f.Close()
	}
	if d, err := time.ParseDuration(os.Getenv(envDelay)); err == nil {
		time.Sleep(d)
	}
	var req struct {
		Image string `json:"image"`
	}
	_ = json.Unmarshal(stdin, &req)
	password := os.Getenv(envPassword)

	switch mode {
	case modeHang:
		time.Sleep(time.Hour)
		return 0
	case modeFail:
		fmt.Fprintf(os.Stderr, "E0101 ecr-credential-provider: ThrottlingException: rate exceeded\n")
		fmt.Fprintf(os.Stderr, "debug: last answer {\"username\":\"AWS\",\"password\":%q}\n", password)
		fmt.Fprintf(os.Stderr, "debug: raw token %s\n", ecrLikePassword)
		if os.Getenv(envPrintBare) != "" {
			fmt.Fprintf(os.Stderr, "debug: cached %s\n", password)
		}
		return 3
	case modeMalformed:
		fmt.Printf(`{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderResponse","auth":{"x":{"password":%q`, password)
		return 0
	case modeServe:
		return serveMode(stdin)
	}

	resp := map[string]any{
		"apiVersion":   credentialprovider.APIVersion,
		"kind":         "CredentialProviderResponse",
		"cacheKeyType": envOr(envCacheKeyType, "Registry"),
	}
	if mode == modeWrongVersion {
		resp["apiVersion"] = "credentialprovider.kubelet.k8s.io/v1beta1"
	}
	if d := os.Getenv(envCacheDuration); d != "" {
		resp["cacheDuration"] = d
	}
	if mode != modeEmpty {
		key := envOr(envAuthKey, strings.SplitN(req.Image, "/", 2)[0])
		resp["auth"] = map[string]any{key: map[string]string{"username": "AWS", "password": password}}
	}
	_ = json.NewEncoder(os.Stdout).Encode(resp)
	return 0
}

// serveMode is a plugin binary's whole main: a Keychain over the real SDK
// talking to the parent test's fake ECR, and Serve.
func serveMode(stdin []byte) int {
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""),
		Retryer:     func() aws.Retryer { return aws.NopRetryer{} },
	}
	kc, err := registryauth.NewKeychain(registryauth.WithAWSConfig(cfg, registryauth.WithEndpoint(os.Getenv(envECREndpoint))))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer kc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := credentialprovider.Serve(ctx, kc, strings.NewReader(string(stdin)), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// noRaceExitSleep spares each run of a -race test binary the race
// runtime's one-second sleep at a zero exit.
var noRaceExitSleep = configv1.ExecEnvVar{Name: "GORACE", Value: "atexit_sleep_ms=0"}

// testPlugin runs this test binary as a plugin in mode, recording each run
// in a file of the test's temp dir.
type testPlugin struct {
	t      testing.TB
	path   string
	record string
}

func newTestPlugin(t testing.TB) *testPlugin {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return &testPlugin{t: t, path: exe, record: t.TempDir() + "/runs.jsonl"}
}

// source makes a PluginSource for the test plugin in mode; env adds
// TESTPLUGIN_* settings.
func (p *testPlugin) source(mode string, env map[string]string, opts ...credentialprovider.Option) *credentialprovider.PluginSource {
	p.t.Helper()
	vars := []configv1.ExecEnvVar{{Name: envMode, Value: mode}, {Name: envRecord, Value: p.record}, noRaceExitSleep}
	for k, v := range env {
		vars = append(vars, configv1.ExecEnvVar{Name: k, Value: v})
	}
	src, err := credentialprovider.NewPluginSource(p.path, append([]credentialprovider.Option{credentialprovider.WithEnv(vars...)}, opts...)...)
	require.NoError(p.t, err)
	return src
}

// runs returns what every run so far saw.
func (p *testPlugin) runs() []record {
	p.t.Helper()
	data, err := os.ReadFile(p.record)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(p.t, err)
	var out []record
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r record
		require.NoError(p.t, json.Unmarshal([]byte(line), &r))
		out = append(out, r)
	}
	return out
}
