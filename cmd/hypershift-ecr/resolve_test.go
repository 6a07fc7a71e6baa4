package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const idmsYAML = `# what 'oc adm release mirror' prints, as an ImageDigestMirrorSet
apiVersion: config.openshift.io/v1
kind: ImageDigestMirrorSet
metadata:
  name: ocp4
spec:
  imageDigestMirrors:
  - source: quay.io/openshift-release-dev/ocp-release
    mirrors:
    - 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4
  - source: quay.io/openshift-release-dev/ocp-v4.0-art-dev
    mirrors:
    - 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4
---
apiVersion: config.openshift.io/v1
kind: ImageTagMirrorSet
metadata:
  name: tags
spec:
  imageTagMirrors:
  - source: quay.io/openshift-release-dev/ocp-release
    mirrors:
    - 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4
    mirrorSourcePolicy: NeverContactSource
`

const icspJSON = `{"apiVersion":"operator.openshift.io/v1alpha1","kind":"ImageContentSourcePolicy",
 "metadata":{"name":"release"},
 "spec":{"repositoryDigestMirrors":[{"source":"quay.io/openshift-release-dev/ocp-release",
   "mirrors":["123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4"]}]}}`

const hostedClusterYAML = `apiVersion: hypershift.openshift.io/v1beta1
kind: HostedCluster
metadata:
  name: example
  namespace: clusters
spec:
  release:
    image: quay.io/openshift-release-dev/ocp-release:4.10.3-x86_64
  imageContentSources:
  - source: quay.io/openshift-release-dev/ocp-release
    mirrors:
    - 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4
`

const idmsNeverContactSource = `{"apiVersion":"config.openshift.io/v1","kind":"List","items":[
 {"apiVersion":"config.openshift.io/v1","kind":"ImageDigestMirrorSet","metadata":{"name":"zero-egress"},
  "spec":{"imageDigestMirrors":[{"source":"quay.io/openshift-release-dev/ocp-release",
   "mirrors":["123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4"],"mirrorSourcePolicy":"NeverContactSource"}]}}]}`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestResolve(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  func(t *testing.T, w *world) []string
		stdin string
		image func(w *world) string
		// wantMirror: resolved on the ECR mirror; else on quay.io.
		wantMirror bool
		wantOrigin string
		wantSkip   string
		wantCode   int
		wantStderr string
		// sourceBlocked: a rule for the source says NeverContactSource.
		sourceBlocked bool
	}{
		{
			name:       "When --ecr-release-mirror names the mirror holding the release, it should pick the mirror",
			args:       func(*testing.T, *world) []string { return []string{"--ecr-release-mirror", mirrorRepo} },
			wantMirror: true, wantOrigin: "ECRReleaseMirror/" + mirrorRepo,
		},
		{
			name:       "When --mirror is given, it should pick the mirror and name the flag as the origin",
			args:       func(*testing.T, *world) []string { return []string{"--mirror", releaseRepo + "=" + mirrorRepo} },
			wantMirror: true, wantOrigin: "--mirror",
		},
		{
			name: "When --overrides lists a missing mirror first, it should skip it and say why",
			args: func(*testing.T, *world) []string {
				return []string{"--overrides", "quay.io/openshift-release-dev=" + ecrHost + "/stale,quay.io/openshift-release-dev=" + ecrHost + "/ocp4/openshift4"}
			},
			// --overrides maps the namespace: ocp-release lands in <mirror>/ocp-release.
			wantCode: exitOK, wantSkip: ecrHost + "/stale/ocp-release@",
		},
		{
			name:       "When -f holds an IDMS and an ITMS, it should pick the mirror from the IDMS and block the source as the ITMS says",
			args:       func(t *testing.T, _ *world) []string { return []string{"-f", writeFile(t, "mirrors.yaml", idmsYAML)} },
			wantMirror: true, wantOrigin: "ImageDigestMirrorSet/ocp4", sourceBlocked: true,
		},
		{
			name:       "When -f - reads an ICSP as JSON on stdin, it should pick the mirror",
			args:       func(*testing.T, *world) []string { return []string{"-f", "-"} },
			stdin:      icspJSON,
			wantMirror: true, wantOrigin: "ImageContentSourcePolicy/release",
		},
		{
			name: "When -f holds a HostedCluster, it should use its imageContentSources",
			args: func(t *testing.T, _ *world) []string {
				return []string{"-f", writeFile(t, "hc.yaml", hostedClusterYAML)}
			},
			wantMirror: true, wantOrigin: "HostedCluster/example",
		},
		{
			name:     "When the mirror lags and the source is allowed, it should fall back to quay.io and say why",
			args:     func(*testing.T, *world) []string { return []string{"--ecr-release-mirror", mirrorRepo} },
			image:    func(w *world) string { return w.lagging },
			wantSkip: mirrorRepo + "@", wantCode: exitOK,
		},
		{
			name: "When the mirror lags and a List's IDMS forbids the source, it should exit 1 naming the mirror",
			args: func(t *testing.T, _ *world) []string {
				return []string{"-f", writeFile(t, "list.json", idmsNeverContactSource)}
			},
			image:    func(w *world) string { return w.lagging },
			wantCode: exitFailure, wantStderr: "image " + "quay.io/openshift-release-dev/ocp-release@sha256:",
		},
		{
			name: "When --never-contact-source is given and the mirror lags, it should exit 1 saying quay.io is forbidden",
			args: func(*testing.T, *world) []string {
				return []string{"--ecr-release-mirror", mirrorRepo, "--never-contact-source"}
			},
			image:    func(w *world) string { return w.lagging },
			wantCode: exitFailure, wantStderr: "the policy forbids contacting quay.io",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, true)
			image := w.release
			if tc.image != nil {
				image = tc.image(w)
			}
			_, digest, _ := strings.Cut(image, "@")
			for _, format := range []string{"text", "json"} {
				c, stdout, stderr := w.cli(tc.stdin)
				args := append([]string{"resolve", "-o", format}, tc.args(t, w)...)
				code := runCLI(t, c, append(args, image)...)
				require.Equal(t, tc.wantCode, code, stderr.String())
				requireNoSecret(t, stdout.String()+stderr.String())
				if tc.wantCode != exitOK {
					require.Empty(t, stdout.String())
					require.Equal(t, 1, strings.Count(stderr.String(), "\n"), stderr.String())
					require.Contains(t, stderr.String(), tc.wantStderr)
					continue
				}
				require.Empty(t, stderr.String())
				if format == "text" {
					require.Contains(t, stdout.String(), "image:    "+image+"\n")
					require.Contains(t, stdout.String(), "candidates:\n  1. ")
					if tc.wantSkip != "" {
						require.Contains(t, stdout.String(), "skipped:  "+tc.wantSkip)
					}
					continue
				}
				var rep resolveReport
				require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep))
				require.Equal(t, image, rep.Image)
				require.Equal(t, digest, rep.Digest, "pinned to the requested digest")
				require.Equal(t, tc.wantMirror, rep.Mirror && strings.HasPrefix(rep.Pullspec, mirrorRepo+"@"), rep.Pullspec)
				require.Contains(t, rep.Origin, tc.wantOrigin)
				require.NotEmpty(t, rep.Candidates)
				if tc.sourceBlocked {
					require.Len(t, rep.Candidates, 1, "NeverContactSource leaves the source out")
				} else {
					require.Equal(t, image, rep.Candidates[len(rep.Candidates)-1].Ref, "the source comes last")
				}
				if tc.wantSkip != "" {
					require.NotEmpty(t, rep.Skipped)
					require.Contains(t, rep.Skipped[0].Ref, tc.wantSkip)
				}
			}
		})
	}

	t.Run("When -o pullspec is given, it should print only the pinned pullspec", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, true)
		c, stdout, stderr := w.cli("")
		require.Equal(t, exitOK, runCLI(t, c, "resolve", w.release, "-o", "pullspec", "--ecr-release-mirror", mirrorRepo), stderr.String())
		_, digest, _ := strings.Cut(w.release, "@")
		require.Equal(t, mirrorRepo+"@"+digest+"\n", stdout.String())
		require.Equal(t, 1, w.ecrAPI.Calls("us-east-1"), "one token for the lookup")
		require.Zero(t, w.quay.Stats().ManifestHead, "quay.io is not asked when the mirror has it")
	})
}
