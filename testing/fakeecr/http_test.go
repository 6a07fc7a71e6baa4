package fakeecr_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

// sdkClient is a real *ecr.Client talking to srv, without retries so that
// one injected error is one call.
func sdkClient(srv *httptest.Server, region, akid string) *ecr.Client {
	return ecr.New(ecr.Options{
		Region:       region,
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider(akid, "secret", ""),
		HTTPClient:   srv.Client(),
		Retryer:      aws.NopRetryer{},
	})
}

func TestHandler(t *testing.T) {
	t.Parallel()
	expiry := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		opts     []fakeecr.Option
		setup    func(*fakeecr.ECR)
		region   string
		akid     string
		wantErr  func(t *testing.T, err error)
		wantPass string
		wantExp  time.Time
	}{
		{
			name:     "When the real SDK asks for a token, it should get a rotating one for the signed region",
			region:   "eu-west-1",
			akid:     "AKIDEXAMPLE",
			wantPass: fakeecr.Password("eu-west-1", 1),
			wantExp:  epoch.Add(12 * time.Hour),
		},
		{
			name:     "When a token is pinned, it should arrive through the SDK unchanged",
			setup:    func(f *fakeecr.ECR) { f.SetToken("us-east-1", "pinned-password", expiry) },
			region:   "us-east-1",
			akid:     "AKIDEXAMPLE",
			wantPass: "pinned-password",
			wantExp:  expiry,
		},
		{
			name:   "When throttling is injected, it should reach the SDK as a ThrottlingException API error",
			setup:  func(f *fakeecr.ECR) { f.FailNext("us-east-1", 1, fakeecr.ThrottlingError()) },
			region: "us-east-1",
			akid:   "AKIDEXAMPLE",
			wantErr: func(t *testing.T, err error) {
				var apiErr smithy.APIError
				require.ErrorAs(t, err, &apiErr)
				require.Equal(t, "ThrottlingException", apiErr.ErrorCode())
				require.Equal(t, "Rate exceeded", apiErr.ErrorMessage())
			},
		},
		{
			name:   "When access is denied, it should reach the SDK as an AccessDeniedException",
			setup:  func(f *fakeecr.ECR) { f.SetError("us-east-1", fakeecr.AccessDeniedError()) },
			region: "us-east-1",
			akid:   "AKIDEXAMPLE",
			wantErr: func(t *testing.T, err error) {
				var apiErr smithy.APIError
				require.ErrorAs(t, err, &apiErr)
				require.Equal(t, "AccessDeniedException", apiErr.ErrorCode())
			},
		},
		{
			name:   "When the endpoint error is injected, it should reach the SDK as a real send failure",
			setup:  func(f *fakeecr.ECR) { f.FailNext("us-east-1", 1, fakeecr.EndpointError()) },
			region: "us-east-1",
			akid:   "AKIDEXAMPLE",
			wantErr: func(t *testing.T, err error) {
				var sendErr *smithyhttp.RequestSendError
				require.ErrorAs(t, err, &sendErr)
			},
		},
		{
			name:     "When the required access key signs the request, it should answer",
			opts:     []fakeecr.Option{fakeecr.WithRequiredAccessKeyID("AKIDWORKERROLE")},
			region:   "us-east-1",
			akid:     "AKIDWORKERROLE",
			wantPass: fakeecr.Password("us-east-1", 1),
			wantExp:  epoch.Add(12 * time.Hour),
		},
		{
			name:   "When another access key signs the request, it should reject it",
			opts:   []fakeecr.Option{fakeecr.WithRequiredAccessKeyID("AKIDWORKERROLE")},
			region: "us-east-1",
			akid:   "AKIDEXAMPLE",
			wantErr: func(t *testing.T, err error) {
				var apiErr smithy.APIError
				require.ErrorAs(t, err, &apiErr)
				require.Equal(t, "UnrecognizedClientException", apiErr.ErrorCode())
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fakeecr.New(append([]fakeecr.Option{fakeecr.WithClock(clocktesting.NewFakePassiveClock(epoch))}, tc.opts...)...)
			if tc.setup != nil {
				tc.setup(f)
			}
			srv := httptest.NewServer(f.Handler())
			defer srv.Close()

			d, err := getToken(t.Context(), t, sdkClient(srv, tc.region, tc.akid))
			require.Equal(t, 1, f.Calls(tc.region))
			reqs := f.Requests()
			require.Len(t, reqs, 1)
			require.Equal(t, tc.akid, reqs[0].AccessKeyID)
			if tc.wantErr != nil {
				require.Error(t, err)
				tc.wantErr(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "AWS", d.user)
			require.Equal(t, tc.wantPass, d.password)
			require.True(t, tc.wantExp.Equal(d.expiresAt), "expiresAt %v, want %v", d.expiresAt, tc.wantExp)
			require.Equal(t, "https://123456789012.dkr.ecr."+tc.region+".amazonaws.com", d.proxyEndpoint)
		})
	}
}

// TestErrorFidelity proves the in-process client's error chains are the
// real SDK's, so that an error classifier tested against Client behaves the
// same against *ecr.Client.
func TestErrorFidelity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  func() error
	}{
		{name: "When throttled, it should build the SDK's error chain", err: fakeecr.ThrottlingError},
		{name: "When access is denied, it should build the SDK's error chain", err: fakeecr.AccessDeniedError},
		{name: "When a parameter is invalid, it should build the SDK's error chain", err: fakeecr.InvalidParameterError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fakeecr.New()
			f.SetError("us-east-1", tc.err())
			srv := httptest.NewServer(f.Handler())
			defer srv.Close()

			_, sdkErr := sdkClient(srv, "us-east-1", "AKIDEXAMPLE").GetAuthorizationToken(t.Context(), &ecr.GetAuthorizationTokenInput{})
			_, fakeErr := f.Client("us-east-1").GetAuthorizationToken(t.Context(), &ecr.GetAuthorizationTokenInput{})
			require.Equal(t, chain(sdkErr), chain(fakeErr))

			var sdkAPI, fakeAPI smithy.APIError
			require.ErrorAs(t, sdkErr, &sdkAPI)
			require.ErrorAs(t, fakeErr, &fakeAPI)
			require.Equal(t, sdkAPI.ErrorCode(), fakeAPI.ErrorCode())
			require.Equal(t, sdkAPI.ErrorMessage(), fakeAPI.ErrorMessage())
			require.Equal(t, sdkAPI.ErrorFault(), fakeAPI.ErrorFault())
		})
	}
}

// chain lists the types of err's Unwrap chain.
func chain(err error) []string {
	var out []string
	for err != nil {
		out = append(out, reflect.TypeOf(err).String())
		err = errors.Unwrap(err)
	}
	return out
}

func TestHandlerProtocol(t *testing.T) {
	t.Parallel()
	const auth = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/ecr/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc"
	tests := []struct {
		name       string
		method     string
		target     string
		ctype      string
		auth       string
		wantStatus int
		wantType   string
	}{
		{
			name: "When the target is another operation, it should answer UnknownOperationException",
			// DescribeRepositories is a real ECR operation the fake does not serve.
			method: http.MethodPost, target: "AmazonEC2ContainerRegistry_V20150921.DescribeRepositories", ctype: "application/x-amz-json-1.1", auth: auth,
			wantStatus: http.StatusBadRequest, wantType: "UnknownOperationException",
		},
		{
			name:   "When the request is not signed, it should answer MissingAuthenticationTokenException",
			method: http.MethodPost, target: "AmazonEC2ContainerRegistry_V20150921.GetAuthorizationToken", ctype: "application/x-amz-json-1.1",
			wantStatus: http.StatusBadRequest, wantType: "MissingAuthenticationTokenException",
		},
		{
			name:   "When the content type is not AWS JSON 1.1, it should answer SerializationException",
			method: http.MethodPost, target: "AmazonEC2ContainerRegistry_V20150921.GetAuthorizationToken", ctype: "application/json", auth: auth,
			wantStatus: http.StatusBadRequest, wantType: "SerializationException",
		},
		{
			name:       "When the method is GET, it should answer 404",
			method:     http.MethodGet,
			wantStatus: http.StatusNotFound, wantType: "UnknownOperationException",
		},
		{
			name:   "When the request is well formed, it should answer 200",
			method: http.MethodPost, target: "AmazonEC2ContainerRegistry_V20150921.GetAuthorizationToken", ctype: "application/x-amz-json-1.1", auth: auth,
			wantStatus: http.StatusOK,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fakeecr.New()
			srv := httptest.NewServer(f.Handler())
			defer srv.Close()
			req, err := http.NewRequestWithContext(t.Context(), tc.method, srv.URL+"/", strings.NewReader("{}"))
			require.NoError(t, err)
			for k, v := range map[string]string{"X-Amz-Target": tc.target, "Content-Type": tc.ctype, "Authorization": tc.auth} {
				if v != "" {
					req.Header.Set(k, v)
				}
			}
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, tc.wantStatus, resp.StatusCode)
			require.Equal(t, "application/x-amz-json-1.1", resp.Header.Get("Content-Type"))
			if tc.wantType != "" {
				var body struct {
					Type string `json:"__type"`
				}
				require.NoError(t, decodeJSON(resp, &body))
				require.Equal(t, tc.wantType, body.Type)
				require.Zero(t, f.TotalCalls(), "a malformed request is not a call")
			}
		})
	}
}

func TestHandlerCancellation(t *testing.T) {
	t.Parallel()
	t.Run("When the SDK caller gives up on a blocked call, it should return and count the call", func(t *testing.T) {
		t.Parallel()
		f := fakeecr.New()
		release := f.Block("us-east-1")
		defer release()
		srv := httptest.NewServer(f.Handler())
		defer srv.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		_, err := sdkClient(srv, "us-east-1", "AKIDEXAMPLE").GetAuthorizationToken(ctx, &ecr.GetAuthorizationTokenInput{})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Equal(t, 1, f.Calls("us-east-1"))
	})
}

func decodeJSON(resp *http.Response, v any) error {
	return json.NewDecoder(resp.Body).Decode(v)
}
