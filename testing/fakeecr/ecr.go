package fakeecr

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/aws/aws-sdk-go-v2/service/ecr/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"k8s.io/utils/clock"

	"github.com/openshift/hypershift-ecr/pkg/awsapi"
	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
)

const (
	// DefaultAccountID is the account named in proxyEndpoint when neither the
	// registry nor WithAccountID gives one.
	DefaultAccountID = "123456789012"
	// DefaultTokenLifetime is how long generated tokens live, as in ECR.
	DefaultTokenLifetime = 12 * time.Hour
)

// Option configures an ECR made by New.
type Option func(*ECR)

// WithClock sets the clock that stamps expiresAt and Request.Time. The
// default is the real clock. Latency (SetLatency) always uses real time.
func WithClock(c clock.PassiveClock) Option { return func(e *ECR) { e.clock = c } }

// WithTokenLifetime sets the lifetime of generated tokens. The default is
// 12h. New panics if d is not positive.
func WithTokenLifetime(d time.Duration) Option { return func(e *ECR) { e.lifetime = d } }

// WithAccountID sets the account used in proxyEndpoint for clients that are
// not bound to a registry (Client, Handler). The default is DefaultAccountID.
func WithAccountID(id string) Option { return func(e *ECR) { e.accountID = id } }

// WithRequiredAccessKeyID makes Handler reject requests whose SigV4
// credential scope names another access key id with 400
// UnrecognizedClientException, proving that the caller's credential chain
// was used. The signature itself is not verified. The default accepts any
// key.
func WithRequiredAccessKeyID(akid string) Option {
	return func(e *ECR) { e.requiredAKID = akid }
}

// Request records one GetAuthorizationToken call.
type Request struct {
	// Region is the region the client was bound to (or, over HTTP, the
	// region of the SigV4 credential scope).
	Region string
	// Registry is the registry host the client was made for by
	// ClientFactory; empty for Client and Handler.
	Registry string
	// FIPS and DualStack are the endpoint variant ClientFactory was asked
	// for; always false for Client and Handler.
	FIPS, DualStack bool
	// AccessKeyID is the SigV4 access key id; set by Handler only.
	AccessKeyID string
	// RegistryIDs is the deprecated registryIds input, if any was sent.
	RegistryIDs []string
	// Time is the clock's time when the call arrived.
	Time time.Time
}

// ECR is a fake Amazon ECR GetAuthorizationToken API. It is safe for
// concurrent use. Make one with New.
type ECR struct {
	clock        clock.PassiveClock
	lifetime     time.Duration
	accountID    string
	requiredAKID string

	mu       sync.Mutex
	regions  map[string]*regionState
	requests []Request
}

type regionState struct {
	calls    int
	pinned   *pinnedToken
	sticky   error
	failN    int
	failErr  error
	latency  time.Duration
	gate     chan struct{}
	requestN int // request id sequence, for X-Amzn-Requestid
}

type pinnedToken struct {
	password  string
	expiresAt time.Time
}

// New returns a fake with no errors, no latency and rotating tokens.
func New(opts ...Option) *ECR {
	e := &ECR{
		clock:     clock.RealClock{},
		lifetime:  DefaultTokenLifetime,
		accountID: DefaultAccountID,
		regions:   map[string]*regionState{},
	}
	for _, o := range opts {
		o(e)
	}
	if e.lifetime <= 0 {
		panic(fmt.Sprintf("fakeecr: token lifetime must be positive, got %v", e.lifetime))
	}
	if e.clock == nil {
		panic("fakeecr: nil clock")
	}
	return e
}

// Password is the password the fake generates for the nth call (1-based,
// failed calls included) of region when no token is pinned. Tests use it to
// predict a credential or to assert that it never appears in a log.
func Password(region string, n int) string {
	return fmt.Sprintf("fake-ecr-password-%s-%04d", region, n)
}

// ClientFactory returns a client bound to reg.Region that records reg's
// host, FIPS and DualStack on every call. Its method value is usable as a
// registryauth.ClientFactory / awsapi.ECRClientFactory.
func (e *ECR) ClientFactory(_ context.Context, reg ecrhost.Registry) (awsapi.ECRAPI, error) {
	return &client{ecr: e, reg: reg}, nil
}

// Client returns a client bound to region, as ecr.New with that region.
func (e *ECR) Client(region string) awsapi.ECRAPI {
	return &client{ecr: e, reg: ecrhost.Registry{Region: region}}
}

var _ awsapi.ECRClientFactory = (*ECR)(nil).ClientFactory

// SetToken pins the password and expiry returned for region; every call
// then returns the same token (no rotation). A zero expiresAt means "now
// plus the token lifetime" at each call. An empty password unpins.
func (e *ECR) SetToken(region, password string, expiresAt time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.region(region)
	if password == "" {
		r.pinned = nil
		return
	}
	r.pinned = &pinnedToken{password: password, expiresAt: expiresAt}
}

// FailNext makes the next n calls for region fail with err. It replaces a
// previous FailNext and takes precedence over SetError.
func (e *ECR) FailNext(region string, n int, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.region(region)
	r.failN, r.failErr = n, err
	if err == nil {
		r.failN = 0
	}
}

// SetError makes every call for region fail with err until SetError is
// called again with nil.
func (e *ECR) SetError(region string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.region(region).sticky = err
}

// SetLatency delays every call for region by d of real time. A call whose
// context ends first returns the context's error, as the SDK does.
func (e *ECR) SetLatency(region string, d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.region(region).latency = d
}

// Block holds every call for region that arrives from now on until release
// is called or the call's context ends. A held call is already counted by
// Calls, so a test can wait for Calls to grow and know the call is parked.
// release is idempotent; calls arriving after it pass freely.
func (e *ECR) Block(region string) (release func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.region(region)
	if r.gate == nil {
		r.gate = make(chan struct{})
	}
	gate := r.gate
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			if r.gate == gate {
				r.gate = nil
			}
			close(gate)
		})
	}
}

// Calls returns how many calls region has received, failed ones included.
func (e *ECR) Calls(region string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.regions[region]; ok {
		return r.calls
	}
	return 0
}

// TotalCalls returns how many calls all regions have received.
func (e *ECR) TotalCalls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.requests)
}

// Requests returns a copy of every call's record, oldest first.
func (e *ECR) Requests() []Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Request, len(e.requests))
	for i, r := range e.requests {
		r.RegistryIDs = append([]string(nil), r.RegistryIDs...)
		out[i] = r
	}
	return out
}

// region returns the state for name, creating it. e.mu must be held.
func (e *ECR) region(name string) *regionState {
	r, ok := e.regions[name]
	if !ok {
		r = &regionState{}
		e.regions[name] = r
	}
	return r
}

// token is the outcome of one call before transport-specific wrapping.
type token struct {
	password      string
	expiresAt     time.Time
	proxyEndpoint string
	requestID     string
}

// serve runs one call: it records it, waits for the gate and latency, then
// answers with forced, the injected error or a token. A non-nil error is
// one of those as given, or ctx.Err().
func (e *ECR) serve(ctx context.Context, req Request, accountID string, forced error) (token, error) {
	e.mu.Lock()
	req.Time = e.clock.Now()
	e.requests = append(e.requests, req)
	r := e.region(req.Region)
	r.calls++
	n := r.calls
	r.requestN++
	reqID := fmt.Sprintf("00000000-0000-4000-8000-%012d", r.requestN)
	gate, latency := r.gate, r.latency
	err := forced
	switch {
	case err != nil:
	case r.failN > 0:
		r.failN--
		err = r.failErr
	case r.sticky != nil:
		err = r.sticky
	}
	pinned := r.pinned
	e.mu.Unlock()

	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return token{requestID: reqID}, ctx.Err()
		}
	}
	if latency > 0 {
		t := time.NewTimer(latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return token{requestID: reqID}, ctx.Err()
		}
	}
	if err != nil {
		return token{requestID: reqID}, err
	}

	// Expiry is stamped when the answer is made, after any wait, as ECR does.
	now := e.clock.Now()
	tok := token{
		password:      Password(req.Region, n),
		expiresAt:     now.Add(e.lifetime),
		proxyEndpoint: "https://" + accountID + ".dkr.ecr." + req.Region + "." + dnsSuffix(req.Region),
		requestID:     reqID,
	}
	if pinned != nil {
		tok.password = pinned.password
		if !pinned.expiresAt.IsZero() {
			tok.expiresAt = pinned.expiresAt
		}
	}
	return tok, nil
}

// dnsSuffix returns the registry DNS suffix of region's partition so that
// proxyEndpoint looks like the real one outside the commercial partition.
func dnsSuffix(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "amazonaws.com.cn"
	case strings.HasPrefix(region, "us-isob-"):
		return "sc2s.sgov.gov"
	case strings.HasPrefix(region, "us-isof-"):
		return "csp.hci.ic.gov"
	case strings.HasPrefix(region, "us-iso-"):
		return "c2s.ic.gov"
	case strings.HasPrefix(region, "eu-isoe-"):
		return "cloud.adc-e.uk"
	case strings.HasPrefix(region, "eusc-"):
		return "amazonaws.eu"
	default:
		return "amazonaws.com"
	}
}

// client is the in-process awsapi.ECRAPI bound to one registry or region.
type client struct {
	ecr *ECR
	reg ecrhost.Registry
}

func (c *client) GetAuthorizationToken(ctx context.Context, in *ecr.GetAuthorizationTokenInput, _ ...func(*ecr.Options)) (*ecr.GetAuthorizationTokenOutput, error) {
	req := Request{Region: c.reg.Region, Registry: c.reg.Host, FIPS: c.reg.FIPS, DualStack: c.reg.DualStack}
	if in != nil && len(in.RegistryIds) > 0 {
		req.RegistryIDs = append([]string(nil), in.RegistryIds...)
	}
	acct := c.reg.AccountID
	if acct == "" {
		acct = c.ecr.accountID
	}
	tok, err := c.ecr.serve(ctx, req, acct, nil)
	if err != nil {
		return nil, sdkError(ctx, err, tok.requestID)
	}
	return &ecr.GetAuthorizationTokenOutput{
		AuthorizationData: []types.AuthorizationData{{
			AuthorizationToken: aws.String(base64.StdEncoding.EncodeToString([]byte("AWS:" + tok.password))),
			ExpiresAt:          aws.Time(tok.expiresAt),
			ProxyEndpoint:      aws.String(tok.proxyEndpoint),
		}},
	}, nil
}

// sdkError wraps err the way the SDK's middleware stack (without retries)
// wraps what it gets from the wire, so that errors.As on the fake's errors
// sees the same chain as on a real *ecr.Client's.
func sdkError(ctx context.Context, err error, requestID string) error {
	var apiErr smithy.APIError
	switch {
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		err = &smithy.CanceledError{Err: err}
	case errors.As(err, &apiErr):
		status := http.StatusBadRequest
		if apiErr.ErrorFault() == smithy.FaultServer {
			status = http.StatusInternalServerError
		}
		err = &awshttp.ResponseError{
			ResponseError: &smithyhttp.ResponseError{
				Response: &smithyhttp.Response{Response: &http.Response{
					StatusCode: status,
					Header:     http.Header{"X-Amzn-Requestid": {requestID}},
					Body:       http.NoBody,
				}},
				Err: err,
			},
			RequestID: requestID,
		}
	}
	return &smithy.OperationError{ServiceID: ecr.ServiceID, OperationName: "GetAuthorizationToken", Err: err}
}
