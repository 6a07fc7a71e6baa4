package secretcheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
)

// MinLength is the shortest secret Watch accepts: shorter ones would be
// found by chance in ordinary text.
const MinLength = 6

// Checker collects what a test's code emits and fails the test when a
// watched secret appears in it. Make it with New; it is safe for
// concurrent use (loggers are called from background goroutines).
type Checker struct {
	t testing.TB

	mu        sync.Mutex
	static    []string          // watched secrets, in order
	staticSet map[string]bool   // for de-duplication
	forms     []form            // of static, for the logger's per-line check
	funcs     []func() []string // lazily known secrets
	texts     []text            // everything handed over, kept for the final check
	writers   []*writer
	gatherers []gathererEntry
	logLines  int
	reported  map[string]bool // where + secret id: one failure per place and secret
	done      bool            // the test is over: never call t again
}

type text struct{ where, s string }

type gathererEntry struct {
	name string
	g    prometheus.Gatherer
}

// New returns a Checker for t. It checks everything collected once more
// when the test ends (t.Cleanup), against every secret known then.
func New(t testing.TB) *Checker {
	t.Helper()
	c := &Checker{t: t, staticSet: map[string]bool{}, reported: map[string]bool{}}
	t.Cleanup(func() {
		c.Check()
		c.mu.Lock()
		c.done = true
		c.mu.Unlock()
	})
	return c
}

// Watch adds secrets to look for, with their derived forms (see the
// package documentation). Empty strings are ignored; a secret shorter
// than MinLength fails the test.
func (c *Checker) Watch(secrets ...string) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range secrets {
		switch {
		case s == "" || c.staticSet[s]:
		case len(s) < MinLength:
			c.t.Errorf("secretcheck: refusing to watch a %d-byte secret (minimum %d): it would match ordinary text", len(s), MinLength)
		default:
			c.staticSet[s] = true
			c.static = append(c.static, s)
		}
	}
	c.forms = secretForms(c.static)
}

// WatchFunc adds secrets known only later, such as the passwords a fake
// ECR API has handed out by the end of the test. fn is called by the
// checks the test makes (CheckError, CheckText, CheckRegistry, Check) and
// when the test ends, never from Logger's sink; it must not block.
// Results shorter than MinLength are ignored.
func (c *Checker) WatchFunc(fn func() []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.funcs = append(c.funcs, fn)
}

// Logger returns a logr.Logger that records every line, at every
// verbosity, and checks it at once against the secrets given to Watch
// (WatchFunc's are checked when the test checks or ends).
func (c *Checker) Logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		line := strings.TrimSpace(prefix + " " + args)
		c.mu.Lock()
		defer c.mu.Unlock()
		c.logLines++
		t := text{where: fmt.Sprintf("log line %d", c.logLines), s: line}
		c.texts = append(c.texts, t)
		c.scanLocked(c.forms, t)
	}, funcr.Options{Verbosity: 1 << 20})
}

// CheckError checks err's message, its %+v and %#v renderings, and the
// message of every error it wraps (errors.Unwrap, single or joined).
// A nil err is ignored.
func (c *Checker) CheckError(err error) {
	if err == nil {
		return
	}
	var texts []text
	texts = append(texts,
		text{where: "error", s: err.Error()},
		text{where: "error (%+v)", s: fmt.Sprintf("%+v", err)},
		text{where: "error (%#v)", s: fmt.Sprintf("%#v", err)})
	depth := 0
	var walk func(e error)
	walk = func(e error) {
		if e == nil || depth > 64 {
			return
		}
		depth++
		texts = append(texts, text{where: fmt.Sprintf("wrapped error %T", e), s: e.Error()})
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				walk(inner)
			}
		default:
			walk(errors.Unwrap(e))
		}
	}
	walk(errors.Unwrap(err))
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, inner := range j.Unwrap() {
			walk(inner)
		}
	}
	c.add(texts...)
}

// CheckText checks s, named name in failures (for example "stdout of
// hypershift-ecr credentials").
func (c *Checker) CheckText(name, s string) { c.add(text{where: name, s: s}) }

// CheckPanic runs fn and returns what it panicked with (nil if it did
// not), after checking the panic's message (and, for an error, as
// CheckError does).
func (c *Checker) CheckPanic(fn func()) (recovered any) {
	defer func() {
		recovered = recover()
		if recovered == nil {
			return
		}
		c.add(text{where: "panic", s: fmt.Sprint(recovered)}, text{where: "panic (%#v)", s: fmt.Sprintf("%#v", recovered)})
		if err, ok := recovered.(error); ok {
			c.CheckError(err)
		}
	}()
	fn()
	return nil
}

// CheckRegistry gathers g now and when the test ends, and checks every
// metric family's name and help and every metric's label names and
// values.
func (c *Checker) CheckRegistry(g prometheus.Gatherer) {
	c.t.Helper()
	c.mu.Lock()
	c.gatherers = append(c.gatherers, gathererEntry{name: fmt.Sprintf("registry %d", len(c.gatherers)+1), g: g})
	c.mu.Unlock()
	texts, err := gatherTexts(g)
	if err != nil {
		c.t.Errorf("secretcheck: gathering metrics: %v", err)
	}
	c.add(texts...)
}

// Writer returns a writer, for a command's stdout or stderr, whose
// content is checked by Check and when the test ends. name names it in
// failures.
func (c *Checker) Writer(name string) io.Writer {
	w := &writer{name: name}
	c.mu.Lock()
	c.writers = append(c.writers, w)
	c.mu.Unlock()
	return w
}

// Check checks everything collected so far, writers and registries
// included, against every secret known now. New arranges for it to run
// when the test ends; a test may call it earlier.
func (c *Checker) Check() {
	c.mu.Lock()
	gatherers := append([]gathererEntry(nil), c.gatherers...)
	writers := append([]*writer(nil), c.writers...)
	c.mu.Unlock()

	var extra []text
	for _, w := range writers {
		extra = append(extra, text{where: w.name, s: w.String()})
	}
	for _, g := range gatherers {
		texts, err := gatherTexts(g.g)
		if err != nil {
			c.errorf("secretcheck: gathering metrics: %v", err)
		}
		extra = append(extra, texts...)
	}
	forms := secretForms(c.secrets())
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ts := range [][]text{c.texts, extra} {
		for _, t := range ts {
			c.scanLocked(forms, t)
		}
	}
}

// add keeps texts and checks them against every secret known now.
func (c *Checker) add(texts ...text) {
	forms := secretForms(c.secrets())
	c.mu.Lock()
	defer c.mu.Unlock()
	c.texts = append(c.texts, texts...)
	for _, t := range texts {
		c.scanLocked(forms, t)
	}
}

// secrets returns the static secrets and the current results of the
// WatchFunc functions, called without the lock held.
func (c *Checker) secrets() []string {
	c.mu.Lock()
	out := append([]string(nil), c.static...)
	funcs := append([]func() []string(nil), c.funcs...)
	c.mu.Unlock()
	for _, fn := range funcs {
		for _, s := range fn() {
			if len(s) >= MinLength {
				out = append(out, s)
			}
		}
	}
	return out
}

func (c *Checker) errorf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done {
		c.t.Errorf(format, args...)
	}
}

// scanLocked reports every watched form found in t, once per place and
// secret. c.mu must be held.
func (c *Checker) scanLocked(forms []form, t text) {
	for _, f := range forms {
		i := strings.Index(t.s, f.value)
		if i < 0 {
			continue
		}
		key := t.where + "\x00" + f.id + "\x00" + fingerprint(t.s)
		if c.reported[key] || c.done {
			continue
		}
		c.reported[key] = true
		c.t.Errorf("secretcheck: secret %s (%s) found in %s: %s", f.id, f.name, t.where, excerpt(t.s, i, len(f.value), forms))
	}
}

// form is one way a secret may appear.
type form struct {
	id    string // which secret: a short hash, never the secret
	name  string // which form
	value string
}

// secretForms expands secrets into the forms the package documentation
// lists, most specific first, so that a failure names the likeliest path.
func secretForms(secrets []string) []form {
	var out []form
	seen := map[string]bool{}
	for _, s := range secrets {
		id := fingerprint(s)
		add := func(name, v string) {
			if len(v) >= MinLength && !seen[v] {
				seen[v] = true
				out = append(out, form{id: id, name: name, value: v})
			}
		}
		addEscapes := func(prefix, v string) {
			add(prefix+"as is", v)
			add(prefix+"URL query escaped", url.QueryEscape(v))
			add(prefix+"URL path escaped", url.PathEscape(v))
			add(prefix+"JSON escaped", jsonEscaped(v))
		}
		addEscapes("", s)
		for _, enc := range encodings {
			add(`base64 of "AWS:<secret>"`, enc.EncodeToString([]byte("AWS:"+s)))
			add("base64", enc.EncodeToString([]byte(s)))
		}
		for _, core := range base64Cores(s) {
			add("inside base64 text", core)
		}
		// A dockerconfigjson "auth" value: its password is a secret too.
		if raw, err := base64.StdEncoding.DecodeString(s); err == nil {
			if _, pass, ok := strings.Cut(string(raw), ":"); ok && len(pass) >= MinLength {
				addEscapes("password of the auth value, ", pass)
			}
		}
	}
	return out
}

var encodings = []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding}

// base64Cores returns, for each of the three alignments s can have inside
// a longer base64 text and for both alphabets, the base64 characters that
// depend on s alone: whatever surrounds s, its encoding contains them.
func base64Cores(s string) []string {
	var out []string
	for k := 0; k < 3; k++ {
		src := append(bytes.Repeat([]byte{0}, k), s...)
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			e := enc.EncodeToString(src)
			start := (8*k + 5) / 6  // first character with no filler bit
			end := 8 * len(src) / 6 // characters made of whole input bits
			if end-start >= MinLength {
				out = append(out, e[start:end])
			}
		}
	}
	return out
}

func jsonEscaped(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b[1 : len(b)-1])
}

// fingerprint names a secret in failures without revealing it.
func fingerprint(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:4])
}

// excerpt shows up to 40 bytes either side of a match, with the match and
// every other watched form in sight replaced by <REDACTED>.
func excerpt(s string, i, n int, forms []form) string {
	const ctx = 40
	before := s[max(0, i-ctx):i]
	after := s[i+n : min(len(s), i+n+ctx)]
	for _, f := range forms {
		before = strings.ReplaceAll(before, f.value, "<REDACTED>")
		after = strings.ReplaceAll(after, f.value, "<REDACTED>")
	}
	return fmt.Sprintf("%q", before+"<REDACTED>"+after)
}

// gatherTexts renders each metric family as one text: its name, help and
// every metric's labels.
func gatherTexts(g prometheus.Gatherer) ([]text, error) {
	families, err := g.Gather()
	var out []text
	for _, mf := range families {
		var b strings.Builder
		b.WriteString(mf.GetName() + " " + mf.GetHelp() + "\n")
		for _, m := range mf.GetMetric() {
			pairs := make([]string, 0, len(m.GetLabel()))
			for _, lp := range m.GetLabel() {
				pairs = append(pairs, lp.GetName()+"="+lp.GetValue())
			}
			sort.Strings(pairs)
			b.WriteString("{" + strings.Join(pairs, ",") + "}\n")
		}
		out = append(out, text{where: "metric " + mf.GetName(), s: b.String()})
	}
	return out, err
}

// writer is a concurrency-safe buffer.
type writer struct {
	name string
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *writer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
