package credentialprovider_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"

	"github.com/openshift/hypershift-ecr/registryauth/credentialprovider"
)

const head = `"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderResponse"`

func TestAPIVersionIsTheKubelets(t *testing.T) {
	t.Parallel()
	require.Equal(t, v1.SchemeGroupVersion.String(), credentialprovider.APIVersion)
}

func TestParseResponse(t *testing.T) {
	t.Parallel()
	const password = "pw-parse-secret"
	tests := []struct {
		name       string
		data       string
		wantReason string // empty: valid
		check      func(t *testing.T, r *v1.CredentialProviderResponse)
	}{
		{
			name: "When the response is what ecr-credential-provider writes, it should decode it",
			data: `{` + head + `,"cacheKeyType":"Registry","cacheDuration":"6h0m0s","auth":{"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":"AWS","password":"` + password + `"}}}` + "\n",
			check: func(t *testing.T, r *v1.CredentialProviderResponse) {
				require.Equal(t, v1.RegistryPluginCacheKeyType, r.CacheKeyType)
				require.Equal(t, 6*time.Hour, r.CacheDuration.Duration)
				require.Equal(t, password, r.Auth["123456789012.dkr.ecr.us-east-1.amazonaws.com"].Password)
			},
		},
		{
			name: "When the response has no cacheDuration and no auth, it should decode it with nil fields",
			data: `{` + head + `,"cacheKeyType":"Global"}`,
			check: func(t *testing.T, r *v1.CredentialProviderResponse) {
				require.Nil(t, r.CacheDuration)
				require.Nil(t, r.Auth)
			},
		},
		{name: "When the response is empty, it should refuse it", data: " \n", wantReason: "empty"},
		{name: "When the response is not an object, it should refuse it", data: `["` + password + `"]`, wantReason: "not a JSON object"},
		{name: "When the JSON is cut short, it should give the offset only", data: `{` + head + `,"auth":{"x":{"password":"` + password, wantReason: "invalid JSON at byte offset"},
		{name: "When the apiVersion is v1beta1, it should name it", data: `{"apiVersion":"credentialprovider.kubelet.k8s.io/v1beta1","kind":"CredentialProviderResponse","cacheKeyType":"Image"}`, wantReason: "apiVersion credentialprovider.kubelet.k8s.io/v1beta1 is not supported"},
		{name: "When the apiVersion is unknown, it should not quote it", data: `{"apiVersion":"` + password + `","kind":"CredentialProviderResponse"}`, wantReason: "unsupported apiVersion"},
		{name: "When the apiVersion is missing, it should say so", data: `{"kind":"CredentialProviderResponse","cacheKeyType":"Image"}`, wantReason: "no apiVersion"},
		{name: "When the kind is wrong, it should refuse it", data: `{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderRequest"}`, wantReason: "kind is not CredentialProviderResponse"},
		{name: "When the cacheKeyType is invalid, it should refuse it as the kubelet does", data: `{` + head + `,"cacheKeyType":"Repository"}`, wantReason: "cacheKeyType is not one of"},
		{name: "When the cacheKeyType is missing, it should refuse it", data: `{` + head + `,"auth":{"x":{"username":"AWS","password":"` + password + `"}}}`, wantReason: "cacheKeyType is not one of"},
		{name: "When a field is unknown, it should refuse it as the kubelet does", data: `{` + head + `,"cacheKeyType":"Image","expiresAt":"2026-03-01T08:00:00Z"}`, wantReason: "unknown or duplicate"},
		{name: "When a password is duplicated, it should refuse it without quoting either", data: `{` + head + `,"cacheKeyType":"Image","auth":{"x":{"password":"` + password + `","password":"other"}}}`, wantReason: "unknown or duplicate"},
		{name: "When a field name has other case, it should refuse it as the kubelet does", data: `{` + head + `,"CacheKeyType":"Image"}`, wantReason: "unknown or duplicate"},
		{name: "When the cacheDuration does not parse, it should not quote it", data: `{` + head + `,"cacheKeyType":"Image","cacheDuration":"` + password + `"}`, wantReason: "do not match the schema"},
		{name: "When a password is not a string, it should refuse it", data: `{` + head + `,"cacheKeyType":"Image","auth":{"x":{"password":12345678}}}`, wantReason: "do not match the schema"},
		{name: "When the response is larger than 1 MiB, it should refuse it", data: `{` + head + `,"cacheKeyType":"Image","auth":{"x":{"password":"` + strings.Repeat("p", 1<<20) + `"}}}`, wantReason: "larger than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := credentialprovider.ParseResponse([]byte(tc.data))
			if tc.wantReason == "" {
				require.NoError(t, err)
				tc.check(t, r)
				return
			}
			require.ErrorIs(t, err, credentialprovider.ErrMalformedResponse)
			var re *credentialprovider.ResponseError
			require.ErrorAs(t, err, &re)
			require.Contains(t, re.Reason, tc.wantReason)
			require.NotContains(t, err.Error(), password)
		})
	}
}

// FuzzParseResponse checks that no input panics ParseResponse, that what
// it accepts is valid, and that no error quotes a password value.
func FuzzParseResponse(f *testing.F) {
	for _, seed := range []string{
		`{` + head + `,"cacheKeyType":"Registry","cacheDuration":"6h0m0s","auth":{"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":"AWS","password":"secretpassword1"}}}`,
		`{` + head + `,"cacheKeyType":"Image","auth":{"x":{"password":"secretpassword1","password":"secretpassword2"}}}`,
		`{` + head + `,"cacheKeyType":"Global","cacheDuration":"secretpassword1","auth":{"secretpassword1":{"password":"secretpassword1"}}}`,
		`{"apiVersion":"secretpassword1","kind":"CredentialProviderResponse","auth":{"x":{"password":"secretpassword1"}}}`,
		`{` + head + `,"cacheKeyType":"secretpassword1","auth":{"x":{"password":"secretpassword1"}}}`,
		`{` + head + `,"secretpassword1":1,"auth":{"x":{"password":"secretpassword1"}}}`,
		`{"auth":{"x":{"password":"secretpassword1"`,
		`[]`, `null`, ``, `{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := credentialprovider.ParseResponse(data)
		if err == nil {
			require.Equal(t, credentialprovider.APIVersion, r.APIVersion)
			require.Equal(t, "CredentialProviderResponse", r.Kind)
			require.Contains(t, []v1.PluginCacheKeyType{v1.ImagePluginCacheKeyType, v1.RegistryPluginCacheKeyType, v1.GlobalPluginCacheKeyType}, r.CacheKeyType)
			return
		}
		require.True(t, errors.Is(err, credentialprovider.ErrMalformedResponse))
		msg := err.Error()
		for _, pw := range passwordValues(data) {
			// Short values, and values that are words of the fixed error
			// texts, would be found by chance.
			if len(pw) < 6 || strings.Contains(msg, pw) && fixedText(pw) {
				continue
			}
			require.NotContains(t, msg, pw, "an error quoted a password")
		}
	})
}

// passwordValues finds every string value of a "password" key, in any
// case, duplicates included, as far as the input is valid JSON.
func passwordValues(data []byte) []string {
	var out []string
	dec := json.NewDecoder(bytes.NewReader(data))
	var prevKey string
	var inObject []bool // per level: is it an object
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil { // io.EOF or the first syntax error
			return out
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				inObject = append(inObject, true)
				expectKey = true
			case '[':
				inObject = append(inObject, false)
				expectKey = false
			default:
				inObject = inObject[:len(inObject)-1]
				expectKey = len(inObject) > 0 && inObject[len(inObject)-1]
			}
			continue
		case string:
			if expectKey {
				prevKey = v
				expectKey = false
				continue
			}
			if strings.EqualFold(prevKey, "password") {
				out = append(out, v)
			}
		}
		prevKey = ""
		expectKey = len(inObject) > 0 && inObject[len(inObject)-1]
	}
}

// fixedText reports whether s occurs in the fixed vocabulary of
// ResponseError reasons, where it would appear whatever the input.
func fixedText(s string) bool {
	const vocabulary = "malformed credential provider response: empty not a JSON object invalid JSON at byte offset " +
		"apiVersion credentialprovider.kubelet.k8s.io/v1beta1 credentialprovider.kubelet.k8s.io/v1alpha1 is not supported; want credentialprovider.kubelet.k8s.io/v1 " +
		"unsupported apiVersion; no apiVersion; kind is not CredentialProviderResponse unknown or duplicate field(s); the kubelet refuses them too " +
		"cacheKeyType is not one of Image, Registry, Global fields do not match the schema (a wrong JSON type or a bad duration) larger than 1048576 bytes"
	return strings.Contains(vocabulary, s) || strings.Trim(s, "0123456789") == ""
}
