package benchcompare

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/sirupsen/logrus"

	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

var summaryFile = flag.String("summary", "", "print the summary table of the `go test -bench` output in this file and exit")

// The one fake ECR API every contender talks to, over HTTP, through the
// real AWS SDK: the SDK's cost (signing, serialisation, HTTP) is part of
// every measurement, as it is in production.
var (
	fakeAPI    *fakeecr.ECR
	fakeServer *httptest.Server
)

const defaultAccount = fakeecr.DefaultAccountID

func TestMain(m *testing.M) {
	flag.Parse()
	if *summaryFile != "" {
		os.Exit(summarize(*summaryFile, os.Stdout))
	}
	cleanup, err := setUp()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		os.Exit(2)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// setUp starts the fake ECR API on 127.0.0.1 and points every SDK at it
// through the environment, as an operator would point them at a VPC
// endpoint, so that ecr-login (which builds its own config per call) and
// our keychain read the same settings. HOME moves to a temporary directory:
// ecr-login's default cache (~/.ecr) and the SDK's shared files then never
// touch the user's.
func setUp() (cleanup func(), err error) {
	home, err := os.MkdirTemp("", "benchcompare-home-")
	if err != nil {
		return nil, err
	}
	fakeAPI = fakeecr.New()
	fakeServer = httptest.NewServer(registryIDEndpoint(fakeAPI.Handler()))
	for k, v := range map[string]string{
		"HOME":                        home,
		"AWS_ECR_CACHE_DIR":           home + "/.ecr",
		"AWS_CONFIG_FILE":             home + "/.aws/config",
		"AWS_SHARED_CREDENTIALS_FILE": home + "/.aws/credentials",
		"AWS_ENDPOINT_URL_ECR":        fakeServer.URL,
		"AWS_ACCESS_KEY_ID":           "AKIAIOSFODNN7EXAMPLE",
		"AWS_SECRET_ACCESS_KEY":       "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"AWS_REGION":                  "us-east-1",
		"AWS_EC2_METADATA_DISABLED":   "true",
	} {
		if err := os.Setenv(k, v); err != nil {
			return nil, err
		}
	}
	for _, k := range []string{"AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ECR_DISABLE_CACHE", "AWS_ENDPOINT_URL", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE"} {
		_ = os.Unsetenv(k)
	}
	// ecr-login logs through logrus' global logger (cache races at Info level
	// in the fan-in); keep the benchmark output readable.
	logrus.SetOutput(io.Discard)
	return func() {
		fakeServer.Close()
		_ = os.RemoveAll(home)
	}, nil
}

// registryIDEndpoint makes the fake answer like ECR for the deprecated
// registryIds input that ecr-login sends: proxyEndpoint names the requested
// registry. (Over HTTP the fake always names its default account, and
// ecr-login, which files a token under the account of proxyEndpoint, would
// then never hit its cache for any other account: an unfair miss.)
func registryIDEndpoint(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var in struct {
			RegistryIDs []string `json:"registryIds"`
		}
		if json.Unmarshal(body, &in) != nil || len(in.RegistryIDs) == 0 {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		out := bytes.Replace(rec.Body.Bytes(), []byte("https://"+defaultAccount+"."), []byte("https://"+in.RegistryIDs[0]+"."), 1)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(out)
	})
}

// awsConfig loads the SDK configuration from the environment set up above,
// as config.LoadDefaultConfig does in HyperShift's operator.
func awsConfig(tb testing.TB) aws.Config {
	tb.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

// registryHost is the ECR registry of account in region.
func registryHost(account, region string) string {
	return account + ".dkr.ecr." + region + ".amazonaws.com"
}
