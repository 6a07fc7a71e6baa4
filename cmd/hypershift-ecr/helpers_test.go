package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

const (
	ecrHost       = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	mirrorRepo    = ecrHost + "/ocp4/openshift4"
	releaseRepo   = "quay.io/openshift-release-dev/ocp-release"
	componentRepo = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"
	roleARN       = "arn:aws:sts::123456789012:assumed-role/hypershift-operator/i-0123456789abcdef0"
	// testSecretKey is the fake static secret key; it must never be printed.
	testSecretKey = "fake-static-secret-access-key-0000"
)

// payload is built once: Build is deterministic and its images immutable.
var payload = sync.OnceValues(func() (*releasepayload.Payload, error) {
	return releasepayload.Build(releasepayload.WithVersion("4.10.3"), releasepayload.WithComponents(componentRepo))
})

// world is what the AWS-backed commands see in tests: the fake ECR API over
// HTTP for the real SDK client, quay.io and an ECR registry trusting the
// fake's tokens, and a fake STS.
type world struct {
	ecrAPI    *fakeecr.ECR
	ecrAPISrv *httptest.Server
	quay, ecr *fakeregistry.Registry
	release   string // quay.io digest pullspec of 4.10.3
	lagging   string // quay.io digest pullspec of a release not mirrored
	sts       *fakeSTS
}

// newWorld starts the fakes; with mirror, the release (and its components)
// are copied to the ECR mirror as `oc adm release mirror` does.
func newWorld(t *testing.T, mirror bool) *world {
	t.Helper()
	p, err := payload()
	require.NoError(t, err)
	w := &world{ecrAPI: fakeecr.New(), sts: &fakeSTS{arn: roleARN}}
	w.ecrAPISrv = httptest.NewServer(w.ecrAPI.Handler())
	t.Cleanup(w.ecrAPISrv.Close)
	w.quay = fakeregistry.New(t, fakeregistry.WithHost("quay.io"), fakeregistry.WithAnonymous())
	w.ecr = fakeregistry.New(t, fakeregistry.WithAuthenticator(w.ecrAPI.Authenticator()))
	var dst *fakeregistry.Registry // nil: published on quay.io only
	if mirror {
		dst = w.ecr
	}
	m, err := fakeregistry.MirrorRelease(t.Context(), w.quay, dst, p)
	require.NoError(t, err)
	w.release = m.Release
	newer, err := random.Image(512, 1) // a release published after the mirror ran
	require.NoError(t, err)
	w.lagging = w.quay.Push(t, releaseRepo+":4.10.4-x86_64", newer)
	return w
}

// cli returns a cli wired to the world: the AWS configuration points the
// SDK's ECR client at the fake API with static credentials; registry
// traffic goes to the fake registries only.
func (w *world) cli(stdin string) (*cli, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	c := newCLI(strings.NewReader(stdin), &stdout, &stderr)
	c.loadAWSConfig = func(ctx context.Context, _ ...func(*config.LoadOptions) error) (aws.Config, error) {
		return aws.Config{
			Region:       "us-east-1",
			Credentials:  credentials.NewStaticCredentialsProvider("AKIAFAKESTATIC000000", testSecretKey, ""),
			BaseEndpoint: aws.String(w.ecrAPISrv.URL),
		}, nil
	}
	c.newSTS = func(aws.Config, string) callerIdentityAPI { return w.sts }
	c.transport = fakeregistry.Transport(w.quay, w.ecr)
	c.registryKeychain = authn.NewMultiKeychain() // anonymous: no docker config of the test user
	c.getenv = func(string) string { return "" }
	c.dialer = loopbackDialer
	c.lookupHost = func(_ context.Context, host string) ([]string, error) {
		if host == ecrHost {
			return []string{"127.0.0.1"}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return c, &stdout, &stderr
}

// loopbackDialer lets preflight reach 127.0.0.1 (the fake ECR API) and,
// for the well-known AWS hosts, a listener that accepts and closes, as a
// VPC endpoint would accept the connection.
func loopbackDialer(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	switch {
	case host == "127.0.0.1":
		return d.DialContext(ctx, network, addr)
	case strings.HasSuffix(host, ".amazonaws.com"):
		return d.DialContext(ctx, network, acceptingListener())
	}
	return nil, fmt.Errorf("test dialer: refusing %s", addr)
}

var acceptingListener = sync.OnceValue(func() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	return l.Addr().String()
})

// fakeSTS answers GetCallerIdentity with arn, or fails with err.
type fakeSTS struct {
	arn string
	err error
}

func (f *fakeSTS) GetCallerIdentity(context.Context, *sts.GetCallerIdentityInput, ...func(*sts.Options)) (*sts.GetCallerIdentityOutput, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &sts.GetCallerIdentityOutput{Arn: aws.String(f.arn), Account: aws.String("123456789012")}, nil
}

// requireNoSecret fails when out holds any credential the fakes issued.
func requireNoSecret(t *testing.T, out string) {
	t.Helper()
	for n := 1; n <= 20; n++ {
		require.NotContains(t, out, fakeecr.Password("us-east-1", n))
	}
	require.NotContains(t, out, testSecretKey)
	require.NotContains(t, out, "QVdTOmZha2UtZWNyLXBhc3N3b3Jk") // base64("AWS:fake-ecr-password")
}

// runCLI runs args through c and returns the exit code.
func runCLI(t *testing.T, c *cli, args ...string) int {
	t.Helper()
	return c.run(t.Context(), args)
}
