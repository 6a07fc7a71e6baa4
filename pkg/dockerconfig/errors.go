package dockerconfig

import (
	"errors"
	"strconv"
	"strings"
)

// ErrMalformed is matched (errors.Is) by every *ParseError: the pull secret,
// or a credential handed to Set or SetAuth, cannot be used.
var ErrMalformed = errors.New("malformed pull secret")

// ParseError describes why a pull secret or a credential was rejected.
//
// It never holds secret material: Reason is one of a fixed set of phrases
// written in this package, never text taken from the input, and Host is a
// registry key (registry hosts are not secret). No JSON snippet is quoted.
type ParseError struct {
	// Host is the registry key of the entry at fault, as written in the
	// input (or as passed to Set/SetAuth); empty when the problem is not
	// inside one entry (a JSON syntax error, a top level that is not an
	// object).
	Host string
	// Reason says what is wrong, e.g. "auth is not valid base64".
	Reason string
	// Offset is the byte offset in the input where the problem was found,
	// or -1 when there is no input document (Set, SetAuth).
	Offset int
}

// maxHostInError bounds how much of a (possibly garbage) key an error shows.
const maxHostInError = 256

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString("dockerconfig: malformed pull secret: ")
	if e.Host != "" {
		h := e.Host
		if len(h) > maxHostInError {
			h = h[:maxHostInError] + "..."
		}
		b.WriteString("entry ")
		b.WriteString(strconv.Quote(h))
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	if e.Offset >= 0 {
		b.WriteString(" (at byte ")
		b.WriteString(strconv.Itoa(e.Offset))
		b.WriteByte(')')
	}
	return b.String()
}

// Unwrap returns ErrMalformed so that errors.Is(err, ErrMalformed) holds.
func (e *ParseError) Unwrap() error { return ErrMalformed }

// Reasons. They are constants on purpose: an error can only ever say one of
// these, so it cannot echo a token.
const (
	reasonEOF          = "unexpected end of input"
	reasonChar         = "invalid character"
	reasonEscape       = "invalid escape sequence in string"
	reasonControl      = "control character in string"
	reasonTrailing     = "data after the top-level value"
	reasonDepth        = "nesting too deep"
	reasonNotObject    = "document is not a JSON object"
	reasonAuthsType    = "auths is not a JSON object"
	reasonEntryType    = "entry is not a JSON object"
	reasonAuthType     = "auth is not a string"
	reasonUserType     = "username is not a string"
	reasonPassType     = "password is not a string"
	reasonAuthBase64   = "auth is not valid base64"
	reasonAuthNoColon  = "auth does not decode to username:password"
	reasonEmptyHost    = "empty registry host"
	reasonUserHasColon = "username contains a colon"
)
