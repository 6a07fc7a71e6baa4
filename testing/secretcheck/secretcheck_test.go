package secretcheck_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/testing/secretcheck"
)

// recorder is a testing.TB that keeps failures and cleanups instead of
// acting on them, so that a test can assert what the Checker reported.
type recorder struct {
	testing.TB
	failures []string
	cleanups []func()
}

func (r *recorder) Helper()          {}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(format string, a ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, a...))
}
func (r *recorder) finish() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

const password = "fake-ecr-password-us-east-1-0001"

func TestChecker(t *testing.T) {
	t.Parallel()
	awsAuth := base64.StdEncoding.EncodeToString([]byte("AWS:" + password))
	tests := []struct {
		name      string
		watch     func(c *secretcheck.Checker)
		emit      func(c *secretcheck.Checker)
		wantWhere string // "" means no failure
		wantForm  string
	}{
		{
			name:      "When a log line holds the password, it should fail naming the log line",
			emit:      func(c *secretcheck.Checker) { c.Logger().V(4).Info("fetched", "password", password) },
			wantWhere: "log line 1",
			wantForm:  "as is",
		},
		{
			name: "When an error holds the ECR auth string, it should fail naming the base64 form",
			emit: func(c *secretcheck.Checker) {
				c.CheckError(fmt.Errorf("parsing: %w", errors.New("bad auth "+awsAuth)))
			},
			wantWhere: "error",
			wantForm:  `base64 of "AWS:<secret>"`,
		},
		{
			name:      "When only a wrapped error's text holds the secret, it should still fail",
			emit:      func(c *secretcheck.Checker) { c.CheckError(&hidingError{cause: errors.New("token " + password)}) },
			wantWhere: "wrapped error",
		},
		{
			name:  "When a URL carries the secret query-escaped, it should fail",
			watch: func(c *secretcheck.Checker) { c.Watch("p@ss/w0rd+=&?") },
			emit: func(c *secretcheck.Checker) {
				c.CheckText("stdout", "GET https://x/?token="+url.QueryEscape("p@ss/w0rd+=&?"))
			},
			wantWhere: "stdout",
			wantForm:  "URL query escaped",
		},
		{
			name: "When a whole pull secret is base64-encoded, it should find the password at any alignment",
			emit: func(c *secretcheck.Checker) {
				for pad := range 3 {
					doc := strings.Repeat("x", pad) + `{"auths":{"h":{"password":"` + password + `"}}}`
					c.CheckText("secret data", base64.StdEncoding.EncodeToString([]byte(doc)))
				}
			},
			wantWhere: "secret data",
			wantForm:  "inside base64 text",
		},
		{
			name: "When an auth value is watched, it should also find its password",
			watch: func(c *secretcheck.Checker) {
				c.Watch(base64.StdEncoding.EncodeToString([]byte("robot:quay-robot-token")))
			},
			emit:      func(c *secretcheck.Checker) { c.CheckText("stderr", "login failed for robot:quay-robot-token") },
			wantWhere: "stderr",
			wantForm:  "password of the auth value",
		},
		{
			name: "When a metric label carries the secret, it should fail naming the metric",
			emit: func(c *secretcheck.Checker) {
				reg := prometheus.NewRegistry()
				v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leaky_total", Help: "h"}, []string{"registry"})
				reg.MustRegister(v)
				v.WithLabelValues("AWS:" + password).Inc()
				c.CheckRegistry(reg)
			},
			wantWhere: "metric leaky_total",
		},
		{
			name: "When code panics with the secret, it should fail naming the panic and return the value",
			emit: func(c *secretcheck.Checker) {
				got := c.CheckPanic(func() { panic("bad token " + password) })
				if got == nil {
					panic("CheckPanic lost the panic value")
				}
			},
			wantWhere: "panic",
		},
		{
			name: "When a secret is known only after the output, it should fail when the test ends",
			watch: func(c *secretcheck.Checker) {
				issued := []string{}
				c.WatchFunc(func() []string { return issued })
				w := c.Writer("stdout of hypershift-ecr credentials")
				_, _ = io.WriteString(w, "token: "+password+"\n")
				issued = append(issued, password)
			},
			wantWhere: "stdout of hypershift-ecr credentials",
		},
		{
			name: "When nothing secret is emitted, it should pass",
			emit: func(c *secretcheck.Checker) {
				c.Logger().Info("fetched ECR authorization token", "region", "us-east-1")
				c.CheckError(errors.New("ecr: throttled getting a token for 123456789012.dkr.ecr.us-east-1.amazonaws.com"))
				c.CheckText("stdout", "token: expires 2026-11-30T20:00:00Z (in 12h)")
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &recorder{TB: t}
			c := secretcheck.New(r)
			c.Watch(password)
			if tc.watch != nil {
				tc.watch(c)
			}
			if tc.emit != nil {
				tc.emit(c)
			}
			r.finish()
			if tc.wantWhere == "" {
				require.Empty(t, r.failures)
				return
			}
			require.NotEmpty(t, r.failures)
			all := strings.Join(r.failures, "\n")
			require.Contains(t, all, "found in "+tc.wantWhere)
			require.Contains(t, all, tc.wantForm)
			require.NotContains(t, all, password, "a failure must not repeat the secret")
			require.NotContains(t, all, awsAuth)
			require.NotContains(t, all, "quay-robot-token")
		})
	}
}

func TestWatchRefusesShortSecrets(t *testing.T) {
	t.Parallel()
	r := &recorder{TB: t}
	c := secretcheck.New(r)
	c.Watch("abc")
	c.CheckText("stdout", "abc abc")
	r.finish()
	require.Len(t, r.failures, 1, "When a secret is too short to be told from text, it should refuse it and report nothing else")
	require.Contains(t, r.failures[0], "refusing to watch")
}

// hidingError's message does not show its cause, but a caller printing
// the cause would.
type hidingError struct{ cause error }

func (e *hidingError) Error() string { return "lookup failed" }
func (e *hidingError) Unwrap() error { return e.cause }
