package dockerconfig

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func fuzzSeeds() []string {
	return []string{
		``,
		`{}`,
		// Small seeds only: the fuzzer minimises every new input for up to a
		// minute, which stalls it on a 16 KB pull secret.
		`{"auths":{"cloud.openshift.com":{"auth":"` + quayAuth + `","email":"someone@example.com"},"quay.io":{"auth":"` + quayAuth + `","email":"someone@example.com"}}}`,
		"{\n  \"auths\": {\n    \"registry.redhat.io\": {\n      \"auth\": \"" + secretAuth + "\"\n    }\n  }\n}\n",
		`{"auths":{"quay.io":{"auth":"` + quayAuth + `","email":"someone@example.com"}},"credsStore":"desktop","credHelpers":{"` + ecrHost + `":"ecr-login"}}`,
		`{"https://index.docker.io/v1/":{"auth":"` + secretAuth + `","email":"a@b.c"},"localhost:5000":{"username":"u","password":"p"}}`,
		`{"auths":{"qu\u0061y.io":{"\u0061uth":"` + quayAuth[:8] + `\n` + quayAuth[8:] + `","password":"\u00e9\ud800"}}}`,
		`{"auths":{"a.io":{"auth":"eA=="},"b.io":{"auth":"!!"},"c.io":{"auth":5}}}`,
		`{"auths":{"a.io":{"auth":"YTpi","auth":null}},"auths":{"b.io":{"identitytoken":"` + secretPass + `"}}}`,
		`{"auths":{"":{}},"x":[1,-2.5e+3,true,false,null,{"y":[]}]}`,
		`{"auths":{"quay.io":"` + secretAuth + `"}}`,
		`[{"auths":{}}]`,
		`{"auths":{}} x`,
	}
}

var knownReasons = []string{
	reasonEOF, reasonChar, reasonEscape, reasonControl, reasonTrailing, reasonDepth,
	reasonNotObject, reasonAuthsType, reasonEntryType, reasonAuthType, reasonUserType,
	reasonPassType, reasonAuthBase64, reasonAuthNoColon, reasonEmptyHost,
}

// FuzzParse checks that Parse never panics or modifies its input, that
// its output is a fixed point of Parse+Marshal, and that its errors never
// carry secret material.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		orig := bytes.Clone(data)
		c, err := Parse(data)
		require.Equal(t, orig, data, "Parse modified its input")
		if err != nil {
			requireSafeError(t, data, err)
			return
		}
		out := c.Marshal()
		c2, err := Parse(out)
		require.NoError(t, err, "Marshal wrote what Parse rejects: %q", out)
		requireSameBytes(t, out, c2.Marshal())
		require.Equal(t, c.Hosts(), c2.Hosts())
		for _, h := range c.Hosts() {
			e1, ok1 := c.Lookup(h)
			e2, ok2 := c2.Lookup(h)
			require.True(t, ok1 && ok2, h)
			require.Equal(t, e1, e2, h)
		}
	})
}

// requireSafeError checks the error policy: a *ParseError with a fixed
// reason, a host that is a key of the document (never a value), and no
// secret of the document in its message.
func requireSafeError(t *testing.T, data []byte, err error) {
	t.Helper()
	require.ErrorIs(t, err, ErrMalformed)
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	require.Contains(t, knownReasons, pe.Reason)
	require.GreaterOrEqual(t, pe.Offset, 0)
	require.LessOrEqual(t, pe.Offset, len(data))
	keys, secrets := fuzzKeysAndSecrets(data)
	if pe.Host != "" {
		require.True(t, keys[pe.Host], "error names %q, which is not a registry key", pe.Host)
	}
	msg := err.Error()
	template := (&ParseError{Reason: pe.Reason, Offset: pe.Offset}).Error()
	for _, s := range secrets {
		if len(s) < 6 || strings.Contains(pe.Host, s) || strings.Contains(template, s) {
			continue // too short to mean anything, or the host is the secret
		}
		require.NotContains(t, msg, s, "error quotes a secret")
	}
}

// fuzzKeysAndSecrets returns, for a document that is valid JSON, the keys
// that can be registry hosts and every credential string in it.
func fuzzKeysAndSecrets(data []byte) (map[string]bool, []string) {
	keys := map[string]bool{}
	var secrets []string
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return keys, nil
	}
	maps := []map[string]json.RawMessage{top}
	var auths map[string]json.RawMessage
	if json.Unmarshal(top["auths"], &auths) == nil {
		maps = append(maps, auths)
	}
	for _, m := range maps {
		for k, raw := range m {
			keys[k] = true
			var f map[string]json.RawMessage
			if json.Unmarshal(raw, &f) != nil {
				continue
			}
			for _, name := range []string{"auth", "password", "identitytoken", "registrytoken"} {
				var s string
				if json.Unmarshal(f[name], &s) != nil {
					continue
				}
				secrets = append(secrets, s)
				if name == "auth" {
					if b, err := base64.StdEncoding.DecodeString(s); err == nil {
						secrets = append(secrets, string(b))
						if _, pass, ok := strings.Cut(string(b), ":"); ok {
							secrets = append(secrets, pass)
						}
					}
				}
			}
		}
	}
	return keys, secrets
}

// FuzzParseMatchesEncodingJSON checks the hand-written scanner against the
// encoding/json reference: same accept/reject decision, same reason and
// host when the document is valid JSON, same entries, same output.
func FuzzParseMatchesEncodingJSON(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		requireMatchesReference(t, data)
	})
}

// FuzzAuth aims the fuzzer at the base64 fast path: the auth value is
// inserted both raw and JSON-encoded, and Parse and SetAuth must agree
// with base64.StdEncoding.
func FuzzAuth(f *testing.F) {
	for _, s := range []string{quayAuth, secretAuth, "eA==", "YTpi", "YTo=", "YQ==", "YTpiYw", "YTpi\nYw==", "YTpi\x00", "Y\u00e9pi", "====", "YTpiYw=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, auth string) {
		q, _ := json.Marshal(auth)
		requireMatchesReference(t, []byte(`{"auths":{"quay.io":{"auth":`+string(q)+`}}}`))
		requireMatchesReference(t, []byte(`{"auths":{"quay.io":{"auth":"`+auth+`"}}}`))

		var c Config
		err := c.SetAuth(ecrHost, auth)
		raw, decErr := base64.StdEncoding.DecodeString(auth)
		want := auth != "" && decErr == nil && !strings.ContainsAny(auth, "\r\n") && bytes.IndexByte(raw, ':') >= 0
		require.Equal(t, want, err == nil, "SetAuth(%q) = %v", auth, err)
		if err == nil {
			e, ok := c.Lookup(ecrHost)
			require.True(t, ok)
			user, pass, _ := strings.Cut(string(raw), ":")
			require.Equal(t, Entry{user, pass}, e)
		} else {
			require.True(t, errors.Is(err, ErrMalformed))
		}
	})
}

// FuzzNormalizeKey checks that NormalizeKey is idempotent and only ever
// removes text or lower-cases ASCII.
func FuzzNormalizeKey(f *testing.F) {
	for _, s := range []string{"quay.io", "https://index.docker.io/v1/", "HTTP://A.b:5000/Path/", "https://https://x", "a/v2", "://", "x:/v1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		n := NormalizeKey(key)
		require.Equal(t, n, NormalizeKey(n), "not idempotent for %q", key)
		require.LessOrEqual(t, len(n), len(key))
		require.True(t, strings.Contains(lowerASCII(key), lowerASCII(n)), "%q is not part of %q", n, key)
		require.False(t, slices.ContainsFunc([]byte(n[:max(0, strings.IndexByte(n+"/", '/'))]), func(c byte) bool { return 'A' <= c && c <= 'Z' }))
	})
}
