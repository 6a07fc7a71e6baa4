package dockerconfig

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"unicode/utf8"
)

// This file is a JSON scanner for the one shape this package reads. It
// exists because encoding/json is far too slow for the budget of a
// registry call: splitting the 16 KB fixture into raw top-level values
// alone takes it ~85 µs, and BenchmarkAugmentShape50EncodingJSON (decode,
// edit, re-encode) is ~40x slower than BenchmarkAugmentShape50. The
// scanner checks the full JSON grammar exactly as encoding/json does
// (FuzzParseMatchesEncodingJSON checks this), records the three object
// levels it needs (top, auths, entry) as substrings of one immutable copy
// of the input, and skips everything deeper.
//
// Whenever a string is not plain (escapes, non-ASCII, a base64 value that
// is not in canonical form), it hands that one small string to
// encoding/json and encoding/base64, so rare inputs get the reference
// semantics for free.

// maxDepth is encoding/json's nesting limit, so both accept the same documents.
const maxDepth = 10000

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

type scanner struct {
	d  []byte
	s  string // string(d): substrings are zero-copy and immutable
	i  int
	ws int // whitespace runs skipped so far; a value during which it grows must be compacted

	reason string // first syntax error
	at     int

	sawAuths bool
	authsOK  bool
	authsAt  int
	entries  []entry // members of the last "auths" object
	top      []entry // top-level members other than "auths"
}

func (sc *scanner) fail(reason string, at int) bool {
	if sc.reason == "" {
		sc.reason, sc.at = reason, at
	}
	return false
}

// failHere reports an unexpected byte, or the end of the input, at sc.i.
func (sc *scanner) failHere() bool {
	if sc.i >= len(sc.d) {
		return sc.fail(reasonEOF, len(sc.d))
	}
	return sc.fail(reasonChar, sc.i)
}

func (sc *scanner) syntaxError() error {
	return &ParseError{Reason: sc.reason, Offset: sc.at}
}

func (sc *scanner) peek() byte {
	if sc.i < len(sc.d) {
		return sc.d[sc.i]
	}
	return 0
}

func (sc *scanner) skipWS() {
	i := sc.i
	if i < len(sc.d) && sc.d[i] > ' ' {
		return
	}
	for i < len(sc.d) && (sc.d[i] == ' ' || sc.d[i] == '\n' || sc.d[i] == '\r' || sc.d[i] == '\t') {
		i++
	}
	if i != sc.i {
		sc.ws++
		sc.i = i
	}
}

// end accepts trailing whitespace only.
func (sc *scanner) end() bool {
	sc.skipWS()
	if sc.i != len(sc.d) {
		return sc.fail(reasonTrailing, sc.i)
	}
	return true
}

// colon consumes optional whitespace, ':' and optional whitespace.
func (sc *scanner) colon() bool {
	sc.skipWS()
	if sc.peek() != ':' {
		return sc.failHere()
	}
	sc.i++
	sc.skipWS()
	return true
}

// next consumes the separator after a member or element: it returns
// (more, ok): more is true after ',', false after the closing byte.
func (sc *scanner) next(closing byte) (more, ok bool) {
	sc.skipWS()
	switch sc.peek() {
	case ',':
		sc.i++
		sc.skipWS()
		return true, true
	case closing:
		sc.i++
		return false, true
	}
	return false, sc.failHere()
}

// open consumes '{' or '[' and reports whether the container is empty.
func (sc *scanner) open(closing byte) (empty bool) {
	sc.i++
	sc.skipWS()
	if sc.peek() == closing {
		sc.i++
		return true
	}
	return false
}

// str scans the JSON string whose opening quote is at sc.i and reports
// whether it contains escape sequences.
func (sc *scanner) str() (esc, ok bool) {
	esc, _, ok = sc.scanString(false)
	return esc, ok
}

// scanString scans the JSON string whose opening quote is at sc.i. With
// key set, it also reports whether the string is plain: printable ASCII
// that encoding/json writes as is (see isPlain).
func (sc *scanner) scanString(key bool) (esc, plain, ok bool) {
	d := sc.d
	i := sc.i + 1
	plain = true
	for {
		if key {
			i = nextSpecialKey(d, i)
		} else {
			i = nextSpecial(d, i)
		}
		if i >= len(d) {
			return false, false, sc.fail(reasonEOF, len(d))
		}
		switch c := d[i]; {
		case c == '"':
			sc.i = i + 1
			return esc, plain && !esc, true
		case c == '\\':
			esc = true
			n := escapeLen(d[i:])
			if n <= 0 {
				if n < 0 {
					return false, false, sc.fail(reasonEOF, len(d))
				}
				return false, false, sc.fail(reasonEscape, i)
			}
			i += n
		case c < 0x20:
			return false, false, sc.fail(reasonControl, i)
		default: // '<', '>', '&' or not ASCII: fine, but not plain
			plain = false
			i++
		}
	}
}

// escapeLen returns the length of the escape sequence at d[0] == '\\', 0 if
// it is invalid, -1 if the input ends inside it.
func escapeLen(d []byte) int {
	if len(d) < 2 {
		return -1
	}
	switch d[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		for k := 2; k < 6; k++ {
			if k >= len(d) {
				return -1
			}
			if !isHex(d[k]) {
				return 0
			}
		}
		return 6
	}
	return 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// nextSpecial returns the index of the first '"', '\\' or control byte at
// or after i, or len(d). It tests eight bytes per step (SWAR); the lowest
// flagged byte of each test is exact (borrows only run upwards from a true
// hit), which is all it needs.
func nextSpecial(d []byte, i int) int {
	for ; i+8 <= len(d) && i >= 0; i += 8 {
		if m := specialMask(binary.LittleEndian.Uint64(d[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(d); i++ {
		if c := d[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

// nextSpecialKey is nextSpecial that also stops at the bytes that make a
// key not plain: '<', '>', '&' and bytes from 0x7f up.
func nextSpecialKey(d []byte, i int) int {
	for ; i+8 <= len(d) && i >= 0; i += 8 {
		w := binary.LittleEndian.Uint64(d[i:])
		m := specialMask(w) | ((w | (w + lsb)) & msb) | zeroBytes(w^(lsb*'<')) | zeroBytes(w^(lsb*'>')) | zeroBytes(w^(lsb*'&'))
		if m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(d); i++ {
		if c := d[i]; !plainByte[c] {
			return i
		}
	}
	return i
}

func specialMask(w uint64) uint64 {
	return zeroBytes(w^(lsb*'"')) | zeroBytes(w^(lsb*'\\')) | ((w - lsb*0x20) &^ w & msb)
}

// zeroBytes flags zero bytes of w; the lowest flag is exact.
func zeroBytes(w uint64) uint64 { return (w - lsb) &^ w & msb }

// b64Run returns the index of the first byte at or after i that is not in
// the standard base64 alphabet (A-Z a-z 0-9 + /), or len(d). It tests
// sixteen bytes per step (SWAR, one branch) and finds the exact byte with a
// table once a step fails. This loop is Parse's largest single cost: auth
// values are three quarters of a pull secret.
func b64Run(d []byte, i int) int {
	k := b64Consts // in registers: the compiler would rebuild literal constants each step
	rest := d[i:]
	for len(rest) >= 16 {
		if (b64Bad(binary.LittleEndian.Uint64(rest), &k) | b64Bad(binary.LittleEndian.Uint64(rest[8:]), &k)) != 0 {
			break
		}
		rest = rest[16:]
	}
	for j, c := range rest {
		if !b64Byte[c] {
			return len(d) - len(rest) + j
		}
	}
	return len(d)
}

// b64RunString is b64Run for a string (SetAuth's token), without copying it.
func b64RunString(s string) int {
	k := b64Consts
	rest := s
	for len(rest) >= 16 {
		if (b64Bad(load64(rest), &k) | b64Bad(load64(rest[8:]), &k)) != 0 {
			break
		}
		rest = rest[16:]
	}
	for j := 0; j < len(rest); j++ {
		if !b64Byte[rest[j]] {
			return len(s) - len(rest) + j
		}
	}
	return len(s)
}

// load64 is binary.LittleEndian.Uint64 for a string; the compiler merges
// the byte loads into one.
func load64(s string) uint64 {
	s = s[:8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// b64Consts are the SWAR constants of b64Bad. Each range test lo <= v <= hi
// is two additions: the top bit of v+(0x80-lo) says v >= lo, that of
// v+(0x7f-hi) says v > hi, so their XOR says v is in range.
var b64Consts = [...]uint64{
	msb,
	lsb * 0x20, // folds A-Z onto a-z
	lsb * (0x80 - 'a'), lsb * (0x7f - 'z'),
	lsb * (0x80 - '/'), lsb * (0x7f - '9'), // '/' is just below '0'
	lsb * (0x80 - '+'), lsb * (0x7f - '+'),
}

// b64Bad sets the top bit of every byte of w that is not in the base64
// alphabet. Clearing the top bits first means no addition can carry into
// the next byte; bytes that had them are invalid anyway.
func b64Bad(w uint64, k *[8]uint64) uint64 {
	v := w &^ k[0]
	l := v | k[1]
	ok := ((l + k[2]) ^ (l + k[3])) | ((v + k[4]) ^ (v + k[5])) | ((v + k[6]) ^ (v + k[7]))
	return (^ok | w) & k[0]
}

var b64Byte = func() (t [256]bool) {
	for c := range t {
		t[c] = isB64(byte(c))
	}
	return t
}()

func isB64(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/'
}

// canonicalB64Len returns the end of the padded standard-base64 run that
// starts at i (alphabet, then at most two '='), and whether its length is
// a multiple of four. Such a run is always accepted by base64.StdEncoding.
func canonicalB64Len(d []byte, i int) (end int, whole bool) {
	j := b64Run(d, i)
	k := j
	for k < len(d) && k-j < 2 && d[k] == '=' {
		k++
	}
	return k, (k-i)%4 == 0
}

// isCanonicalB64 is canonicalB64Len for a whole string.
func isCanonicalB64(s string) bool {
	j := b64RunString(s)
	k := j
	for k < len(s) && k-j < 2 && s[k] == '=' {
		k++
	}
	return k == len(s) && len(s)%4 == 0
}

// b64HasColon reports whether canonical base64 text (alphabet, then at
// most two '=' ending a quartet) decodes to bytes that contain ':'. It
// stops at the first colon, which in "user:password" is near the start.
// Padding is read as zero bits, which never form ':' (0x3a) in the bytes
// a padded quartet yields: those end in four or six zero bits.
func b64HasColon[T string | []byte](c T) bool {
	for ; len(c) >= 4; c = c[4:] {
		q := c[:4]
		n := uint32(b64Val[q[0]])<<18 | uint32(b64Val[q[1]])<<12 | uint32(b64Val[q[2]])<<6 | uint32(b64Val[q[3]])
		if byte(n>>16) == ':' || byte(n>>8) == ':' || byte(n) == ':' {
			return true
		}
	}
	return false
}

var b64Val = func() (t [256]uint8) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(alphabet); i++ {
		t[alphabet[i]] = uint8(i)
	}
	return t
}()

// Problems found inside an entry. They are recorded while scanning and
// reported only if the entry survives deduplication and is in auths.
const (
	badNone uint8 = iota
	badEntryType
	badAuthType
	badUserType
	badPassType
	badAuthBase64
	badAuthNoColon
)

var badReason = [...]string{
	badEntryType:   reasonEntryType,
	badAuthType:    reasonAuthType,
	badUserType:    reasonUserType,
	badPassType:    reasonPassType,
	badAuthBase64:  reasonAuthBase64,
	badAuthNoColon: reasonAuthNoColon,
}

// Bits of fields.slow: the field's string needs encoding/json to unquote.
const (
	slowAuth uint8 = 1 << iota
	slowUser
	slowPass
)

// fields is what an entry object says about credentials: the contents
// (between the quotes, undecoded) of its auth, username and password
// strings, and its first problem.
type fields struct {
	auth, user, pass string
	slow             uint8
	bad              uint8
	badAt            int
}

// authString scans the string value of an "auth" field and checks it.
// Canonical base64 (the normal case) is checked in the same pass that
// finds the closing quote; anything else is unquoted and decoded by the
// standard library, which then decides.
func (sc *scanner) authString() (content string, slow bool, bad uint8, ok bool) {
	a := sc.i + 1
	if k, whole := canonicalB64Len(sc.d, a); whole && k < len(sc.d) && sc.d[k] == '"' {
		sc.i = k + 1
		if k > a && !b64HasColon(sc.d[a:k]) {
			bad = badAuthNoColon
		}
		return sc.s[a:k], false, bad, true
	}
	if _, ok := sc.str(); !ok {
		return "", false, 0, false
	}
	if v := unquoteJSON(sc.d[a-1 : sc.i]); v != "" {
		if raw, err := base64.StdEncoding.DecodeString(v); err != nil {
			bad = badAuthBase64
		} else if bytes.IndexByte(raw, ':') < 0 {
			bad = badAuthNoColon
		}
	}
	return sc.s[a : sc.i-1], true, bad, true
}

// key scans an object key and returns it decoded, and whether its JSON
// encoding is just the key in quotes.
func (sc *scanner) key() (name string, plain, ok bool) {
	if sc.peek() != '"' {
		return "", false, sc.failHere()
	}
	a := sc.i
	esc, plain, ok := sc.scanString(true)
	if !ok {
		return "", false, false
	}
	if name = sc.s[a+1 : sc.i-1]; plain || !esc && utf8.ValidString(name) {
		return name, plain, true
	}
	name = unquoteJSON(sc.d[a:sc.i]) // also replaces invalid UTF-8, as encoding/json does
	return name, isPlain(name), true
}

// unquoteJSON decodes a JSON string (quotes included) that the scanner
// already validated. It is a separate function so that the variable handed
// to encoding/json escapes to the heap only on this rare path.
//
//go:noinline
func unquoteJSON(q []byte) string {
	var v string
	_ = json.Unmarshal(q, &v)
	return v
}

// isPlain reports whether s is printable ASCII that encoding/json writes
// unescaped (it escapes '<', '>' and '&').
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			return false
		}
	}
	return true
}

var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

// appendKey appends the JSON encoding encoding/json would give the key.
func appendKey(b []byte, e *entry) []byte {
	if e.plain {
		return append(append(append(b, '"'), e.key...), '"')
	}
	q, _ := json.Marshal(e.key) // a string always marshals
	return append(b, q...)
}

// skipValue validates and skips any JSON value; depth is the number of
// containers enclosing it.
func (sc *scanner) skipValue(depth int) bool {
	if sc.i >= len(sc.d) {
		return sc.fail(reasonEOF, sc.i)
	}
	switch c := sc.d[sc.i]; c {
	case '"':
		_, ok := sc.str()
		return ok
	case '{', '[':
		if depth >= maxDepth {
			return sc.fail(reasonDepth, sc.i)
		}
		closing := byte(']')
		if c == '{' {
			closing = '}'
		}
		if sc.open(closing) {
			return true
		}
		for {
			if c == '{' {
				if sc.peek() != '"' {
					return sc.failHere()
				}
				if _, ok := sc.str(); !ok || !sc.colon() {
					return false
				}
			}
			if !sc.skipValue(depth + 1) {
				return false
			}
			more, ok := sc.next(closing)
			if !more {
				return ok
			}
		}
	case 't':
		return sc.literal("true")
	case 'f':
		return sc.literal("false")
	case 'n':
		return sc.literal("null")
	}
	return sc.number()
}

func (sc *scanner) literal(lit string) bool {
	for k := 0; k < len(lit); k++ {
		if sc.i+k >= len(sc.d) {
			return sc.fail(reasonEOF, len(sc.d))
		}
		if sc.d[sc.i+k] != lit[k] {
			return sc.fail(reasonChar, sc.i+k)
		}
	}
	sc.i += len(lit)
	return true
}

// number accepts the JSON number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (sc *scanner) number() bool {
	d, i := sc.d, sc.i
	digits := func() bool {
		if i >= len(d) {
			sc.i = i
			return sc.failHere()
		}
		if d[i] < '0' || d[i] > '9' {
			return sc.fail(reasonChar, i)
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
		return true
	}
	if d[i] == '-' {
		i++
	}
	if i < len(d) && d[i] == '0' {
		i++
	} else if !digits() {
		return false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	sc.i = i
	return true
}

// parseTop scans the top-level object (sc.i at '{'). "auths" is scanned as
// a map of entries; every other member is kept raw and, in case the
// document turns out to be a legacy .dockercfg, also scanned as an entry.
func (sc *scanner) parseTop() bool {
	if sc.open('}') {
		return true
	}
	for {
		at := sc.i
		name, plain, ok := sc.key()
		if !ok || !sc.colon() {
			return false
		}
		if name == "auths" {
			sc.sawAuths, sc.authsAt = true, sc.i
			sc.authsOK = sc.peek() == '{'
			if !sc.authsOK {
				if !sc.skipValue(1) {
					return false
				}
			} else if !sc.members() {
				return false
			}
		} else {
			sc.top = append(sc.top, entry{key: name, plain: plain, at: off32(at)})
			if !sc.value(&sc.top[len(sc.top)-1], 1) {
				return false
			}
		}
		more, ok := sc.next('}')
		if !more {
			return ok
		}
	}
}

// members scans the auths object (sc.i at '{') into sc.entries, replacing
// whatever an earlier "auths" member left there.
func (sc *scanner) members() bool {
	clear(sc.entries)
	sc.entries = sc.entries[:0]
	if sc.open('}') {
		return true
	}
	for {
		at := sc.i
		name, plain, ok := sc.key()
		if !ok || !sc.colon() {
			return false
		}
		sc.entries = append(sc.entries, entry{key: name, plain: plain, at: off32(at)})
		if !sc.value(&sc.entries[len(sc.entries)-1], 2) {
			return false
		}
		more, ok := sc.next('}')
		if !more {
			return ok
		}
	}
}

// value scans the value of a member that may be an entry; depth is the
// number of containers enclosing it.
func (sc *scanner) value(e *entry, depth int) bool {
	start, ws := sc.i, sc.ws
	if sc.peek() == '{' {
		var f fields
		if !sc.entryObject(&f, depth+1) {
			return false
		}
		e.bad, e.badAt = f.bad, off32(f.badAt)
	} else {
		e.bad, e.badAt = badEntryType, off32(start)
		if !sc.skipValue(depth) {
			return false
		}
	}
	e.raw = sc.s[start:sc.i]
	if sc.ws != ws {
		e.raw = compact(e.raw)
	}
	return true
}

// entryObject scans an entry object (sc.i at '{') into f, skipping every
// member but auth, username and password; depth is the object's own
// nesting depth. As with encoding/json, the last of repeated members wins.
func (sc *scanner) entryObject(f *fields, depth int) bool {
	var authBad, userBad, passBad uint8
	var authAt, userAt, passAt int
	for more := !sc.open('}'); more; {
		a := sc.i
		if sc.peek() != '"' {
			return sc.failHere()
		}
		esc, ok := sc.str()
		if !ok {
			return false
		}
		name := sc.s[a+1 : sc.i-1]
		if esc {
			name = unquoteJSON(sc.d[a:sc.i])
		}
		if !sc.colon() {
			return false
		}
		at, isStr := sc.i, sc.peek() == '"'
		switch name {
		case "auth":
			authAt, authBad, f.auth = at, badNone, ""
			f.slow &^= slowAuth
			if !isStr {
				authBad = badAuthType
				break
			}
			v, slow, bad, ok := sc.authString()
			if !ok {
				return false
			}
			authBad, f.auth = bad, v
			if slow {
				f.slow |= slowAuth
			}
		case "username", "password":
			bad, dst, bit, typ := &userBad, &f.user, slowUser, badUserType
			if name == "password" {
				bad, dst, bit, typ = &passBad, &f.pass, slowPass, badPassType
				passAt = at
			} else {
				userAt = at
			}
			*bad, *dst = badNone, ""
			f.slow &^= bit
			if !isStr {
				*bad = typ
				break
			}
			esc, ok := sc.str()
			if !ok {
				return false
			}
			*dst = sc.s[at+1 : sc.i-1]
			if esc {
				f.slow |= bit
			}
		}
		if sc.i == at && !sc.skipValue(depth) { // not consumed above
			return false
		}
		if more, ok = sc.next('}'); !ok {
			return false
		}
	}
	// A fixed order, so that the reported problem does not depend on the
	// order of the members.
	switch {
	case authBad == badAuthType:
		f.bad, f.badAt = authBad, authAt
	case userBad != badNone:
		f.bad, f.badAt = userBad, userAt
	case passBad != badNone:
		f.bad, f.badAt = passBad, passAt
	case authBad != badNone:
		f.bad, f.badAt = authBad, authAt
	}
	return true
}

// compact removes insignificant whitespace from a valid JSON value.
func compact(v string) string {
	b := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case ' ', '\t', '\n', '\r':
		case '"':
			j := i + 1
			for v[j] != '"' {
				if v[j] == '\\' {
					j++
				}
				j++
			}
			b = append(b, v[i:j+1]...)
			i = j
		default:
			b = append(b, c)
		}
	}
	return string(b)
}
