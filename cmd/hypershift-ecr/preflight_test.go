package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/pkg/preflight"
)

func TestPreflight(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		mirrored   bool
		args       []string
		wantCode   int
		wantText   []string
		wantFailed string // the failed check, for JSON
		wantStderr string
	}{
		{
			name:     "When the release and its components are in the mirror, it should pass every check and exit 0",
			mirrored: true, args: []string{"--ecr-release-mirror", mirrorRepo, "--never-contact-source"},
			wantText: []string{"PASS  get-authorization-token", "PASS  release-in-mirror", "PASS  components-in-mirror"},
		},
		{
			name:     "When the mirror lacks the release, it should print the report and exit 1",
			args:     []string{"--ecr-release-mirror", mirrorRepo, "--never-contact-source"},
			wantCode: exitFailure, wantText: []string{"FAIL  release-in-mirror", "oc adm release mirror"}, wantFailed: preflight.CheckReleaseInMirror,
		},
		{
			name:     "When the rules send the release to no ECR registry, it should be a usage error",
			args:     []string{"--mirror", releaseRepo + "=mirror.example.com/ocp"},
			wantCode: exitUsage, wantStderr: "hypershift-ecr preflight: ",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, tc.mirrored)
			for _, format := range []string{"text", "json"} {
				c, stdout, stderr := w.cli("")
				args := append([]string{"preflight", "--release", w.release, "-o", format, "--timeout", "5s"}, tc.args...)
				code := runCLI(t, c, args...)
				require.Equal(t, tc.wantCode, code, "stdout: %s\nstderr: %s", stdout, stderr)
				requireNoSecret(t, stdout.String()+stderr.String())
				if tc.wantCode == exitUsage {
					require.Empty(t, stdout.String())
					require.Equal(t, 1, strings.Count(stderr.String(), "\n"), stderr.String())
					require.Contains(t, stderr.String(), tc.wantStderr)
					continue
				}
				if format == "text" {
					for _, want := range tc.wantText {
						require.Contains(t, stdout.String(), want)
					}
					continue
				}
				var rep struct {
					OK     bool              `json:"ok"`
					Checks []preflight.Check `json:"checks"`
				}
				require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), stdout.String())
				require.Equal(t, tc.wantCode == exitOK, rep.OK)
				for _, ck := range rep.Checks {
					if ck.Name == tc.wantFailed {
						require.Equal(t, preflight.StatusFail, ck.Status)
					} else {
						require.NotEqual(t, preflight.StatusFail, ck.Status, "%s: %s", ck.Name, ck.Detail)
					}
				}
			}
		})
	}
}
