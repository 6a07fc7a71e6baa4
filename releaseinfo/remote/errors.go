package remote

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

var (
	// ErrReleaseMetadataMissing is matched (errors.Is) when a release file is in
	// no layer of the image: the image is not an OpenShift release payload, or
	// not a complete one.
	ErrReleaseMetadataMissing = errors.New("release metadata file not found in any layer")

	// ErrInvalidReleaseMetadata is matched when a release file was found but
	// does not parse: image-references is not an ImageStream, or the boot
	// images file is not a ConfigMap holding CoreOS stream JSON.
	ErrInvalidReleaseMetadata = errors.New("invalid release metadata")

	// ErrLimitExceeded is matched when the image asks the reader to hold or
	// decompress more than its limits allow (MaxFileSize, MaxScanSize), which
	// only a broken or hostile image does.
	ErrLimitExceeded = errors.New("release image exceeds a size limit")

	// ErrCredentialsRejected is matched when the registry answered HTTP 401
	// again after the Reader dropped the keychain's credential and fetched a
	// new one (WithCredentialRefresher): the identity may not read the
	// repository, or the registry does not trust the credential at all.
	// errors.As still finds the registry's *transport.Error.
	ErrCredentialsRejected = errors.New("registry rejected a freshly fetched credential")

	// ErrPlatformNotFound is matched when a manifest list has no image for the
	// reader's platform (WithPlatform).
	ErrPlatformNotFound = errors.New("no image for the platform in the manifest list")
)

// Error is the error Lookup and LookupWithPullSecret return. It says which
// step failed for which image; Err is the cause, so errors.Is with the
// sentinels above and errors.As with *transport.Error (registry answers, with
// their status code) work through it.
//
// It never holds a credential: pull secrets and tokens are not part of any
// field, and the query of a URL inside Err (a pre-signed blob URL) is redacted.
type Error struct {
	// Image is the image Lookup was asked for.
	Image string
	// Pullspec is the reference being read: the digest-pinned pullspec once
	// the manifest was fetched, before that the resolved pullspec; empty when
	// resolution itself failed.
	Pullspec string
	// Op is the failed step: "resolve", "parse pull secret for", "parse
	// reference", "fetch manifest", "select image of", "read layer
	// sha256:... of", "read" (a release file over a limit), "find" (a missing
	// file), "parse" or "rewrite components of".
	Op string
	// File is the release file concerned (ImageReferencesPath or
	// BootImagesPath), empty when the step is not about one file.
	File string
	// Hint is an operator-facing explanation when the cause is recognised,
	// e.g. a blob host rejecting a redirected request; often empty.
	Hint string
	// Err is the cause.
	Err error
}

// Error returns "releaseinfo/remote: <op> [<file> in] <pullspec> [(requested as <image>)]: <cause>[ (hint: ...)]".
func (e *Error) Error() string {
	where := e.Pullspec
	if where == "" {
		where = e.Image
	}
	if e.File != "" {
		where = e.File + " in " + where
	}
	if e.Pullspec != "" && e.Image != "" && e.Pullspec != e.Image {
		where += " (requested as " + e.Image + ")"
	}
	msg := fmt.Sprintf("releaseinfo/remote: %s %s: %v", e.Op, where, e.Err)
	if e.Hint != "" {
		msg += " (hint: " + e.Hint + ")"
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// redact removes the query of every *url.Error URL in err's chain. The
// http.Client quotes the full URL of a failed request, and the query of a
// pre-signed blob URL (X-Amz-Signature, X-Amz-Credential) grants access to the
// blob until it expires. go-containerregistry redacts its own *transport.Error
// messages but not a bare *url.Error from a blob GET.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if i := strings.IndexByte(ue.URL, '?'); i >= 0 {
			ue.URL = ue.URL[:i] + "?REDACTED"
		}
	}
	return err
}
