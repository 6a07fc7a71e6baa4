package credentialprovider

import (
	"bytes"
	"strconv"

	v1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
	sigsjson "sigs.k8s.io/json"
)

// The protocol spoken, both ways.
const (
	// APIVersion is the only version of the kubelet credential provider
	// API this package speaks; the kubelet's own v1 (stable since 1.26).
	APIVersion   = "credentialprovider.kubelet.k8s.io/v1"
	requestKind  = "CredentialProviderRequest"
	responseKind = "CredentialProviderResponse"
)

// Size bounds. A response holds a few credentials; anything far larger is
// a broken plugin, and must not be held in memory whole.
const (
	maxResponseSize = 1 << 20
	maxRequestSize  = 1 << 20
)

// olderVersions are named in errors: they are fixed strings, not input.
var olderVersions = []string{"credentialprovider.kubelet.k8s.io/v1beta1", "credentialprovider.kubelet.k8s.io/v1alpha1"}

// ParseResponse decodes a plugin's stdout the way the kubelet does: it
// must be one JSON object of apiVersion credentialprovider.kubelet.k8s.io/v1
// and kind CredentialProviderResponse, field names are case-sensitive,
// unknown and duplicate fields are refused (the kubelet decodes strictly),
// and cacheKeyType must be Image, Registry or Global. Auth keys are not
// checked here: like the kubelet, matching skips keys it cannot parse.
//
// Errors are *ResponseError values matching ErrMalformedResponse. Their
// text never contains any part of data: a response is a secret.
func ParseResponse(data []byte) (*v1.CredentialProviderResponse, error) {
	if len(data) > maxResponseSize {
		return nil, &ResponseError{Reason: "larger than " + strconv.Itoa(maxResponseSize) + " bytes"}
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, &ResponseError{Reason: "empty"}
	}
	if trimmed[0] != '{' {
		return nil, &ResponseError{Reason: "not a JSON object"}
	}
	// Version first, as the kubelet does, so that a v1beta1 plugin is told
	// so rather than that some field is unknown.
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &meta); err != nil {
		return nil, &ResponseError{Reason: decodeReason(err)}
	}
	if meta.APIVersion != APIVersion {
		return nil, &ResponseError{Reason: versionReason(meta.APIVersion)}
	}
	if meta.Kind != responseKind {
		return nil, &ResponseError{Reason: "kind is not " + responseKind}
	}
	var resp v1.CredentialProviderResponse
	strict, err := sigsjson.UnmarshalStrict(data, &resp)
	if err != nil {
		return nil, &ResponseError{Reason: decodeReason(err)}
	}
	if len(strict) > 0 {
		// The field names are not quoted: a broken plugin may put a
		// password where a name belongs.
		return nil, &ResponseError{Reason: strconv.Itoa(len(strict)) + " unknown or duplicate field(s); the kubelet refuses them too"}
	}
	switch resp.CacheKeyType {
	case v1.ImagePluginCacheKeyType, v1.RegistryPluginCacheKeyType, v1.GlobalPluginCacheKeyType:
	default:
		return nil, &ResponseError{Reason: "cacheKeyType is not one of Image, Registry, Global"}
	}
	return &resp, nil
}

func versionReason(got string) string {
	if got == "" {
		return "no apiVersion; want " + APIVersion
	}
	for _, v := range olderVersions {
		if got == v {
			return "apiVersion " + v + " is not supported; want " + APIVersion
		}
	}
	return "unsupported apiVersion; want " + APIVersion
}

// decodeReason describes a decoding error by its class and offset only:
// decoder messages quote input (a bad duration, an unexpected character).
func decodeReason(err error) string {
	if ok, off := sigsjson.SyntaxErrorOffset(err); ok {
		return "invalid JSON at byte offset " + strconv.FormatInt(off, 10)
	}
	return "fields do not match the schema (a wrong JSON type or a bad duration)"
}
