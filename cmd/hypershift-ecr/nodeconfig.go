package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1 "k8s.io/kubelet/config/v1"

	"github.com/openshift/hypershift-ecr/registryauth/credentialprovider"
)

const (
	kubeletConfigAPIVersion = "kubelet.config.k8s.io/v1"
	defaultProviderName     = "ecr-credential-provider"
)

func nodeConfigCommand() *command {
	return &command{
		name:    "node-config",
		summary: "print the kubelet CredentialProviderConfig covering every ECR host form",
		usage:   "node-config [flags]",
		description: `
Print the kubelet's CredentialProviderConfig (kubelet.config.k8s.io/v1) for the
ECR credential provider. Its matchImages list is generated from the same table
of host forms the ECR host parser uses: commercial, GovCloud, FIPS, dual-stack,
China, EU sovereign cloud, every ISO partition and ECR Public, plus --alias
hosts. The MCO's default file misses dual-stack, EUSC and most ISO forms.

The provider is named ecr-credential-provider, the binary OpenShift installs in
/usr/libexec/kubelet-image-credential-provider-plugins. To use this binary as
the plugin instead, install it under the provider's name and pass
--plugin-arg credential-provider (and --plugin-arg --alias=... for aliases).`,
		example: `hypershift-ecr node-config > /etc/kubernetes/credential-providers/ecr-credential-provider.yaml
hypershift-ecr node-config --alias registry.example.com=123456789012.dkr.ecr.us-east-1.amazonaws.com -o json`,
		setup: func(c *cli, fs *flag.FlagSet) func(context.Context, []string) error {
			var aliases aliasFlags
			aliases.register(fs)
			name := fs.String("name", defaultProviderName, "provider `name`: the plugin executable's file name")
			cache := fs.Duration("cache-duration", 12*time.Hour, "defaultCacheDuration for answers without a cacheDuration")
			var pluginArgs stringList
			fs.Var(&pluginArgs, "plugin-arg", "`argument` passed to the plugin (args); repeatable")
			out := newOutputFlag(fs, "yaml", "yaml", "json")
			return func(ctx context.Context, args []string) error {
				if err := noArgs(args); err != nil {
					return err
				}
				_, parser, err := aliases.aliases()
				if err != nil {
					return err
				}
				if *name == "" || strings.ContainsAny(*name, "/\\") {
					return usagef("--name %q: want a file name", *name)
				}
				if *cache <= 0 {
					return usagef("--cache-duration %v: want a positive duration", *cache)
				}
				cfg := &kubeletv1.CredentialProviderConfig{
					TypeMeta: metav1.TypeMeta{APIVersion: kubeletConfigAPIVersion, Kind: "CredentialProviderConfig"},
					Providers: []kubeletv1.CredentialProvider{{
						Name:                 *name,
						MatchImages:          parser.MatchImages(),
						DefaultCacheDuration: &metav1.Duration{Duration: *cache},
						APIVersion:           credentialprovider.APIVersion,
						Args:                 pluginArgs,
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
