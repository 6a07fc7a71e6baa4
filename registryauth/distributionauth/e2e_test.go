package distributionauth_test

import (
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/distributionauth"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

// dialTo returns a transport that connects every request to addr, so that a
// real ECR host name reaches the local test registry.
func dialTo(addr string) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
	return tr
}

// TestEndToEnd wires the real registryauth.Keychain to fakeecr and the
// docker/distribution client HyperShift uses, against a registry that
// accepts only the password fakeecr issues first.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	const ecrRepo = "openshift-release-dev/ocp-release"
	tests := []struct {
		name    string
		setup   func(*fakeecr.ECR)
		wantErr error
	}{
		{
			name: "When ECR issues a token, it should resolve the tag without a pull-secret entry",
		},
		{
			name:    "When ECR throttles, it should get a 401 and Err should match ErrThrottled",
			setup:   func(f *fakeecr.ECR) { f.SetError("us-east-1", fakeecr.ThrottlingError()) },
			wantErr: registryauth.ErrThrottled,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fakeecr.New()
			if tc.setup != nil {
				tc.setup(f)
			}
			reg := newECRLikeRegistry(t, fakeecr.Password("us-east-1", 1))
			want := reg.seed(t, ecrRepo, "4.19.0-x86_64")
			addr := reg.protected.Listener.Addr().String()
			_, port, err := net.SplitHostPort(addr)
			require.NoError(t, err)

			var logs logBuffer
			kc, err := registryauth.NewKeychain(registryauth.WithClientFactory(f.ClientFactory), registryauth.WithLogger(logs.logger()))
			require.NoError(t, err)
			t.Cleanup(func() { _ = kc.Close() })
			// A pull-secret store that knows nothing about ECR.
			pullSecret := &staticStore{basic: map[string][2]string{"quay.io": {"robot", "quay-pass"}}}
			store := distributionauth.NewCredentialStore(kc, pullSecret, distributionauth.WithLogger(logs.logger()))

			got, err := resolveTag(t.Context(), dialTo(addr), "http://123456789012.dkr.ecr.us-east-1.amazonaws.com:"+port, ecrRepo, "4.19.0-x86_64", store)
			for i := 1; i <= f.Calls("us-east-1"); i++ {
				require.NotContains(t, logs.String(), fakeecr.Password("us-east-1", i))
			}
			if tc.wantErr != nil {
				require.Error(t, err)
				require.ErrorIs(t, store.Err(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, want, got)
			require.NoError(t, store.Err())
			require.Equal(t, 1, f.Calls("us-east-1"))
		})
	}
}
