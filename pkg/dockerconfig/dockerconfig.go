package dockerconfig

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Entry is the decoded credential of one registry entry.
type Entry struct {
	Username string
	Password string `datapolicy:"password"`
}

// String redacts the password, so that logging an Entry cannot leak it.
func (e Entry) String() string {
	return fmt.Sprintf("{Username:%s Password:<redacted>}", e.Username)
}

// GoString redacts the password for %#v as well.
func (e Entry) GoString() string {
	return fmt.Sprintf("dockerconfig.Entry{Username:%q, Password:<redacted>}", e.Username)
}

// Config is a parsed pull secret. The zero value is an empty pull secret.
//
// A Config may be read from several goroutines at once; Set, SetAuth and
// Delete need exclusive access.
type Config struct {
	fields  []entry // top-level members other than "auths", sorted by key, unique
	entries []entry // auths members, sorted by key, unique
}

// entry is one member of an object this package writes back: an auths
// entry, or a top-level field. Its strings are substrings of the one
// immutable copy Parse makes of its input, or were built by Set/SetAuth.
//
// It is kept small (three strings, 64 bytes): SetAuth moves entries to
// insert one, and the garbage collector scans every pointer in them.
type entry struct {
	key  string // decoded key
	norm string // NormalizeKey(key), for auths entries
	raw  string // compact JSON value, or with token set the auth token written by Set/SetAuth

	token bool  // raw is a token, written as {"auth":"<raw>"}
	plain bool  // the key's JSON encoding is the key in quotes
	bad   uint8 // badNone, or what is wrong with the entry (reported only for auths entries)
	at    int32 // offset of the key in the input (saturated)
	badAt int32 // offset of the problem (saturated)
}

// off32 saturates an input offset for entry; only error messages read it.
func off32(i int) int32 { return int32(min(i, math.MaxInt32)) }

// Parse parses a pull secret in dockerconfigjson form ({"auths": {...}}) or
// in the legacy .dockercfg form (a map of registry to entry). Empty or
// all-whitespace input yields an empty Config. Parse never modifies data
// and the Config keeps no reference to it.
//
// Every error is a *ParseError matching ErrMalformed.
func Parse(data []byte) (*Config, error) {
	sc := scanner{d: data}
	sc.skipWS()
	if sc.i == len(data) {
		return &Config{}, nil
	}
	sc.s = string(data)
	// Room for every entry of a typical pull secret plus a few Set calls,
	// so that neither the scan nor Augment's SetAuth regrows the slice.
	sc.entries = make([]entry, 0, len(data)/256+8)

	start := sc.i
	if data[start] != '{' {
		if !sc.skipValue(0) || !sc.end() {
			return nil, sc.syntaxError()
		}
		return nil, &ParseError{Reason: reasonNotObject, Offset: start}
	}
	if !sc.parseTop() || !sc.end() {
		return nil, sc.syntaxError()
	}

	c := &Config{}
	switch {
	case sc.sawAuths:
		if !sc.authsOK {
			return nil, &ParseError{Reason: reasonAuthsType, Offset: sc.authsAt}
		}
		c.fields, c.entries = dedupe(sc.top), dedupe(sc.entries)
	case isLegacy(sc.top):
		c.entries = dedupe(sc.top)
	default:
		c.fields = dedupe(sc.top)
	}
	for i := range c.entries {
		e := &c.entries[i]
		e.norm = NormalizeKey(e.key)
		if e.norm == "" || e.norm[0] == '/' {
			return nil, &ParseError{Host: e.key, Reason: reasonEmptyHost, Offset: int(e.at)}
		}
		if e.bad != badNone {
			return nil, &ParseError{Host: e.key, Reason: badReason[e.bad], Offset: int(e.badAt)}
		}
	}
	return c, nil
}

// isLegacy reports whether a document without "auths" is a .dockercfg: it
// is not empty and every top-level key is shaped like a registry. By the
// image reference grammar a registry host contains '.' or ':' or is
// "localhost", while docker's config.json settings (credsStore,
// credHelpers, HttpHeaders, ...) are plain words.
func isLegacy(top []entry) bool {
	for _, e := range top {
		if !strings.ContainsAny(e.key, ".:/") && !strings.EqualFold(e.key, "localhost") {
			return false
		}
	}
	return len(top) > 0
}

// dedupe sorts members by key, keeping the last of duplicate keys (as
// encoding/json does). Pull secrets written by Go are already sorted.
func dedupe(es []entry) []entry {
	sorted := true
	for i := 1; i < len(es) && sorted; i++ {
		sorted = es[i-1].key < es[i].key
	}
	if sorted {
		return es
	}
	slices.SortStableFunc(es, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	out := es[:0]
	for i := range es {
		if i+1 < len(es) && es[i+1].key == es[i].key {
			continue
		}
		out = append(out, es[i])
	}
	clear(es[len(out):])
	return out
}

// NormalizeKey returns the registry a pull-secret key names: the scheme
// ("https://"), trailing slashes and a legacy "/v1" or "/v2" API path
// (only when it is the whole path, as in "https://index.docker.io/v1/")
// are removed, and the host part, up to the first '/', is lower-cased. A
// repository path is kept, with its case: "Quay.IO/OpenShift/" becomes
// "quay.io/OpenShift". NormalizeKey is idempotent.
func NormalizeKey(key string) string {
	if isNormal(key) {
		return key
	}
	k := key
	for {
		i := strings.Index(k, "://")
		if i <= 0 || !isScheme(k[:i]) {
			break
		}
		k = k[i+3:]
	}
	k = strings.TrimRight(k, "/")
	host, path := k, ""
	if i := strings.IndexByte(k, '/'); i >= 0 {
		host, path = k[:i], k[i:]
	}
	if path == "/v1" || path == "/v2" {
		k, path = host, ""
	}
	for i := 0; i < len(host); i++ {
		if 'A' <= host[i] && host[i] <= 'Z' {
			return lowerASCII(host) + path
		}
	}
	return k
}

// lowerASCII lower-cases ASCII letters only: host names are ASCII
// (internationalised ones travel as punycode), and strings.ToLower would
// also fold other bytes.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// isNormal is a quick test for keys NormalizeKey returns unchanged, which
// is nearly all of them: no upper case and no ':' before the first '/',
// and a path that neither ends in '/' nor is "/v1" or "/v2". A port's ':'
// sends the key down the slow path, which returns it unchanged.
func isNormal(k string) bool {
	for i := 0; i < len(k); i++ {
		if keyByte[k[i]] {
			continue
		}
		if k[i] != '/' {
			return false
		}
		p := k[i:]
		return p[len(p)-1] != '/' && p != "/v1" && p != "/v2"
	}
	return true
}

// keyByte marks the bytes isNormal passes over: all but A-Z, ':' and '/'.
var keyByte = func() (t [256]bool) {
	for c := range t {
		t[c] = !('A' <= c && c <= 'Z' || c == ':' || c == '/')
	}
	return t
}()

// isScheme reports whether s is a URI scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if !('a' <= c && c <= 'z' || i > 0 && ('0' <= s[i] && s[i] <= '9' || s[i] == '+' || s[i] == '-' || s[i] == '.')) {
			return false
		}
	}
	return s != ""
}

// Hosts returns the registry keys of the entries, as written, sorted.
func (c *Config) Hosts() []string {
	hosts := make([]string, len(c.entries))
	for i := range c.entries {
		hosts[i] = c.entries[i].key
	}
	return hosts
}

// Lookup returns the credential for host. Keys match when they normalise
// to the same string (NormalizeKey); there is no path-prefix or wildcard
// matching, which is the keyring's job. When several keys match, the one
// written exactly as host wins, then the one equal to NormalizeKey(host),
// then the first in sorted order.
//
// A non-empty "auth" wins over "username"/"password", as in the kubelet
// and the docker CLI. An entry with neither (say, only an identitytoken)
// is found, with an empty Entry.
func (c *Config) Lookup(host string) (Entry, bool) {
	i := c.find(host)
	if i < 0 {
		return Entry{}, false
	}
	return c.entries[i].decode(), true
}

func (c *Config) find(host string) int {
	if i, ok := c.index(host); ok {
		return i
	}
	norm := NormalizeKey(host)
	if i, ok := c.index(norm); ok && c.entries[i].norm == norm {
		return i
	}
	for i := range c.entries {
		if c.entries[i].norm == norm {
			return i
		}
	}
	return -1
}

func (c *Config) index(key string) (int, bool) {
	return slices.BinarySearchFunc(c.entries, key, func(e entry, k string) int { return strings.Compare(e.key, k) })
}

// decode returns the credential of e. Parsed entries are scanned again:
// keeping the decoded fields of every entry would cost Parse more than an
// occasional Lookup costs.
func (e *entry) decode() Entry {
	if e.token {
		return decodeAuth(e.raw, false)
	}
	var f fields
	sc := scanner{d: []byte(e.raw), s: e.raw}
	sc.entryObject(&f, 1) // valid: Parse checked it
	if f.auth != "" {
		return decodeAuth(f.auth, f.slow&slowAuth != 0)
	}
	return Entry{Username: unquote(f.user, f.slow&slowUser != 0), Password: unquote(f.pass, f.slow&slowPass != 0)}
}

// decodeAuth splits base64 "user:password" at the first colon, as the
// kubelet and the docker CLI do.
func decodeAuth(auth string, slow bool) Entry {
	raw, _ := base64.StdEncoding.DecodeString(unquote(auth, slow)) // validated by Parse/SetAuth
	user, pass, _ := strings.Cut(string(raw), ":")
	return Entry{Username: user, Password: pass}
}

// unquote decodes the contents of a JSON string. Plain contents are
// returned as they are; others go through encoding/json, which also
// replaces invalid UTF-8 as it would when decoding the whole document.
func unquote(s string, slow bool) string {
	if !slow && utf8.ValidString(s) {
		return s
	}
	return unquoteJSON([]byte(`"` + s + `"`)) // validated by Parse
}

// Set replaces every entry whose key normalises like host with one entry
// {"auth": base64(username:password)} under the key NormalizeKey(host).
// The entry is replaced whole: other fields of the old entry (email, a
// stale identitytoken) are dropped, since a client may prefer them over
// the new credential. A username cannot contain ':'.
func (c *Config) Set(host string, e Entry) error {
	norm, err := checkHost(host)
	if err != nil {
		return err
	}
	if strings.IndexByte(e.Username, ':') >= 0 {
		return &ParseError{Host: host, Reason: reasonUserHasColon, Offset: -1}
	}
	c.put(norm, base64.StdEncoding.EncodeToString([]byte(e.Username+":"+e.Password)))
	return nil
}

// SetAuth is Set for a credential already in "auth" form, base64 of
// "username:password", such as the authorizationToken of ECR's
// GetAuthorizationToken. The token is stored as given, without a decode
// and re-encode; it must be standard base64 with padding, without line
// breaks, and decode to text that contains ':'.
func (c *Config) SetAuth(host, authB64 string) error {
	norm, err := checkHost(host)
	if err != nil {
		return err
	}
	if authB64 == "" || !isCanonicalB64(authB64) {
		return &ParseError{Host: host, Reason: reasonAuthBase64, Offset: -1}
	}
	if !b64HasColon(authB64) {
		return &ParseError{Host: host, Reason: reasonAuthNoColon, Offset: -1}
	}
	c.put(norm, authB64)
	return nil
}

func checkHost(host string) (string, error) {
	norm := NormalizeKey(host)
	if norm == "" || norm[0] == '/' {
		return "", &ParseError{Host: host, Reason: reasonEmptyHost, Offset: -1}
	}
	return norm, nil
}

// put stores auth under norm after removing every key that normalises to it.
func (c *Config) put(norm, auth string) {
	c.deleteNorm(norm)
	i, _ := c.index(norm)
	c.entries = slices.Insert(c.entries, i, entry{key: norm, norm: norm, raw: auth, token: true, plain: isPlain(norm)})
}

// Delete removes every entry whose key normalises like host and reports
// whether there was one.
func (c *Config) Delete(host string) bool {
	return c.deleteNorm(NormalizeKey(host))
}

func (c *Config) deleteNorm(norm string) bool {
	n := len(c.entries)
	c.entries = slices.DeleteFunc(c.entries, func(e entry) bool { return e.norm == norm })
	return len(c.entries) != n
}

// Clone returns a deep copy of c.
func (c *Config) Clone() *Config {
	return &Config{
		fields: slices.Clone(c.fields),
		// Spare room: a clone is usually made to be augmented.
		entries: append(make([]entry, 0, len(c.entries)+4), c.entries...),
	}
}

// Marshal returns the pull secret in dockerconfigjson form: compact JSON,
// top-level and auths keys sorted, "auths" always present, every value
// this package did not write kept as it was read (compacted). Each call
// returns a new slice.
func (c *Config) Marshal() []byte {
	n := len(`{"auths":{}}`)
	for i := range c.fields {
		n += len(c.fields[i].key) + len(c.fields[i].raw) + 4
	}
	for i := range c.entries {
		e := &c.entries[i]
		n += len(e.key) + len(e.raw) + 4
		if e.token {
			n += len(`{"auth":""}`)
		}
	}
	b := make([]byte, 0, n) // exact unless a key needs escaping
	b = append(b, '{')
	split := 0
	for split < len(c.fields) && c.fields[split].key < "auths" {
		split++
	}
	if b = appendMembers(b, c.fields[:split]); split > 0 {
		b = append(b, ',')
	}
	b = append(b, `"auths":{`...)
	b = append(appendMembers(b, c.entries), '}')
	if split < len(c.fields) {
		b = appendMembers(append(b, ','), c.fields[split:])
	}
	return append(b, '}')
}

// appendMembers writes members separated by commas.
func appendMembers(b []byte, members []entry) []byte {
	for i := range members {
		e := &members[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendKey(b, e), ':')
		if e.token {
			b = append(append(append(b, `{"auth":"`...), e.raw...), `"}`...)
		} else {
			b = append(b, e.raw...)
		}
	}
	return b
}

// Merge returns base with overlay's entries added: an overlay entry
// replaces every base entry whose key normalises like its own, as a whole
// (fields are not merged). Other top-level fields of both are kept, the
// overlay's winning on a conflict. The result is in Marshal's form.
func Merge(base, overlay []byte) ([]byte, error) {
	b, err := Parse(base)
	if err != nil {
		return nil, fmt.Errorf("base: %w", err)
	}
	o, err := Parse(overlay)
	if err != nil {
		return nil, fmt.Errorf("overlay: %w", err)
	}
	over := make(map[string]bool, len(o.entries))
	for i := range o.entries {
		over[o.entries[i].norm] = true
	}
	b.entries = slices.DeleteFunc(b.entries, func(e entry) bool { return over[e.norm] })
	b.entries = dedupe(append(b.entries, o.entries...))
	// Overlay fields come last, so dedupe keeps them.
	b.fields = dedupe(append(b.fields, o.fields...))
	return b.Marshal(), nil
}

// Strip returns data without the entries for which drop returns true; drop
// is called with each key normalised (NormalizeKey). The result is in
// Marshal's form even when nothing is dropped.
func Strip(data []byte, drop func(host string) bool) ([]byte, error) {
	c, err := Parse(data)
	if err != nil {
		return nil, err
	}
	c.entries = slices.DeleteFunc(c.entries, func(e entry) bool { return drop(e.norm) })
	return c.Marshal(), nil
}
