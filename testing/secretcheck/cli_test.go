package secretcheck_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/secretcheck"
)

// The hypershift-ecr command is a main package, so its output is checked
// the way an operator sees it: the built binary, run against a fake ECR
// API and a fake STS on 127.0.0.1 with static credentials in its
// environment.

const (
	ecrHost       = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	testSecretKey = "fake-static-secret-access-key-0000"
)

var cliBinary struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// buildCLI builds cmd/hypershift-ecr once per test binary.
func buildCLI(t *testing.T) string {
	t.Helper()
	cliBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "secretcheck-cli-")
		if err != nil {
			cliBinary.err = err
			return
		}
		cliBinary.path = filepath.Join(dir, "hypershift-ecr")
		args := []string{"build", "-buildvcs=false", "-o", cliBinary.path}
		if raceEnabled {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, "github.com/openshift/hypershift-ecr/cmd/hypershift-ecr")...)
		cliBinary.out, cliBinary.err = cmd.CombinedOutput()
	})
	require.NoError(t, cliBinary.err, "go build: %s", cliBinary.out)
	return cliBinary.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cliBinary.path != "" {
		_ = os.RemoveAll(filepath.Dir(cliBinary.path))
	}
	os.Exit(code)
}

const callerIdentity = `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <GetCallerIdentityResult>
    <Arn>arn:aws:sts::123456789012:assumed-role/hypershift-operator/i-0123456789abcdef0</Arn>
    <UserId>AROAFAKEFAKEFAKEFAKE:i-0123456789abcdef0</UserId>
    <Account>123456789012</Account>
  </GetCallerIdentityResult>
  <ResponseMetadata><RequestId>01234567-89ab-cdef-0123-456789abcdef</RequestId></ResponseMetadata>
</GetCallerIdentityResponse>`

// TestCLIOutputHygiene runs hypershift-ecr through its ECR failure paths
// (and one success) and fails if any credential reaches its output.
func TestCLIOutputHygiene(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the hypershift-ecr binary")
	}
	t.Parallel()
	bin := buildCLI(t)
	request := `{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderRequest","image":"` + ecrHost + `/ocp4/openshift4:4.18.0-x86_64"}`
	tests := []struct {
		name       string
		fault      error
		args       []string
		stdin      string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{
			name:       "When ECR denies the identity, credentials should exit 1 naming the IAM action and print no secret",
			fault:      fakeecr.AccessDeniedError(),
			args:       []string{"credentials", ecrHost},
			wantCode:   1,
			wantStdout: "access denied",
			wantStderr: "ecr:GetAuthorizationToken",
		},
		{
			name:       "When ECR throttles, credentials -o json should exit 1 with the error in JSON and print no secret",
			fault:      fakeecr.ThrottlingError(),
			args:       []string{"credentials", "-o", "json", ecrHost},
			wantCode:   1,
			wantStdout: `"tokenError"`,
		},
		{
			name:       "When a token is fetched, credentials should print its expiry and never the token",
			args:       []string{"credentials", ecrHost + "/ocp4/openshift4"},
			wantStdout: "expires",
		},
		{
			name:       "When ECR denies the identity, credential-provider should write nothing to stdout and no secret to stderr",
			fault:      fakeecr.AccessDeniedError(),
			args:       []string{"credential-provider"},
			stdin:      request,
			wantCode:   1,
			wantStderr: "access denied",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc := secretcheck.New(t)
			sc.Watch(testSecretKey)
			api := fakeecr.New()
			sc.WatchFunc(func() []string { return []string{fakeecr.Password("us-east-1", 1), fakeecr.Password("us-east-1", 2)} })
			if tc.fault != nil {
				api.SetError("us-east-1", tc.fault)
			}
			apiSrv := httptest.NewServer(api.Handler())
			t.Cleanup(apiSrv.Close)
			stsSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/xml")
				_, _ = io.WriteString(w, callerIdentity)
			}))
			t.Cleanup(stsSrv.Close)

			home := t.TempDir()
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, tc.args...)
			// Nothing from the developer's environment: no profile, no IMDS,
			// every AWS endpoint on 127.0.0.1.
			cmd.Env = []string{
				"PATH=" + os.Getenv("PATH"), "HOME=" + home,
				"AWS_CONFIG_FILE=" + filepath.Join(home, "config"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "credentials"),
				"AWS_EC2_METADATA_DISABLED=true", "AWS_REGION=us-east-1",
				"AWS_ACCESS_KEY_ID=AKIAFAKESTATIC000000", "AWS_SECRET_ACCESS_KEY=" + testSecretKey,
				"AWS_ENDPOINT_URL_ECR=" + apiSrv.URL, "AWS_ENDPOINT_URL_STS=" + stsSrv.URL,
				"AWS_MAX_ATTEMPTS=1",
				"GORACE=atexit_sleep_ms=0", // a race build otherwise sleeps 1s at exit
			}
			cmd.Stdin = strings.NewReader(tc.stdin)
			var stdout, stderr bytes.Buffer
			cmd.Stdout = io.MultiWriter(&stdout, sc.Writer("stdout of hypershift-ecr "+tc.args[0]))
			cmd.Stderr = io.MultiWriter(&stderr, sc.Writer("stderr of hypershift-ecr "+tc.args[0]))
			err := cmd.Run()

			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tc.wantCode, code, "stdout:\n%s\nstderr:\n%s", &stdout, &stderr)
			require.Contains(t, stdout.String(), tc.wantStdout)
			require.Contains(t, stderr.String(), tc.wantStderr)
			if tc.args[0] == "credential-provider" {
				require.Empty(t, stdout.String(), "a failed plugin writes nothing the kubelet could parse")
			}
			require.Equal(t, 1, api.TotalCalls(), "one GetAuthorizationToken call, signed with the static key")
		})
	}
}
