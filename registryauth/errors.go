package registryauth

import (
	"errors"
	"strings"
)

// Sentinel errors. Every error the keychain returns for a registry matches
// exactly one of them with errors.Is, and none of them ever carries a token.
var (
	// ErrNotECR means the host is not an Amazon ECR registry (nor a
	// configured alias). Callers treat it as "not mine" and move on.
	ErrNotECR = errors.New("not an Amazon ECR registry")
	// ErrPublicRegistry means the host is ECR Public, which serves pulls
	// anonymously; the keychain does not mint tokens for it.
	ErrPublicRegistry = errors.New("ECR Public registry: pulls are anonymous")
	// ErrAccessDenied means the identity may not call ecr:GetAuthorizationToken.
	ErrAccessDenied = errors.New("access denied")
	// ErrThrottled means ECR throttled the call (quota: 500 requests/s per region).
	ErrThrottled = errors.New("throttled")
	// ErrNoAWSCredentials means the AWS credential chain found no identity
	// (environment, shared config, web identity, Pod Identity, IMDS).
	ErrNoAWSCredentials = errors.New("no AWS credentials")
	// ErrEndpointUnreachable means the ECR API endpoint could not be reached.
	ErrEndpointUnreachable = errors.New("ECR API endpoint unreachable")
	// ErrInvalidToken means ECR answered with a token the keychain cannot use
	// (malformed, or already expired).
	ErrInvalidToken = errors.New("invalid authorization token")
	// ErrTokenFetch is any other failure of GetAuthorizationToken.
	ErrTokenFetch = errors.New("cannot get ECR authorization token")
	// ErrClosed means the keychain was closed.
	ErrClosed = errors.New("keychain closed")
)

// TokenError is the error returned when a token could not be had for a
// registry. Kind is one of the sentinels above; Err is the underlying cause
// (an AWS SDK error, a network error), kept for errors.As.
type TokenError struct {
	Registry  string
	Region    string
	Partition string
	// Endpoint names the API endpoint variant ("fips", "dualstack", a
	// custom URL with its query and credentials removed), empty for the
	// partition's default.
	Endpoint string
	Kind     error
	Err      error
	// Hint tells an operator what to fix.
	Hint string
}

func (e *TokenError) Error() string {
	var b strings.Builder
	b.WriteString("ecr: ")
	b.WriteString(e.Kind.Error())
	b.WriteString(" getting a token for ")
	b.WriteString(e.Registry)
	b.WriteString(" (region ")
	b.WriteString(e.Region)
	if e.Endpoint != "" {
		b.WriteString(", endpoint ")
		b.WriteString(e.Endpoint)
	}
	b.WriteString(")")
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Is reports whether target is the error's Kind.
func (e *TokenError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the underlying cause.
func (e *TokenError) Unwrap() error { return e.Err }

// NotECRError reports an input that does not name an ECR registry.
type NotECRError struct{ Input string }

func (e *NotECRError) Error() string {
	return "ecr: " + quoteInput(e.Input) + " is not an Amazon ECR registry host"
}

// Is matches ErrNotECR.
func (e *NotECRError) Is(target error) bool { return target == ErrNotECR }

// quoteInput bounds what of a caller's input reaches an error string: hosts
// and image references are not secret, but an input may be arbitrarily long.
func quoteInput(s string) string {
	const max = 256
	if len(s) > max {
		s = s[:max] + "..."
	}
	return `"` + s + `"`
}
