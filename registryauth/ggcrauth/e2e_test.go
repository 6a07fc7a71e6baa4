package ggcrauth_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/ggcrauth"
	"github.com/openshift/hypershift-ecr/registryauth/prommetrics"
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

type lines struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		fmt.Fprintln(&l.b, prefix, args)
	}, funcr.Options{Verbosity: 10})
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestEndToEnd wires the real registryauth.Keychain to fakeecr, prommetrics
// and go-containerregistry, against a registry that accepts only the
// password fakeecr issues first.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   func(*fakeecr.ECR)
		wantErr error
	}{
		{
			name: "When ECR issues a token, it should pull the image with one GetAuthorizationToken call",
		},
		{
			name:    "When ECR denies access, it should fail with ErrAccessDenied and log no secret",
			setup:   func(f *fakeecr.ECR) { f.SetError("us-east-1", fakeecr.AccessDeniedError()) },
			wantErr: registryauth.ErrAccessDenied,
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
			_, port, err := net.SplitHostPort(reg.host)
			require.NoError(t, err)
			reg.seed(t, "openshift-release-dev/ocp-release:4.19.0-x86_64")

			promReg := prometheus.NewRegistry()
			m, err := prommetrics.New(promReg)
			require.NoError(t, err)
			var logs lines
			kc, err := registryauth.NewKeychain(
				registryauth.WithClientFactory(f.ClientFactory),
				registryauth.WithMetrics(m),
				registryauth.WithLogger(logs.logger()),
			)
			require.NoError(t, err)
			t.Cleanup(func() { _ = kc.Close() })

			ref, err := name.ParseReference("123456789012.dkr.ecr.us-east-1.amazonaws.com:"+port+"/openshift-release-dev/ocp-release:4.19.0-x86_64", name.Insecure)
			require.NoError(t, err)
			opts := []remote.Option{
				remote.WithAuthFromKeychain(ggcrauth.NewKeychain(kc)),
				remote.WithTransport(dialTo(reg.host)),
				remote.WithContext(t.Context()),
			}
			img, err := remote.Image(ref, opts...)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				text := logs.String() + "\n" + err.Error()
				for i := 1; i <= f.Calls("us-east-1"); i++ {
					require.NotContains(t, text, fakeecr.Password("us-east-1", i))
				}
				return
			}
			require.NoError(t, err)
			layers, err := img.Layers()
			require.NoError(t, err)
			for _, l := range layers {
				rc, err := l.Compressed()
				require.NoError(t, err)
				require.NoError(t, rc.Close())
			}
			require.Equal(t, 1, f.Calls("us-east-1"), "every request must be served from one token")
			require.Equal(t, []fakeecr.Request{{Region: "us-east-1", Registry: "123456789012.dkr.ecr.us-east-1.amazonaws.com", Time: f.Requests()[0].Time}}, f.Requests())
			require.NotContains(t, logs.String(), fakeecr.Password("us-east-1", 1))

			mfs, err := promReg.Gather()
			require.NoError(t, err)
			names := map[string]bool{}
			for _, mf := range mfs {
				names[mf.GetName()] = true
			}
			require.True(t, names["hypershift_ecr_cache_hits_total"], "warm lookups must be counted: %v", names)
			require.True(t, names["hypershift_ecr_token_fetches_total"], "the fetch must be counted: %v", names)
			require.False(t, strings.Contains(fmt.Sprint(mfs), "123456789012"), "no account id in metrics")
		})
	}
}
