package main

import (
	"bytes"
	"encoding/base64"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/fakeimds"
)

// TestDemo runs the README's first command in-process and checks what it
// claims against what it printed.
func TestDemo(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	begin := time.Now()
	code := run(t.Context(), []string{"demo"}, strings.NewReader(""), &stdout, &stderr)
	elapsed := time.Since(begin)
	out := stdout.String()
	t.Logf("demo output:\n%s", out)
	require.Equal(t, exitOK, code, "stderr: %s", stderr.String())
	require.Less(t, elapsed, 45*time.Second, "the demo must finish well under a minute, even with -race")

	sections := demoSections(out)
	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"When the demo runs, it should print progress to stderr only", func(t *testing.T) {
			for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
				require.True(t, strings.HasPrefix(line, "demo: "), line)
			}
			require.NotRegexp(t, `(?m)^demo: `, out)
		}},
		{"When the release is resolved, it should choose the ECR mirror, pinned to the published digest", func(t *testing.T) {
			res := sections["RESOLUTION"]
			require.Contains(t, res, "pullspec: "+mirrorRepo+"@sha256:")
			require.Contains(t, res, "from:     mirror (ECRReleaseMirror/"+mirrorRepo+")")
			published := regexp.MustCompile(`= (quay\.io/\S+@sha256:[0-9a-f]{12})`).FindStringSubmatch(sections["RELEASE"])
			require.NotNil(t, published)
			digest := strings.TrimSuffix(strings.TrimPrefix(published[1], releaseRepo+"@"), "…")
			require.Contains(t, res, "pullspec: "+mirrorRepo+"@"+digest)
			require.Contains(t, res, "before mirroring: "+releaseRepo+"@"+digest, "before mirroring, the source served it")
			require.Contains(t, res, "manifest unknown")
		}},
		{"When the candidates are listed, it should put the ECR mirror first and quay.io last", func(t *testing.T) {
			pol := sections["MIRROR POLICY"]
			i, j := strings.Index(pol, "1. "+mirrorRepo+"@sha256:"), strings.Index(pol, "2. "+releaseRepo+"@sha256:")
			require.True(t, i >= 0 && j > i, pol)
		}},
		{"When the release metadata is read, it should rewrite every component image to the ECR host", func(t *testing.T) {
			meta := sections["RELEASE METADATA"]
			require.Regexp(t, `(?m)^  version\s+4\.10\.3$`, meta)
			require.Regexp(t, `(?m)^  read\s+`+regexp.QuoteMeta(mirrorRepo)+`@sha256:`, meta)
			require.Regexp(t, `components\s+146 of 146 rewritten to `+regexp.QuoteMeta(mirrorRepo)+`, 146 present there`, meta)
			for _, name := range demoShownComponents {
				require.Regexp(t, `(?m)^\s+`+regexp.QuoteMeta(name)+`\s+`+regexp.QuoteMeta(mirrorRepo)+`@sha256:[0-9a-f]{12}…$`, meta)
			}
			require.Regexp(t, `bytes read\s+[0-9.]+ KiB of a [0-9.]+ MiB image`, meta)
		}},
		{"When the token rotates twice, it should keep the pull-secret hash and change the ECR auth", func(t *testing.T) {
			rows := rotationRows(t, sections["TOKEN ROTATION"])
			require.Len(t, rows, 1+demoRotations)
			for i, r := range rows {
				require.Equal(t, rows[0].hash, r.hash, "HashSimple of the stored pull secret never changes")
				require.Equal(t, hashSimple(demoPullSecret), r.hash)
				require.Equal(t, "4.10.3 from ECR", r.release)
				if i > 0 {
					require.NotEqual(t, rows[i-1].fingerprint, r.fingerprint, "a new ECR auth at each rotation")
					require.NotEqual(t, rows[i-1].expires, r.expires, "a new expiry at each rotation")
					require.Equal(t, "refused (401)", r.previous, "the expired token no longer works")
				}
			}
			require.Equal(t, "2026-08-01 12:00Z", rows[0].expires)
			require.Equal(t, "2026-08-02 12:00Z", rows[2].expires)
		}},
		{"When the demo ends, it should report every check as ok", func(t *testing.T) {
			n := 0
			for _, line := range strings.Split(sections["CHECKS"], "\n") {
				if strings.HasPrefix(line, "  ") {
					require.True(t, strings.HasPrefix(line, "  ok  "), line)
					n++
				}
			}
			require.GreaterOrEqual(t, n, 5)
			require.Regexp(t, `(?m)^done in \S+$`, sections["CHECKS"])
		}},
		{"When anything is printed, it should never hold a token, a password or a secret key", func(t *testing.T) {
			all := out + stderr.String()
			for n := 1; n <= 10; n++ {
				pw := fakeecr.Password(demoRegion, n)
				require.NotContains(t, all, pw)
				require.NotContains(t, all, base64.StdEncoding.EncodeToString([]byte("AWS:"+pw)))
			}
			require.NotContains(t, all, "fake-ecr-password")
			require.NotContains(t, all, fakeimds.SecretAccessKey(1))
			require.NotContains(t, all, fakeimds.SessionToken(1))
			require.NotContains(t, all, "not-a-real", "the stored pull secret's content is never printed")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.check)
	}
}

// demoSections splits the demo's output at its upper-case section titles.
func demoSections(out string) map[string]string {
	sections := map[string]string{}
	title := ""
	for _, line := range strings.Split(out, "\n") {
		if m := regexp.MustCompile(`^([A-Z][A-Z ]+[A-Z])(\s{3}.*)?$`).FindStringSubmatch(line); m != nil {
			title = m[1]
			continue
		}
		if title != "" {
			sections[title] += line + "\n"
		}
	}
	return sections
}

type rotationRow struct{ clock, expires, calls, hash, fingerprint, previous, release string }

func rotationRows(t *testing.T, table string) []rotationRow {
	t.Helper()
	var rows []rotationRow
	sep := regexp.MustCompile(`\s{2,}`)
	for _, line := range strings.Split(strings.TrimRight(table, "\n"), "\n") {
		cells := sep.Split(strings.TrimSpace(line), -1)
		if len(cells) == 0 || cells[0] == "" || cells[0] == "clock" {
			continue
		}
		require.Len(t, cells, 7, line)
		rows = append(rows, rotationRow{
			clock: cells[0], expires: cells[1], calls: cells[2],
			hash:        strings.Fields(cells[3])[0],
			fingerprint: strings.Fields(cells[4])[0],
			previous:    cells[5], release: cells[6],
		})
	}
	return rows
}
