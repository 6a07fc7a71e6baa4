package fakeregistry

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/registry"
	"k8s.io/utils/clock"
)

// DefaultHost is the virtual host name a Registry serves when no WithHost option is given.
const DefaultHost = "123456789012.dkr.ecr.us-east-1.amazonaws.com"

// DefaultUsername is the user name of the static credential a Registry accepts when neither
// WithAuthenticator, WithBasicAuth nor WithAnonymous is given. It is the user name ECR's
// GetAuthorizationToken hands out.
const DefaultUsername = "AWS"

// Registry is an in-process OCI registry that behaves like Amazon ECR: Basic auth on every
// endpoint and blobs served by redirect to a pre-signed "S3" URL on a second server.
// Create it with New; it is safe for concurrent use.
type Registry struct {
	hosts    []string
	blobHost string

	registrySrv *httptest.Server
	s3Srv       *httptest.Server
	ca          *x509.Certificate

	store    registry.BlobHandler // ggcr in-memory blobs, shared by the registry and the S3 server
	upstream http.Handler         // ggcr's registry, storage only: no auth, no redirect, no counters

	clock     clock.PassiveClock
	signKey   []byte
	presignTT time.Duration

	auth *authState
	obs  observer

	closeOnce sync.Once
}

type config struct {
	hosts         []string
	blobHost      string
	anonymous     bool
	authenticator func(username, password string) bool
	basicUser     string
	basicPass     string
	hasBasic      bool
	clock         clock.PassiveClock
	presignExpiry time.Duration
}

// Option configures a Registry. Options are applied in order and validated together by New.
type Option func(*config) error

// hostRE accepts lower-case DNS names (no scheme, port or path).
var hostRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$`)

// WithHost adds a virtual host name the registry answers to, such as
// "123456789012.dkr.ecr.us-east-1.amazonaws.com" or "quay.io". It may be given several times
// (for example the FIPS and dual-stack names of one ECR registry): every name serves the same
// repositories. The first name is the one Host returns. The default is DefaultHost.
func WithHost(name string) Option {
	return func(c *config) error {
		name = strings.ToLower(name)
		if !hostRE.MatchString(name) {
			return fmt.Errorf("WithHost(%q): want a bare DNS name without scheme, port or path", name)
		}
		c.hosts = append(c.hosts, name)
		return nil
	}
}

// WithBlobHost sets the host name of the S3-like server blob GETs are redirected to. The default
// is "prod-<region>-starport-layer-bucket.s3.<region>.amazonaws.com" when the first host is an
// ECR name (region taken from it), otherwise "cdn01." followed by the first host.
func WithBlobHost(name string) Option {
	return func(c *config) error {
		name = strings.ToLower(name)
		if !hostRE.MatchString(name) {
			return fmt.Errorf("WithBlobHost(%q): want a bare DNS name without scheme, port or path", name)
		}
		c.blobHost = name
		return nil
	}
}

// WithAuthenticator makes validity of Basic credentials a decision of fn, for example a fake ECR
// API whose passwords rotate and expire. fn is called for every request that carries Basic
// credentials not revoked by RevokeAll; it is called with the Registry's auth lock held and must
// not call back into the Registry.
func WithAuthenticator(fn func(username, password string) bool) Option {
	return func(c *config) error {
		if fn == nil {
			return fmt.Errorf("WithAuthenticator: nil function")
		}
		c.authenticator = fn
		return nil
	}
}

// WithBasicAuth makes the registry accept exactly one static credential. Without any auth option
// the registry accepts DefaultUsername with a random password generated per Registry; Auth
// returns it.
func WithBasicAuth(username, password string) Option {
	return func(c *config) error {
		if username == "" || password == "" {
			return fmt.Errorf("WithBasicAuth: empty user name or password")
		}
		c.basicUser, c.basicPass, c.hasBasic = username, password, true
		return nil
	}
}

// WithAnonymous makes the registry serve everyone without credentials, like quay.io's public
// release repositories. Blobs are still served by redirect.
func WithAnonymous() Option {
	return func(c *config) error {
		c.anonymous = true
		return nil
	}
}

// WithClock sets the clock that dates and checks pre-signed blob URLs, so that a test can let
// them expire (k8s.io/utils/clock/testing.FakeClock). The default is the real clock.
func WithClock(clk clock.PassiveClock) Option {
	return func(c *config) error {
		if clk == nil {
			return fmt.Errorf("WithClock: nil clock")
		}
		c.clock = clk
		return nil
	}
}

// WithPresignExpiry sets how long a pre-signed blob URL stays valid. The default is one hour.
func WithPresignExpiry(d time.Duration) Option {
	return func(c *config) error {
		if d < time.Second {
			return fmt.Errorf("WithPresignExpiry(%v): want at least one second", d)
		}
		c.presignExpiry = d
		return nil
	}
}

// ecrHostRE extracts the region of an ECR registry host (all commercial, FIPS and dual-stack forms).
var ecrHostRE = regexp.MustCompile(`^[0-9]{12}\.dkr[.-]ecr(?:-fips)?\.([a-z0-9-]+)\.`)

func (c *config) validate() error {
	if len(c.hosts) == 0 {
		c.hosts = []string{DefaultHost}
	}
	seen := map[string]bool{}
	for _, h := range c.hosts {
		if seen[h] {
			return fmt.Errorf("host %q given twice", h)
		}
		seen[h] = true
	}
	if c.blobHost == "" {
		if m := ecrHostRE.FindStringSubmatch(c.hosts[0]); m != nil {
			c.blobHost = fmt.Sprintf("prod-%s-starport-layer-bucket.s3.%s.amazonaws.com", m[1], m[1])
		} else {
			c.blobHost = "cdn01." + c.hosts[0]
		}
	}
	if seen[c.blobHost] {
		return fmt.Errorf("blob host %q is also a registry host", c.blobHost)
	}
	nAuth := 0
	for _, set := range []bool{c.anonymous, c.authenticator != nil, c.hasBasic} {
		if set {
			nAuth++
		}
	}
	if nAuth > 1 {
		return fmt.Errorf("WithAnonymous, WithAuthenticator and WithBasicAuth are mutually exclusive")
	}
	if nAuth == 0 {
		c.basicUser, c.basicPass, c.hasBasic = DefaultUsername, randomHex(16), true
	}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	if c.presignExpiry == 0 {
		c.presignExpiry = time.Hour
	}
	return nil
}

// New starts a registry and its S3-like blob server on 127.0.0.1 with TLS certificates, signed
// by a CA of their own, for every virtual host name; it stops them when the test ends. It fails
// the test on invalid options. Server errors (failed TLS handshakes and the like) go to the
// test log.
func New(t testing.TB, opts ...Option) *Registry {
	t.Helper()
	r, err := start(log.New(tbWriter{t}, "fakeregistry: ", 0), opts...)
	if err != nil {
		t.Fatalf("fakeregistry.New: %v", err)
	}
	t.Cleanup(r.Close)
	return r
}

// Start is New for programs that are not tests, such as a demo: it starts the registry and its
// blob server and returns an error on invalid options. The caller must call Close. Server
// errors are discarded.
func Start(opts ...Option) (*Registry, error) {
	r, err := start(log.New(io.Discard, "", 0), opts...)
	if err != nil {
		return nil, fmt.Errorf("fakeregistry.Start: %w", err)
	}
	return r, nil
}

func start(errLog *log.Logger, opts ...Option) (*Registry, error) {
	var c config
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}

	leaf, ca, err := newCertificates(append(append([]string{}, c.hosts...), c.blobHost))
	if err != nil {
		return nil, err
	}

	r := &Registry{
		hosts:     c.hosts,
		blobHost:  c.blobHost,
		ca:        ca,
		store:     registry.NewInMemoryBlobHandler(),
		clock:     c.clock,
		signKey:   []byte(randomHex(32)),
		presignTT: c.presignExpiry,
		auth:      newAuthState(c),
	}
	r.obs.reset()
	quiet := log.New(io.Discard, "", 0)
	r.upstream = registry.New(
		registry.Logger(quiet),
		registry.WithBlobHandler(r.store),
		registry.WithReferrersSupport(true),
	)

	r.registrySrv = startTLS(http.HandlerFunc(r.serveRegistry), leaf, errLog)
	r.s3Srv = startTLS(http.HandlerFunc(r.serveS3), leaf, errLog)
	return r, nil
}

// Close stops the registry and its blob server, cutting connections in flight. It is safe to
// call more than once; New calls it when the test ends.
func (r *Registry) Close() {
	r.closeOnce.Do(func() {
		for _, s := range []*httptest.Server{r.registrySrv, r.s3Srv} {
			// Close waits for in-flight handlers; a client that stopped reading a body would
			// block it, so cut every connection first.
			s.CloseClientConnections()
			s.Close()
		}
	})
}

func startTLS(h http.Handler, cert tls.Certificate, errLog *log.Logger) *httptest.Server {
	s := httptest.NewUnstartedServer(h)
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	s.Config.ErrorLog = errLog
	s.StartTLS()
	return s
}

// tbWriter sends server error logs (TLS handshake failures and the like) to the test log.
type tbWriter struct{ t testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// Host returns the first virtual host name, the one to use in pullspecs by default.
func (r *Registry) Host() string { return r.hosts[0] }

// Hosts returns every virtual host name of the registry.
func (r *Registry) Hosts() []string { return append([]string(nil), r.hosts...) }

// BlobHost returns the host name of the S3-like server that serves blobs.
func (r *Registry) BlobHost() string { return r.blobHost }

// Auth returns credentials the registry accepts: the static credential for the default and
// WithBasicAuth (it stays revoked after RevokeAll), authn.Anonymous for WithAnonymous. With
// WithAuthenticator only the test knows valid credentials: the Authenticator returned then fails
// with an error saying so.
func (r *Registry) Auth() authn.Authenticator {
	switch {
	case r.auth.anonymous:
		return authn.Anonymous
	case r.auth.static != nil:
		return &authn.Basic{Username: r.auth.static.user, Password: r.auth.static.pass}
	default:
		return errAuthenticator{}
	}
}

type errAuthenticator struct{}

func (errAuthenticator) Authorization() (*authn.AuthConfig, error) {
	return nil, fmt.Errorf("fakeregistry: registry uses WithAuthenticator, get credentials from what issues them")
}

// routes maps every host name the registry serves to its listener.
func (r *Registry) routes() map[string]string {
	m := make(map[string]string, len(r.hosts)+1)
	for _, h := range r.hosts {
		m[h] = r.registrySrv.Listener.Addr().String()
	}
	m[r.blobHost] = r.s3Srv.Listener.Addr().String()
	return m
}

// Transport returns a new transport that dials every host name of r (registry and blob hosts) to
// its local listener and trusts its CA. Dialing any other name fails: tests never reach the
// network. To reach several fakes through one client, use the package function Transport.
func (r *Registry) Transport() *http.Transport { return Transport(r) }

// Client returns a new http.Client using r.Transport(). It follows redirects as net/http does.
func (r *Registry) Client() *http.Client { return &http.Client{Transport: r.Transport()} }

// Transport returns a new transport that reaches every host name of every registry given, trusts
// all their CAs and refuses to dial anything else. It panics when two registries claim the same
// host name, a mistake in the test's setup.
func Transport(regs ...*Registry) *http.Transport {
	routes := map[string]string{}
	pool := x509.NewCertPool()
	for _, r := range regs {
		for h, addr := range r.routes() {
			if prev, ok := routes[h]; ok && prev != addr {
				panic(fmt.Sprintf("fakeregistry.Transport: host %q is served by two registries", h))
			}
			routes[h] = addr
		}
		pool.AddCert(r.ca)
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Transport{
		Proxy: nil, // never let HTTPS_PROXY from the environment reroute a fake host
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			target, ok := routes[strings.ToLower(host)]
			if !ok {
				return nil, fmt.Errorf("fakeregistry: no fake registry serves %q; refusing to dial the network", host)
			}
			return dialer.DialContext(ctx, "tcp", target)
		},
		TLSClientConfig:       &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   5 * time.Second,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       30 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Client returns a new http.Client whose transport is Transport(regs...).
func Client(regs ...*Registry) *http.Client { return &http.Client{Transport: Transport(regs...)} }

func (r *Registry) servesHost(host string) bool {
	for _, h := range r.hosts {
		if h == host {
			return true
		}
	}
	return false
}

// hostOnly strips the port from a Host header and lower-cases it.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		hostport = h
	}
	return strings.ToLower(hostport)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
