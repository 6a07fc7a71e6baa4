package nodeconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker-credential-helpers/client"
	"github.com/docker/docker-credential-helpers/credentials"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
)

const (
	testECRHost = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	notFound    = "credentials not found in native keychain\n"
)

// helperRig is a rendered helper installed in a temporary directory, with
// the test binary as its plugin and a private cache directory.
type helperRig struct {
	t        *testing.T
	path     string // the helper executable
	cacheDir string
	log      string // the fake plugin's request log
	mode     string // the fake plugin's mode
	env      []string
}

func newHelperRig(t *testing.T, mode string, opts Options) *helperRig {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	opts.PluginPath = filepath.Clean(exe)
	r, err := Render(opts)
	require.NoError(t, err)
	dir := t.TempDir()
	h := &helperRig{
		t:        t,
		path:     filepath.Join(dir, "docker-credential-"+DefaultHelperName),
		cacheDir: filepath.Join(dir, "cache"),
		log:      filepath.Join(dir, "plugin.log"),
		mode:     mode,
	}
	require.NoError(t, os.WriteFile(h.path, r.Helper, 0o755))
	return h
}

func (h *helperRig) environ() []string {
	env := append(os.Environ(),
		CacheDirEnv+"="+h.cacheDir,
		fakePluginEnv+"="+h.mode,
		fakePluginLogEnv+"="+h.log,
		// A race-enabled test binary otherwise sleeps 1 s at exit.
		"GORACE=atexit_sleep_ms=0",
	)
	return append(env, h.env...)
}

// run runs the helper with action and stdin and returns stdout, stderr and
// the exit status.
func (h *helperRig) run(action, stdin string) (string, string, int) {
	h.t.Helper()
	cmd := exec.Command(h.path, action)
	cmd.Env = h.environ()
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		exitErr, ok := err.(*exec.ExitError)
		require.True(h.t, ok, "running the helper: %v", err)
		code = exitErr.ExitCode()
	}
	// No credential ever reaches stderr.
	require.NotContains(h.t, stderr.String(), fakeToken)
	return stdout.String(), stderr.String(), code
}

// pluginCalls returns the images the fake plugin was asked about.
func (h *helperRig) pluginCalls() []string {
	data, err := os.ReadFile(h.log)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(h.t, err)
	return strings.Fields(string(data))
}

type getAnswer struct {
	ServerURL, Username, Secret string
}

func decodeAnswer(t *testing.T, stdout string) getAnswer {
	t.Helper()
	var a getAnswer
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&a), "answer %q", stdout)
	return a
}

func TestHelperGet(t *testing.T) {
	aliases := []ecrhost.Alias{{Host: "registry.example.com", AccountID: "123456789012", Region: "eu-west-1"}}
	tests := []struct {
		name       string
		mode       string
		serverURL  string
		wantServer string
		wantSecret string
		wantImage  string // what the plugin must be asked; "" = not asked
	}{
		{name: "When containers/image asks for an ECR host, it should answer the plugin's credentials",
			mode: "ok", serverURL: testECRHost, wantServer: testECRHost, wantSecret: fakeToken, wantImage: testECRHost},
		{name: "When the server URL is an https URL with a path and capitals, it should serve the host",
			mode: "ok", serverURL: "https://123456789012.DKR.ECR.us-east-1.amazonaws.com/v2/\n", wantServer: testECRHost, wantSecret: fakeToken, wantImage: testECRHost},
		{name: "When the server URL has a port, it should serve the host",
			mode: "ok", serverURL: testECRHost + ":443", wantServer: testECRHost, wantSecret: fakeToken, wantImage: testECRHost},
		{name: "When the host is a FIPS dual-stack ECR host, it should serve it",
			mode: "ok", serverURL: "123456789012.dkr-ecr-fips.us-west-2.on.aws", wantServer: "123456789012.dkr-ecr-fips.us-west-2.on.aws",
			wantSecret: fakeToken, wantImage: "123456789012.dkr-ecr-fips.us-west-2.on.aws"},
		{name: "When the host is an EU sovereign cloud host, it should serve it",
			mode: "ok", serverURL: "123456789012.dkr.ecr.eusc-de-east-1.amazonaws.eu", wantServer: "123456789012.dkr.ecr.eusc-de-east-1.amazonaws.eu",
			wantSecret: fakeToken, wantImage: "123456789012.dkr.ecr.eusc-de-east-1.amazonaws.eu"},
		{name: "When the host is ECR Public, it should serve it",
			mode: "ok", serverURL: "public.ecr.aws", wantServer: "public.ecr.aws", wantSecret: fakeToken, wantImage: "public.ecr.aws"},
		{name: "When the host is an alias, it should ask the plugin about the ECR host behind it and answer for the alias",
			mode: "ok", serverURL: "Registry.Example.com", wantServer: "registry.example.com", wantSecret: fakeToken,
			wantImage: "123456789012.dkr.ecr.eu-west-1.amazonaws.com"},
		{name: "When the plugin writes indented JSON in another key order with a glob entry too, it should pick the exact host",
			mode: "pretty", serverURL: testECRHost, wantServer: testECRHost, wantSecret: fakeToken, wantImage: testECRHost},
		{name: "When the plugin keys the credentials by a matching glob, it should use them",
			mode: "glob", serverURL: testECRHost, wantServer: testECRHost, wantSecret: fakeToken, wantImage: testECRHost},
		{name: "When the password has JSON escapes, it should pass them through intact",
			mode: "escaped", serverURL: testECRHost, wantServer: testECRHost, wantSecret: `a"b\c<d>&e/é` + "\u2028", wantImage: testECRHost},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHelperRig(t, tc.mode, Options{Aliases: aliases})
			stdout, stderr, code := h.run("get", tc.serverURL)
			require.Equal(t, 0, code, "stdout %q stderr %q", stdout, stderr)
			require.Empty(t, stderr)
			a := decodeAnswer(t, stdout)
			require.Equal(t, getAnswer{ServerURL: tc.wantServer, Username: "AWS", Secret: tc.wantSecret}, a)
			require.Equal(t, []string{tc.wantImage}, h.pluginCalls())
		})
	}
}

func TestHelperNotFound(t *testing.T) {
	tests := []struct {
		name      string
		mode      string
		serverURL string
		asked     bool // whether the plugin may be run
		reason    string
	}{
		{name: "When the host is not ECR, it should say not found without running the plugin", mode: "ok", serverURL: "quay.io"},
		{name: "When the host only ends like an ECR host, it should say not found", mode: "ok", serverURL: "evil-" + testECRHost},
		{name: "When an ECR host is a prefix of the host, it should say not found", mode: "ok", serverURL: testECRHost + ".attacker.example"},
		{name: "When the account is not 12 digits, it should say not found", mode: "ok", serverURL: "12345678901.dkr.ecr.us-east-1.amazonaws.com"},
		{name: "When the region spans two labels, it should say not found", mode: "ok", serverURL: "123456789012.dkr.ecr.us.east-1.amazonaws.com"},
		{name: "When the host is a subdomain of ECR Public, it should say not found", mode: "ok", serverURL: "x.public.ecr.aws"},
		{name: "When the stdin is empty, it should say not found", mode: "ok", serverURL: ""},
		{name: "When the host carries shell syntax, it should say not found", mode: "ok", serverURL: "$(touch /tmp/pwned)." + testECRHost},
		{name: "When the plugin fails, it should say not found and why on stderr",
			mode: "fail", serverURL: testECRHost, asked: true, reason: "the credential provider plugin failed"},
		{name: "When the plugin writes no JSON, it should say not found", mode: "garbage", serverURL: testECRHost, asked: true, reason: "no usable credentials"},
		{name: "When the plugin's JSON is cut short, it should say not found", mode: "truncated", serverURL: testECRHost, asked: true, reason: "no usable credentials"},
		{name: "When the plugin's JSON has trailing data, it should say not found", mode: "trailing", serverURL: testECRHost, asked: true, reason: "no usable credentials"},
		{name: "When the plugin answers another kind, it should say not found", mode: "wrongkind", serverURL: testECRHost, asked: true, reason: "no usable credentials"},
		{name: "When the plugin answers another apiVersion, it should say not found", mode: "wrongversion", serverURL: testECRHost, asked: true, reason: "no usable credentials"},
		{name: "When the plugin answers for another host only, it should say not found", mode: "otherhost", serverURL: testECRHost, asked: true, reason: "no usable credentials"},
		{name: "When the plugin answers an empty password, it should say not found", mode: "emptypassword", serverURL: testECRHost, asked: true, reason: "no usable credentials"},
		{name: "When the plugin answers no auth, it should say not found", mode: "noauth", serverURL: testECRHost, asked: true, reason: "no usable credentials"},
		{name: "When the plugin answers nothing, it should say not found", mode: "silent", serverURL: testECRHost, asked: true, reason: "no usable credentials"},
		{name: "When the plugin's JSON holds a NUL byte, it should say not found", mode: "nul", serverURL: testECRHost, asked: true, reason: "no usable credentials"},
		{name: "When the plugin answers more than 64 KiB, it should say not found", mode: "huge", serverURL: testECRHost, asked: true, reason: "the credential provider plugin"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHelperRig(t, tc.mode, Options{})
			stdout, stderr, code := h.run("get", tc.serverURL)
			require.Equal(t, 1, code)
			require.Equal(t, notFound, stdout)
			if tc.asked {
				require.Len(t, h.pluginCalls(), 1)
				require.Contains(t, stderr, tc.reason)
			} else {
				require.Empty(t, h.pluginCalls())
				require.Empty(t, stderr)
			}
			// A failed lookup is never cached.
			entries, _ := os.ReadDir(h.cacheDir)
			for _, e := range entries {
				require.True(t, strings.HasPrefix(e.Name(), "."), "cache file %s after a failure", e.Name())
			}
		})
	}
}

// The drop-in makes containers/image run the helper for every registry
// without an auth-file entry, so a host that is not ECR must be refused with
// bash builtins alone: even with no PATH at all, no awk, no coreutils.
func TestHelperNotECRNeedsOnlyBuiltins(t *testing.T) {
	h := newHelperRig(t, "ok", Options{})
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	cmd := exec.Command(bash, h.path, "get")
	cmd.Env = []string{"PATH=/nonexistent"}
	cmd.Stdin = strings.NewReader("registry.redhat.io")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	require.Error(t, err)
	require.Equal(t, 1, err.(*exec.ExitError).ExitCode())
	require.Equal(t, notFound, stdout.String())
	require.Empty(t, stderr.String())
}

func TestHelperOtherActions(t *testing.T) {
	tests := []struct {
		name       string
		action     string
		stdin      string
		wantCode   int
		wantStdout string
	}{
		{name: "When asked to store, it should refuse without reading a credential", action: "store",
			stdin: `{"ServerURL":"` + testECRHost + `","Username":"AWS","Secret":"` + fakeToken + `"}`, wantCode: 1,
			wantStdout: "docker-credential-ecr-login-kubelet: store is not supported: credentials come from the instance role\n"},
		{name: "When asked to erase, it should succeed with nothing to do, so that podman logout works", action: "erase", stdin: testECRHost},
		{name: "When asked to list, it should answer an empty map", action: "list", wantStdout: "{}\n"},
		{name: "When asked its version, it should name it", action: "version", wantStdout: "docker-credential-ecr-login-kubelet " + helperVersion + "\n"},
		{name: "When the action is unknown, it should fail", action: "frobnicate", wantCode: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHelperRig(t, "ok", Options{})
			stdout, _, code := h.run(tc.action, tc.stdin)
			require.Equal(t, tc.wantCode, code)
			require.Equal(t, tc.wantStdout, stdout)
			require.NotContains(t, stdout, fakeToken)
			require.Empty(t, h.pluginCalls())
		})
	}
}

func readCacheFile(t *testing.T, path string) (expires int64, user, pass string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 4)
	require.Equal(t, "v1", lines[0])
	expires, err = strconv.ParseInt(lines[1], 10, 64)
	require.NoError(t, err)
	return expires, lines[2], lines[3]
}

func TestHelperCache(t *testing.T) {
	tests := []struct {
		name     string
		cache    string // the plugin's cacheDuration; "none" for absent
		wantTTL  int64  // -1: no cache file
		duration time.Duration
	}{
		{name: "When the plugin says 6h, it should cache for 6h", cache: "6h", wantTTL: 6 * 3600},
		{name: "When the plugin says 1h2m3.9s, it should cache whole seconds", cache: "1h2m3.9s", wantTTL: 3723},
		{name: "When the plugin says more than the maximum, it should cache for the maximum", cache: "11h", wantTTL: 3600, duration: time.Hour},
		{name: "When the plugin names no cacheDuration, it should use the default", cache: "none", wantTTL: 2 * 3600, duration: 2 * time.Hour},
		{name: "When the plugin says 0s, it should not cache", cache: "0s", wantTTL: -1},
		{name: "When the plugin says 300ms, it should not cache", cache: "300ms", wantTTL: -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHelperRig(t, "ok", Options{CacheDuration: tc.duration})
			h.env = append(h.env, fakePluginCacheEnv+"="+tc.cache)
			before := time.Now().Unix()
			stdout, _, code := h.run("get", testECRHost)
			after := time.Now().Unix()
			require.Equal(t, 0, code)
			require.Equal(t, fakeToken, decodeAnswer(t, stdout).Secret)
			file := filepath.Join(h.cacheDir, testECRHost)
			if tc.wantTTL < 0 {
				require.NoFileExists(t, file)
				h.run("get", testECRHost)
				require.Len(t, h.pluginCalls(), 2, "an uncached answer must not be reused")
				return
			}
			expires, user, pass := readCacheFile(t, file)
			require.GreaterOrEqual(t, expires, before+tc.wantTTL)
			require.LessOrEqual(t, expires, after+tc.wantTTL)
			require.Equal(t, "AWS", user)
			require.Equal(t, fakeToken, pass)

			dirInfo, err := os.Stat(h.cacheDir)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o700), dirInfo.Mode().Perm())
			fileInfo, err := os.Stat(file)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), fileInfo.Mode().Perm())

			stdout, _, code = h.run("get", testECRHost)
			require.Equal(t, 0, code)
			require.Equal(t, fakeToken, decodeAnswer(t, stdout).Secret)
			require.Len(t, h.pluginCalls(), 1, "the second get must be served from the cache")
		})
	}
}

func TestHelperCacheExpiry(t *testing.T) {
	tests := []struct {
		name      string
		content   func(now int64) string
		wantCalls int
		wantPass  string
	}{
		{name: "When the cached answer is still valid, it should serve it without the plugin",
			content: func(now int64) string { return fmt.Sprintf("v1\n%d\nAWS\ncached\n", now+600) }, wantCalls: 0, wantPass: "cached"},
		{name: "When the cached answer has expired, it should run the plugin again",
			content: func(now int64) string { return fmt.Sprintf("v1\n%d\nAWS\ncached\n", now-1) }, wantCalls: 1, wantPass: fakeToken},
		{name: "When the cache file has another format, it should run the plugin",
			content: func(now int64) string { return fmt.Sprintf("v2\n%d\nAWS\ncached\n", now+600) }, wantCalls: 1, wantPass: fakeToken},
		{name: "When the cache file is cut short, it should run the plugin",
			content: func(now int64) string { return fmt.Sprintf("v1\n%d\nAWS\n", now+600) }, wantCalls: 1, wantPass: fakeToken},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHelperRig(t, "ok", Options{})
			require.NoError(t, os.Mkdir(h.cacheDir, 0o700))
			file := filepath.Join(h.cacheDir, testECRHost)
			require.NoError(t, os.WriteFile(file, []byte(tc.content(time.Now().Unix())), 0o600))
			stdout, _, code := h.run("get", testECRHost)
			require.Equal(t, 0, code)
			require.Equal(t, tc.wantPass, decodeAnswer(t, stdout).Secret)
			require.Len(t, h.pluginCalls(), tc.wantCalls)
		})
	}
}

func TestHelperUntrustedCacheDir(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, cacheDir string)
	}{
		{name: "When the cache directory is a symlink, it should not use it", setup: func(t *testing.T, cacheDir string) {
			real := cacheDir + ".real"
			require.NoError(t, os.Mkdir(real, 0o700))
			require.NoError(t, os.Symlink(real, cacheDir))
		}},
		{name: "When the cache directory cannot be created, it should answer without a cache", setup: func(t *testing.T, cacheDir string) {
			require.NoError(t, os.WriteFile(cacheDir, nil, 0o600)) // a file where the directory should be
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHelperRig(t, "ok", Options{})
			tc.setup(t, h.cacheDir)
			for range 2 {
				stdout, _, code := h.run("get", testECRHost)
				require.Equal(t, 0, code)
				require.Equal(t, fakeToken, decodeAnswer(t, stdout).Secret)
			}
			require.Len(t, h.pluginCalls(), 2)
			require.NoFileExists(t, h.cacheDir+".real/"+testECRHost)
		})
	}
}

// When a node starts many pulls at once, the lock lets one helper run the
// plugin while the others wait for its answer.
func TestHelperConcurrentMisses(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock is not installed; the helper then runs the plugin once per caller")
	}
	h := newHelperRig(t, "ok", Options{})
	h.env = append(h.env, fakePluginSleepEnv+"=300ms")
	var wg sync.WaitGroup
	stdouts := make([]string, 6)
	for i := range stdouts {
		wg.Go(func() {
			cmd := exec.Command(h.path, "get")
			cmd.Env = h.environ()
			cmd.Stdin = strings.NewReader(testECRHost)
			out, err := cmd.Output()
			assert.NoError(t, err)
			stdouts[i] = string(out)
		})
	}
	wg.Wait()
	for _, out := range stdouts {
		require.Equal(t, fakeToken, decodeAnswer(t, out).Secret)
	}
	require.Len(t, h.pluginCalls(), 1)
}

// The helper must speak the protocol containers/image speaks through
// github.com/docker/docker-credential-helpers/client: credentials for ECR,
// "not found" (not an error) for every other host.
func TestHelperWithCredentialHelperClient(t *testing.T) {
	h := newHelperRig(t, "ok", Options{})
	env := map[string]string{}
	for _, kv := range h.environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	program := client.NewShellProgramFuncWithEnv(h.path, &env)

	creds, err := client.Get(program, testECRHost)
	require.NoError(t, err)
	require.Equal(t, "AWS", creds.Username)
	require.Equal(t, fakeToken, creds.Secret)

	_, err = client.Get(program, "quay.io")
	require.True(t, credentials.IsErrCredentialsNotFound(err), "got %v", err)
	require.True(t, credentials.IsErrCredentialsNotFoundMessage(err.Error()), "containers/image compares the message")

	list, err := client.List(program)
	require.NoError(t, err)
	require.Empty(t, list)
	require.NoError(t, client.Erase(program, testECRHost))
}

// What the drop-in relies on: containers/image turns a helper that cannot
// be run into an error for every registry without an auth-file entry
// (getCredentialsWithHomeDir returns the collected errors when no helper had
// credentials). That is why the helper ships in the same MachineConfig as the
// drop-in, in a directory on the default PATH, and answers "not found"
// rather than failing.
func TestMissingHelperIsAnErrorNotNotFound(t *testing.T) {
	program := client.NewShellProgramFunc(filepath.Join(t.TempDir(), "docker-credential-missing"))
	_, err := client.Get(program, "quay.io")
	require.Error(t, err)
	require.False(t, credentials.IsErrCredentialsNotFoundMessage(err.Error()))
}

// RHCOS has gawk; other systems mawk or busybox. The helper must read the
// plugin's answer with each.
func TestHelperWithEachAWK(t *testing.T) {
	impls := map[string][]string{"gawk": {"gawk"}, "mawk": {"mawk"}, "busybox": {"busybox", "awk"}, "original-awk": {"original-awk"}}
	found := 0
	for _, name := range []string{"gawk", "mawk", "busybox", "original-awk"} {
		bin, err := exec.LookPath(impls[name][0])
		if err != nil {
			t.Logf("%s is not installed; skipped", name)
			continue
		}
		found++
		t.Run("When awk is "+name+", it should read real-shaped and indented responses", func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.Symlink(bin, filepath.Join(dir, "awk")))
			for _, mode := range []string{"ok", "pretty", "escaped"} {
				h := newHelperRig(t, mode, Options{})
				h.env = append(h.env, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
				stdout, stderr, code := h.run("get", testECRHost)
				require.Equal(t, 0, code, "mode %s: %s", mode, stderr)
				require.Equal(t, "AWS", decodeAnswer(t, stdout).Username)
			}
		})
	}
	if found == 0 {
		t.Skip("no awk implementation found")
	}
}

func TestHelperShellcheck(t *testing.T) {
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck is not installed (apt-get install shellcheck); skipped")
	}
	tests := []struct {
		name string
		opts Options
	}{
		{name: "When rendered with the defaults, it should pass shellcheck", opts: Options{}},
		{name: "When rendered with aliases, args and env, it should pass shellcheck", opts: Options{
			Aliases:    []ecrhost.Alias{{Host: "registry.example.com", AccountID: "123456789012", Region: "eu-west-1"}, {Host: "mirror.example.org", AccountID: "210987654321", Region: "us-gov-west-1", FIPS: true}},
			PluginArgs: []string{"--v=2", "it's quoted"},
			PluginEnv:  []kubeletconfigv1.ExecEnvVar{{Name: "AWS_ENDPOINT_URL_ECR", Value: "https://vpce-0123.api.ecr.us-east-1.vpce.amazonaws.com"}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Render(tc.opts)
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "helper")
			require.NoError(t, os.WriteFile(path, r.Helper, 0o755))
			out, err := exec.Command(shellcheck, "--severity=style", "--shell=bash", path).CombinedOutput()
			require.NoError(t, err, "%s", out)
		})
	}
}
