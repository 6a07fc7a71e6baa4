package preflight

import (
	"errors"
	"strconv"
)

// Sentinel errors of Run. Each *ConfigError matches exactly one of them.
var (
	// ErrInvalidRelease means Config.Release is empty or not an image reference.
	ErrInvalidRelease = errors.New("invalid release image reference")
	// ErrNoECRMirror means the policy sends the release to no Amazon ECR
	// registry, so there is no ECR mirror to check.
	ErrNoECRMirror = errors.New("no Amazon ECR mirror for the release")
	// ErrInvalidConfig is any other unusable Config field.
	ErrInvalidConfig = errors.New("invalid preflight configuration")
)

// ConfigError is the error Run returns for input it cannot use.
type ConfigError struct {
	// Field is the Config field at fault.
	Field string
	// Value is the offending value, when it is not secret (URLs are
	// redacted); empty otherwise.
	Value string
	// Reason says what is wrong.
	Reason string
	// Kind is one of the sentinels above.
	Kind error
	// Err is the cause, when there is one (a *mirrorpolicy.RuleError...).
	Err error
}

func (e *ConfigError) Error() string {
	s := "preflight: " + e.Field
	if e.Value != "" {
		s += " " + strconv.Quote(e.Value)
	}
	s += " " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is the error's Kind.
func (e *ConfigError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause.
func (e *ConfigError) Unwrap() error { return e.Err }
