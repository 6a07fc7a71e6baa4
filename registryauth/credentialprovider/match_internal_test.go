package credentialprovider

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMatchGlob(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pattern string
		image   string
		want    bool
	}{
		{name: "When each '*' covers one label, it should match", pattern: "*.dkr.ecr.*.amazonaws.com", image: "123456789012.dkr.ecr.us-east-1.amazonaws.com/app", want: true},
		{name: "When the label counts differ, it should not match", pattern: "*.dkr.ecr.*.amazonaws.com", image: "123456789012.dkr.ecr.us-east-1.amazonaws.com.cn/app"},
		{name: "When a '*' would have to cross a dot, it should not match", pattern: "*.amazonaws.com", image: "123456789012.dkr.ecr.us-east-1.amazonaws.com"},
		{name: "When a glob matches part of a label, it should match", pattern: "app*.k8s.io", image: "apps.k8s.io/x", want: true},
		{name: "When the pattern's path is a prefix, it should match", pattern: "registry.io/team", image: "registry.io/team/app", want: true},
		{name: "When the pattern's path is a plain string prefix, it should match as the kubelet does", pattern: "registry.io/team", image: "registry.io/teamwork/app", want: true},
		{name: "When the path differs, it should not match", pattern: "registry.io/team", image: "registry.io/other/app"},
		{name: "When the ports are equal, it should match", pattern: "registry.io:8080", image: "registry.io:8080/app", want: true},
		{name: "When only the image has a port, it should not match", pattern: "registry.io", image: "registry.io:8080/app"},
		{name: "When only the pattern has a port, it should not match", pattern: "registry.io:8080", image: "registry.io/app"},
		{name: "When the host case differs, it should match as DNS does", pattern: "*.DKR.ecr.*.amazonaws.com", image: "123456789012.dkr.ECR.us-east-1.amazonaws.com", want: true},
		{name: "When the pattern is a bad glob, it should not match", pattern: "[.io", image: "a.io"},
		{name: "When the pattern does not parse, it should not match", pattern: "%zz", image: "a.io"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, matchGlob(tc.pattern, tc.image))
		})
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		authKey        bool
	}{
		{name: "When an image has a tag and a digest, it should drop both", in: "123456789012.dkr.ecr.us-east-1.amazonaws.com/openshift/release:4.18.0@sha256:abc", want: "123456789012.dkr.ecr.us-east-1.amazonaws.com/openshift/release"},
		{name: "When a host has a port and no path, it should keep the port", in: "registry.io:5000", want: "registry.io:5000"},
		{name: "When a host has a port and a tagged path, it should keep the port and drop the tag", in: "registry.io:5000/app:1.0", want: "registry.io:5000/app"},
		{name: "When the input is a URL, it should drop the scheme and trailing slash", in: "HTTPS://Registry.IO/v2/", want: "registry.io/v2"},
		{name: "When an auth key is a registry API URL, it should drop the scheme and the /v2/ prefix", in: "https://registry.io/v2/", want: "registry.io", authKey: true},
		{name: "When an auth key has a /v1/ path, it should drop the prefix", in: "registry.io/v1/team", want: "registry.io/team", authKey: true},
		{name: "When an auth key is a glob, it should keep it", in: "*.dkr.ecr.*.amazonaws.com", want: "*.dkr.ecr.*.amazonaws.com", authKey: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.authKey {
				require.Equal(t, tc.want, normalizeAuthKey(tc.in))
			} else {
				require.Equal(t, tc.want, normalizeImage(tc.in))
			}
		})
	}
}

func TestRedactStderr(t *testing.T) {
	t.Parallel()
	const jwt = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJl"
	tests := []struct {
		name     string
		stderr   string
		known    []string
		want     []string
		wantGone []string
	}{
		{name: "When stderr shows a known password, it should redact it", stderr: "cached plainpassword here", known: []string{"plainpassword"}, want: []string{"cached <redacted> here"}, wantGone: []string{"plainpassword"}},
		{name: "When stderr shows a JSON password field, it should redact its value", stderr: `{"username":"AWS","password":"hunter2hunter2"}`, want: []string{`"password":<redacted>`}, wantGone: []string{"hunter2"}},
		{name: "When stderr shows an assignment, it should redact its value", stderr: "token=abc123 secret: s3cr3t, AWS_SESSION_TOKEN=xyz", wantGone: []string{"abc123", "s3cr3t", "xyz"}},
		{name: "When stderr shows an Authorization header, it should redact the credentials", stderr: "Authorization: Basic QVdTOnBhc3N3b3Jk", wantGone: []string{"QVdTOnBhc3N3b3Jk"}},
		{name: "When stderr shows a JWT, it should redact it", stderr: "bad token " + jwt + " refused", want: []string{"bad token <redacted> refused"}, wantGone: []string{jwt[:20]}},
		{name: "When stderr shows paths and words, it should keep them", stderr: "open /usr/libexec/kubelet-image-credential-provider-plugins/ecr-credential-provider.yaml: no such file", want: []string{"/usr/libexec/kubelet-image-credential-provider-plugins/ecr-credential-provider.yaml: no such file"}},
		{name: "When stderr is long, it should truncate it after redacting", stderr: strings.Repeat("x", 2000) + " password=tail", want: []string{"...[truncated]"}, wantGone: []string{"tail"}},
		{name: "When stderr is not UTF-8, it should keep it printable", stderr: "bad \xff byte", want: []string{"bad ? byte"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := redactStderr([]byte(tc.stderr), tc.known)
			require.LessOrEqual(t, len(got), maxStderr+len("...[truncated]"))
			for _, w := range tc.want {
				require.Contains(t, got, w)
			}
			for _, g := range tc.wantGone {
				require.NotContains(t, got, g)
			}
		})
	}
}
