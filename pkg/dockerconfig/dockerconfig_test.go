package dockerconfig

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	ecrHost      = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	ecrHostWest2 = "123456789012.dkr.ecr.us-west-2.amazonaws.com"
	// secretPass is a password that must never show up in an error.
	secretPass = "S3cr3t-P4ssw0rd-9f8e7d6c5b4a"
)

var (
	secretAuth   = b64("robot$ci:" + secretPass)
	quayAuth     = b64("openshift-release-dev+ocm_access_0c8a0c9e:quay-token")
	ecrOldToken  = b64("AWS:old-ecr-password")
	ecrNewToken  = b64("AWS:new-ecr-password")
	ecrNewToken2 = b64("AWS:other-ecr-password")
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// mustParse parses data and checks that Parse left it alone.
func mustParse(t *testing.T, data string) *Config {
	t.Helper()
	in := []byte(data)
	c, err := Parse(in)
	require.NoError(t, err)
	require.Equal(t, data, string(in), "Parse modified its input")
	return c
}

func TestParse(t *testing.T) {
	t.Parallel()
	type lookup struct {
		host  string
		entry Entry
	}
	tests := []struct {
		name    string
		in      string
		hosts   []string
		lookups []lookup
		out     string
	}{
		{
			name:  "When the input is empty, it should give an empty pull secret",
			in:    "",
			hosts: []string{},
			out:   `{"auths":{}}`,
		},
		{
			name:  "When the input is only whitespace, it should give an empty pull secret",
			in:    " \n\t\r ",
			hosts: []string{},
			out:   `{"auths":{}}`,
		},
		{
			name:  "When the input is an empty object, it should give an empty pull secret",
			in:    `{}`,
			hosts: []string{},
			out:   `{"auths":{}}`,
		},
		{
			name:    "When entries use auth, it should decode user and password from it",
			in:      `{"auths":{"quay.io":{"auth":"` + quayAuth + `","email":"someone@example.com"}}}`,
			hosts:   []string{"quay.io"},
			lookups: []lookup{{"quay.io", Entry{"openshift-release-dev+ocm_access_0c8a0c9e", "quay-token"}}},
		},
		{
			name:    "When an entry has only username and password, it should use them",
			in:      `{"auths":{"registry.example.com":{"username":"robot","password":"p@ss:word"}}}`,
			lookups: []lookup{{"registry.example.com", Entry{"robot", "p@ss:word"}}},
		},
		{
			name:    "When an entry has auth and username/password, it should let auth win",
			in:      `{"auths":{"quay.io":{"username":"other","password":"stale","auth":"` + quayAuth + `"}}}`,
			lookups: []lookup{{"quay.io", Entry{"openshift-release-dev+ocm_access_0c8a0c9e", "quay-token"}}},
		},
		{
			name:    "When auth is an empty string, it should fall back to username/password",
			in:      `{"auths":{"quay.io":{"auth":"","username":"robot","password":"pw"}}}`,
			lookups: []lookup{{"quay.io", Entry{"robot", "pw"}}},
		},
		{
			name:    "When an entry has only an identitytoken, it should be found with empty credentials",
			in:      `{"auths":{"registry.example.com":{"identitytoken":"opaque"}}}`,
			lookups: []lookup{{"registry.example.com", Entry{}}},
			out:     `{"auths":{"registry.example.com":{"identitytoken":"opaque"}}}`,
		},
		{
			name:    "When the password splits at the first colon, it should keep later colons in the password",
			in:      `{"auths":{"quay.io":{"auth":"` + b64("u:p:q") + `"}}}`,
			lookups: []lookup{{"quay.io", Entry{"u", "p:q"}}},
		},
		{
			name:    "When strings use JSON escapes, it should decode them",
			in:      `{"auths":{"qu\u0061y.io":{"\u0061uth":"` + strings.Replace(quayAuth, "b", `\u0062`, 1) + `"},"r.io":{"username":"a\"b","password":"\u00e9\n"}}}`,
			hosts:   []string{"quay.io", "r.io"},
			lookups: []lookup{{"quay.io", Entry{"openshift-release-dev+ocm_access_0c8a0c9e", "quay-token"}}, {"r.io", Entry{`a"b`, "é\n"}}},
		},
		{
			name:    "When auth is base64 broken into lines, it should decode it as base64.StdEncoding does",
			in:      `{"auths":{"quay.io":{"auth":"` + quayAuth[:8] + `\n` + quayAuth[8:] + `"}}}`,
			lookups: []lookup{{"quay.io", Entry{"openshift-release-dev+ocm_access_0c8a0c9e", "quay-token"}}},
		},
		{
			name:    "When a key is repeated, it should keep the last one as encoding/json does",
			in:      `{"auths":{"quay.io":{"auth":"` + secretAuth + `"},"quay.io":{"auth":"` + quayAuth + `"}}}`,
			hosts:   []string{"quay.io"},
			lookups: []lookup{{"quay.io", Entry{"openshift-release-dev+ocm_access_0c8a0c9e", "quay-token"}}},
			out:     `{"auths":{"quay.io":{"auth":"` + quayAuth + `"}}}`,
		},
		{
			name:  "When auths is repeated, it should keep the last one",
			in:    `{"auths":"not an object","auths":{"quay.io":{"auth":"` + quayAuth + `"}}}`,
			hosts: []string{"quay.io"},
		},
		{
			name:    "When the input is the legacy .dockercfg form, it should read its entries",
			in:      `{"quay.io":{"auth":"` + quayAuth + `","email":"someone@example.com"},"localhost":{"username":"u","password":"p"}}`,
			hosts:   []string{"localhost", "quay.io"},
			lookups: []lookup{{"localhost", Entry{"u", "p"}}},
			out:     `{"auths":{"localhost":{"username":"u","password":"p"},"quay.io":{"auth":"` + quayAuth + `","email":"someone@example.com"}}}`,
		},
		{
			name:  "When a config.json has settings but no auths, it should keep them and read no entries",
			in:    `{"credsStore":"desktop","credHelpers":{"` + ecrHost + `":"ecr-login"}}`,
			hosts: []string{},
			out:   `{"auths":{},"credHelpers":{"` + ecrHost + `":"ecr-login"},"credsStore":"desktop"}`,
		},
		{
			name:  "When the input is pretty-printed, it should write it compacted",
			in:    "{\n  \"auths\": {\n    \"quay.io\": {\n      \"auth\": \"" + quayAuth + "\",\n      \"email\": \"a b@example.com\"\n    }\n  },\n  \"HttpHeaders\": { \"User-Agent\": \"x y\" }\n}\n",
			out:   `{"HttpHeaders":{"User-Agent":"x y"},"auths":{"quay.io":{"auth":"` + quayAuth + `","email":"a b@example.com"}}}`,
			hosts: []string{"quay.io"},
		},
		{
			name: "When fields are unknown, it should keep them verbatim at the top level and in entries",
			in:   `{"zeta":[1,2.5e3,{"b":null,"a":true}],"auths":{"quay.io":{"email":"someone@example.com","auth":"` + quayAuth + `","x-custom":{"k":"v"}}},"HttpHeaders":{"User-Agent":"Docker-Client"},"credsStore":"desktop"}`,
			out:  `{"HttpHeaders":{"User-Agent":"Docker-Client"},"auths":{"quay.io":{"email":"someone@example.com","auth":"` + quayAuth + `","x-custom":{"k":"v"}}},"credsStore":"desktop","zeta":[1,2.5e3,{"b":null,"a":true}]}`,
		},
		{
			name:  "When a key needs escaping, it should write it as encoding/json does",
			in:    `{"auths":{"a<b>.io":{}},"\u00e9t\u00e9":1}`,
			hosts: []string{"a<b>.io"},
			out:   `{"auths":{"a\u003cb\u003e.io":{}},"été":1}`,
		},
		{
			name:  "When nesting in an unknown field is as deep as encoding/json allows, it should accept it",
			in:    `{"auths":{},"deep":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`,
			hosts: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := mustParse(t, tt.in)
			if tt.hosts != nil {
				require.Equal(t, tt.hosts, c.Hosts())
			}
			for _, l := range tt.lookups {
				got, ok := c.Lookup(l.host)
				require.True(t, ok, "Lookup(%q)", l.host)
				require.Equal(t, l.entry, got, "Lookup(%q)", l.host)
			}
			if tt.out != "" {
				require.Equal(t, tt.out, string(c.Marshal()))
			}
			requireMatchesReference(t, []byte(tt.in))
		})
	}
}

func TestParseMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     string
		host   string
		reason string
	}{
		{"When the JSON is cut short, it should say so", `{"auths":{"quay.io":{"auth":"` + secretAuth, "", reasonEOF},
		{"When the JSON is cut short inside an escape, it should say so", `{"auths":{"quay.io":{"password":"` + secretPass + `\u00`, "", reasonEOF},
		{"When data follows the document, it should reject it", `{"auths":{}} ` + secretAuth, "", reasonTrailing},
		{"When a second document follows, it should reject it", `{"auths":{}}{"auths":{"quay.io":{"auth":"` + secretAuth + `"}}}`, "", reasonTrailing},
		{"When a string has an invalid escape, it should reject it", `{"auths":{"quay.io":{"password":"` + secretPass + `\x"}}}`, "", reasonEscape},
		{"When a string has a raw control character, it should reject it", `{"auths":{"quay.io":{"password":"` + secretPass + "\t" + `"}}}`, "", reasonControl},
		{"When a literal is misspelt, it should reject it", `{"auths":{"quay.io":{"auth":tru}},"p":"` + secretPass + `"}`, "", reasonChar},
		{"When a number has a leading zero, it should reject it", `{"n":01,"p":"` + secretPass + `"}`, "", reasonChar},
		{"When a number has no digits after the point, it should reject it", `{"n":1.,"p":"` + secretPass + `"}`, "", reasonChar},
		{"When a key is not quoted, it should reject it", `{auths:{"quay.io":{"auth":"` + secretAuth + `"}}}`, "", reasonChar},
		{"When a member lacks its colon, it should reject it", `{"auths" {"quay.io":{"auth":"` + secretAuth + `"}}}`, "", reasonChar},
		{"When an object has a trailing comma, it should reject it", `{"auths":{"quay.io":{"auth":"` + secretAuth + `",}}}`, "", reasonChar},
		{"When the input starts with a byte order mark, it should reject it", "\ufeff" + `{"auths":{"quay.io":{"auth":"` + secretAuth + `"}}}`, "", reasonChar},
		{"When nesting is deeper than encoding/json allows, it should reject it", `{"p":"` + secretPass + `","deep":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`, "", reasonDepth},
		{"When the document is an array, it should reject it", `["` + secretAuth + `"]`, "", reasonNotObject},
		{"When the document is a string, it should reject it", `"` + secretAuth + `"`, "", reasonNotObject},
		{"When the document is null, it should reject it", `null`, "", reasonNotObject},
		{"When auths is a string, it should reject it", `{"auths":"` + secretAuth + `"}`, "", reasonAuthsType},
		{"When auths is an array, it should reject it", `{"auths":[{"auth":"` + secretAuth + `"}]}`, "", reasonAuthsType},
		{"When auths is null, it should reject it", `{"auths":null}`, "", reasonAuthsType},
		{"When an entry is a string, it should reject it", `{"auths":{"quay.io":"` + secretAuth + `"}}`, "quay.io", reasonEntryType},
		{"When an entry is null, it should reject it", `{"auths":{"quay.io":null}}`, "quay.io", reasonEntryType},
		{"When a legacy entry is not an object, it should reject it", `{"quay.io":"` + secretAuth + `"}`, "quay.io", reasonEntryType},
		{"When auth is not a string, it should reject it", `{"auths":{"quay.io":{"auth":["` + secretAuth + `"]}}}`, "quay.io", reasonAuthType},
		{"When auth is null, it should reject it", `{"auths":{"quay.io":{"auth":null,"password":"` + secretPass + `"}}}`, "quay.io", reasonAuthType},
		{"When username is not a string, it should reject it", `{"auths":{"quay.io":{"username":7,"password":"` + secretPass + `"}}}`, "quay.io", reasonUserType},
		{"When password is not a string, it should reject it", `{"auths":{"quay.io":{"username":"robot","password":{"v":"` + secretPass + `"}}}}`, "quay.io", reasonPassType},
		{"When auth is not base64, it should reject it", `{"auths":{"quay.io":{"auth":"` + secretPass + `!"}}}`, "quay.io", reasonAuthBase64},
		{"When auth is base64 without padding, it should reject it as base64.StdEncoding does", `{"auths":{"quay.io":{"auth":"` + strings.TrimRight(b64("robot:"+secretPass+"x"), "=") + `"}}}`, "quay.io", reasonAuthBase64},
		{"When auth has too much padding, it should reject it", `{"auths":{"quay.io":{"auth":"` + secretAuth[:8] + `===="}}}`, "quay.io", reasonAuthBase64},
		{"When auth has padding in the middle, it should reject it", `{"auths":{"quay.io":{"auth":"` + secretAuth[:6] + `==` + secretAuth[8:] + `"}}}`, "quay.io", reasonAuthBase64},
		{"When auth has escapes and is not base64, it should reject it", `{"auths":{"quay.io":{"auth":"` + secretPass + `\u0021"}}}`, "quay.io", reasonAuthBase64},
		{"When auth decodes without a colon, it should reject it", `{"auths":{"quay.io":{"auth":"` + b64(secretPass) + `"}}}`, "quay.io", reasonAuthNoColon},
		{"When a repeated auth ends on a bad one, it should reject it", `{"auths":{"quay.io":{"auth":"` + quayAuth + `","auth":"` + b64(secretPass) + `"}}}`, "quay.io", reasonAuthNoColon},
		{"When a host key is empty, it should reject it", `{"auths":{"":{"auth":"` + secretAuth + `"}}}`, "", reasonEmptyHost},
		{"When a host key is only a scheme, it should reject it", `{"auths":{"https://":{"auth":"` + secretAuth + `"}}}`, "https://", reasonEmptyHost},
		{"When a host key is only a path, it should reject it", `{"auths":{"/v2/":{"auth":"` + secretAuth + `"}}}`, "/v2/", reasonEmptyHost},
		{"When several entries are bad, it should report the first in sorted order", `{"auths":{"z.io":{"auth":1},"a.io":{"auth":"` + b64(secretPass) + `"}}}`, "a.io", reasonAuthNoColon},
		{"When an entry has several problems, it should report type errors before base64 errors", `{"auths":{"quay.io":{"auth":"` + secretPass + `!","password":1}}}`, "quay.io", reasonPassType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := []byte(tt.in)
			c, err := Parse(in)
			require.Nil(t, c)
			require.ErrorIs(t, err, ErrMalformed)
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, tt.reason, pe.Reason)
			require.Equal(t, tt.host, pe.Host)
			require.GreaterOrEqual(t, pe.Offset, 0)
			require.LessOrEqual(t, pe.Offset, len(in))
			require.Equal(t, tt.in, string(in), "Parse modified its input")
			requireNoSecret(t, err.Error(), secretPass, secretAuth, b64(secretPass))
			requireMatchesReference(t, in)
		})
	}
}

// requireNoSecret fails if msg contains any 6-byte window of a secret.
func requireNoSecret(t *testing.T, msg string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		for i := 0; i+6 <= len(s); i++ {
			require.NotContains(t, msg, s[i:i+6], "error quotes secret material")
		}
	}
}

// requireMatchesReference checks Parse against the encoding/json reference.
func requireMatchesReference(t *testing.T, data []byte) {
	t.Helper()
	want, refErr := refParse(data)
	c, err := Parse(data)
	if refErr != nil {
		require.Error(t, err, "reference rejects it: %v", refErr)
		var se *refSemanticError
		if errors.As(refErr, &se) {
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, se.reason, pe.Reason)
			require.Equal(t, se.host, pe.Host)
		}
		return
	}
	require.NoError(t, err, "reference accepts it")
	require.Equal(t, refSortedKeys(want.entries), c.Hosts())
	for host, e := range want.creds {
		got, ok := c.Lookup(host)
		require.True(t, ok)
		require.Equal(t, e, got, "Lookup(%q)", host)
	}
	requireSameBytes(t, refMarshal(want), c.Marshal())
}

// requireSameBytes is require.Equal without testify's diff, which takes
// minutes on the large inputs the fuzzer minimises.
func requireSameBytes(t *testing.T, want, got []byte) {
	t.Helper()
	if bytes.Equal(want, got) {
		return
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	from := max(0, i-40)
	t.Fatalf("output differs at byte %d:\nwant ...%q\ngot  ...%q", i, want[from:min(len(want), i+40)], got[from:min(len(got), i+40)])
}

func TestParseErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  *ParseError
		want string
	}{
		{
			name: "When the problem is in an entry, it should name the host, reason and offset",
			err:  &ParseError{Host: "quay.io", Reason: reasonAuthBase64, Offset: 42},
			want: `dockerconfig: malformed pull secret: entry "quay.io": auth is not valid base64 (at byte 42)`,
		},
		{
			name: "When there is no document, it should leave the offset out",
			err:  &ParseError{Host: ecrHost, Reason: reasonAuthNoColon, Offset: -1},
			want: `dockerconfig: malformed pull secret: entry "` + ecrHost + `": auth does not decode to username:password`,
		},
		{
			name: "When the host is not printable, it should quote it",
			err:  &ParseError{Host: "a\n\"b", Reason: reasonEntryType, Offset: 0},
			want: `dockerconfig: malformed pull secret: entry "a\n\"b": entry is not a JSON object (at byte 0)`,
		},
		{
			name: "When the host is very long, it should truncate it",
			err:  &ParseError{Host: strings.Repeat("a", 300), Reason: reasonEntryType, Offset: 1},
			want: `dockerconfig: malformed pull secret: entry "` + strings.Repeat("a", 256) + `...": entry is not a JSON object (at byte 1)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, tt.err.Error())
			require.ErrorIs(t, tt.err, ErrMalformed)
		})
	}
}

func TestMarshal(t *testing.T) {
	t.Parallel()
	t.Run("When the same pull secret is written with different key order and spacing, it should give the same bytes", func(t *testing.T) {
		t.Parallel()
		a := mustParse(t, `{"credsStore":"x","auths":{"z.io":{"auth":"`+quayAuth+`"},"a.io":{"username":"u","password":"p"}}}`)
		b := mustParse(t, "{ \"auths\" : {\"a.io\":{\"username\": \"u\",\"password\":\"p\"},\n\"z.io\" : {\"auth\":\""+quayAuth+"\"} } ,\"credsStore\" : \"x\"}")
		require.Equal(t, string(a.Marshal()), string(b.Marshal()))
	})
	t.Run("When Marshal is called twice, it should give the same bytes in distinct slices", func(t *testing.T) {
		t.Parallel()
		c := mustParse(t, string(pullSecret50))
		first := c.Marshal()
		second := c.Marshal()
		require.Equal(t, first, second)
		first[0] = 'X'
		require.Equal(t, byte('{'), c.Marshal()[0], "Marshal output aliases the Config")
	})
	t.Run("When a sorted compact pull secret is parsed, it should write it back byte for byte", func(t *testing.T) {
		t.Parallel()
		c := mustParse(t, string(pullSecret50))
		require.Equal(t, string(pullSecret50), string(c.Marshal()))
	})
	t.Run("When output is parsed and written again, it should be a fixed point", func(t *testing.T) {
		t.Parallel()
		c := mustParse(t, `{"b.io":{"auth":"`+quayAuth+`"},"https://A.io/v1/":{"username":"u","password":"p","x":[ 1 ]}}`)
		first := c.Marshal()
		second := mustParse(t, string(first)).Marshal()
		require.Equal(t, string(first), string(second))
	})
	t.Run("When the output is read by encoding/json the way the kubelet reads it, it should decode", func(t *testing.T) {
		t.Parallel()
		c := mustParse(t, string(pullSecret50))
		require.NoError(t, c.SetAuth(ecrHost, ecrNewToken))
		var kubelet struct {
			Auths map[string]struct {
				Auth  string `json:"auth"`
				Email string `json:"email"`
			} `json:"auths"`
		}
		require.NoError(t, json.Unmarshal(c.Marshal(), &kubelet))
		require.Len(t, kubelet.Auths, 51)
		require.Equal(t, ecrNewToken, kubelet.Auths[ecrHost].Auth)
	})
	t.Run("When the Config is the zero value, it should write an empty pull secret", func(t *testing.T) {
		t.Parallel()
		var c Config
		require.Equal(t, `{"auths":{}}`, string(c.Marshal()))
		require.Empty(t, c.Hosts())
		_, ok := c.Lookup("quay.io")
		require.False(t, ok)
		require.NoError(t, c.SetAuth(ecrHost, ecrNewToken))
		require.Equal(t, `{"auths":{"`+ecrHost+`":{"auth":"`+ecrNewToken+`"}}}`, string(c.Marshal()))
	})
}

func TestInputIsNotRetained(t *testing.T) {
	t.Parallel()
	in := []byte(`{"auths":{"quay.io":{"auth":"` + quayAuth + `"}},"credsStore":"x"}`)
	c, err := Parse(in)
	require.NoError(t, err)
	want := string(c.Marshal())
	for i := range in {
		in[i] = ' '
	}
	require.Equal(t, want, string(c.Marshal()), "the Config shares memory with Parse's input")
	e, ok := c.Lookup("quay.io")
	require.True(t, ok)
	require.Equal(t, "quay-token", e.Password)
}

func TestNormalizeKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"When the key is a bare host, it should keep it", "quay.io", "quay.io"},
		{"When the key is an ECR host with a scheme, it should strip the scheme", "https://" + ecrHost, ecrHost},
		{"When the key is Docker Hub's legacy form, it should strip scheme and /v1/", "https://index.docker.io/v1/", "index.docker.io"},
		{"When the key ends in /v2/, it should strip it", "registry.example.com/v2/", "registry.example.com"},
		{"When the key has a port and a trailing slash, it should keep the port", "http://localhost:5000/", "localhost:5000"},
		{"When the host has upper case, it should lower-case the host only", "HTTPS://Quay.IO/OpenShift-Release-Dev/", "quay.io/OpenShift-Release-Dev"},
		{"When a repository path ends in v2, it should keep it", "quay.io/org/v2", "quay.io/org/v2"},
		{"When a path is scoped, it should keep the path", "quay.io/openshift-release-dev/ocp-release", "quay.io/openshift-release-dev/ocp-release"},
		{"When the scheme is repeated, it should strip both (idempotence)", "https://https://quay.io", "quay.io"},
		{"When the text before :// is not a scheme, it should keep it", "1a://quay.io", "1a://quay.io"},
		{"When the key is empty, it should stay empty", "", ""},
		{"When the key is only a scheme, it should become empty", "https://", ""},
		{"When the key is only slashes and /v1, it should become empty", "https:///v1/", ""},
		{"When the key is an IPv6 literal, it should keep it", "[::1]:5000", "[::1]:5000"},
		{"When the key has non-ASCII letters, it should leave them alone", "RÉGISTRY.example.com", "rÉgistry.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := NormalizeKey(tt.in)
			require.Equal(t, tt.want, got)
			require.Equal(t, got, NormalizeKey(got), "not idempotent")
		})
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	c := mustParse(t, `{"auths":{
		"https://quay.io":{"username":"scheme","password":"1"},
		"quay.io":{"username":"bare","password":"2"},
		"QUAY.IO/":{"username":"upper","password":"3"},
		"https://`+ecrHost+`/":{"auth":"`+ecrOldToken+`"},
		"quay.io/openshift-release-dev":{"username":"scoped","password":"4"}}}`)
	tests := []struct {
		name, host string
		user       string
		found      bool
	}{
		{"When a key is written exactly as asked, it should win", "QUAY.IO/", "upper", true},
		{"When no key is exact, it should prefer the normalised key", "HTTPS://QUAY.IO/v2", "bare", true},
		{"When only a non-normal key matches, it should find it", ecrHost, "AWS", true},
		{"When a path-scoped key exists, it should match only that path", "quay.io/openshift-release-dev/", "scoped", true},
		{"When no key normalises like the host, it should report not found", "registry.redhat.io", "", false},
		{"When the path only prefixes a key, it should not match (no prefix matching)", "quay.io/openshift-release-dev/ocp-release", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, ok := c.Lookup(tt.host)
			require.Equal(t, tt.found, ok)
			require.Equal(t, tt.user, e.Username)
		})
	}
}

func TestSetAuth(t *testing.T) {
	t.Parallel()
	base := `{"auths":{"https://` + ecrHost + `":{"auth":"` + ecrOldToken + `","identitytoken":"stale"},"` + strings.ToUpper(ecrHost) + `/v2/":{"auth":"` + ecrOldToken + `"},"quay.io":{"auth":"` + quayAuth + `"}},"credsStore":"x"}`
	t.Run("When stale keys normalise like the host, it should replace them all with one normalised entry", func(t *testing.T) {
		t.Parallel()
		c := mustParse(t, base)
		require.NoError(t, c.SetAuth("https://"+ecrHost, ecrNewToken))
		require.Equal(t, []string{ecrHost, "quay.io"}, c.Hosts())
		require.Equal(t, `{"auths":{"`+ecrHost+`":{"auth":"`+ecrNewToken+`"},"quay.io":{"auth":"`+quayAuth+`"}},"credsStore":"x"}`, string(c.Marshal()))
		e, ok := c.Lookup(ecrHost)
		require.True(t, ok)
		require.Equal(t, Entry{"AWS", "new-ecr-password"}, e)
	})
	t.Run("When the host is new, it should add it in sorted position", func(t *testing.T) {
		t.Parallel()
		c := mustParse(t, base)
		require.NoError(t, c.SetAuth(ecrHostWest2, ecrNewToken2))
		require.Equal(t, []string{strings.ToUpper(ecrHost) + "/v2/", ecrHostWest2, "https://" + ecrHost, "quay.io"}, c.Hosts())
	})
	tests := []struct {
		name, host, token, reason string
	}{
		{"When the token is not base64, it should reject it", ecrHost, "AWS:" + secretPass, reasonAuthBase64},
		{"When the token lacks padding, it should reject it", ecrHost, strings.TrimRight(b64("AWS:"+secretPass+"xy"), "="), reasonAuthBase64},
		{"When the token has line breaks, it should reject it", ecrHost, secretAuth[:8] + "\n" + secretAuth[8:], reasonAuthBase64},
		{"When the token is empty, it should reject it", ecrHost, "", reasonAuthBase64},
		{"When the token has no colon, it should reject it", ecrHost, b64(secretPass), reasonAuthNoColon},
		{"When the host is empty, it should reject it", "", ecrNewToken, reasonEmptyHost},
		{"When the host is only a scheme, it should reject it", "https:///", ecrNewToken, reasonEmptyHost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := mustParse(t, base)
			before := string(c.Marshal())
			err := c.SetAuth(tt.host, tt.token)
			require.ErrorIs(t, err, ErrMalformed)
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, tt.reason, pe.Reason)
			require.Equal(t, -1, pe.Offset)
			requireNoSecret(t, err.Error(), secretPass, secretAuth, b64(secretPass))
			require.Equal(t, before, string(c.Marshal()), "a failed SetAuth changed the Config")
		})
	}
}

func TestSet(t *testing.T) {
	t.Parallel()
	t.Run("When an entry exists, it should replace it whole with an auth entry", func(t *testing.T) {
		t.Parallel()
		c := mustParse(t, `{"auths":{"quay.io":{"auth":"`+quayAuth+`","email":"someone@example.com","identitytoken":"stale"}}}`)
		require.NoError(t, c.Set("Quay.io", Entry{Username: "robot", Password: "p:w"}))
		require.Equal(t, `{"auths":{"quay.io":{"auth":"`+b64("robot:p:w")+`"}}}`, string(c.Marshal()))
		e, ok := c.Lookup("quay.io")
		require.True(t, ok)
		require.Equal(t, Entry{"robot", "p:w"}, e)
	})
	t.Run("When the username has a colon, it should reject it without quoting the password", func(t *testing.T) {
		t.Parallel()
		var c Config
		err := c.Set("quay.io", Entry{Username: "a:b", Password: secretPass})
		require.ErrorIs(t, err, ErrMalformed)
		requireNoSecret(t, err.Error(), secretPass)
		require.Empty(t, c.Hosts())
	})
	t.Run("When the host is empty, it should reject it", func(t *testing.T) {
		t.Parallel()
		var c Config
		require.ErrorIs(t, c.Set("", Entry{Username: "u"}), ErrMalformed)
	})
}

func TestDelete(t *testing.T) {
	t.Parallel()
	c := mustParse(t, `{"auths":{"https://`+ecrHost+`":{"auth":"`+ecrOldToken+`"},"`+ecrHost+`":{"auth":"`+ecrOldToken+`"},"quay.io":{"auth":"`+quayAuth+`"}}}`)
	require.True(t, c.Delete(ecrHost+"/"))
	require.Equal(t, []string{"quay.io"}, c.Hosts())
	require.False(t, c.Delete(ecrHost))
	require.False(t, c.Delete(""))
}

func TestClone(t *testing.T) {
	t.Parallel()
	orig := mustParse(t, string(pullSecret50))
	want := string(orig.Marshal())
	clone := orig.Clone()
	require.NoError(t, clone.SetAuth(ecrHost, ecrNewToken))
	require.True(t, clone.Delete("quay.io"))
	require.Equal(t, want, string(orig.Marshal()), "changing a clone changed the original")
	hosts := orig.Hosts()
	hosts[0] = "changed"
	require.NotEqual(t, "changed", orig.Hosts()[0], "Hosts aliases the Config")
}

func TestMerge(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, base, overlay, want string
	}{
		{
			name:    "When the overlay has a host in another form, it should replace the base entry whole",
			base:    `{"auths":{"https://` + ecrHost + `":{"auth":"` + ecrOldToken + `","email":"a@example.com"},"quay.io":{"auth":"` + quayAuth + `"}}}`,
			overlay: `{"auths":{"` + ecrHost + `":{"auth":"` + ecrNewToken + `"}}}`,
			want:    `{"auths":{"` + ecrHost + `":{"auth":"` + ecrNewToken + `"},"quay.io":{"auth":"` + quayAuth + `"}}}`,
		},
		{
			name:    "When both have unknown top-level fields, it should keep both and let the overlay win",
			base:    `{"auths":{},"credsStore":"base","HttpHeaders":{"X":"1"}}`,
			overlay: `{"auths":{},"credsStore":"overlay","psFormat":"table"}`,
			want:    `{"HttpHeaders":{"X":"1"},"auths":{},"credsStore":"overlay","psFormat":"table"}`,
		},
		{
			name:    "When the inputs are legacy or empty, it should merge their entries",
			base:    `{"quay.io":{"auth":"` + quayAuth + `"}}`,
			overlay: ``,
			want:    `{"auths":{"quay.io":{"auth":"` + quayAuth + `"}}}`,
		},
		{
			name:    "When the overlay is legacy, it should add its entries",
			base:    `{"auths":{"quay.io":{"auth":"` + quayAuth + `"}}}`,
			overlay: `{"` + ecrHost + `":{"auth":"` + ecrNewToken + `"}}`,
			want:    `{"auths":{"` + ecrHost + `":{"auth":"` + ecrNewToken + `"},"quay.io":{"auth":"` + quayAuth + `"}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base, overlay := []byte(tt.base), []byte(tt.overlay)
			got, err := Merge(base, overlay)
			require.NoError(t, err)
			require.Equal(t, tt.want, string(got))
			require.Equal(t, tt.base, string(base), "Merge modified base")
			require.Equal(t, tt.overlay, string(overlay), "Merge modified overlay")
		})
	}
	t.Run("When a document is malformed, it should say which and match ErrMalformed", func(t *testing.T) {
		t.Parallel()
		_, err := Merge([]byte(`{}`), []byte(`{"auths":{"quay.io":{"auth":"`+b64(secretPass)+`"}}}`))
		require.ErrorIs(t, err, ErrMalformed)
		require.ErrorContains(t, err, "overlay: ")
		requireNoSecret(t, err.Error(), secretPass, b64(secretPass))
		_, err = Merge([]byte(`[`), []byte(`{}`))
		require.ErrorIs(t, err, ErrMalformed)
		require.ErrorContains(t, err, "base: ")
	})
}

func TestStrip(t *testing.T) {
	t.Parallel()
	in := []byte(`{"auths":{"https://` + ecrHost + `/":{"auth":"` + ecrOldToken + `"},"quay.io":{"auth":"` + quayAuth + `"},"` + ecrHostWest2 + `":{"auth":"` + ecrOldToken + `"}},"credHelpers":{"` + ecrHost + `":"ecr-login"}}`)
	orig := string(in)
	var seen []string
	got, err := Strip(in, func(host string) bool {
		seen = append(seen, host)
		return strings.Contains(host, ".dkr.ecr.")
	})
	require.NoError(t, err)
	require.Equal(t, `{"auths":{"quay.io":{"auth":"`+quayAuth+`"}},"credHelpers":{"`+ecrHost+`":"ecr-login"}}`, string(got))
	require.ElementsMatch(t, []string{ecrHost, ecrHostWest2, "quay.io"}, seen, "drop must see normalised keys")
	require.Equal(t, orig, string(in), "Strip modified its input")

	_, err = Strip([]byte(`{"auths":[]}`), func(string) bool { return true })
	require.ErrorIs(t, err, ErrMalformed)
}

func TestEntryRedactsPassword(t *testing.T) {
	t.Parallel()
	e := Entry{Username: "robot", Password: secretPass}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		require.NotContains(t, fmt.Sprintf(format, e), secretPass, format)
	}
	require.Contains(t, fmt.Sprint(e), "robot")
}

func TestParseFixture(t *testing.T) {
	t.Parallel()
	c := mustParse(t, string(pullSecret50))
	require.Len(t, c.Hosts(), 50)
	for _, host := range []string{"quay.io", "registry.redhat.io", "cloud.openshift.com", "registry-07.example.com"} {
		e, ok := c.Lookup(host)
		require.True(t, ok, host)
		require.NotEmpty(t, e.Username, host)
		require.NotEmpty(t, e.Password, host)
	}
	requireMatchesReference(t, pullSecret50)
	requireMatchesReference(t, bytes.ReplaceAll(pullSecret50, []byte(","), []byte(",\n  ")))
}

func TestParseMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	deep := func(prefix string, n int, suffix string) string {
		return prefix + strings.Repeat("[", n) + strings.Repeat("]", n) + suffix
	}
	tests := []struct{ name, in string }{
		{"When arrays nest to the limit inside an auths entry, it should accept them", deep(`{"auths":{"a.io":{"x":`, maxDepth-3, `}}}`)},
		{"When arrays nest past the limit inside an auths entry, it should reject them", deep(`{"auths":{"a.io":{"x":`, maxDepth-2, `}}}`)},
		{"When arrays nest to the limit inside a legacy entry, it should accept them", deep(`{"a.io":{"x":`, maxDepth-2, `}}`)},
		{"When arrays nest past the limit inside a legacy entry, it should reject them", deep(`{"a.io":{"x":`, maxDepth-1, `}}`)},
		{"When a top-level array nests to the limit, it should reject it as not an object", deep(``, maxDepth, ``)},
		{"When a top-level array nests past the limit, it should reject it as invalid", deep(``, maxDepth+1, ``)},
		{"When keys are invalid UTF-8 that decode alike, it should keep the last", "{\"auths\":{\"\xff.io\":{\"username\":\"1\"},\"\xfe.io\":{\"username\":\"2\"}}}"},
		{"When keys differ only in escapes, it should treat them as one key", `{"auths":{"a.io":{"username":"1"},"\u0061.io":{"username":"2"}}}`},
		{"When a key holds a NUL escape, it should keep it", `{"auths":{"a\u0000.io":{}}}`},
		{"When auth escapes a slash, it should decode it", `{"auths":{"a.io":{"auth":"` + strings.ReplaceAll(b64("u:???>>>"), "/", `\/`) + `"}}}`},
		{"When auth has data after padding, it should reject it", `{"auths":{"a.io":{"auth":"YQ==YTpi"}}}`},
		{"When auth has one padding byte, it should accept it", `{"auths":{"a.io":{"auth":"` + b64("u:pw") + `"}}}`},
		{"When auth is invalid UTF-8, it should reject it", "{\"auths\":{\"a.io\":{\"auth\":\"YTpi\xff\"}}}"},
		{"When username is invalid UTF-8, it should decode it as encoding/json does", "{\"auths\":{\"a.io\":{\"username\":\"a\xffb\",\"password\":\"\\ud800\"}}}"},
		{"When numbers take every form, it should accept them", `{"n":[0,-0,1.5,-2e10,3E+2,4e-2,12345678901234567890]}`},
		{"When a number is a bare minus, it should reject it", `{"n":-}`},
		{"When a number starts with a point, it should reject it", `{"n":.5}`},
		{"When an exponent has no digits, it should reject it", `{"n":1e+}`},
		{"When whitespace includes carriage returns and tabs, it should accept it", "\r\n\t{\r\"auths\"\t:\n{ } }\r\n"},
		{"When an object is empty with spaces inside, it should accept it", `{ "auths" : { "a.io" : { } , "b.io" : { "x" : [ ] } } }`},
		{"When a legacy-looking key sits beside a setting, it should read it as a setting", `{"a.io":{"auth":"!!"},"credsStore":"x"}`},
		{"When a legacy key is only localhost, it should read the legacy form", `{"LocalHost":{"username":"u","password":"p"}}`},
		{"When a key is unterminated, it should reject it", `{"auths":{"a.io`},
		{"When a string ends in a lone backslash, it should reject it", `{"auths":{"a.io":{"password":"\`},
		{"When a unicode escape has bad hex, it should reject it", `{"p":"\u12g4"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			requireMatchesReference(t, []byte(tt.in))
		})
	}
	for i, s := range fuzzSeeds() {
		t.Run(fmt.Sprintf("When given fuzz seed %d, it should agree with encoding/json", i), func(t *testing.T) {
			t.Parallel()
			requireMatchesReference(t, []byte(s))
		})
	}
}

// TestAuthAlphabet puts every byte value at positions covered by each
// step of the SWAR base64 check, in Parse and in SetAuth, and compares the
// outcome with base64.StdEncoding: a SWAR mistake that lets a byte through
// would otherwise hide behind the exact fallback loop.
func TestAuthAlphabet(t *testing.T) {
	t.Parallel()
	valid := b64("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:b") // 44 characters
	for _, pos := range []int{0, 5, 10, 15, 16, 23, 31, 40} {
		for c := range 256 {
			auth := valid[:pos] + string([]byte{byte(c)}) + valid[pos+1:]
			in := []byte(`{"auths":{"quay.io":{"auth":"` + auth + `"}}}`)
			requireMatchesReference(t, in)

			var cfg Config
			raw, err := base64.StdEncoding.DecodeString(auth)
			want := err == nil && !strings.ContainsAny(auth, "\r\n") && bytes.IndexByte(raw, ':') >= 0
			require.Equal(t, want, cfg.SetAuth(ecrHost, auth) == nil, "SetAuth with byte %#x at %d", c, pos)
		}
	}
}

// TestKeyBytes puts every byte value at positions covered by the SWAR key
// scan and checks Parse, including how Marshal encodes the key, against
// encoding/json.
func TestKeyBytes(t *testing.T) {
	t.Parallel()
	const host = "registry-01.example.com:5000"
	for _, pos := range []int{0, 3, 9, 15, 22} {
		for c := range 256 {
			key := host[:pos] + string([]byte{byte(c)}) + host[pos+1:]
			requireMatchesReference(t, []byte(`{"auths":{"`+key+`":{"auth":"`+quayAuth+`"}},"`+key+`":1}`))
		}
	}
}
