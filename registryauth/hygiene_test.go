package registryauth_test

import (
	"encoding/base64"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

// logSink keeps every log line (at every verbosity) and every error a test
// saw, so that the harness can assert no secret ever reached either.
type logSink struct {
	mu     sync.Mutex
	lines  []string
	errors []string
}

func (s *logSink) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.lines = append(s.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 10})
}

func (s *logSink) recordError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errors = append(s.errors, err.Error())
}

// assertNoSecrets checks every password the fake issued, raw and in its
// base64 "AWS:<password>" form, against every line and error.
func (s *logSink) assertNoSecrets(t *testing.T, ecr *fakeecr.ECR) {
	t.Helper()
	calls := map[string]int{}
	for _, r := range ecr.Requests() {
		calls[r.Region]++
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	text := strings.Join(s.lines, "\n") + "\n" + strings.Join(s.errors, "\n")
	for region, n := range calls {
		for i := 1; i <= n; i++ {
			pw := fakeecr.Password(region, i)
			require.NotContains(t, text, pw, "a password reached a log line or an error")
			require.NotContains(t, text, base64.StdEncoding.EncodeToString([]byte("AWS:"+pw)), "an auth string reached a log line or an error")
		}
	}
}
