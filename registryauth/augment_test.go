package registryauth_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/pkg/dockerconfig"
	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

// A pull secret shaped like OpenShift's, with fields HyperShift never reads
// that must survive untouched.
const openshiftPullSecret = `{
  "auths": {
    "cloud.openshift.com": {"auth": "b3BlbnNoaWZ0LXJlbGVhc2UtZGV2K29jbV9hY2Nlc3M6c2VjcmV0LWNsb3Vk", "email": "sre@example.com"},
    "quay.io": {"auth": "b3BlbnNoaWZ0LXJlbGVhc2UtZGV2K29jbV9hY2Nlc3M6c2VjcmV0LXF1YXk=", "email": "sre@example.com"},
    "registry.redhat.io": {"auth": "dXNlcjpzZWNyZXQtcmVkaGF0", "email": "sre@example.com", "x-unknown": {"kept": true}},
    "https://123456789012.dkr.ecr.us-east-1.amazonaws.com": {"auth": "QVdTOnN0YWxlLXRva2Vu"}
  },
  "credHelpers": {"gcr.io": "gcloud"},
  "x-top-level-unknown": [1, 2, 3]
}`

func decodeAuths(t *testing.T, b []byte) map[string]map[string]any {
	t.Helper()
	var doc struct {
		Auths map[string]map[string]any `json:"auths"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	return doc.Auths
}

func TestAugment(t *testing.T) {
	t.Parallel()
	release := "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("b", 64)
	mirror := useast1 + "/ocp4/openshift4@sha256:" + strings.Repeat("b", 64)

	t.Run("When mirrors are ECR, it should add fresh entries and keep everything else", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in := []byte(openshiftPullSecret)
		orig := bytes.Clone(in)
		out, err := h.kc.Augment(context.Background(), in, release, mirror, uswest2)
		require.NoError(t, err)
		require.Equal(t, orig, in, "the input must not be modified")

		auths := decodeAuths(t, out)
		require.NotContains(t, auths, "https://"+useast1, "the stale entry must be replaced, not shadow the new one")
		for host, region := range map[string]string{useast1: "us-east-1", uswest2: "us-west-2"} {
			want := base64.StdEncoding.EncodeToString([]byte("AWS:" + fakeecr.Password(region, 1)))
			require.Equal(t, want, auths[host]["auth"], host)
		}
		require.Equal(t, map[string]any{"kept": true}, auths["registry.redhat.io"]["x-unknown"])
		require.Equal(t, "sre@example.com", auths["quay.io"]["email"])

		var top map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(out, &top))
		require.JSONEq(t, `{"gcr.io": "gcloud"}`, string(top["credHelpers"]))
		require.JSONEq(t, `[1,2,3]`, string(top["x-top-level-unknown"]))
	})

	t.Run("When called twice with the same input and tokens, it should return identical bytes", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		a, err := h.kc.Augment(context.Background(), []byte(openshiftPullSecret), mirror, uswest2)
		require.NoError(t, err)
		b, err := h.kc.Augment(context.Background(), []byte(openshiftPullSecret), uswest2, mirror, mirror)
		require.NoError(t, err)
		require.Equal(t, a, b)
	})

	t.Run("When no image is on ECR, it should return the pull secret with the same content", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		out, err := h.kc.Augment(context.Background(), []byte(openshiftPullSecret), release, "public.ecr.aws/x/y:1")
		require.NoError(t, err)
		require.JSONEq(t, openshiftPullSecret, string(out))
		require.Zero(t, h.ecr.TotalCalls())
	})

	t.Run("When the pull secret is malformed, it should fail without quoting it", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		bad := []byte(`{"auths": {"quay.io": {"auth": "c2VjcmV0LXBhc3N3b3Jk"`)
		out, err := h.kc.Augment(context.Background(), bad, mirror)
		require.Error(t, err)
		require.ErrorIs(t, err, dockerconfig.ErrMalformed)
		require.Nil(t, out)
		require.NotContains(t, err.Error(), "c2VjcmV0LXBhc3N3b3Jk")
		require.Zero(t, h.ecr.TotalCalls(), "bad input must change nothing")
	})

	t.Run("When ECR denies the token, it should fail with ErrAccessDenied and no output", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.ecr.FailNext("us-east-1", 1, fakeecr.AccessDeniedError())
		out, err := h.kc.Augment(context.Background(), []byte(openshiftPullSecret), mirror)
		h.logs.recordError(err)
		require.ErrorIs(t, err, registryauth.ErrAccessDenied)
		require.Nil(t, out)
	})

	t.Run("When a token rotates, it should never answer from an older result", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		first, err := h.kc.Augment(context.Background(), []byte(openshiftPullSecret), mirror)
		require.NoError(t, err)
		first[0] = 'X' // the caller owns the result: this must not reach the memo
		again, err := h.kc.Augment(context.Background(), []byte(openshiftPullSecret), mirror)
		require.NoError(t, err)
		require.Equal(t, byte('{'), again[0])
		h.kc.Forget(mirror)
		rotated, err := h.kc.Augment(context.Background(), []byte(openshiftPullSecret), mirror)
		require.NoError(t, err)
		want := base64.StdEncoding.EncodeToString([]byte("AWS:" + fakeecr.Password("us-east-1", 2)))
		require.Equal(t, want, decodeAuths(t, rotated)[useast1]["auth"])
		again, err = h.kc.Augment(context.Background(), []byte(openshiftPullSecret), mirror)
		require.NoError(t, err)
		require.Equal(t, rotated, again, "the result for the new token must be the one remembered")
	})

	t.Run("When the pull secret is empty, it should create one", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		out, err := h.kc.Augment(context.Background(), nil, mirror)
		require.NoError(t, err)
		require.Contains(t, decodeAuths(t, out), useast1)
	})
}

// pullSecret50 is a 50-entry pull secret, the size the Augment target is set for.
func pullSecret50() []byte {
	var b strings.Builder
	b.WriteString(`{"auths":{`)
	for i := range 50 {
		if i > 0 {
			b.WriteByte(',')
		}
		auth := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("robot$%02d:%s", i, strings.Repeat("p", 100))))
		fmt.Fprintf(&b, `"registry-%02d.example.com":{"auth":%q,"email":"someone@example.com"}`, i, auth)
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

// BenchmarkAugment50: "repeat" is HyperShift's steady state (the same pull
// secret on every reconcile, served from the memo); "new-secret" parses and
// serialises every time (the memo holds 8 results, the loop cycles 16).
func BenchmarkAugment50(b *testing.B) {
	images := []string{
		useast1 + "/ocp4/openshift4@sha256:" + strings.Repeat("c", 64),
		"quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("c", 64),
	}
	for _, distinct := range []int{1, 16} {
		name := "repeat"
		if distinct > 1 {
			name = "new-secret"
		}
		b.Run(name, func(b *testing.B) {
			kc := newBenchKeychain(b)
			secrets := make([][]byte, distinct)
			for i := range secrets {
				secrets[i] = bytes.Replace(pullSecret50(), []byte("registry-00"), []byte(fmt.Sprintf("registry-%c0", 'a'+i)), 1)
			}
			ctx := context.Background()
			if _, err := kc.Augment(ctx, secrets[0], images...); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				if _, err := kc.Augment(ctx, secrets[i%distinct], images...); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
