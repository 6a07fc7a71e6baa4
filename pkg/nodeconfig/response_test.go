package nodeconfig

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	credentialproviderv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
	kjson "sigs.k8s.io/json"
)

// runResponseAWK runs the awk program the helper embeds, as the helper
// does, and returns its output and whether it accepted the response.
func runResponseAWK(t testing.TB, awk, host, response string) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, awk, "-v", "host="+host, "-v", "want="+pluginAPIVersion, compactAWK(responseAWK))
	cmd.Env = []string{"LC_ALL=C"}
	cmd.Stdin = strings.NewReader(response)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "%s did not finish on %q", awk, response)
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("running %s: %v", awk, err)
		}
		require.Empty(t, stdout.String(), "a refusal must print nothing")
		return "", false
	}
	require.Empty(t, stderr.String())
	return stdout.String(), true
}

func awkImplementations(t testing.TB) []string {
	var found []string
	for _, name := range []string{"awk", "gawk", "mawk"} {
		if p, err := exec.LookPath(name); err == nil {
			found = append(found, p)
		}
	}
	if len(found) == 0 {
		t.Skip("no awk installed")
	}
	return found
}

const (
	respHead = `{"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1","cacheKeyType":"Registry"`
	respAuth = `"auth":{"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":"AWS","password":"c2VjcmV0"}}`
)

func TestResponseAWK(t *testing.T) {
	tests := []struct {
		name     string
		response string
		want     string // "" = refused
	}{
		// What ecr-credential-provider writes (apimachinery's JSON
		// serializer: compact, TypeMeta first, a trailing newline).
		{name: "When the response is what the plugin writes, it should print the duration and credentials",
			response: respHead + `,"cacheDuration":"5h59m30.5s",` + respAuth + "}\n", want: "21570\nAWS\nc2VjcmV0\n"},
		{name: "When the response has no cacheDuration, it should print -1",
			response: respHead + "," + respAuth + "}", want: "-1\nAWS\nc2VjcmV0\n"},
		{name: "When cacheDuration is null, it should print -1",
			response: respHead + `,"cacheDuration":null,` + respAuth + "}", want: "-1\nAWS\nc2VjcmV0\n"},
		{name: "When cacheDuration is 0s, it should print 0",
			response: respHead + `,"cacheDuration":"0s",` + respAuth + "}", want: "0\nAWS\nc2VjcmV0\n"},
		{name: "When cacheDuration is in microseconds, it should print 0",
			response: respHead + `,"cacheDuration":"1.5µs",` + respAuth + "}", want: "0\nAWS\nc2VjcmV0\n"},
		{name: "When cacheDuration is negative, it should print 0",
			response: respHead + `,"cacheDuration":"-1h",` + respAuth + "}", want: "0\nAWS\nc2VjcmV0\n"},
		{name: "When cacheDuration has minutes and milliseconds, it should sum them",
			response: respHead + `,"cacheDuration":"2m1500ms",` + respAuth + "}", want: "121\nAWS\nc2VjcmV0\n"},
		{name: "When cacheDuration is not a duration, it should refuse the response",
			response: respHead + `,"cacheDuration":"6 hours",` + respAuth + "}"},
		{name: "When cacheDuration is a number, it should refuse the response",
			response: respHead + `,"cacheDuration":21600,` + respAuth + "}"},
		{name: "When the host key has capitals, it should still match",
			response: respHead + `,"auth":{"123456789012.DKR.ECR.us-east-1.amazonaws.com":{"username":"AWS","password":"c2VjcmV0"}}}`, want: "-1\nAWS\nc2VjcmV0\n"},
		{name: "When the host key is repeated, it should take the last, as encoding/json does",
			response: respHead + `,"auth":{"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":"AWS","password":"old"},"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":"AWS","password":"new"}}}`,
			want:     "-1\nAWS\nnew\n"},
		{name: "When a glob comes before the exact host, it should take the exact host",
			response: respHead + `,"auth":{"*.dkr.ecr.*.amazonaws.com":{"username":"glob","password":"glob"},"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":"AWS","password":"c2VjcmV0"}}}`,
			want:     "-1\nAWS\nc2VjcmV0\n"},
		{name: "When a key has a path, it should not match the host",
			response: respHead + `,"auth":{"123456789012.dkr.ecr.us-east-1.amazonaws.com/team":{"username":"AWS","password":"c2VjcmV0"}}}`},
		{name: "When a key has a scheme, it should not match the host",
			response: respHead + `,"auth":{"https://123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":"AWS","password":"c2VjcmV0"}}}`},
		{name: "When the password has escapes, it should print them as written",
			response: respHead + `,"auth":{"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":"AWS","password":"a\"b\\c\u003c\/"}}}`,
			want:     "-1\nAWS\n" + `a\"b\\c\u003c\/` + "\n"},
		{name: "When the username is null, it should refuse the response",
			response: respHead + `,"auth":{"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":null,"password":"c2VjcmV0"}}}`},
		{name: "When the password is a number, it should refuse the response",
			response: respHead + `,"auth":{"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":"AWS","password":12}}}`},
		{name: "When auth is an array, it should refuse the response", response: respHead + `,"auth":[]}`},
		{name: "When kind is missing, it should refuse the response",
			response: `{"apiVersion":"credentialprovider.kubelet.k8s.io/v1",` + respAuth + "}"},
		{name: "When kind is spelled with a capital, it should refuse the response as the kubelet does",
			response: `{"Kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1",` + respAuth + "}"},
		{name: "When a string holds a raw newline, it should refuse the response",
			response: respHead + `,"auth":{"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":"AWS","password":"a` + "\n" + `b"}}}`},
		{name: "When a string holds a control character, it should refuse the response",
			response: respHead + `,"auth":{"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":"AWS","password":"a` + "\x01" + `b"}}}`},
		{name: "When an escape is invalid, it should refuse the response",
			response: respHead + `,"auth":{"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":"AWS","password":"a\xb"}}}`},
		{name: "When a \\u escape is short, it should refuse the response",
			response: respHead + `,"auth":{"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":"AWS","password":"\u12"}}}`},
		{name: "When an object has a trailing comma, it should refuse the response", response: respHead + "," + respAuth + ",}"},
		{name: "When the document continues after the object, it should refuse the response", response: respHead + "," + respAuth + "}{}"},
		{name: "When the document is cut short, it should refuse the response", response: respHead + "," + respAuth},
		{name: "When a number is malformed, it should refuse the response", response: respHead + `,"x":01,` + respAuth + "}"},
		{name: "When nesting is deeper than 32, it should refuse the response",
			response: respHead + `,"x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "," + respAuth + "}"},
		{name: "When the document is an array, it should refuse it", response: "[" + respHead + "}]"},
		{name: "When the document is empty, it should refuse it", response: ""},
	}
	for _, awk := range awkImplementations(t) {
		for _, tc := range tests {
			t.Run(tc.name+" ("+awk+")", func(t *testing.T) {
				got, ok := runResponseAWK(t, awk, testECRHost, tc.response)
				require.Equal(t, tc.want != "", ok, "output %q", got)
				require.Equal(t, tc.want, got)
			})
		}
	}
}

// FuzzResponseAWK checks the awk reader against the kubelet's own decoding
// (sigs.k8s.io/json, case-sensitive): whatever awk accepts, the kubelet
// accepts too, with the same credentials for the host. awk may refuse more
// (it fails closed), but never a response shaped like the plugin's.
func FuzzResponseAWK(f *testing.F) {
	awk := awkImplementations(f)[0]
	f.Add(respHead + `,"cacheDuration":"6h0m0s",` + respAuth + "}\n")
	f.Add(respHead + `,"auth":{"*.dkr.ecr.*.amazonaws.com":{"username":"u","password":"p\u00e9"}}}`)
	f.Add(respHead + `,"auth":{"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":"AWS","password":"a\"b"},"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":"x","password":"y"}}}`)
	f.Fuzz(func(t *testing.T, response string) {
		out, ok := runResponseAWK(t, awk, testECRHost, response)
		if !ok {
			return
		}
		var resp credentialproviderv1.CredentialProviderResponse
		require.NoError(t, kjson.UnmarshalCaseSensitivePreserveInts([]byte(response), &resp), "awk accepted %q", response)
		require.Equal(t, "CredentialProviderResponse", resp.Kind)
		require.Equal(t, pluginAPIVersion, resp.APIVersion)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		require.Len(t, lines, 3)
		secs, err := strconv.ParseInt(lines[0], 10, 64)
		require.NoError(t, err)
		if resp.CacheDuration == nil {
			require.Equal(t, int64(-1), secs)
		} else {
			want := int64(resp.CacheDuration.Seconds())
			want = max(0, min(want, 1e9))
			require.InDelta(t, want, secs, 1, "cacheDuration %s", resp.CacheDuration.Duration)
		}
		var user, pass string
		require.NoError(t, json.Unmarshal([]byte(`"`+lines[1]+`"`), &user))
		require.NoError(t, json.Unmarshal([]byte(`"`+lines[2]+`"`), &pass))
		matched := false
		for k, a := range resp.Auth {
			if (strings.EqualFold(k, testECRHost) || kubeletGlobMatch(strings.ToLower(k), testECRHost)) && a.Username == user && a.Password == pass {
				matched = true
			}
		}
		require.True(t, matched, "awk answered credentials the kubelet has for no matching key")
	})
}
