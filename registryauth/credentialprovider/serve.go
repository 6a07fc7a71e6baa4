package credentialprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	v1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
	"k8s.io/utils/clock"
	sigsjson "sigs.k8s.io/json"

	"github.com/openshift/hypershift-ecr/registryauth"
)

// DefaultNotECRCacheDuration is how long the kubelet is told to cache the
// empty answer for an image that is not an ECR registry. Whether a host is
// ECR never changes, so the answer can be kept long; the kubelet then stops
// running the plugin for that registry and uses other credentials.
const DefaultNotECRCacheDuration = time.Hour

// ServeOption configures Serve.
type ServeOption func(*serveOptions) error

type serveOptions struct {
	notECRCacheDuration time.Duration
	clock               clock.PassiveClock
}

// WithNotECRCacheDuration sets the cacheDuration of the empty answer for an
// image that is not ECR (or is ECR Public, which is pulled anonymously); 0
// tells the kubelet not to cache it. The default is
// DefaultNotECRCacheDuration.
func WithNotECRCacheDuration(d time.Duration) ServeOption {
	return func(o *serveOptions) error {
		if d < 0 {
			return fmt.Errorf("WithNotECRCacheDuration: negative duration %v", d)
		}
		o.notECRCacheDuration = d
		return nil
	}
}

// WithServeClock sets the clock that the remaining life of a token is
// measured against. The default is the real clock.
func WithServeClock(c clock.PassiveClock) ServeOption {
	return func(o *serveOptions) error {
		if c == nil {
			return errors.New("WithServeClock: nil clock")
		}
		o.clock = c
		return nil
	}
}

// Serve answers one kubelet credential provider request: it reads a
// credentialprovider.kubelet.k8s.io/v1 CredentialProviderRequest from
// stdin, asks src for the image's credential and writes the
// CredentialProviderResponse to stdout, as a plugin binary's main does
// with os.Stdin and os.Stdout.
//
// The request must have the v1 apiVersion, the CredentialProviderRequest
// kind, case-exact field names, no duplicate field and an image; unknown
// fields are accepted, because v1 grows by adding fields (as it did with
// serviceAccountToken) and a plugin must keep working with newer kubelets.
//
// The answer has cacheKeyType Registry, one auth entry keyed by the image's
// registry exactly as the kubelet will match it, and cacheDuration half the
// token's remaining life (as ecr-credential-provider does), whole seconds;
// 0, "do not cache", when nothing is left. For an image that is not ECR, or
// ECR Public, the answer is valid and empty, with the cacheDuration of
// WithNotECRCacheDuration, and the kubelet uses other credentials. Any
// other failure writes nothing and is returned; the caller prints it to
// stderr and exits non-zero. No error ever holds the token.
func Serve(ctx context.Context, src registryauth.CredentialSource, stdin io.Reader, stdout io.Writer, opts ...ServeOption) error {
	o := serveOptions{notECRCacheDuration: DefaultNotECRCacheDuration, clock: clock.RealClock{}}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return fmt.Errorf("credentialprovider: %w", err)
		}
	}
	if src == nil {
		return errors.New("credentialprovider: nil credential source")
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxRequestSize+1))
	if err != nil {
		return fmt.Errorf("credentialprovider: reading the request: %w", err)
	}
	req, err := decodeRequest(data)
	if err != nil {
		return err
	}

	resp := &v1.CredentialProviderResponse{
		TypeMeta:     metav1.TypeMeta{APIVersion: APIVersion, Kind: responseKind},
		CacheKeyType: v1.RegistryPluginCacheKeyType,
	}
	cred, err := src.Credential(ctx, req.Image)
	switch {
	case err == nil:
		life := cred.ExpiresAt.Sub(o.clock.Now())
		resp.CacheDuration = &metav1.Duration{Duration: max(life/2, 0).Truncate(time.Second)}
		resp.Auth = map[string]v1.AuthConfig{
			registryOf(trimScheme(req.Image)): {Username: cred.Username, Password: cred.Password},
		}
	case errors.Is(err, registryauth.ErrNotECR), errors.Is(err, registryauth.ErrPublicRegistry):
		resp.CacheDuration = &metav1.Duration{Duration: o.notECRCacheDuration}
	default:
		return fmt.Errorf("credentialprovider: credentials for image %s: %w", quoteInput(req.Image), err)
	}

	out, err := json.Marshal(resp)
	if err != nil {
		return errors.New("credentialprovider: encoding the response failed") // the cause may quote it
	}
	if _, err := stdout.Write(append(out, '\n')); err != nil {
		return fmt.Errorf("credentialprovider: writing the response: %w", err)
	}
	return nil
}

// decodeRequest checks a request as described on Serve. Errors never
// quote the request: it may carry a service account token.
func decodeRequest(data []byte) (*v1.CredentialProviderRequest, error) {
	if len(data) > maxRequestSize {
		return nil, &RequestError{Reason: "larger than " + strconv.Itoa(maxRequestSize) + " bytes"}
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, &RequestError{Reason: "empty stdin; the kubelet writes a request there"}
	}
	if trimmed[0] != '{' {
		return nil, &RequestError{Reason: "not a JSON object"}
	}
	var req v1.CredentialProviderRequest
	strict, err := sigsjson.UnmarshalStrict(data, &req, sigsjson.DisallowDuplicateFields)
	if err != nil {
		if ok, off := sigsjson.SyntaxErrorOffset(err); ok {
			return nil, &RequestError{Reason: "invalid JSON at byte offset " + strconv.FormatInt(off, 10)}
		}
		return nil, &RequestError{Reason: "fields do not match the schema (a wrong JSON type)"}
	}
	if len(strict) > 0 {
		return nil, &RequestError{Reason: strconv.Itoa(len(strict)) + " duplicate field(s)"}
	}
	if req.APIVersion != APIVersion {
		return nil, &RequestError{Reason: versionReason(req.APIVersion) + " (set it in the kubelet's CredentialProviderConfig)"}
	}
	if req.Kind != requestKind {
		return nil, &RequestError{Reason: "kind is not " + requestKind}
	}
	if req.Image == "" {
		return nil, &RequestError{Reason: "no image"}
	}
	return &req, nil
}
