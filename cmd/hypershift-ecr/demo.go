package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"golang.org/x/sync/errgroup"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/openshift/hypershift-ecr/pkg/dockerconfig"
	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/ggcrauth"
	"github.com/openshift/hypershift-ecr/releaseinfo"
	"github.com/openshift/hypershift-ecr/releaseinfo/ggcrprobe"
	"github.com/openshift/hypershift-ecr/releaseinfo/remote"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/fakeimds"
	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

// The demo's world: real pullspecs, fake servers.
const (
	demoECRHost       = fakeregistry.DefaultHost // 123456789012.dkr.ecr.us-east-1.amazonaws.com
	demoRegion        = "us-east-1"
	demoMirrorRepo    = demoECRHost + "/ocp4/openshift4"
	demoReleaseRepo   = "quay.io/openshift-release-dev/ocp-release"
	demoComponentRepo = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"
	demoVersion       = "4.10.3"
	demoRotations     = 2
)

// demoStart is the fake clock's start: the printed expiries do not depend
// on when the demo runs.
var demoStart = time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)

// demoPullSecret is the pull secret as HyperShift stores it: no ECR entry.
// Its credentials are made up; quay.io here is anonymous anyway.
var demoPullSecret = []byte(`{"auths":{"quay.io":{"auth":"` +
	base64.StdEncoding.EncodeToString([]byte("openshift-release-dev+demo:not-a-real-robot-token")) +
	`"},"registry.redhat.io":{"auth":"` +
	base64.StdEncoding.EncodeToString([]byte("demo:not-a-real-password")) + `"}}}`)

// demoShownComponents are the components whose pullspecs the demo prints.
var demoShownComponents = []string{"cluster-version-operator", "machine-config-operator", "hyperkube", "etcd"}

func demoCommand() *command {
	return &command{
		name:    "demo",
		summary: "the whole story, offline: mirror a release to ECR, resolve it, rotate tokens",
		usage:   "demo",
		description: `
Show, with no AWS account and no network, how HyperShift pulls an OpenShift
release from an Amazon ECR mirror with in-memory ECR credentials. Everything
runs in this process on 127.0.0.1:

  - a fake EC2 metadata service (IMDSv2): the real AWS SDK, through
    config.LoadDefaultConfig, gets the instance role's credentials from it;
  - a fake ECR API, called by the real SDK client over HTTP;
  - "quay.io" (anonymous) and 123456789012.dkr.ecr.us-east-1.amazonaws.com,
    which accepts only tokens the fake ECR API issued and that have not expired.

The demo publishes release 4.10.3 (real release metadata, 146 components) on
quay.io, mirrors it into <ecr>/ocp4/openshift4 as 'oc adm release mirror' does,
prints the mirror candidates, which one was chosen and why, the release
metadata read from ECR, and then rotates the ECR token twice on a fake clock:
the hash of the pull secret HyperShift stores stays the same while the
credential used to reach ECR changes. It ends with the checks it made and
exits 1 if one failed. Progress goes to stderr.`,
		example: `hypershift-ecr demo
make demo`,
		setup: func(c *cli, fs *flag.FlagSet) func(context.Context, []string) error {
			return func(ctx context.Context, args []string) error {
				if err := noArgs(args); err != nil {
					return err
				}
				return c.demo(ctx)
			}
		},
	}
}

// demoWorld is everything the demo starts; close stops it.
type demoWorld struct {
	clk       *clocktesting.FakeClock
	imds      *fakeimds.IMDS
	imdsSrv   *httptest.Server
	ecrAPI    *fakeecr.ECR
	ecrAPISrv *httptest.Server
	quay      *fakeregistry.Registry
	ecr       *fakeregistry.Registry
	kc        *registryauth.Keychain
	tr        http.RoundTripper
}

func (w *demoWorld) close() {
	if w.kc != nil {
		_ = w.kc.Close()
	}
	for _, r := range []*fakeregistry.Registry{w.quay, w.ecr} {
		if r != nil {
			r.Close()
		}
	}
	if w.ecrAPISrv != nil {
		w.ecrAPISrv.Close()
	}
	if w.imds != nil {
		w.imds.Close() // releases held requests before the server waits for them
	}
	if w.imdsSrv != nil {
		w.imdsSrv.Close()
	}
}

// demoRotation is one row of the rotation table.
type demoRotation struct {
	at          time.Time
	expires     time.Time
	calls       int
	hash        string // HashSimple of the pull secret HyperShift stores
	fingerprint string // of the ECR auth in the effective pull secret
	oldRejected string // what ECR answered the previous effective secret
	release     string // what the decorated lookup read
}

func (c *cli) demo(ctx context.Context) error {
	began := time.Now()
	progress := func(format string, args ...any) {
		fmt.Fprintf(c.stderr, "demo: "+format+"\n", args...)
	}
	var out bytes.Buffer // printed at the end, once checked for secrets
	w := &demoWorld{clk: clocktesting.NewFakeClock(demoStart)}
	defer w.close()

	// --- Setup: IMDS, the ECR API, the AWS SDK, two registries, one keychain.
	progress("starting the fake EC2 metadata service, ECR API and registries on 127.0.0.1")
	w.imds = fakeimds.New(fakeimds.WithRegion(demoRegion))
	w.imdsSrv = httptest.NewServer(w.imds.Handler())
	// The fake ECR API refuses any key but the instance role's: proof that
	// the SDK's credentials came from the metadata service.
	w.ecrAPI = fakeecr.New(fakeecr.WithClock(w.clk), fakeecr.WithRequiredAccessKeyID(fakeimds.AccessKeyID(1)))
	w.ecrAPISrv = httptest.NewServer(w.ecrAPI.Handler())

	imdsClient := imds.New(imds.Options{Endpoint: w.imdsSrv.URL, ClientEnableState: imds.ClientEnabled})
	// Load options rather than environment variables: the process's
	// environment stays untouched, and AWS credentials a user may have in
	// it cannot take the instance role's place.
	cfg, err := c.loadAWSConfig(ctx,
		config.WithEC2IMDSRegion(func(o *config.UseEC2IMDSRegion) { o.Client = imdsClient }),
		config.WithCredentialsProvider(ec2rolecreds.New(func(o *ec2rolecreds.Options) { o.Client = imdsClient })),
	)
	if err != nil {
		return fmt.Errorf("loading the AWS configuration: %w", err)
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("instance role credentials from the fake IMDS: %w", err)
	}

	if w.quay, err = fakeregistry.Start(fakeregistry.WithHost("quay.io"), fakeregistry.WithAnonymous()); err != nil {
		return err
	}
	if w.ecr, err = fakeregistry.Start(fakeregistry.WithAuthenticator(w.ecrAPI.Authenticator()), fakeregistry.WithClock(w.clk)); err != nil {
		return err
	}
	w.tr = fakeregistry.Transport(w.quay, w.ecr)
	w.kc, err = registryauth.NewKeychain(
		registryauth.WithAWSConfig(cfg, registryauth.WithEndpoint(w.ecrAPISrv.URL)),
		registryauth.WithClock(w.clk),
	)
	if err != nil {
		return err
	}
	auth := authn.NewMultiKeychain(ggcrauth.NewKeychain(w.kc))
	prober := ggcrprobe.New(auth, ggcrprobe.WithTransport(w.tr))

	fmt.Fprintln(&out, "hypershift-ecr demo: HyperShift reads an OpenShift release from an Amazon ECR mirror with")
	fmt.Fprintln(&out, "ECR credentials held in memory. Everything runs in this process on 127.0.0.1: no AWS, no network.")
	section(&out, "SETUP", "")
	kv(&out,
		"EC2 metadata", fmt.Sprintf("fake IMDSv2 at %s, instance role %s", w.imdsSrv.URL, fakeimds.DefaultRoleName),
		"AWS SDK", fmt.Sprintf("config.LoadDefaultConfig: region %s, credentials %s", orNone(cfg.Region), creds.Source),
		"ECR API", fmt.Sprintf("fake at %s, called by the SDK's ECR client (GetAuthorizationToken)", w.ecrAPISrv.URL),
		"quay.io", "in-process registry, anonymous pulls",
		"ECR registry", demoECRHost+", accepts only unexpired tokens of the ECR API",
		"pull secret", "as HyperShift stores it: quay.io and registry.redhat.io entries, none for ECR",
		"clock", "fake, from "+demoStart.Format(time.RFC3339)+"; each rotation steps it 12h",
	)

	// --- Publish the release on quay.io and mirror it to ECR.
	progress("building release %s and its components from the 4.10 fixtures", demoVersion)
	payload, err := releasepayload.Build(
		releasepayload.WithVersion(demoVersion),
		releasepayload.WithComponents(demoComponentRepo),
		releasepayload.WithBaseLayers(4<<20, 3<<20, 1<<20),
	)
	if err != nil {
		return err
	}
	progress("pushing it to quay.io")
	where := []fakeregistry.MirrorOption{
		fakeregistry.PublishAs(demoReleaseRepo + ":" + demoVersion + "-x86_64"),
		fakeregistry.MirrorTo(demoMirrorRepo),
	}
	published, err := fakeregistry.MirrorRelease(ctx, w.quay, nil, payload, where...) // not mirrored yet
	if err != nil {
		return err
	}
	release, components := published.Release, published.Components

	rules, err := mirrorpolicy.ECRReleaseMirror(demoMirrorRepo)
	if err != nil {
		return err
	}
	policy, err := mirrorpolicy.New(rules...)
	if err != nil {
		return err
	}
	cands, err := policy.Candidates(release)
	if err != nil {
		return err
	}

	// Before the mirror has it, the same policy falls back to quay.io and says why.
	progress("resolving before mirroring")
	early, err := releaseinfo.NewResolver(policy, prober, releaseinfo.WithClock(w.clk))
	if err != nil {
		return err
	}
	before, err := early.Resolve(ctx, release)
	if err != nil {
		return fmt.Errorf("resolving before mirroring: %w", err)
	}

	progress("mirroring the release and %d components to %s", len(components), demoMirrorRepo)
	if _, err := fakeregistry.MirrorRelease(ctx, w.quay, w.ecr, payload, where...); err != nil {
		return err
	}
	w.ecr.Reset()
	w.quay.Reset()

	section(&out, "RELEASE", "published on quay.io, mirrored to ECR")
	kv(&out,
		"published", demoReleaseRepo+":"+demoVersion+"-x86_64",
		"", "= "+shortDigest(release),
		"components", fmt.Sprintf("%d images in %s", len(components), demoComponentRepo),
		"mirrored", fmt.Sprintf("release + %d components -> %s", len(components), demoMirrorRepo),
		"", "one repository, digests kept, as 'oc adm release mirror --to' does",
	)

	section(&out, "MIRROR POLICY", "mirrorpolicy.ECRReleaseMirror: the rules oc prints, node semantics")
	fmt.Fprintf(&out, "  candidates for %s, in order:\n", shortDigest(release))
	shortCands := make([]mirrorpolicy.Candidate, len(cands))
	for i, cd := range cands {
		cd.Ref = shortDigest(cd.Ref)
		cd.Origin, _, _ = strings.Cut(cd.Origin, "/") // the repository is in the pullspec already
		shortCands[i] = cd
	}
	if err := writeCandidates(&out, "    ", shortCands); err != nil {
		return err
	}

	// --- Resolve through the mirror and read the release from ECR.
	progress("resolving through the mirror and reading the release metadata from ECR")
	resolver, err := releaseinfo.NewResolver(policy, prober, releaseinfo.WithClock(w.clk))
	if err != nil {
		return err
	}
	res, err := resolver.Resolve(ctx, release)
	if err != nil {
		return err
	}
	section(&out, "RESOLUTION", "releaseinfo.Resolver: a manifest HEAD per candidate; the first that holds it wins")
	fmt.Fprintf(&out, "  before mirroring: %s (%s)\n", shortDigest(before.Pullspec), fromWhat(before))
	for _, s := range before.Skipped {
		fmt.Fprintf(&out, "    skipped %s: %s\n", shortDigest(s.Ref), s.Reason)
	}
	fmt.Fprintf(&out, "  after mirroring:\n")
	for _, line := range strings.Split(strings.TrimSpace(res.Explain()), "\n") {
		fmt.Fprintf(&out, "    %s\n", line)
	}

	reader, err := remote.NewReader(
		remote.WithKeychain(auth),
		remote.WithTransport(w.tr),
		remote.WithResolver(func(ctx context.Context, image string) (string, error) {
			r, err := resolver.Resolve(ctx, image)
			if err != nil {
				return "", err
			}
			return r.Pullspec, nil
		}),
		remote.WithComponentPolicy(policy),
	)
	if err != nil {
		return err
	}
	rel, err := reader.Lookup(ctx, release)
	if err != nil {
		return err
	}
	rewritten := 0
	var onECR []string
	for _, tag := range sortedKeys(rel.ComponentImages) {
		if p := rel.ComponentImages[tag]; strings.HasPrefix(p, demoMirrorRepo+"@") {
			rewritten++
			onECR = append(onECR, p)
		}
	}
	var present atomic.Int64
	if err := forEach(ctx, onECR, 8, func(ctx context.Context, ref string) error {
		if _, err := prober.Probe(ctx, ref); err == nil {
			present.Add(1)
		}
		return nil
	}); err != nil {
		return err
	}
	size, layers, err := imageSize(payload)
	if err != nil {
		return err
	}
	coreos := "none"
	if rel.StreamMetadata != nil {
		coreos = rel.StreamMetadata.Stream
	}
	section(&out, "RELEASE METADATA", "releaseinfo/remote, read from ECR with WithComponentPolicy")
	kv(&out,
		"read", shortDigest(rel.Pullspec),
		"version", rel.ImageStream.Name,
		"CoreOS stream", coreos,
		"components", fmt.Sprintf("%d of %d rewritten to %s, %d present there (HEAD)",
			rewritten, len(rel.ComponentImages), demoMirrorRepo, present.Load()),
	)
	tw := tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
	for _, name := range demoShownComponents {
		if p, ok := rel.ComponentImages[name]; ok {
			fmt.Fprintf(tw, "    %s\t%s\n", name, shortDigest(p))
		}
	}
	_ = tw.Flush()
	kv(&out, "bytes read", fmt.Sprintf("%s of a %s image (%.1f%%): %d of %d layers, %d round trips",
		humanBytes(rel.Stats.BytesRead), humanBytes(size), 100*float64(rel.Stats.BytesRead)/float64(size),
		rel.Stats.LayersRead, layers, rel.Stats.RoundTrips))

	// --- Token rotations, through HyperShift's seams.
	progress("rotating the ECR token %d times (fake clock, 12h steps)", demoRotations)
	plain, err := remote.NewReader(remote.WithTransport(w.tr), remote.WithComponentPolicy(policy))
	if err != nil {
		return err
	}
	provider := &releaseinfo.Decorator[*remote.Release]{Delegate: plain.LookupWithPullSecret, Resolver: resolver, Keychain: w.kc}
	candidateRefs, err := releaseinfo.CandidateRefs(policy, release)
	if err != nil {
		return err
	}
	var rows []demoRotation
	var prevEffective []byte
	for i := 0; i <= demoRotations; i++ {
		if i > 0 {
			w.clk.Step(12 * time.Hour)
		}
		row := demoRotation{at: w.clk.Now()}
		cred, err := w.kc.Credential(ctx, demoECRHost)
		if err != nil {
			return err
		}
		row.expires = cred.ExpiresAt
		secrets, err := releaseinfo.EffectivePullSecret(ctx, w.kc, demoPullSecret, candidateRefs...)
		if err != nil {
			return err
		}
		row.hash = hashSimple(secrets.Original)
		if row.fingerprint, err = authFingerprint(secrets.Effective, demoECRHost); err != nil {
			return err
		}
		if prevEffective != nil {
			_, err := plain.LookupWithPullSecret(ctx, res.Pullspec, prevEffective)
			var terr *transport.Error
			switch {
			case errors.As(err, &terr):
				row.oldRejected = fmt.Sprintf("refused (%d)", terr.StatusCode)
			case err == nil:
				row.oldRejected = "still accepted"
			default:
				row.oldRejected = "failed"
			}
		}
		prevEffective = secrets.Effective
		got, err := provider.Lookup(ctx, release, demoPullSecret)
		if err != nil {
			return fmt.Errorf("looking the release up after %s: %w", row.at.Sub(demoStart), err)
		}
		from := "quay.io"
		if strings.HasPrefix(got.Pullspec, demoMirrorRepo+"@") {
			from = "ECR"
		}
		row.release = got.ImageStream.Name + " from " + from
		row.calls = w.ecrAPI.Calls(demoRegion)
		rows = append(rows, row)
	}
	section(&out, "TOKEN ROTATION", "the stored pull secret is hashed; registry calls get an effective copy")
	tw = tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  clock\ttoken expires\tECR calls\tpull-secret hash\tECR auth (sha256)\tprevious auth\trelease\n")
	for i, r := range rows {
		at, hash, fp, old := r.at.Format("2006-01-02 15:04"), r.hash, r.fingerprint, "-"
		if i > 0 {
			at = "+" + shortDuration(r.at.Sub(demoStart))
			hash += sameOr(rows[0].hash == r.hash, " same", " CHANGED")
			fp += sameOr(rows[i-1].fingerprint != r.fingerprint, " new", " SAME")
			old = r.oldRejected
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\t%s\t%s\n", at, r.expires.UTC().Format("2006-01-02 15:04Z"), r.calls, hash, fp, old, r.release)
	}
	_ = tw.Flush()

	// --- What was shown, checked.
	hashStable, authRotated, oldRefused, fromECR := true, true, true, true
	for i, r := range rows {
		hashStable = hashStable && r.hash == rows[0].hash
		fromECR = fromECR && strings.HasSuffix(r.release, " from ECR")
		if i > 0 {
			authRotated = authRotated && r.fingerprint != rows[i-1].fingerprint
			oldRefused = oldRefused && strings.HasPrefix(r.oldRejected, "refused (401)")
		}
	}
	stats := w.ecr.Stats()
	calls := w.ecrAPI.Calls(demoRegion)
	leaked := leaksSecret(out.Bytes(), calls)
	checks := []struct {
		ok   bool
		text string
	}{
		{res.Candidate.Mirror && strings.HasPrefix(res.Pullspec, demoMirrorRepo+"@") && res.Digest() == digestOf(release),
			"the release resolved to the ECR mirror, pinned to the digest published on quay.io"},
		{rewritten == len(rel.ComponentImages) && int(present.Load()) == rewritten && rewritten > 0,
			fmt.Sprintf("%d/%d component images rewritten to the ECR mirror and present there", present.Load(), len(rel.ComponentImages))},
		{hashStable, fmt.Sprintf("pull-secret hash %s unchanged across %d rotations: no NodePool rollout, no ignition hash mismatch", rows[0].hash, demoRotations)},
		{authRotated && oldRefused && fromECR, "each rotation put a new ECR auth in the effective secret; ECR refused the expired one; the release kept resolving to ECR"},
		{calls == demoRotations+1, fmt.Sprintf("%d GetAuthorizationToken calls for %d hours of lookups: one per token", calls, 12*demoRotations)},
		{stats.S3WithAuthorization == 0 && stats.S3BlobGet > 0, fmt.Sprintf("no Authorization header followed a blob redirect to S3 (%d blob downloads)", stats.S3BlobGet)},
		{!leaked && !bytes.Contains(demoPullSecret, []byte(demoECRHost)), "no ECR token in the stored pull secret or in this output"},
	}
	section(&out, "CHECKS", "")
	failed := 0
	for _, ck := range checks {
		mark := "ok  "
		if !ck.ok {
			mark, failed = "FAIL", failed+1
		}
		fmt.Fprintf(&out, "  %s  %s\n", mark, ck.text)
	}
	fmt.Fprintf(&out, "\ndone in %s\n", time.Since(began).Round(100*time.Millisecond))
	if leaksSecret(out.Bytes(), calls) {
		return errors.New("refusing to print the report: it contains an ECR password")
	}
	if _, err := c.stdout.Write(out.Bytes()); err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{code: exitFailure, err: fmt.Errorf("%d of %d checks failed", failed, len(checks))}
	}
	return nil
}

// hashSimple is HyperShift's HashSimple (support/util): FNV-1a 32 of
// fmt.Sprintf("%v", o), as the ignition server's pull-secret hash gate and
// the NodePool config hash compute it.
func hashSimple(o any) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(fmt.Sprintf("%v", o)))
	return fmt.Sprintf("%08x", h.Sum32())
}

// authFingerprint identifies the credential for host in a pull secret
// without revealing it: the first 8 hex digits of the SHA-256 of its auth.
func authFingerprint(pullSecret []byte, host string) (string, error) {
	cfg, err := dockerconfig.Parse(pullSecret)
	if err != nil {
		return "", err
	}
	e, ok := cfg.Lookup(host)
	if !ok {
		return "", fmt.Errorf("the effective pull secret has no entry for %s", host)
	}
	sum := sha256.Sum256([]byte(e.Username + ":" + e.Password))
	return hex.EncodeToString(sum[:4]), nil
}

// leaksSecret reports whether out holds any password the fake ECR API
// issued, raw or in its base64 "auth" form.
func leaksSecret(out []byte, calls int) bool {
	for n := 1; n <= calls+1; n++ {
		pw := fakeecr.Password(demoRegion, n)
		if bytes.Contains(out, []byte(pw)) || bytes.Contains(out, []byte(base64.StdEncoding.EncodeToString([]byte("AWS:"+pw)))) {
			return true
		}
	}
	return bytes.Contains(out, []byte(fakeimds.SecretAccessKey(1)))
}

func imageSize(p *releasepayload.Payload) (size int64, layers int, err error) {
	m, err := p.Image.Manifest()
	if err != nil {
		return 0, 0, err
	}
	raw, err := p.Image.RawManifest()
	if err != nil {
		return 0, 0, err
	}
	size = int64(len(raw)) + m.Config.Size
	for _, l := range m.Layers {
		size += l.Size
	}
	return size, len(m.Layers), nil
}

// forEach runs fn for every item, at most limit at a time.
func forEach(ctx context.Context, items []string, limit int, fn func(context.Context, string) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for _, it := range items {
		g.Go(func() error { return fn(ctx, it) })
	}
	return g.Wait()
}

func section(w io.Writer, title, subtitle string) {
	if subtitle != "" {
		title += "   " + subtitle
	}
	fmt.Fprintf(w, "\n%s\n", title)
}

// kv prints aligned "key  value" rows from alternating keys and values.
func kv(w io.Writer, pairs ...string) {
	tw := tabwriter.NewWriter(w, 18, 0, 2, ' ', 0)
	for i := 0; i+1 < len(pairs); i += 2 {
		fmt.Fprintf(tw, "  %s\t%s\n", pairs[i], pairs[i+1])
	}
	_ = tw.Flush()
}

func fromWhat(r *releaseinfo.Resolution) string {
	if r.Candidate.Mirror {
		return "mirror"
	}
	return "source"
}

// shortDigest abbreviates the digest of a pullspec to 12 hex digits.
func shortDigest(ref string) string {
	i := strings.Index(ref, "@sha256:")
	if i < 0 || len(ref) < i+len("@sha256:")+12 {
		return ref
	}
	return ref[:i+len("@sha256:")+12] + "…"
}

func digestOf(ref string) string {
	_, d, _ := strings.Cut(ref, "@")
	return d
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func sameOr(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
