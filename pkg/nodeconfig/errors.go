package nodeconfig

import (
	"errors"
	"fmt"
)

// ErrNotECRMirror is matched (errors.Is) by every *MirrorError.
var ErrNotECRMirror = errors.New("nodeconfig: mirror host is not an Amazon ECR registry")

// ErrInvalidOptions is matched (errors.Is) by every *OptionError.
var ErrInvalidOptions = errors.New("nodeconfig: invalid options")

// MirrorError reports a mirror of the policy whose host the helper would
// not serve: nodes would pull from it without credentials. Hosts and
// policy origins are not secret.
type MirrorError struct {
	// Host is the mirror's registry host.
	Host string
	// Mirror is the mirror location as written in the policy.
	Mirror string
	// Source is the rule's source.
	Source string
	// Origin is the rule's origin, e.g. "ImageDigestMirrorSet/cluster".
	Origin string
}

func (e *MirrorError) Error() string {
	return fmt.Sprintf("nodeconfig: mirror %q of source %q (%s): host %s is not an Amazon ECR registry host; "+
		"declare it with an ecrhost.Alias if it is a CNAME of one, or give its credentials another way",
		e.Mirror, e.Source, e.Origin, e.Host)
}

// Unwrap returns ErrNotECRMirror.
func (e *MirrorError) Unwrap() error { return ErrNotECRMirror }

// OptionError reports an invalid Options field.
type OptionError struct {
	// Field is the Options field at fault, e.g. "HelperName".
	Field string
	// Reason says what is wrong with it.
	Reason string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("nodeconfig: option %s %s", e.Field, e.Reason)
}

// Unwrap returns ErrInvalidOptions.
func (e *OptionError) Unwrap() error { return ErrInvalidOptions }

func optionError(field, reason string) error { return &OptionError{Field: field, Reason: reason} }
