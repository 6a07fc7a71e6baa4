package nodeconfig

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	yaml "go.yaml.in/yaml/v2"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"

	"github.com/openshift/hypershift-ecr/pkg/dockerconfig"
	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
)

const releaseMirror = "123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4"

func testRules(t *testing.T) []mirrorpolicy.Rule {
	t.Helper()
	rules, err := mirrorpolicy.ECRReleaseMirror(releaseMirror)
	require.NoError(t, err)
	cache, err := mirrorpolicy.ECRPullThroughCache("quay.io", "123456789012.dkr.ecr.us-east-1.amazonaws.com/quay")
	require.NoError(t, err)
	docker, err := mirrorpolicy.ECRPullThroughCache("docker.io", "registry.example.com/hub")
	require.NoError(t, err)
	return append(rules, cache, docker)
}

func testPolicy(t *testing.T, rules ...mirrorpolicy.Rule) *mirrorpolicy.Policy {
	t.Helper()
	p, err := mirrorpolicy.New(rules...)
	require.NoError(t, err)
	return p
}

var testAliases = []ecrhost.Alias{
	{Host: "registry.example.com", AccountID: "123456789012", Region: "us-east-1"},
	{Host: "mirror.example.org", AccountID: "210987654321", Region: "us-east-1", DualStack: true},
}

func TestRenderOptions(t *testing.T) {
	tests := []struct {
		name      string
		opts      Options
		wantField string
	}{
		{name: "When Name sorts before the MCO kubelet config, it should refuse it", opts: Options{Name: "01-worker-a"}, wantField: "Name"},
		{name: "When Name is not an object name, it should refuse it", opts: Options{Name: "99_Worker"}, wantField: "Name"},
		{name: "When Namespace is not a namespace name, it should refuse it", opts: Options{Namespace: "Clusters"}, wantField: "Namespace"},
		{name: "When HelperName has a slash, it should refuse it", opts: Options{HelperName: "ecr/login"}, wantField: "HelperName"},
		{name: "When HelperName is the auth-file pseudo-helper, it should refuse it", opts: Options{HelperName: "containers-auth.json"}, wantField: "HelperName"},
		{name: "When PluginPath is relative, it should refuse it", opts: Options{PluginPath: "ecr-credential-provider"}, wantField: "PluginPath"},
		{name: "When PluginPath is not clean, it should refuse it", opts: Options{PluginPath: "/usr/libexec/../bin/x"}, wantField: "PluginPath"},
		{name: "When an argument holds a newline, it should refuse it", opts: Options{PluginArgs: []string{"a\nb"}}, wantField: "PluginArgs[0]"},
		{name: "When an env name is invalid, it should refuse it",
			opts: Options{PluginEnv: []kubeletconfigv1.ExecEnvVar{{Name: "A-B", Value: "x"}}}, wantField: "PluginEnv"},
		{name: "When an env name repeats, it should refuse it",
			opts: Options{PluginEnv: []kubeletconfigv1.ExecEnvVar{{Name: "A", Value: "x"}, {Name: "A", Value: "y"}}}, wantField: "PluginEnv[A]"},
		{name: "When CacheDuration is 12h, it should refuse it", opts: Options{CacheDuration: 12 * time.Hour}, wantField: "CacheDuration"},
		{name: "When CacheDuration is under a second, it should refuse it", opts: Options{CacheDuration: time.Millisecond}, wantField: "CacheDuration"},
		{name: "When an extra provider has the ECR provider's name, it should refuse it",
			opts: Options{ExtraProviders: []kubeletconfigv1.CredentialProvider{{Name: "ecr-credential-provider"}}}, wantField: "ExtraProviders[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(tc.opts)
			var oe *OptionError
			require.ErrorAs(t, err, &oe)
			require.ErrorIs(t, err, ErrInvalidOptions)
			require.Equal(t, tc.wantField, oe.Field)
		})
	}

	t.Run("When an alias is invalid, it should return the ecrhost.AliasError", func(t *testing.T) {
		_, err := Render(Options{Aliases: []ecrhost.Alias{{Host: "registry.example.com", AccountID: "1", Region: "us-east-1"}}})
		var ae *ecrhost.AliasError
		require.ErrorAs(t, err, &ae)
		require.Equal(t, "AccountID", ae.Field)
	})

	t.Run("When options are left empty, it should apply the documented defaults", func(t *testing.T) {
		r, err := Render(Options{Policy: testPolicy(t, testRules(t)[:2]...)})
		require.NoError(t, err)
		require.Equal(t, DefaultName, r.MachineConfig.Name)
		require.Equal(t, "/usr/local/bin/docker-credential-ecr-login-kubelet", r.HelperPath)
		require.Equal(t, "/etc/containers/registries.conf.d/99-ecr-login-kubelet.conf", r.DropInPath)
		require.Contains(t, string(r.Helper), "readonly plugin='"+DefaultPluginPath+"'")
		require.Contains(t, string(r.Helper), "readonly cache_max=21600\n")
		require.Empty(t, r.Warnings)
	})
}

func TestRenderGuards(t *testing.T) {
	quayMirror, err := mirrorpolicy.ECRPullThroughCache("registry.redhat.io", "mirror.internal.example.com/redhat")
	require.NoError(t, err)
	tests := []struct {
		name         string
		opts         func(t *testing.T) Options
		wantMirror   *MirrorError
		wantWarnings []string // substrings, one per warning, in order
	}{
		{name: "When a mirror is not an ECR host, it should refuse to render",
			opts: func(t *testing.T) Options {
				return Options{Policy: testPolicy(t, append(testRules(t), quayMirror)...), Aliases: testAliases}
			},
			wantMirror: &MirrorError{Host: "mirror.internal.example.com", Mirror: "mirror.internal.example.com/redhat",
				Source: "registry.redhat.io", Origin: "ECRPullThroughCache/mirror.internal.example.com/redhat"}},
		{name: "When a mirror is an alias host that was not declared, it should refuse to render",
			opts: func(t *testing.T) Options { return Options{Policy: testPolicy(t, testRules(t)...)} },
			wantMirror: &MirrorError{Host: "registry.example.com", Mirror: "registry.example.com/hub",
				Source: "docker.io", Origin: "ECRPullThroughCache/registry.example.com/hub"}},
		{name: "When every mirror is ECR or a declared alias, it should render without warnings",
			opts: func(t *testing.T) Options {
				return Options{Policy: testPolicy(t, testRules(t)...), Aliases: testAliases}
			}},
		{name: "When there is no policy, it should warn that only direct ECR pulls are served",
			opts:         func(t *testing.T) Options { return Options{} },
			wantWarnings: []string{"no mirror policy"}},
		{name: "When the pull secret holds an entry for an ECR mirror, it should warn that the entry wins over the helper",
			opts: func(t *testing.T) Options {
				return Options{Policy: testPolicy(t, testRules(t)...), Aliases: testAliases, PullSecret: []byte(`{"auths":{` +
					`"quay.io":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("user:quay-secret")) + `"},` +
					`"https://123456789012.dkr.ecr.us-east-1.amazonaws.com":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("AWS:stale")) + `"},` +
					`"Registry.Example.com/hub":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("AWS:stale")) + `"}},` +
					`"credHelpers":{"123456789012.dkr.ecr.eu-west-1.amazonaws.com":"ecr-login"}}`)}
			},
			wantWarnings: []string{
				`credHelpers entry for ECR registry 123456789012.dkr.ecr.eu-west-1.amazonaws.com`,
				`auths entry "Registry.Example.com/hub" for ECR registry registry.example.com`,
				`auths entry "https://123456789012.dkr.ecr.us-east-1.amazonaws.com" for ECR registry 123456789012.dkr.ecr.us-east-1.amazonaws.com`,
			}},
		{name: "When aliases span two regions, it should keep them out of the kubelet config and say so",
			opts: func(t *testing.T) Options {
				return Options{Aliases: []ecrhost.Alias{
					{Host: "registry.example.com", AccountID: "123456789012", Region: "us-east-1"},
					{Host: "mirror.example.org", AccountID: "123456789012", Region: "eu-west-1"},
				}}
			},
			wantWarnings: []string{"alias mirror.example.org (region eu-west-1)", "alias registry.example.com (region us-east-1)", "no mirror policy"}},
		{name: "When the plugin is outside the kubelet's plugin directory, it should warn",
			opts: func(t *testing.T) Options {
				return Options{Policy: testPolicy(t, testRules(t)[:2]...), PluginPath: "/opt/bin/ecr-credential-provider"}
			},
			wantWarnings: []string{"the kubelet runs credential provider plugins from " + PluginDir}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Render(tc.opts(t))
			if tc.wantMirror != nil {
				require.ErrorIs(t, err, ErrNotECRMirror)
				var me *MirrorError
				require.ErrorAs(t, err, &me)
				require.Equal(t, tc.wantMirror, me)
				require.Nil(t, r)
				return
			}
			require.NoError(t, err)
			require.Len(t, r.Warnings, len(tc.wantWarnings), "%q", r.Warnings)
			for i, w := range tc.wantWarnings {
				require.Contains(t, r.Warnings[i], w)
			}
		})
	}

	t.Run("When the pull secret is malformed, it should fail without quoting it", func(t *testing.T) {
		_, err := Render(Options{PullSecret: []byte(`{"auths":{"quay.io":{"auth":"not base64 s3cr3t"}}}`)})
		require.ErrorIs(t, err, dockerconfig.ErrMalformed)
		require.NotContains(t, err.Error(), "s3cr3t")
	})
}

// render renders opts and returns every byte a caller could publish.
func publishable(t *testing.T, opts Options) []byte {
	t.Helper()
	r, err := Render(opts)
	require.NoError(t, err)
	y, err := r.YAML()
	require.NoError(t, err)
	mc, err := json.Marshal(r.MachineConfig)
	require.NoError(t, err)
	cm, err := json.Marshal(r.ConfigMap)
	require.NoError(t, err)
	var all bytes.Buffer
	for _, b := range [][]byte{r.DropIn, r.Helper, r.KubeletConfig, r.Ignition, y, mc, cm, []byte(strings.Join(r.Warnings, "\n"))} {
		all.Write(b)
		all.WriteByte(0)
	}
	for _, f := range r.Files {
		all.WriteString(f.Path)
		all.Write(f.Contents)
	}
	return all.Bytes()
}

func TestRenderIsDeterministic(t *testing.T) {
	rules := testRules(t)
	base := Options{
		Policy:     testPolicy(t, rules...),
		Aliases:    testAliases,
		Namespace:  "clusters",
		PluginArgs: []string{"--v=2"},
		PluginEnv: []kubeletconfigv1.ExecEnvVar{
			{Name: "AWS_STS_REGIONAL_ENDPOINTS", Value: "regional"},
			{Name: "AWS_ENDPOINT_URL_ECR", Value: "https://vpce-0123456789abcdef0-abcdefgh.api.ecr.us-east-1.vpce.amazonaws.com"},
		},
	}
	want := publishable(t, base)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		opts := base
		shuffledRules := append([]mirrorpolicy.Rule(nil), rules...)
		rng.Shuffle(len(shuffledRules), func(a, b int) { shuffledRules[a], shuffledRules[b] = shuffledRules[b], shuffledRules[a] })
		opts.Policy = testPolicy(t, shuffledRules...)
		opts.Aliases = append([]ecrhost.Alias(nil), testAliases...)
		rng.Shuffle(len(opts.Aliases), func(a, b int) { opts.Aliases[a], opts.Aliases[b] = opts.Aliases[b], opts.Aliases[a] })
		// An env list built from a map comes in any order.
		env := map[string]string{}
		for _, e := range base.PluginEnv {
			env[e.Name] = e.Value
		}
		opts.PluginEnv = nil
		for k, v := range env {
			opts.PluginEnv = append(opts.PluginEnv, kubeletconfigv1.ExecEnvVar{Name: k, Value: v})
		}
		require.Equal(t, want, publishable(t, opts), "render %d differs", i)
	}
}

func TestRenderHoldsNoCredential(t *testing.T) {
	secrets := []string{"quay-s3cr3t-password", "ecr-stale-token-XYZ", "identity-token-ABC", "registry-token-DEF"}
	ps := `{"auths":{` +
		`"quay.io":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("quayuser:"+secrets[0])) + `","email":"a@example.com"},` +
		`"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("AWS:"+secrets[1])) + `"},` +
		`"registry.example.com":{"identitytoken":"` + secrets[2] + `","registrytoken":"` + secrets[3] + `"}}}`
	all := publishable(t, Options{Policy: testPolicy(t, testRules(t)...), Aliases: testAliases, PullSecret: []byte(ps)})
	for _, s := range append(secrets, base64.StdEncoding.EncodeToString([]byte("AWS:"+secrets[1])), "quayuser") {
		require.NotContains(t, string(all), s)
	}
	// Nor inside the base64 data URLs.
	r, err := Render(Options{Policy: testPolicy(t, testRules(t)...), Aliases: testAliases, PullSecret: []byte(ps)})
	require.NoError(t, err)
	for _, f := range ignitionFiles(t, r.Ignition) {
		for _, s := range secrets {
			require.NotContains(t, string(f.Contents), s)
		}
	}
}

func ignitionFiles(t *testing.T, ign []byte) []File {
	t.Helper()
	var cfg ignitionConfig
	dec := json.NewDecoder(bytes.NewReader(ign))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&cfg))
	require.Equal(t, "3.2.0", cfg.Ignition.Version)
	var files []File
	for _, f := range cfg.Storage.Files {
		require.True(t, f.Overwrite)
		data, ok := strings.CutPrefix(f.Contents.Source, dataURLPrefix)
		require.True(t, ok, "source %q", f.Contents.Source)
		contents, err := base64.StdEncoding.DecodeString(data)
		require.NoError(t, err)
		files = append(files, File{Path: f.Path, Mode: f.Mode, Contents: contents})
	}
	return files
}

func TestRenderManifests(t *testing.T) {
	r, err := Render(Options{Policy: testPolicy(t, testRules(t)...), Aliases: testAliases, Namespace: "clusters"})
	require.NoError(t, err)

	t.Run("When rendered, it should write the three files with their modes through Ignition", func(t *testing.T) {
		require.Equal(t, []File{
			{Path: r.DropInPath, Mode: 0o644, Contents: r.DropIn},
			{Path: KubeletConfigPath, Mode: 0o644, Contents: r.KubeletConfig},
			{Path: r.HelperPath, Mode: 0o755, Contents: r.Helper},
		}, r.Files)
		require.Equal(t, r.Files, ignitionFiles(t, r.Ignition))
	})

	t.Run("When rendered, it should keep containers-auth.json first in the drop-in", func(t *testing.T) {
		require.Contains(t, string(r.DropIn), "\ncredential-helpers = [\"containers-auth.json\", \"ecr-login-kubelet\"]\n")
	})

	t.Run("When rendered, it should label the MachineConfig for the workers and embed the Ignition config", func(t *testing.T) {
		require.Equal(t, "machineconfiguration.openshift.io/v1", r.MachineConfig.APIVersion)
		require.Equal(t, "MachineConfig", r.MachineConfig.Kind)
		require.Equal(t, map[string]string{RoleLabel: "worker"}, r.MachineConfig.Labels)
		require.JSONEq(t, string(r.Ignition), string(r.MachineConfig.Spec.Config.Raw))
	})

	t.Run("When rendered, it should put the MachineConfig YAML in the ConfigMap key config", func(t *testing.T) {
		y, err := r.YAML()
		require.NoError(t, err)
		var cm struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   struct{ Name, Namespace string }
			Data       map[string]string
		}
		require.NoError(t, yaml.UnmarshalStrict(y, &cm))
		require.Equal(t, "v1", cm.APIVersion)
		require.Equal(t, "ConfigMap", cm.Kind)
		require.Equal(t, DefaultName, cm.Metadata.Name)
		require.Equal(t, "clusters", cm.Metadata.Namespace)
		require.Equal(t, []string{"config"}, keys(cm.Data))

		var mc struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   struct {
				Name   string
				Labels map[string]string
			}
			Spec struct{ Config any }
		}
		require.NoError(t, yaml.UnmarshalStrict([]byte(cm.Data["config"]), &mc))
		require.Equal(t, DefaultName, mc.Metadata.Name)
		require.Equal(t, "worker", mc.Metadata.Labels[RoleLabel])
		ign, err := json.Marshal(yamlToJSONValue(mc.Spec.Config))
		require.NoError(t, err)
		require.JSONEq(t, string(r.Ignition), string(ign))
	})

	t.Run("When rendered, it should give the kubelet every ECR glob and the aliases", func(t *testing.T) {
		var cfg struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Providers  []struct {
				Name                 string
				MatchImages          []string `yaml:"matchImages"`
				DefaultCacheDuration string   `yaml:"defaultCacheDuration"`
				APIVersion           string   `yaml:"apiVersion"`
				Env                  []struct{ Name, Value string }
			}
		}
		require.NoError(t, yaml.UnmarshalStrict(r.KubeletConfig, &cfg))
		require.Equal(t, "kubelet.config.k8s.io/v1", cfg.APIVersion)
		require.Equal(t, "CredentialProviderConfig", cfg.Kind)
		require.Len(t, cfg.Providers, 1)
		p := cfg.Providers[0]
		require.Equal(t, "ecr-credential-provider", p.Name)
		require.Equal(t, "credentialprovider.kubelet.k8s.io/v1", p.APIVersion)
		require.Equal(t, "6h0m0s", p.DefaultCacheDuration)
		require.Equal(t, append(ecrhost.MatchImages(), "mirror.example.org", "registry.example.com"), p.MatchImages)
		// Both aliases are in us-east-1: the plugin learns it from AWS_REGION.
		require.Equal(t, []struct{ Name, Value string }{{"AWS_REGION", "us-east-1"}}, p.Env)
		// Everything the stock MCO list matches is still matched.
		for _, stock := range []string{"123456789012.dkr.ecr.us-east-1.amazonaws.com", "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn",
			"123456789012.dkr.ecr-fips.us-east-1.amazonaws.com", "123456789012.dkr.ecr.us-iso-east-1.c2s.ic.gov",
			"123456789012.dkr.ecr.us-isob-east-1.sc2s.sgov.gov"} {
			require.True(t, matchesAny(p.MatchImages, stock), stock)
		}
		for _, h := range realHosts {
			require.True(t, matchesAny(p.MatchImages, h), h)
		}
	})

	t.Run("When extra providers are given, it should keep them after the ECR provider", func(t *testing.T) {
		extra := kubeletconfigv1.CredentialProvider{Name: "crio-credential-provider", MatchImages: []string{"docker.io"}, APIVersion: pluginAPIVersion}
		r, err := Render(Options{ExtraProviders: []kubeletconfigv1.CredentialProvider{extra}})
		require.NoError(t, err)
		require.Contains(t, string(r.KubeletConfig), "- name: crio-credential-provider\n  matchImages:\n  - docker.io\n")
	})
}

func matchesAny(globs []string, host string) bool {
	for _, g := range globs {
		if kubeletGlobMatch(g, host) {
			return true
		}
	}
	return false
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// yamlToJSONValue turns yaml.v2's map[interface{}]interface{} into values
// encoding/json can marshal.
func yamlToJSONValue(v any) any {
	switch v := v.(type) {
	case map[any]any:
		m := map[string]any{}
		for k, val := range v {
			m[k.(string)] = yamlToJSONValue(val)
		}
		return m
	case []any:
		for i := range v {
			v[i] = yamlToJSONValue(v[i])
		}
		return v
	default:
		return v
	}
}

func TestRenderedYAMLWithoutRender(t *testing.T) {
	var r *Rendered
	_, err := r.YAML()
	require.True(t, err != nil && !errors.Is(err, ErrInvalidOptions))
}
