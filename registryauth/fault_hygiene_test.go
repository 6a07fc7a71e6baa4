package registryauth_test

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	ggcrremote "github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/distributionauth"
	"github.com/openshift/hypershift-ecr/registryauth/ggcrauth"
	"github.com/openshift/hypershift-ecr/registryauth/prommetrics"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
	"github.com/openshift/hypershift-ecr/testing/secretcheck"
)

// hygieneWorld is a keychain with Prometheus metrics and both registry
// adapters, every output of which goes through a secretcheck.Checker.
type hygieneWorld struct {
	sc    *secretcheck.Checker
	clock *clocktesting.FakeClock
	api   *fakeecr.ECR
	prom  *prometheus.Registry
	kc    *registryauth.Keychain
	store *distributionauth.CredentialStore
	ggcr  authn.Keychain
}

// pinnedPassword is what SetToken pins in the cases that need a token
// ECR did not generate.
const pinnedPassword = "pinned-ecr-password-0001"

func newHygieneWorld(t *testing.T) *hygieneWorld {
	t.Helper()
	w := &hygieneWorld{sc: secretcheck.New(t), clock: clocktesting.NewFakeClock(epoch), prom: prometheus.NewRegistry()}
	w.api = fakeecr.New(fakeecr.WithClock(w.clock))
	w.sc.Watch(pinnedPassword)
	w.sc.WatchFunc(func() []string { return issuedPasswords(w.api) })
	m, err := prommetrics.New(w.prom)
	require.NoError(t, err)
	w.kc, err = registryauth.NewKeychain(
		registryauth.WithClientFactory(w.api.ClientFactory),
		registryauth.WithClock(w.clock),
		registryauth.WithLogger(w.sc.Logger()),
		registryauth.WithMetrics(m),
		registryauth.WithBackoff(time.Second, time.Minute),
	)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.kc.Close() })
	w.store = distributionauth.NewCredentialStore(w.kc, nil, distributionauth.WithLogger(w.sc.Logger()))
	w.ggcr = ggcrauth.NewKeychain(w.kc)
	w.sc.CheckRegistry(w.prom) // gathered again when the test ends
	return w
}

// everyAdapter asks for useast1 through the keychain, Augment, the
// distribution store and the go-containerregistry keychain, and hands
// every error to the checker.
func (w *hygieneWorld) everyAdapter(t *testing.T) {
	t.Helper()
	_, err := w.kc.Credential(t.Context(), useast1)
	w.sc.CheckError(err)
	_, err = w.kc.Augment(t.Context(), []byte(`{"auths":{"quay.io":{"auth":"cm9ib3Q6cXVheS1yb2JvdC10b2tlbg=="}}}`), useast1+"/ocp4/openshift4")
	w.sc.CheckError(err)
	_, _ = w.store.Basic(&url.URL{Scheme: "https", Host: useast1})
	w.sc.CheckError(w.store.Err())
	if a, err := w.ggcr.Resolve(mustRegistry(t, useast1)); err != nil {
		w.sc.CheckError(err)
	} else {
		_, err := a.Authorization()
		w.sc.CheckError(err)
	}
}

func mustRegistry(t *testing.T, host string) name.Registry {
	t.Helper()
	r, err := name.NewRegistry(host)
	require.NoError(t, err)
	return r
}

// TestFaultSecretHygiene drives the keychain and its adapters through
// their failure paths; secretcheck fails the test if any password, auth
// string or pinned token reaches a log line, an error, a panic or a metric.
func TestFaultSecretHygiene(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T, w *hygieneWorld)
	}{
		{
			name: "When ECR denies the identity, it should report ErrAccessDenied everywhere and leak nothing",
			run: func(t *testing.T, w *hygieneWorld) {
				w.api.SetError("us-east-1", fakeecr.AccessDeniedError())
				w.everyAdapter(t)
				require.ErrorIs(t, w.store.Err(), registryauth.ErrAccessDenied)
			},
		},
		{
			name: "When a background refresh is throttled, it should log the failure and leak nothing",
			run: func(t *testing.T, w *hygieneWorld) {
				w.everyAdapter(t) // fetched and used
				w.api.SetError("us-east-1", fakeecr.ThrottlingError())
				w.clock.Step(6*time.Hour + time.Minute)
				require.Eventually(t, func() bool { return w.api.Calls("us-east-1") >= 2 }, 5*time.Second, time.Millisecond)
				w.everyAdapter(t) // still served from the cache
				w.clock.Step(6 * time.Hour)
				w.everyAdapter(t) // now refused
				require.ErrorIs(t, w.store.Err(), registryauth.ErrThrottled)
			},
		},
		{
			name: "When the API endpoint is unreachable, it should name the VPC endpoint and leak nothing",
			run: func(t *testing.T, w *hygieneWorld) {
				w.api.SetError("us-east-1", fakeecr.EndpointError())
				w.everyAdapter(t)
				require.ErrorIs(t, w.store.Err(), registryauth.ErrEndpointUnreachable)
			},
		},
		{
			name: "When ECR returns an expired token, it should refuse it without quoting it",
			run: func(t *testing.T, w *hygieneWorld) {
				w.api.SetToken("us-east-1", pinnedPassword, epoch.Add(-time.Hour))
				w.everyAdapter(t)
				require.ErrorIs(t, w.store.Err(), registryauth.ErrInvalidToken)
			},
		},
		{
			name: "When the registry rejects a revoked token, it should fail with a 401 that quotes no credential",
			run: func(t *testing.T, w *hygieneWorld) {
				reg := fakeregistry.New(t, fakeregistry.WithAuthenticator(w.api.Authenticator()))
				img, err := random.Image(256, 1)
				require.NoError(t, err)
				ref, err := name.ParseReference(reg.Push(t, useast1+"/ocp4/openshift4:4.18.0-x86_64", img))
				require.NoError(t, err)
				opts := []ggcrremote.Option{ggcrremote.WithAuthFromKeychain(w.ggcr), ggcrremote.WithTransport(reg.Transport())}
				_, err = ggcrremote.Head(ref, opts...)
				require.NoError(t, err)
				reg.RevokeAll()
				_, err = ggcrremote.Head(ref, opts...)
				require.Error(t, err)
				w.sc.CheckError(err)
			},
		},
		{
			name: "When code panics with a credential or an error, it should leak nothing",
			run: func(t *testing.T, w *hygieneWorld) {
				c, err := w.kc.Credential(t.Context(), useast1)
				require.NoError(t, err)
				require.NotNil(t, w.sc.CheckPanic(func() { panic(c) }))
				require.NotNil(t, w.sc.CheckPanic(func() { panic(fmt.Sprintf("%v %+v %#v %s", c, c, c, c)) }))
				w.api.FailNext("us-east-1", 1, fakeecr.AccessDeniedError())
				w.kc.Forget(useast1)
				_, err = w.kc.Credential(t.Context(), useast1)
				require.Error(t, err)
				require.NotNil(t, w.sc.CheckPanic(func() { panic(err) }))
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newHygieneWorld(t))
		})
	}
}

// TestFaultMetricLabels drives every outcome the metrics record and then
// checks what a Prometheus scrape would see: the six documented families
// (docs/observability.md), labelled by partition, region and outcome only,
// never by account id or registry host.
func TestFaultMetricLabels(t *testing.T) {
	t.Parallel()
	w := newHygieneWorld(t)
	ctx := context.Background()
	allowed := []string{"partition", "region", "outcome"}

	for _, fault := range []error{fakeecr.AccessDeniedError(), fakeecr.ThrottlingError(), fakeecr.EndpointError(), fakeecr.InvalidParameterError()} {
		w.api.FailNext("eu-west-1", 1, fault)
		_, err := w.kc.Credential(ctx, "210987654321.dkr.ecr.eu-west-1.amazonaws.com")
		require.Error(t, err)
		w.clock.Step(2 * time.Minute) // past the backoff
	}
	for range 2 { // a miss, then a hit
		_, err := w.kc.Credential(ctx, useast1)
		require.NoError(t, err)
	}
	w.api.SetError("us-east-1", fakeecr.ThrottlingError())
	w.clock.Step(6*time.Hour + time.Minute) // a refresh fails while the old token is served
	require.Eventually(t, func() bool { return w.api.Calls("us-east-1") >= 2 }, 5*time.Second, time.Millisecond)

	families, err := w.prom.Gather()
	require.NoError(t, err)
	var names []string
	accountID := regexp.MustCompile(`\d{12}`)
	for _, mf := range families {
		names = append(names, mf.GetName())
		require.NotEmpty(t, mf.GetMetric(), "%s has no series: the test must drive it", mf.GetName())
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				require.Contains(t, allowed, lp.GetName(),
					"When %s is scraped, it should carry only the labels %v", mf.GetName(), allowed)
				require.NotRegexp(t, accountID, lp.GetValue(), "%s: label values never hold an account id", mf.GetName())
			}
		}
	}
	require.Equal(t, []string{
		"hypershift_ecr_cache_hits_total",
		"hypershift_ecr_cache_misses_total",
		"hypershift_ecr_refresh_failures_total",
		"hypershift_ecr_token_expiry_timestamp_seconds",
		"hypershift_ecr_token_fetch_duration_seconds",
		"hypershift_ecr_token_fetches_total",
	}, slices.Sorted(slices.Values(names)), "docs/observability.md documents exactly these")
}
