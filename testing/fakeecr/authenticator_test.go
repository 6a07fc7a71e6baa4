package fakeecr_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

func TestAuthenticator(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	const region = "us-east-1"
	tests := []struct {
		name string
		// setup runs against a fresh fake whose clock starts at start and
		// returns the credential to check.
		setup func(t *testing.T, f *fakeecr.ECR, clk *clocktesting.FakeClock) (user, pass string)
		want  bool
	}{
		{
			name: "When the password was issued and has not expired, it should accept it",
			setup: func(t *testing.T, f *fakeecr.ECR, _ *clocktesting.FakeClock) (string, string) {
				issueToken(t, f, region)
				return "AWS", fakeecr.Password(region, 1)
			},
			want: true,
		},
		{
			name: "When a newer token was issued, it should still accept the older one until it expires",
			setup: func(t *testing.T, f *fakeecr.ECR, clk *clocktesting.FakeClock) (string, string) {
				issueToken(t, f, region)
				clk.Step(6 * time.Hour)
				issueToken(t, f, region)
				return "AWS", fakeecr.Password(region, 1)
			},
			want: true,
		},
		{
			name: "When the token lifetime has passed by the fake's clock, it should reject the password",
			setup: func(t *testing.T, f *fakeecr.ECR, clk *clocktesting.FakeClock) (string, string) {
				issueToken(t, f, region)
				clk.Step(fakeecr.DefaultTokenLifetime)
				return "AWS", fakeecr.Password(region, 1)
			},
		},
		{
			name: "When the user name is not AWS, it should reject the credential",
			setup: func(t *testing.T, f *fakeecr.ECR, _ *clocktesting.FakeClock) (string, string) {
				issueToken(t, f, region)
				return "admin", fakeecr.Password(region, 1)
			},
		},
		{
			name: "When the password belongs to a call that has not happened, it should reject it",
			setup: func(t *testing.T, f *fakeecr.ECR, _ *clocktesting.FakeClock) (string, string) {
				issueToken(t, f, region)
				return "AWS", fakeecr.Password(region, 2)
			},
		},
		{
			name: "When the password names a region that was never called, it should reject it",
			setup: func(t *testing.T, f *fakeecr.ECR, _ *clocktesting.FakeClock) (string, string) {
				issueToken(t, f, region)
				return "AWS", fakeecr.Password("eu-west-1", 1)
			},
		},
		{
			name: "When the password is not one the fake generates, it should reject it",
			setup: func(t *testing.T, f *fakeecr.ECR, _ *clocktesting.FakeClock) (string, string) {
				issueToken(t, f, region)
				return "AWS", "fake-ecr-password-us-east-1-1"
			},
		},
		{
			name: "When a pinned password was handed out, it should accept it until its expiry",
			setup: func(t *testing.T, f *fakeecr.ECR, _ *clocktesting.FakeClock) (string, string) {
				f.SetToken(region, "pinned-secret", start.Add(time.Hour))
				issueToken(t, f, region)
				return "AWS", "pinned-secret"
			},
			want: true,
		},
		{
			name: "When a pinned password has passed its expiry, it should reject it",
			setup: func(t *testing.T, f *fakeecr.ECR, clk *clocktesting.FakeClock) (string, string) {
				f.SetToken(region, "pinned-secret", start.Add(time.Hour))
				issueToken(t, f, region)
				clk.Step(time.Hour)
				return "AWS", "pinned-secret"
			},
		},
		{
			name: "When a password was pinned but never handed out, it should reject it",
			setup: func(t *testing.T, f *fakeecr.ECR, _ *clocktesting.FakeClock) (string, string) {
				f.SetToken(region, "pinned-secret", time.Time{})
				return "AWS", "pinned-secret"
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := clocktesting.NewFakeClock(start)
			f := fakeecr.New(fakeecr.WithClock(clk))
			user, pass := tc.setup(t, f, clk)
			require.Equal(t, tc.want, f.Authenticator()(user, pass))
		})
	}
}

func issueToken(t *testing.T, f *fakeecr.ECR, region string) {
	t.Helper()
	_, err := f.Client(region).GetAuthorizationToken(t.Context(), &ecr.GetAuthorizationTokenInput{})
	require.NoError(t, err)
}
