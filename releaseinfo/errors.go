package releaseinfo

import (
	"errors"
	"strings"
)

// Sentinel errors. A Prober wraps ErrManifestUnknown or ErrUnauthorized in
// what it returns (errors.Is must find them); any other error means the
// candidate could not be checked.
var (
	// ErrManifestUnknown means the registry answered that the manifest, or
	// the whole repository, does not exist: HTTP 404, MANIFEST_UNKNOWN or
	// NAME_UNKNOWN.
	ErrManifestUnknown = errors.New("manifest unknown")
	// ErrUnauthorized means the registry refused the credentials: HTTP 401
	// or 403, UNAUTHORIZED or DENIED. ECR gives this answer as well for a
	// repository that does not exist or that the identity may not read.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrNotMirrored is matched (errors.Is) by every *NotMirroredError:
	// no candidate the policy allows holds the image.
	ErrNotMirrored = errors.New("image not available from any allowed pull source")
)

// Skip says why a candidate was passed over.
type Skip struct {
	// Ref is the candidate's pullspec.
	Ref string
	// Reason is a short explanation for logs: "manifest unknown",
	// "unauthorized (on ECR: no such repository, or not readable)",
	// "unreachable: ...", "lookup failed: ...".
	Reason string
	// Err is the error behind Reason, for errors.Is / errors.As.
	Err error
}

// NotMirroredError is returned when no candidate the policy allows holds the
// image. It matches ErrNotMirrored, and unwraps to every skipped candidate's
// error (and to Err), so errors.Is also finds what caused each skip, such as
// context.DeadlineExceeded or a credential failure.
type NotMirroredError struct {
	// Noun names what was resolved in the message ("release").
	Noun string
	// Image is the reference that was asked for.
	Image string
	// Mirrors are the repositories of the mirror candidates, in order.
	Mirrors []string
	// Source is the repository of the image's own reference.
	Source string
	// SourceHost is the registry host of Source.
	SourceHost string
	// SourceAllowed is false when the policy forbids contacting the source
	// (mirrorSourcePolicy: NeverContactSource).
	SourceAllowed bool
	// Skipped lists every candidate tried, in order, and why it failed.
	Skipped []Skip
	// Err is set when the policy itself yielded no candidate (an error
	// wrapping mirrorpolicy.ErrBlocked).
	Err error
}

// Error names the image, the mirrors with why each was passed over, and the
// source: either its failure or that the policy forbids contacting it, e.g.
//
//	release quay.io/openshift-release-dev/ocp-release@sha256:… is not yet in
//	123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4 (manifest unknown)
//	and the policy forbids contacting quay.io
func (e *NotMirroredError) Error() string {
	noun := e.Noun
	if noun == "" {
		noun = "image"
	}
	var b strings.Builder
	b.WriteString(noun + " " + e.Image)
	if len(e.Mirrors) == 0 && e.Err != nil {
		b.WriteString(" has no allowed pull source: " + e.Err.Error())
		return b.String()
	}
	reasons := map[string]string{}
	allAbsent := true
	var sourceReason string
	for _, s := range e.Skipped {
		repo := repository(s.Ref)
		if repo == e.Source {
			sourceReason = s.Reason
			continue
		}
		if _, seen := reasons[repo]; !seen {
			reasons[repo] = s.Reason
		}
		allAbsent = allAbsent && (errors.Is(s.Err, ErrManifestUnknown) || errors.Is(s.Err, ErrUnauthorized))
	}
	switch {
	case len(e.Mirrors) == 0:
		b.WriteString(" is not available: no mirror applies")
	case !e.SourceAllowed && allAbsent:
		b.WriteString(" is not yet in ")
	case !e.SourceAllowed:
		b.WriteString(" could not be found in ")
	default:
		b.WriteString(" is not in ")
	}
	for i, m := range e.Mirrors {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(m)
		if r, ok := reasons[m]; ok {
			b.WriteString(" (" + r + ")")
		}
	}
	if !e.SourceAllowed {
		b.WriteString(" and the policy forbids contacting " + e.SourceHost)
		return b.String()
	}
	if sourceReason != "" {
		b.WriteString("; source " + e.Source + ": " + sourceReason)
	}
	return b.String()
}

// Is reports whether target is ErrNotMirrored.
func (e *NotMirroredError) Is(target error) bool { return target == ErrNotMirrored }

// Unwrap returns the errors of the skipped candidates and Err.
func (e *NotMirroredError) Unwrap() []error {
	errs := make([]error, 0, len(e.Skipped)+1)
	for _, s := range e.Skipped {
		if s.Err != nil {
			errs = append(errs, s.Err)
		}
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}
