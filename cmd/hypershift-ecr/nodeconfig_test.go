package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v2"
	kubeletv1 "k8s.io/kubelet/config/v1"
	sigsjson "sigs.k8s.io/json"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
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
