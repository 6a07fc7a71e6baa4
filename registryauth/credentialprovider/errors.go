package credentialprovider

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/openshift/hypershift-ecr/registryauth"
)

// Sentinel errors. Every failed plugin run matches one of them with
// errors.Is; "no credentials for this image" matches registryauth.ErrNotECR
// instead. No error ever carries the plugin's stdout, which holds the
// credentials.
var (
	// ErrPluginFailed means the plugin could not be run or exited non-zero.
	ErrPluginFailed = errors.New("credential provider plugin failed")
	// ErrPluginTimeout means the plugin did not answer within the timeout
	// and was killed.
	ErrPluginTimeout = errors.New("credential provider plugin timed out")
	// ErrMalformedResponse means the plugin's stdout is not a valid
	// credentialprovider.kubelet.k8s.io/v1 CredentialProviderResponse.
	ErrMalformedResponse = errors.New("malformed credential provider response")
	// ErrMalformedRequest means Serve read something other than a valid
	// credentialprovider.kubelet.k8s.io/v1 CredentialProviderRequest.
	ErrMalformedRequest = errors.New("malformed credential provider request")
)

// PluginError reports a failed plugin run. Kind is ErrPluginFailed,
// ErrPluginTimeout or ErrMalformedResponse; Err is the cause (an
// *exec.ExitError, context.DeadlineExceeded, a *ResponseError).
type PluginError struct {
	// Plugin is the plugin binary's base name.
	Plugin string
	// Image is the image the plugin was asked about.
	Image string
	Kind  error
	// ExitCode is the plugin's exit code, or -1 when it did not exit on
	// its own (not started, killed).
	ExitCode int
	// Stderr is the plugin's stderr with anything that looks like a secret
	// redacted, truncated. Stdout is never kept.
	Stderr string
	Err    error
}

func (e *PluginError) Error() string {
	var b strings.Builder
	b.WriteString("credentialprovider: plugin ")
	b.WriteString(e.Plugin)
	b.WriteString(" for image ")
	b.WriteString(quoteInput(e.Image))
	b.WriteString(": ")
	b.WriteString(e.Kind.Error())
	if e.ExitCode >= 0 {
		b.WriteString(" (exit code ")
		b.WriteString(strconv.Itoa(e.ExitCode))
		b.WriteString(")")
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Stderr != "" {
		b.WriteString("; stderr: ")
		b.WriteString(strconv.Quote(e.Stderr))
	}
	return b.String()
}

// Is reports whether target is the error's Kind.
func (e *PluginError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause.
func (e *PluginError) Unwrap() error { return e.Err }

// ResponseError says why a plugin response was refused. Reason is built
// from fixed text and byte offsets only, never from the response itself,
// which may hold a password anywhere (even in a malformed field).
type ResponseError struct{ Reason string }

func (e *ResponseError) Error() string {
	return ErrMalformedResponse.Error() + ": " + e.Reason
}

// Is matches ErrMalformedResponse.
func (e *ResponseError) Is(target error) bool { return target == ErrMalformedResponse }

// RequestError says why Serve refused a request. Like ResponseError it
// never quotes the request, which may hold a service account token.
type RequestError struct{ Reason string }

func (e *RequestError) Error() string {
	return "credentialprovider: " + ErrMalformedRequest.Error() + ": " + e.Reason
}

// Is matches ErrMalformedRequest.
func (e *RequestError) Is(target error) bool { return target == ErrMalformedRequest }

// NoCredentialsError means the plugin was not run for Image (no
// matchImages glob matches it) or answered without an auth entry that
// matches it. Either way the plugin has nothing for the image: it matches
// registryauth.ErrNotECR, "not mine", so callers move on to other
// credentials.
type NoCredentialsError struct {
	Plugin string
	Image  string
	// NotMatched is true when the plugin was not run because no
	// matchImages glob matches the image.
	NotMatched bool
}

func (e *NoCredentialsError) Error() string {
	if e.NotMatched {
		return "credentialprovider: image " + quoteInput(e.Image) + " matches no matchImages glob of plugin " + e.Plugin
	}
	return "credentialprovider: plugin " + e.Plugin + " returned no credentials for image " + quoteInput(e.Image)
}

// Is matches registryauth.ErrNotECR.
func (e *NoCredentialsError) Is(target error) bool { return target == registryauth.ErrNotECR }

// quoteInput bounds what of a caller's input reaches an error string.
func quoteInput(s string) string {
	const max = 256
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strconv.Quote(s)
}

const (
	maxStderr = 1024
	redacted  = "<redacted>"
)

var (
	// secretAssignment finds "password": "x", token=x, Authorization: x...
	secretAssignment = regexp.MustCompile(`(?i)((?:password|passwd|secret|token|auth|authorization)["']?\s*[:=]\s*)("[^"]*"?|'[^']*'?|[^\s,;}]+)`)
	// authScheme finds "Basic x" and "Bearer x".
	authScheme = regexp.MustCompile(`(?i)\b(basic|bearer)\s+[^\s,;"']+`)
	// opaqueRun finds long runs of token characters; redactStderr keeps
	// those that look like words or paths (no mix of cases and digits).
	opaqueRun = regexp.MustCompile(`[A-Za-z0-9+/_\-.]{32,}={0,2}`)
)

// redactStderr makes a plugin's stderr fit for an error message: known
// secrets (the passwords of the response, when there was one, and of
// cached entries) and anything shaped like a secret are replaced before
// the text is truncated, so that truncation cannot leave a secret's prefix
// the replacements would have caught.
func redactStderr(stderr []byte, known []string) string {
	s := strings.ToValidUTF8(string(stderr), "?")
	for _, k := range known {
		if len(k) >= 4 {
			s = strings.ReplaceAll(s, k, redacted)
		}
	}
	s = authScheme.ReplaceAllString(s, "${1} "+redacted)
	s = secretAssignment.ReplaceAllString(s, "${1}"+redacted)
	s = opaqueRun.ReplaceAllStringFunc(s, func(run string) string {
		if looksSecret(run) {
			return redacted
		}
		return run
	})
	s = strings.TrimSpace(s)
	if len(s) > maxStderr {
		cut := maxStderr
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "...[truncated]"
	}
	return s
}

// looksSecret tells a token (mixed case and digits, like base64 or a JWT)
// from a path or a word, which stay readable.
func looksSecret(run string) bool {
	var upper, lower, digit bool
	for _, r := range run {
		switch {
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsLower(r):
			lower = true
		case unicode.IsDigit(r):
			digit = true
		}
	}
	return upper && lower && digit
}
