package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notYAML := filepath.Join(dir, "broken.yaml")
	require.NoError(t, os.WriteFile(notYAML, []byte("kind: [unterminated"), 0o600))
	configMap := filepath.Join(dir, "cm.yaml")
	require.NoError(t, os.WriteFile(configMap, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"), 0o600))
	release := releaseRepo + "@sha256:" + strings.Repeat("a", 64)

	tests := []struct {
		name string
		args []string
		want string // in the one stderr line
	}{
		{"When no command is given, it should name --help", nil, "hypershift-ecr: no command given"},
		{"When the command is unknown, it should say so", []string{"mirror"}, `hypershift-ecr: unknown command "mirror"`},
		{"When a flag comes before the command, it should say so", []string{"--verbose", "demo"}, "hypershift-ecr: unknown flag --verbose"},
		{"When help names an unknown command, it should say so", []string{"help", "nope"}, `unknown command "nope"`},
		{"When a flag is unknown, it should name it and --help", []string{"resolve", "--nope", release}, "hypershift-ecr resolve: flag provided but not defined: -nope (see 'hypershift-ecr resolve --help')"},
		{"When resolve has no image, it should ask for one", []string{"resolve"}, "hypershift-ecr resolve: want exactly one IMAGE, got 0 arguments"},
		{"When resolve has two images, it should ask for one", []string{"resolve", release, release}, "want exactly one IMAGE, got 2"},
		{"When the image is not a reference, it should say so", []string{"resolve", "Not//An Image"}, "invalid image reference"},
		{"When a --mirror has no '=', it should show the form", []string{"resolve", "--mirror", "quay.io", release}, `--mirror "quay.io": want source=mirror`},
		{"When --overrides is malformed, it should quote the pair", []string{"resolve", "--overrides", "a=b=c", release}, "overrides pair 0"},
		{"When --ecr-release-mirror is a bare host, it should refuse it", []string{"resolve", "--ecr-release-mirror", ecrHost, release}, "bare registry host"},
		{"When --pull-through-cache is not on ECR, it should refuse it", []string{"resolve", "--pull-through-cache", "quay.io=mirror.example.com/quay", release}, "not on an Amazon ECR registry host"},
		{"When --never-contact-source has no flag rule, it should say so", []string{"resolve", "--never-contact-source", release}, "--never-contact-source needs a mirror rule"},
		{"When -f names a missing file, it should say so", []string{"resolve", "-f", filepath.Join(dir, "missing.yaml"), release}, "no such file"},
		{"When -f holds broken YAML, it should say so", []string{"resolve", "-f", notYAML, release}, "invalid YAML"},
		{"When -f holds no mirror configuration, it should name the kinds", []string{"resolve", "-f", configMap, release}, "v1 ConfigMap is not a mirror configuration"},
		{"When -o is unknown, it should list the formats", []string{"node-config", "-o", "xml"}, `invalid value "xml" for flag -o: want one of yaml, json`},
		{"When node-config gets an argument, it should refuse it", []string{"node-config", "extra"}, `unexpected argument "extra"`},
		{"When an alias points at a host that is not ECR, it should say so", []string{"node-config", "--alias", "registry.example.com=quay.io"}, "is not a private Amazon ECR registry host"},
		{"When an alias is itself an ECR host, it should refuse it", []string{"node-config", "--alias", ecrHost + "=" + ecrHost}, "--alias:"},
		{"When the cache duration is not positive, it should refuse it", []string{"node-config", "--cache-duration", "0s"}, "want a positive duration"},
		{"When credentials gets a host that is not ECR, it should say so", []string{"credentials", "quay.io"}, `"quay.io" is not an Amazon ECR registry host`},
		{"When credentials gets no host, it should ask for one", []string{"credentials"}, "want exactly one HOST"},
		{"When --api-endpoint is not a URL, it should say so", []string{"credentials", "--api-endpoint", "vpce-0abc", ecrHost}, "--api-endpoint"},
		{"When preflight has no --release, it should ask for it", []string{"preflight"}, "--release is required"},
		{"When --platform is malformed, it should show the form", []string{"preflight", "--release", release, "--platform", "amd64"}, "want os/arch"},
		{"When credential-provider gets an argument, it should refuse it", []string{"credential-provider", "x"}, `unexpected argument "x"`},
		{"When demo gets an argument, it should refuse it", []string{"demo", "now"}, `unexpected argument "now"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			c := newCLI(strings.NewReader(""), &stdout, &stderr)
			c.loadAWSConfig = nil // a usage error must come before any AWS call
			code := c.run(t.Context(), tc.args)
			require.Equal(t, exitUsage, code, "stderr: %s", stderr.String())
			require.Empty(t, stdout.String())
			require.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line: %q", stderr.String())
			require.Contains(t, stderr.String(), tc.want)
		})
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"When --help is given alone, it should list every command", []string{"--help"},
			[]string{"Usage:\n  hypershift-ecr COMMAND [flags]", "demo", "resolve", "preflight", "credentials", "credential-provider", "node-config", "Examples:"}},
		{"When -h is given alone, it should print the same help", []string{"-h"}, []string{"Commands:"}},
		{"When help names a command, it should print that command's help", []string{"help", "resolve"}, []string{"hypershift-ecr resolve [flags] IMAGE"}},
	}
	for _, cmd := range commands() {
		tests = append(tests, struct {
			name string
			args []string
			want []string
		}{"When " + cmd.name + " --help is given, it should print usage, description, flags with defaults and an example",
			[]string{cmd.name, "--help"},
			[]string{"Usage:\n  hypershift-ecr " + cmd.usage, "Flags:", "-h, --help", "Examples:\n  hypershift-ecr " + cmd.name}})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			c := newCLI(strings.NewReader(""), &stdout, &stderr)
			require.Equal(t, exitOK, c.run(t.Context(), tc.args))
			require.Empty(t, stderr.String())
			for _, w := range tc.want {
				require.Contains(t, stdout.String(), w)
			}
		})
	}

	t.Run("When a flag has a default, it should be shown", func(t *testing.T) {
		t.Parallel()
		var stdout bytes.Buffer
		c := newCLI(strings.NewReader(""), &stdout, &bytes.Buffer{})
		require.Equal(t, exitOK, c.run(t.Context(), []string{"node-config", "-h"}))
		require.Contains(t, stdout.String(), "(default ecr-credential-provider)")
		require.Contains(t, stdout.String(), "(default yaml)")
	})
}

func TestParseInterspersed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		want    []string
		mirrors []string
	}{
		{"When flags follow the argument, it should parse them", []string{"img", "--mirror", "a=b"}, []string{"img"}, []string{"a=b"}},
		{"When flags surround arguments, it should keep the arguments in order", []string{"--mirror", "a=b", "x", "--mirror=c=d", "y"}, []string{"x", "y"}, []string{"a=b", "c=d"}},
		{"When -- is given, it should stop parsing flags", []string{"x", "--", "--mirror", "a=b"}, []string{"x", "--mirror", "a=b"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := newFlagSet("t")
			var pf policyFlags
			pf.register(fs)
			got, err := parseInterspersed(fs, tc.args)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.mirrors, []string(pf.mirrors))
		})
	}
}
