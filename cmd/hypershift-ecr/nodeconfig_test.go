package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v2"
	corev1 "k8s.io/api/core/v1"
	kubeletv1 "k8s.io/kubelet/config/v1"
	sigsjson "sigs.k8s.io/json"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
	"github.com/openshift/hypershift-ecr/pkg/nodeconfig"
	"github.com/openshift/hypershift-ecr/registryauth/credentialprovider"
)

func TestNodeConfig(t *testing.T) {
	t.Parallel()
	const alias = "registry.example.com"
	tests := []struct {
		name      string
		args      []string
		json      bool
		wantExtra []string
		wantArgs  []string
		wantName  string
		wantCache time.Duration
	}{
		{name: "When run without flags, it should print YAML for every ECR host form",
			args: []string{"node-config"}, wantName: defaultProviderName, wantCache: 12 * time.Hour},
		{name: "When -o json is given, it should print the same configuration as JSON",
			args: []string{"node-config", "-o", "json"}, json: true, wantName: defaultProviderName, wantCache: 12 * time.Hour},
		{name: "When aliases and plugin arguments are given, it should add the alias hosts and the args",
			args: []string{"node-config", "--alias", alias + "=" + ecrHost, "--name", "hypershift-ecr",
				"--plugin-arg", "credential-provider", "--plugin-arg", "--alias=" + alias + "=" + ecrHost, "--cache-duration", "6h"},
			wantExtra: []string{alias}, wantArgs: []string{"credential-provider", "--alias=" + alias + "=" + ecrHost},
			wantName: "hypershift-ecr", wantCache: 6 * time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			c := newCLI(strings.NewReader(""), &stdout, &stderr)
			require.Equal(t, exitOK, c.run(t.Context(), tc.args), stderr.String())
			require.Empty(t, stderr.String())

			data := stdout.Bytes()
			if !tc.json {
				require.True(t, strings.HasPrefix(stdout.String(), "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\n"))
				require.Contains(t, stdout.String(), "defaultCacheDuration: "+shortDuration(tc.wantCache)+"\n")
				var v any
				require.NoError(t, yaml.Unmarshal(data, &v))
				var err error
				data, err = json.Marshal(jsonCompatible(v))
				require.NoError(t, err)
			}
			// Decode as the kubelet does: strict, case-sensitive.
			var cfg kubeletv1.CredentialProviderConfig
			strictErrs, err := sigsjson.UnmarshalStrict(data, &cfg)
			require.NoError(t, err)
			require.Empty(t, strictErrs)
			require.Equal(t, "kubelet.config.k8s.io/v1", cfg.APIVersion)
			require.Equal(t, "CredentialProviderConfig", cfg.Kind)
			require.Len(t, cfg.Providers, 1)
			p := cfg.Providers[0]
			require.Equal(t, tc.wantName, p.Name)
			require.Equal(t, credentialprovider.APIVersion, p.APIVersion)
			require.NotNil(t, p.DefaultCacheDuration)
			require.Equal(t, tc.wantCache, p.DefaultCacheDuration.Duration)
			require.Equal(t, tc.wantArgs, p.Args)
			require.Equal(t, append(ecrhost.MatchImages(), tc.wantExtra...), p.MatchImages)
			for _, glob := range ecrhost.MatchImages() {
				require.Contains(t, p.MatchImages, glob)
			}

			// The configuration is accepted by this module's kubelet-side
			// implementation of the same protocol.
			plugin := filepath.Join(t.TempDir(), p.Name)
			require.NoError(t, os.WriteFile(plugin, []byte("#!/bin/sh\nexit 1\n"), 0o755))
			_, err = credentialprovider.NewPluginSource(plugin, credentialprovider.FromConfig(p))
			require.NoError(t, err)
		})
	}
}

func TestShortDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[time.Duration]string{
		12 * time.Hour: "12h", 90 * time.Minute: "1h30m", 30 * time.Second: "30s", 5 * time.Minute: "5m", 61 * time.Second: "1m1s",
	} {
		require.Equal(t, want, shortDuration(in), in.String())
		got, err := time.ParseDuration(want)
		require.NoError(t, err)
		require.Equal(t, in, got)
	}
}

// runNodeConfig runs the command and returns its exit code and streams.
func runNodeConfig(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	c := newCLI(strings.NewReader(stdin), &stdout, &stderr)
	code := c.run(t.Context(), append([]string{"node-config"}, args...))
	return code, stdout.String(), stderr.String()
}

// parseNodeConfigMap decodes the --machineconfig output down to the files
// of its Ignition config: ConfigMap -> data.config (MachineConfig YAML) ->
// spec.config (Ignition JSON) -> storage.files, contents decoded.
func parseNodeConfigMap(t *testing.T, out []byte, isJSON bool) (corev1.ConfigMap, mcfgv1.MachineConfig, map[string][]byte) {
	t.Helper()
	var cm corev1.ConfigMap
	if !isJSON {
		out = yamlToJSON(t, out)
	}
	strict, err := sigsjson.UnmarshalStrict(out, &cm)
	require.NoError(t, err)
	require.Empty(t, strict)
	require.Equal(t, "v1", cm.APIVersion)
	require.Equal(t, "ConfigMap", cm.Kind)
	require.Equal(t, []string{"config"}, slices.Sorted(maps.Keys(cm.Data)))

	var mc mcfgv1.MachineConfig
	strict, err = sigsjson.UnmarshalStrict(yamlToJSON(t, []byte(cm.Data["config"])), &mc)
	require.NoError(t, err)
	require.Empty(t, strict)
	require.Equal(t, "machineconfiguration.openshift.io/v1", mc.APIVersion)
	require.Equal(t, "MachineConfig", mc.Kind)
	require.Equal(t, nodeconfig.DefaultName, mc.Name)
	require.Equal(t, map[string]string{nodeconfig.RoleLabel: "worker"}, mc.Labels)
	return cm, mc, ignitionFiles(t, mc.Spec.Config.Raw)
}

// ignitionFiles decodes an Ignition 3.2.0 config's files, checking modes.
func ignitionFiles(t *testing.T, ign []byte) map[string][]byte {
	t.Helper()
	var cfg struct {
		Ignition struct{ Version string } `json:"ignition"`
		Storage  struct {
			Files []struct {
				Path      string `json:"path"`
				Overwrite bool   `json:"overwrite"`
				Mode      int    `json:"mode"`
				Contents  struct {
					Source string `json:"source"`
				} `json:"contents"`
			} `json:"files"`
		} `json:"storage"`
	}
	require.NoError(t, json.Unmarshal(ign, &cfg))
	require.Equal(t, "3.2.0", cfg.Ignition.Version)
	files := map[string][]byte{}
	for _, f := range cfg.Storage.Files {
		data, ok := strings.CutPrefix(f.Contents.Source, "data:text/plain;charset=utf-8;base64,")
		require.True(t, ok, "%s: not a base64 data URL", f.Path)
		b, err := base64.StdEncoding.DecodeString(data)
		require.NoError(t, err)
		require.True(t, f.Overwrite, f.Path)
		wantMode := 0o644
		if strings.HasPrefix(f.Path, "/usr/local/bin/") {
			wantMode = 0o755
		}
		require.Equal(t, wantMode, f.Mode, f.Path)
		files[f.Path] = b
	}
	return files
}

func yamlToJSON(t *testing.T, data []byte) []byte {
	t.Helper()
	var v any
	require.NoError(t, yaml.Unmarshal(data, &v))
	j, err := json.Marshal(jsonCompatible(v))
	require.NoError(t, err)
	return j
}

func TestNodeConfigMachineConfig(t *testing.T) {
	t.Parallel()
	const alias = "registry.example.com"
	// A pull secret with an ECR entry: its token must appear nowhere in
	// the output, and the entry must be warned about by host.
	const ecrSecret = "AWS:eyJwYXlsb2FkIjoiZmFrZS1lY3ItdG9rZW4ifQ"
	pullSecret := `{"auths":{"quay.io":{"auth":"b3BlbnNoaWZ0LXJlbGVhc2UtZGV2K2NpOnF1YXktcm9ib3QtcGFzc3dvcmQ="},"` +
		ecrHost + `":{"auth":"` + base64.StdEncoding.EncodeToString([]byte(ecrSecret)) + `"}}}`
	secretFile := filepath.Join(t.TempDir(), "pull-secret.json")
	require.NoError(t, os.WriteFile(secretFile, []byte(pullSecret), 0o600))
	wantPaths := []string{
		"/etc/containers/registries.conf.d/99-ecr-login-kubelet.conf",
		"/etc/kubernetes/credential-providers/ecr-credential-provider.yaml",
		"/usr/local/bin/docker-credential-ecr-login-kubelet",
	}

	tests := []struct {
		name      string
		args      []string
		stdin     string
		json      bool
		ignition  bool
		want      nodeconfig.Options // rendered by the library for comparison (Policy set below)
		rules     []string           // --ecr-release-mirror repositories of want.Policy
		wantWarns []string
	}{
		{name: "When --machineconfig is given with an ECR release mirror, it should print the ConfigMap for NodePool.spec.config",
			args:  []string{"--machineconfig", "--namespace", "clusters", "--ecr-release-mirror", mirrorRepo},
			want:  nodeconfig.Options{Namespace: "clusters"},
			rules: []string{mirrorRepo}},
		{name: "When the pull secret has an ECR entry, it should warn on stderr by host and print no credential",
			args:      []string{"--machineconfig", "--ecr-release-mirror", mirrorRepo, "--pull-secret", secretFile},
			rules:     []string{mirrorRepo},
			wantWarns: []string{`auths entry "` + ecrHost + `"`}},
		{name: "When the pull secret comes on stdin, it should read it",
			args: []string{"--machineconfig", "--ecr-release-mirror", mirrorRepo, "--pull-secret", "-"}, stdin: pullSecret,
			rules:     []string{mirrorRepo},
			wantWarns: []string{`auths entry "` + ecrHost + `"`}},
		{name: "When -o json is given with --machineconfig, it should print the same ConfigMap as JSON",
			args:  []string{"--machineconfig", "-o", "json", "--namespace", "clusters", "--ecr-release-mirror", mirrorRepo},
			json:  true,
			want:  nodeconfig.Options{Namespace: "clusters"},
			rules: []string{mirrorRepo}},
		{name: "When --ignition is given, it should print the bare Ignition config with the same files",
			args: []string{"--ignition", "--ecr-release-mirror", mirrorRepo}, ignition: true,
			rules: []string{mirrorRepo}},
		{name: "When the mirror is an alias and plugin flags are given, it should render them",
			args: []string{"--machineconfig", "--alias", alias + "=" + ecrHost, "--ecr-release-mirror", alias + "/ocp4/openshift4",
				"--plugin-env", "AWS_ENDPOINT_URL_ECR=https://vpce-0123456789abcdef0-abcdefgh.api.ecr.us-east-1.vpce.amazonaws.com",
				"--plugin-arg", "--v=2", "--cache-duration", "1h"},
			want: nodeconfig.Options{
				Aliases:       []ecrhost.Alias{{Host: alias, AccountID: "123456789012", Region: "us-east-1"}},
				PluginArgs:    []string{"--v=2"},
				PluginEnv:     []kubeletv1.ExecEnvVar{{Name: "AWS_ENDPOINT_URL_ECR", Value: "https://vpce-0123456789abcdef0-abcdefgh.api.ecr.us-east-1.vpce.amazonaws.com"}},
				CacheDuration: time.Hour,
			},
			rules: []string{alias + "/ocp4/openshift4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runNodeConfig(t, tc.stdin, tc.args...)
			require.Equal(t, exitOK, code, errOut)
			code2, out2, errOut2 := runNodeConfig(t, tc.stdin, tc.args...)
			require.Equal(t, exitOK, code2)
			require.Equal(t, out, out2, "two runs must print the same bytes")
			require.Equal(t, errOut, errOut2)

			// What the library renders for the same options.
			var rules []mirrorpolicy.Rule
			for _, repo := range tc.rules {
				rs, err := mirrorpolicy.ECRReleaseMirror(repo)
				require.NoError(t, err)
				rules = append(rules, rs...)
			}
			opts := tc.want
			if slices.Contains(tc.args, "--pull-secret") {
				opts.PullSecret = []byte(pullSecret)
			}
			var err error
			opts.Policy, err = mirrorpolicy.New(rules...)
			require.NoError(t, err)
			want, err := nodeconfig.Render(opts)
			require.NoError(t, err)

			var files map[string][]byte
			if tc.ignition {
				require.Equal(t, string(want.Ignition)+"\n", out)
				files = ignitionFiles(t, []byte(out))
			} else {
				var cm corev1.ConfigMap
				var mc mcfgv1.MachineConfig
				cm, mc, files = parseNodeConfigMap(t, []byte(out), tc.json)
				require.Equal(t, opts.Namespace, cm.Namespace)
				require.JSONEq(t, string(want.Ignition), string(mc.Spec.Config.Raw))
				if !tc.json {
					wantYAML, err := want.YAML()
					require.NoError(t, err)
					require.Equal(t, string(wantYAML), out)
				}
			}
			require.Equal(t, wantPaths, slices.Sorted(maps.Keys(files)))
			require.Equal(t, want.DropIn, files[want.DropInPath])
			require.Equal(t, want.Helper, files[want.HelperPath])
			require.Equal(t, want.KubeletConfig, files[nodeconfig.KubeletConfigPath])
			require.Contains(t, string(files[want.DropInPath]), `credential-helpers = ["containers-auth.json", "ecr-login-kubelet"]`)

			// No credential anywhere: not the pull secret's tokens, not the auth field.
			all := out + errOut
			for _, f := range files {
				all += string(f)
			}
			for _, secret := range []string{ecrSecret, "eyJwYXlsb2FkIjoiZmFrZS1lY3ItdG9rZW4ifQ", base64.StdEncoding.EncodeToString([]byte(ecrSecret)),
				"quay-robot-password", "b3BlbnNoaWZ0LXJlbGVhc2UtZGV2K2NpOnF1YXktcm9ib3QtcGFzc3dvcmQ="} {
				require.NotContains(t, all, secret)
			}

			// Warnings: on stderr, one line each, as the library gives them.
			require.Len(t, strings.Split(strings.TrimSuffix(errOut, "\n"), "\n"), max(len(want.Warnings), 1))
			for _, w := range want.Warnings {
				require.Contains(t, errOut, "hypershift-ecr node-config: warning: "+w+"\n")
			}
			for _, w := range tc.wantWarns {
				require.Contains(t, errOut, w)
			}
			if len(want.Warnings) == 0 {
				require.Empty(t, errOut)
			}
		})
	}
}

func TestNodeConfigMachineConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"When a mirror is not on an ECR host, it should exit 2 naming it",
			[]string{"--machineconfig", "--mirror", "quay.io/openshift-release-dev/ocp-release=mirror.example.com/ocp4"},
			`host mirror.example.com is not an Amazon ECR registry host`},
		{"When two mirrors are not on ECR hosts, it should still print one line",
			[]string{"--ignition", "--mirror", "quay.io/openshift-release-dev/ocp-release=mirror.example.com/ocp4",
				"--pull-through-cache", "quay.io=" + ecrHost + "/quay", "--mirror", "docker.io=registry.example.org/hub"},
			`host registry.example.org is not an Amazon ECR registry host`},
		{"When both --machineconfig and --ignition are given, it should refuse",
			[]string{"--machineconfig", "--ignition"}, "choose one"},
		{"When mirror rules are given without --machineconfig, it should refuse them",
			[]string{"--ecr-release-mirror", mirrorRepo}, "need --machineconfig or --ignition"},
		{"When --pull-secret is given without --machineconfig, it should refuse it",
			[]string{"--pull-secret", "/dev/null"}, "need --machineconfig or --ignition"},
		{"When -o is given with --ignition, it should refuse it",
			[]string{"--ignition", "-o", "yaml"}, "-o does not apply to --ignition"},
		{"When the cache duration is the token's whole life, it should refuse it",
			[]string{"--machineconfig", "--cache-duration", "12h"}, "CacheDuration must be at least 1s and under 12h"},
		{"When the pull secret is malformed, it should say so without its content",
			[]string{"--machineconfig", "--pull-secret", "-"}, "malformed pull secret"},
		{"When the pull secret file is missing, it should say so",
			[]string{"--machineconfig", "--pull-secret", "/nonexistent/pull-secret.json"}, "--pull-secret:"},
		{"When --plugin-env has no name, it should refuse it",
			[]string{"--machineconfig", "--plugin-env", "=x"}, "want NAME=value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runNodeConfig(t, `{"auths":{"quay.io":{"auth":"not base64 SECRETVALUE"}}}`, tc.args...)
			require.Equal(t, exitUsage, code, errOut)
			require.Empty(t, out)
			require.Contains(t, errOut, tc.want)
			require.True(t, strings.HasPrefix(errOut, "hypershift-ecr node-config: "), errOut)
			require.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
			require.NotContains(t, errOut, "SECRETVALUE")
		})
	}
}
