package fakeimds

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Defaults of an IMDS made by New.
const (
	DefaultRoleName           = "hypershift-worker-role"
	DefaultRegion             = "us-east-1"
	DefaultAccountID          = "123456789012"
	DefaultInstanceID         = "i-0123456789abcdef0"
	DefaultCredentialLifetime = 6 * time.Hour
	// maxTokenTTL is the longest session token IMDS grants (6 hours).
	maxTokenTTL = 21600
)

// Paths served, as the SDK requests them. Calls takes these.
const (
	TokenPath               = "/latest/api/token"
	SecurityCredentialsPath = "/latest/meta-data/iam/security-credentials/"
	IdentityDocumentPath    = "/latest/dynamic/instance-identity/document"
	RegionPath              = "/latest/meta-data/placement/region"
	InstanceIDPath          = "/latest/meta-data/instance-id"
)

const (
	tokenHeader    = "X-Aws-Ec2-Metadata-Token"
	tokenTTLHeader = "X-Aws-Ec2-Metadata-Token-Ttl-Seconds"
)

// Option configures an IMDS made by New.
type Option func(*IMDS)

// WithRoleName sets the name of the instance profile's role. An empty name
// models an instance without an instance profile: the role listing answers
// 404. The default is DefaultRoleName.
func WithRoleName(name string) Option { return func(m *IMDS) { m.role = name } }

// WithRegion sets the region of the instance identity document. The
// default is DefaultRegion.
func WithRegion(region string) Option { return func(m *IMDS) { m.region = region } }

// WithAccountID sets the account of the instance identity document. The
// default is DefaultAccountID.
func WithAccountID(id string) Option { return func(m *IMDS) { m.accountID = id } }

// WithCredentialLifetime sets how long each role key pair is valid. A new
// pair is issued every half lifetime, so a fetched pair always has at least
// half its lifetime left, as EC2 rotates role credentials well before they
// expire. The default is DefaultCredentialLifetime; New panics if d is not
// positive.
func WithCredentialLifetime(d time.Duration) Option { return func(m *IMDS) { m.lifetime = d } }

// WithClock sets the clock that drives key rotation, credential expiry and
// session token expiry. The default is the real clock; the SDK checks
// expiry against real time, so keep it for tests through the SDK.
func WithClock(c clock.PassiveClock) Option { return func(m *IMDS) { m.clock = c } }

// WithIMDSv1 allows GETs without a session token (HttpTokens=optional).
// The default enforces IMDSv2: a GET without a valid token gets 401.
func WithIMDSv1() Option { return func(m *IMDS) { m.v1Allowed = true } }

// WithHopLimitExceeded makes token PUTs never answer, as inside a pod when
// the instance's HttpPutResponseHopLimit is 1: the answer is dropped one hop
// short of the pod, so the client waits until it gives up. The request is
// held until its context ends or Close is called. GETs behave as usual
// (the hop limit only applies to PUT responses).
func WithHopLimitExceeded() Option { return func(m *IMDS) { m.hopLimitExceeded = true } }

// WithUnavailable makes every request end with the connection closed and
// no answer, as when no metadata service is reachable.
func WithUnavailable() Option { return func(m *IMDS) { m.unavailable = true } }

// WithLatency delays every answer by d of real time; a request whose
// context ends first gets no answer.
func WithLatency(d time.Duration) Option { return func(m *IMDS) { m.latency = d } }

// IMDS is a fake EC2 Instance Metadata Service. Make it with New and serve
// Handler with httptest. It is safe for concurrent use.
type IMDS struct {
	role             string
	region           string
	accountID        string
	lifetime         time.Duration
	clock            clock.PassiveClock
	v1Allowed        bool
	hopLimitExceeded bool
	unavailable      bool
	latency          time.Duration

	start   time.Time
	closed  chan struct{}
	closeMu sync.Once

	mu     sync.Mutex
	tokens map[string]time.Time // session token -> expiry
	nextID int
	calls  map[string]int
}

// New returns a fake IMDS. Options are applied in order.
func New(opts ...Option) *IMDS {
	m := &IMDS{
		role:      DefaultRoleName,
		region:    DefaultRegion,
		accountID: DefaultAccountID,
		lifetime:  DefaultCredentialLifetime,
		clock:     clock.RealClock{},
		closed:    make(chan struct{}),
		tokens:    map[string]time.Time{},
		calls:     map[string]int{},
	}
	for _, o := range opts {
		o(m)
	}
	if m.lifetime <= 0 {
		panic(fmt.Sprintf("fakeimds: credential lifetime must be positive, got %v", m.lifetime))
	}
	if m.clock == nil {
		panic("fakeimds: nil clock")
	}
	m.start = m.clock.Now()
	return m
}

// AccessKeyID is the access key id of the nth (1-based) key pair the fake
// issues for its role. The first pair is issued at New; the nth one
// (n-1) half lifetimes later.
func AccessKeyID(n int) string { return fmt.Sprintf("ASIAFAKEIMDS%08d", n) }

// SecretAccessKey is the secret key of the nth key pair. Tests use it to
// assert that it never reaches a log line or an error.
func SecretAccessKey(n int) string { return fmt.Sprintf("fake-imds-secret-%04d", n) }

// SessionToken is the session token of the nth key pair.
func SessionToken(n int) string { return fmt.Sprintf("fake-imds-session-token-%04d", n) }

// Generation returns which key pair (1-based) the role serves now.
func (m *IMDS) Generation() int {
	elapsed := m.clock.Since(m.start)
	if elapsed < 0 {
		elapsed = 0
	}
	return int(elapsed/m.rotation()) + 1
}

// rotation is how often a new key pair is issued: every half lifetime.
func (m *IMDS) rotation() time.Duration { return max(m.lifetime/2, 1) }

// Calls returns how many requests arrived for path (any method), faulted
// ones included. Paths are the URL paths as requested, e.g. TokenPath or
// SecurityCredentialsPath+"my-role".
func (m *IMDS) Calls(path string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[path]
}

// Close releases requests held by WithHopLimitExceeded, so that an
// httptest.Server serving the fake can close. Register it to run before
// the server's Close (t.Cleanup runs last-registered first). It is safe to
// call more than once.
func (m *IMDS) Close() { m.closeMu.Do(func() { close(m.closed) }) }

// Handler serves the IMDS HTTP API: PUT TokenPath for an IMDSv2 session
// token, GET SecurityCredentialsPath for the role name, GET
// SecurityCredentialsPath+role for its key pair, GET IdentityDocumentPath,
// RegionPath and InstanceIDPath. Anything else is 404.
func (m *IMDS) Handler() http.Handler { return http.HandlerFunc(m.serveHTTP) }

func (m *IMDS) serveHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.calls[r.URL.Path]++
	m.mu.Unlock()

	if m.unavailable {
		dropConnection(w)
		return
	}
	if m.latency > 0 {
		t := time.NewTimer(m.latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-m.closed:
			return
		}
	}
	if r.URL.Path == TokenPath {
		m.serveToken(w, r)
		return
	}
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !m.authorized(r) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	switch p := r.URL.Path; {
	case p == SecurityCredentialsPath:
		if m.role == "" {
			http.NotFound(w, r)
			return
		}
		writeText(w, m.role)
	case strings.HasPrefix(p, SecurityCredentialsPath):
		if m.role == "" || strings.TrimPrefix(p, SecurityCredentialsPath) != m.role {
			http.NotFound(w, r)
			return
		}
		m.serveCredentials(w)
	case p == IdentityDocumentPath:
		m.serveIdentityDocument(w)
	case p == RegionPath:
		writeText(w, m.region)
	case p == InstanceIDPath:
		writeText(w, DefaultInstanceID)
	default:
		http.NotFound(w, r)
	}
}

// serveToken issues an IMDSv2 session token the way EC2 does: PUT only,
// TTL header required and within 1..21600 seconds, and forwarded requests
// refused so that a proxy cannot mint tokens.
func (m *IMDS) serveToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.Header.Get("X-Forwarded-For") != "" {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	ttl, err := strconv.Atoi(r.Header.Get(tokenTTLHeader))
	if err != nil || ttl < 1 || ttl > maxTokenTTL {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if m.hopLimitExceeded {
		// The answer would be dropped on the way: hold the request until
		// the client gives up.
		select {
		case <-r.Context().Done():
		case <-m.closed:
		}
		return
	}
	m.mu.Lock()
	m.nextID++
	tok := fmt.Sprintf("fake-imds-v2-token-%06d", m.nextID)
	m.tokens[tok] = m.clock.Now().Add(time.Duration(ttl) * time.Second)
	m.mu.Unlock()
	w.Header().Set(tokenTTLHeader, strconv.Itoa(ttl))
	writeText(w, tok)
}

func (m *IMDS) authorized(r *http.Request) bool {
	tok := r.Header.Get(tokenHeader)
	if tok == "" {
		return m.v1Allowed
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	exp, ok := m.tokens[tok]
	// A token that was sent must be valid even where IMDSv1 is allowed.
	return ok && m.clock.Now().Before(exp)
}

func (m *IMDS) serveCredentials(w http.ResponseWriter) {
	n := m.Generation()
	issued := m.start.Add(time.Duration(n-1) * m.rotation())
	writeJSON(w, map[string]string{
		"Code":            "Success",
		"LastUpdated":     issued.UTC().Format(time.RFC3339),
		"Type":            "AWS-HMAC",
		"AccessKeyId":     AccessKeyID(n),
		"SecretAccessKey": SecretAccessKey(n),
		"Token":           SessionToken(n),
		"Expiration":      issued.Add(m.lifetime).UTC().Format(time.RFC3339),
	})
}

func (m *IMDS) serveIdentityDocument(w http.ResponseWriter) {
	writeJSON(w, map[string]any{
		"accountId":               m.accountID,
		"architecture":            "x86_64",
		"availabilityZone":        m.region + "a",
		"billingProducts":         nil,
		"devpayProductCodes":      nil,
		"marketplaceProductCodes": nil,
		"imageId":                 "ami-0123456789abcdef0",
		"instanceId":              DefaultInstanceID,
		"instanceType":            "m6i.xlarge",
		"kernelId":                nil,
		"pendingTime":             m.start.UTC().Format(time.RFC3339),
		"privateIp":               "10.0.1.23",
		"ramdiskId":               nil,
		"region":                  m.region,
		"version":                 "2017-09-30",
	})
}

func writeText(w http.ResponseWriter, s string) {
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(s))
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain") // IMDS serves JSON as text/plain
	_, _ = w.Write(b)
}

// dropConnection closes the connection without an answer, which the SDK
// reports as a *smithyhttp.RequestSendError.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}
