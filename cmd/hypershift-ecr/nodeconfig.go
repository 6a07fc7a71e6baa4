package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1 "k8s.io/kubelet/config/v1"

	"github.com/openshift/hypershift-ecr/pkg/nodeconfig"
	"github.com/openshift/hypershift-ecr/registryauth/credentialprovider"
)

const (
	kubeletConfigAPIVersion = "kubelet.config.k8s.io/v1"
	defaultProviderName     = "ecr-credential-provider"
)

func nodeConfigCommand() *command {
	return &command{
		name:    "node-config",
		summary: "print the kubelet CredentialProviderConfig, or the worker MachineConfig for ECR mirrors",
		usage:   "node-config [--machineconfig | --ignition] [flags]",
		description: `
Without --machineconfig or --ignition, print the kubelet's CredentialProviderConfig
(kubelet.config.k8s.io/v1) for the ECR credential provider. Its matchImages list
is generated from the same table of host forms the ECR host parser uses:
commercial, GovCloud, FIPS, dual-stack, China, EU sovereign cloud, every ISO
partition and ECR Public, plus --alias hosts. The MCO's default file misses
dual-stack, EUSC and most ISO forms.

The provider is named ecr-credential-provider, the binary OpenShift installs in
/usr/libexec/kubelet-image-credential-provider-plugins. To use this binary as
the plugin instead, install it under the provider's name and pass
--plugin-arg credential-provider (and --plugin-arg --alias=... for aliases).

--machineconfig prints, instead, the whole worker-node configuration that lets
CRI-O pull through ECR mirrors with the instance role (see docs/nodes.md): a
ConfigMap whose key "config" holds the MachineConfig
99-worker-ecr-credential-helper, ready for NodePool.spec.config. The
MachineConfig writes three files: the registries.conf drop-in, the credential
helper /usr/local/bin/docker-credential-ecr-login-kubelet and the kubelet
CredentialProviderConfig. --ignition prints the same three files as a bare
Ignition 3.2.0 config (always JSON). Both are rendered from the mirror rules
(the flags below or -f files, the rules the nodes get) and --alias; every
mirror host must be an ECR host or an alias, otherwise the command exits 2.
--pull-secret is read only to warn, on stderr, about ECR entries that would
shadow the helper; nothing of it is printed. The output holds no credential and
is the same for the same flags, so a NodePool rolls its nodes only once.
In this mode --cache-duration defaults to 6h and must be under 12h.`,
		example: `hypershift-ecr node-config > /etc/kubernetes/credential-providers/ecr-credential-provider.yaml
hypershift-ecr node-config --alias registry.example.com=123456789012.dkr.ecr.us-east-1.amazonaws.com -o json
hypershift-ecr node-config --machineconfig --namespace clusters \
  --ecr-release-mirror 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4 \
  --pull-secret pull-secret.json | oc apply -f -
hypershift-ecr node-config --ignition -f idms.yaml > ecr-credential-helper.ign`,
		setup: func(c *cli, fs *flag.FlagSet) func(context.Context, []string) error {
			var aliases aliasFlags
			aliases.register(fs)
			name := fs.String("name", defaultProviderName, "provider `name`: the plugin executable's file name")
			cache := fs.Duration("cache-duration", 12*time.Hour, "the kubelet's defaultCacheDuration for answers without a cacheDuration; with --machineconfig or --ignition it defaults to 6h, must be under 12h and also caps how long the helper caches an answer")
			var pluginArgs, pluginEnv stringList
			fs.Var(&pluginArgs, "plugin-arg", "`argument` passed to the plugin (args); repeatable")
			fs.Var(&pluginEnv, "plugin-env", "environment variable passed to the plugin (env), `NAME=value`, e.g. AWS_ENDPOINT_URL_ECR=https://vpce-...; repeatable")
			out := newOutputFlag(fs, "yaml", "yaml", "json")
			machineConfig := fs.Bool("machineconfig", false, "print the ConfigMap holding the worker MachineConfig (helper, registries.conf drop-in, kubelet config) for NodePool.spec.config")
			ignition := fs.Bool("ignition", false, "print the same files as a bare Ignition 3.2.0 config (JSON)")
			var pf policyFlags
			pf.register(fs)
			pullSecret := fs.String("pull-secret", "", "with --machineconfig or --ignition: the HostedCluster pull secret `file`, read to warn about ECR entries that would shadow the helper; - is stdin")
			namespace := fs.String("namespace", "", "with --machineconfig: the ConfigMap's `namespace`, the NodePool's (default: none, as oc apply -n chooses)")
			return func(ctx context.Context, args []string) error {
				if err := noArgs(args); err != nil {
					return err
				}
				aliasList, parser, err := aliases.aliases()
				if err != nil {
					return err
				}
				if *name == "" || strings.ContainsAny(*name, "/\\") {
					return usagef("--name %q: want a file name", *name)
				}
				if *cache <= 0 {
					return usagef("--cache-duration %v: want a positive duration", *cache)
				}
				env, err := parsePluginEnv(pluginEnv)
				if err != nil {
					return err
				}
				set := map[string]bool{}
				fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
				switch {
				case *machineConfig && *ignition:
					return usagef("--machineconfig and --ignition: choose one")
				case *machineConfig || *ignition:
					if *ignition && set["o"] {
						return usagef("-o does not apply to --ignition, which is always JSON")
					}
					if *ignition && *namespace != "" {
						return usagef("--namespace applies to --machineconfig only")
					}
					opts := nodeconfig.Options{
						Aliases:    aliasList,
						Namespace:  *namespace,
						PluginPath: nodeconfig.PluginDir + "/" + *name,
						PluginArgs: pluginArgs,
						PluginEnv:  env,
					}
					if set["cache-duration"] {
						opts.CacheDuration = *cache
					}
					return c.nodeMachineConfig(&pf, opts, *pullSecret, *ignition, out.value)
				case !pf.empty() || *pullSecret != "" || *namespace != "":
					return usagef("mirror rules, --pull-secret and --namespace need --machineconfig or --ignition")
				}
				cfg := &kubeletv1.CredentialProviderConfig{
					TypeMeta: metav1.TypeMeta{APIVersion: kubeletConfigAPIVersion, Kind: "CredentialProviderConfig"},
					Providers: []kubeletv1.CredentialProvider{{
						Name:                 *name,
						MatchImages:          parser.MatchImages(),
						DefaultCacheDuration: &metav1.Duration{Duration: *cache},
						APIVersion:           credentialprovider.APIVersion,
						Args:                 pluginArgs,
						Env:                  env,
					}},
				}
				data, err := renderNodeConfig(cfg, out.value)
				if err != nil {
					return err
				}
				_, err = c.stdout.Write(data)
				return err
			}
		},
	}
}

// nodeMachineConfig renders the worker-node configuration with
// pkg/nodeconfig and prints the ConfigMap (YAML or JSON) or the bare
// Ignition config. Warnings go to stderr. Every rendering error comes from
// the flags or the files they name, so it is a usage error (exit 2), with
// errors.Is still matching nodeconfig.ErrNotECRMirror.
func (c *cli) nodeMachineConfig(pf *policyFlags, opts nodeconfig.Options, pullSecretFile string, ignition bool, format string) error {
	policy, err := pf.policy(c.stdin)
	if err != nil {
		return err
	}
	opts.Policy = policy
	if pullSecretFile != "" {
		// Read for the warnings only: the bytes are never printed.
		if opts.PullSecret, err = readInput(pullSecretFile, c.stdin); err != nil {
			return usagef("--pull-secret: %v", err)
		}
	}
	r, err := nodeconfig.Render(opts)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(c.stderr, "%s node-config: warning: %s\n", progName, w)
	}
	var data []byte
	switch {
	case ignition:
		data = append(bytes.Clone(r.Ignition), '\n')
	case format == "json":
		cm := r.ConfigMap
		meta := map[string]any{"name": cm.Name}
		if cm.Namespace != "" {
			meta["namespace"] = cm.Namespace
		}
		// apiVersion, kind, metadata, data: the order of the YAML form.
		doc := orderedObject(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": cm.Data},
			"apiVersion", "kind", "metadata", "data")
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return err
		}
		data = b.Bytes()
	default:
		if data, err = r.YAML(); err != nil {
			return err
		}
	}
	_, err = c.stdout.Write(data)
	return err
}

// parsePluginEnv reads --plugin-env NAME=value flags.
func parsePluginEnv(values []string) ([]kubeletv1.ExecEnvVar, error) {
	var env []kubeletv1.ExecEnvVar
	for _, v := range values {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return nil, usagef("--plugin-env %q: want NAME=value", v)
		}
		env = append(env, kubeletv1.ExecEnvVar{Name: k, Value: val})
	}
	return env, nil
}

// renderNodeConfig writes cfg as YAML or JSON, apiVersion first and the
// cache duration in its short form ("12h", as the MCO writes it, rather
// than metav1.Duration's "12h0m0s"; both parse the same).
func renderNodeConfig(cfg *kubeletv1.CredentialProviderConfig, format string) ([]byte, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	providers := []any{}
	for _, p := range cfg.Providers {
		var m map[string]any
		praw, err := json.Marshal(p)
		if err == nil {
			err = json.Unmarshal(praw, &m)
		}
		if err != nil {
			return nil, err
		}
		m["defaultCacheDuration"] = shortDuration(p.DefaultCacheDuration.Duration)
		providers = append(providers, orderedObject(m, "name", "matchImages", "defaultCacheDuration", "apiVersion", "args", "env"))
	}
	doc["providers"] = providers
	top := orderedObject(doc, "apiVersion", "kind", "providers")
	if format == "json" {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(top); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	j, err := json.Marshal(top)
	if err != nil {
		return nil, err
	}
	return yamlFromJSON(j)
}

// orderedObjectT is a JSON object whose keys come out in a fixed order.
type orderedObjectT struct {
	keys []string
	m    map[string]any
}

// orderedObject orders m's keys: first the given ones, then the rest sorted.
func orderedObject(m map[string]any, first ...string) orderedObjectT {
	var keys []string
	seen := map[string]bool{}
	for _, k := range first {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
			seen[k] = true
		}
	}
	for _, k := range sortedKeys(m) {
		if !seen[k] {
			keys = append(keys, k)
		}
	}
	return orderedObjectT{keys: keys, m: m}
}

func (o orderedObjectT) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kj, _ := json.Marshal(k)
		vj, err := json.Marshal(o.m[k])
		if err != nil {
			return nil, err
		}
		b.Write(kj)
		b.WriteByte(':')
		b.Write(vj)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// shortDuration drops zero trailing units: 12h0m0s is 12h, 1h30m0s is 1h30m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
