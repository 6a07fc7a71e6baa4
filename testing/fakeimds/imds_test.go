package fakeimds_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/openshift/hypershift-ecr/testing/fakeimds"
)

// serve runs m on a loopback server for the test's life. m.Close runs
// first so that held requests cannot stall the server's Close.
func serve(t *testing.T, m *fakeimds.IMDS) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(m.Close)
	return srv
}

type answer struct {
	status int
	body   string
	header http.Header
}

func do(t *testing.T, srv *httptest.Server, method, path string, header map[string]string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, nil)
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{status: resp.StatusCode, body: string(b), header: resp.Header}
}

func token(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	a := do(t, srv, http.MethodPut, fakeimds.TokenPath, map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": "21600"})
	require.Equal(t, http.StatusOK, a.status)
	require.Equal(t, "21600", a.header.Get("X-aws-ec2-metadata-token-ttl-seconds"))
	require.NotEmpty(t, a.body)
	return a.body
}

func TestHandler(t *testing.T) {
	t.Parallel()
	const role = "hypershift-worker-role"
	tests := []struct {
		name       string
		opts       []fakeimds.Option
		method     string
		path       string
		withToken  bool
		header     map[string]string
		wantStatus int
		wantBody   string
	}{
		{name: "When a token PUT has no TTL header, it should answer 400", method: http.MethodPut, path: fakeimds.TokenPath, wantStatus: http.StatusBadRequest},
		{name: "When a token PUT asks for more than six hours, it should answer 400", method: http.MethodPut, path: fakeimds.TokenPath, header: map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": "21601"}, wantStatus: http.StatusBadRequest},
		{name: "When a token PUT was forwarded by a proxy, it should answer 403", method: http.MethodPut, path: fakeimds.TokenPath, header: map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": "60", "X-Forwarded-For": "10.0.0.1"}, wantStatus: http.StatusForbidden},
		{name: "When a token is fetched with GET, it should answer 405", method: http.MethodGet, path: fakeimds.TokenPath, wantStatus: http.StatusMethodNotAllowed},
		{name: "When IMDSv2 is enforced and a GET has no token, it should answer 401", method: http.MethodGet, path: fakeimds.SecurityCredentialsPath, wantStatus: http.StatusUnauthorized},
		{name: "When a GET carries an unknown token, it should answer 401", method: http.MethodGet, path: fakeimds.SecurityCredentialsPath, header: map[string]string{"X-aws-ec2-metadata-token": "forged"}, wantStatus: http.StatusUnauthorized},
		{name: "When IMDSv1 is allowed and a GET has no token, it should answer", opts: []fakeimds.Option{fakeimds.WithIMDSv1()}, method: http.MethodGet, path: fakeimds.SecurityCredentialsPath, wantStatus: http.StatusOK, wantBody: role},
		{name: "When the role is listed with a token, it should name the role", method: http.MethodGet, path: fakeimds.SecurityCredentialsPath, withToken: true, wantStatus: http.StatusOK, wantBody: role},
		{name: "When the instance has no instance profile, it should answer 404 to the role listing", opts: []fakeimds.Option{fakeimds.WithRoleName("")}, method: http.MethodGet, path: fakeimds.SecurityCredentialsPath, withToken: true, wantStatus: http.StatusNotFound},
		{name: "When another role is asked for, it should answer 404", method: http.MethodGet, path: fakeimds.SecurityCredentialsPath + "other-role", withToken: true, wantStatus: http.StatusNotFound},
		{name: "When the region is asked for, it should answer the configured region", opts: []fakeimds.Option{fakeimds.WithRegion("eu-west-1")}, method: http.MethodGet, path: fakeimds.RegionPath, withToken: true, wantStatus: http.StatusOK, wantBody: "eu-west-1"},
		{name: "When an unknown path is asked for, it should answer 404", method: http.MethodGet, path: "/latest/meta-data/nothing", withToken: true, wantStatus: http.StatusNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, fakeimds.New(tc.opts...))
			header := map[string]string{}
			for k, v := range tc.header {
				header[k] = v
			}
			if tc.withToken {
				header["X-aws-ec2-metadata-token"] = token(t, srv)
			}
			a := do(t, srv, tc.method, tc.path, header)
			require.Equal(t, tc.wantStatus, a.status)
			if tc.wantBody != "" {
				require.Equal(t, tc.wantBody, a.body)
			}
		})
	}
}

func TestCredentials(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(start)
	m := fakeimds.New(fakeimds.WithClock(clk), fakeimds.WithCredentialLifetime(6*time.Hour))
	srv := serve(t, m)
	path := fakeimds.SecurityCredentialsPath + fakeimds.DefaultRoleName

	get := func(tok string) map[string]string {
		a := do(t, srv, http.MethodGet, path, map[string]string{"X-aws-ec2-metadata-token": tok})
		require.Equal(t, http.StatusOK, a.status)
		var doc map[string]string
		require.NoError(t, json.Unmarshal([]byte(a.body), &doc))
		return doc
	}

	t.Run("When the role's credentials are read, it should answer the first key pair in the SDK's shape", func(t *testing.T) {
		doc := get(token(t, srv))
		require.Equal(t, map[string]string{
			"Code":            "Success",
			"LastUpdated":     "2026-03-01T08:00:00Z",
			"Type":            "AWS-HMAC",
			"AccessKeyId":     fakeimds.AccessKeyID(1),
			"SecretAccessKey": fakeimds.SecretAccessKey(1),
			"Token":           fakeimds.SessionToken(1),
			"Expiration":      "2026-03-01T14:00:00Z",
		}, doc)
	})
	t.Run("When half the lifetime has passed, it should answer a new key pair valid for a full lifetime", func(t *testing.T) {
		tok := token(t, srv)
		clk.SetTime(start.Add(3 * time.Hour))
		doc := get(tok)
		require.Equal(t, fakeimds.AccessKeyID(2), doc["AccessKeyId"])
		require.Equal(t, "2026-03-01T17:00:00Z", doc["Expiration"])
		require.Equal(t, 2, m.Generation())
	})
	t.Run("When the session token has expired, it should answer 401", func(t *testing.T) {
		a := do(t, srv, http.MethodPut, fakeimds.TokenPath, map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": "60"})
		require.Equal(t, http.StatusOK, a.status)
		clk.SetTime(clk.Now().Add(61 * time.Second))
		b := do(t, srv, http.MethodGet, path, map[string]string{"X-aws-ec2-metadata-token": a.body})
		require.Equal(t, http.StatusUnauthorized, b.status)
	})
	require.Positive(t, m.Calls(path))
	require.Positive(t, m.Calls(fakeimds.TokenPath))
}

func TestIdentityDocument(t *testing.T) {
	t.Parallel()
	srv := serve(t, fakeimds.New(fakeimds.WithRegion("ap-southeast-2"), fakeimds.WithAccountID("210987654321")))
	a := do(t, srv, http.MethodGet, fakeimds.IdentityDocumentPath, map[string]string{"X-aws-ec2-metadata-token": token(t, srv)})
	require.Equal(t, http.StatusOK, a.status)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(a.body), &doc))
	require.Equal(t, "ap-southeast-2", doc["region"])
	require.Equal(t, "210987654321", doc["accountId"])
	require.Equal(t, "ap-southeast-2a", doc["availabilityZone"])
	require.Equal(t, fakeimds.DefaultInstanceID, doc["instanceId"])
}

func TestFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    []fakeimds.Option
		method  string
		path    string
		timeout time.Duration
		check   func(t *testing.T, err error, elapsed time.Duration)
	}{
		{
			name:    "When the hop limit is exceeded, it should hold the token PUT until the client gives up",
			opts:    []fakeimds.Option{fakeimds.WithHopLimitExceeded()},
			method:  http.MethodPut,
			path:    fakeimds.TokenPath,
			timeout: 200 * time.Millisecond,
			check: func(t *testing.T, err error, elapsed time.Duration) {
				require.ErrorIs(t, err, context.DeadlineExceeded)
				require.GreaterOrEqual(t, elapsed, 200*time.Millisecond)
			},
		},
		{
			name:    "When the service is unavailable, it should drop the connection",
			opts:    []fakeimds.Option{fakeimds.WithUnavailable()},
			method:  http.MethodGet,
			path:    fakeimds.IdentityDocumentPath,
			timeout: 5 * time.Second,
			check: func(t *testing.T, err error, _ time.Duration) {
				require.Error(t, err)
				require.NotErrorIs(t, err, context.DeadlineExceeded)
			},
		},
		{
			name:    "When latency exceeds the client's patience, it should give no answer",
			opts:    []fakeimds.Option{fakeimds.WithLatency(time.Minute)},
			method:  http.MethodGet,
			path:    fakeimds.IdentityDocumentPath,
			timeout: 100 * time.Millisecond,
			check: func(t *testing.T, err error, _ time.Duration) {
				require.ErrorIs(t, err, context.DeadlineExceeded)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := fakeimds.New(tc.opts...)
			srv := serve(t, m)
			ctx, cancel := context.WithTimeout(t.Context(), tc.timeout)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, tc.method, srv.URL+tc.path, nil)
			require.NoError(t, err)
			req.Header.Set("X-aws-ec2-metadata-token-ttl-seconds", "21600")
			begin := time.Now()
			resp, err := srv.Client().Do(req)
			if err == nil {
				resp.Body.Close()
			}
			tc.check(t, err, time.Since(begin))
			require.Equal(t, 1, m.Calls(tc.path))
		})
	}
}

func TestCloseReleasesHeldRequests(t *testing.T) {
	t.Parallel()
	m := fakeimds.New(fakeimds.WithHopLimitExceeded())
	srv := httptest.NewServer(m.Handler())
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+fakeimds.TokenPath, nil)
		req.Header.Set("X-aws-ec2-metadata-token-ttl-seconds", "60")
		resp, err := srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	require.Eventually(t, func() bool { return m.Calls(fakeimds.TokenPath) == 1 }, 5*time.Second, 5*time.Millisecond)
	m.Close()
	m.Close() // idempotent
	srv.Close()
	<-errc
}
