package preflight

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/distribution/reference"
	"golang.org/x/sync/errgroup"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/releaseinfo"
	"github.com/openshift/hypershift-ecr/releaseinfo/remote"
)

// checkToken asks the keychain for the mirror's token, exactly as a pull
// would. The token itself is never looked at beyond its expiry.
func (p *plan) checkToken(ctx context.Context, _ *Report) Check {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	cred, err := p.cfg.Keychain.Credential(ctx, p.reg.Host)
	if err == nil {
		return Check{Name: CheckAuthorizationToken, Status: StatusPass,
			Detail: "token for " + p.reg.Host + " valid until " + cred.ExpiresAt.UTC().Format(time.RFC3339)}
	}
	c := Check{Name: CheckAuthorizationToken, Status: StatusFail, Detail: err.Error(), Err: err}
	var te *registryauth.TokenError
	switch {
	case errors.As(err, &te):
		// The hint gets its own line: keep it out of the detail.
		short := *te
		short.Hint = ""
		c.Detail, c.Hint = short.Error(), te.Hint
	case errors.Is(err, context.DeadlineExceeded):
		c.Detail = "no token for " + p.reg.Host + " within " + p.cfg.Timeout.String()
		c.Hint = "the ECR API did not answer: check " + CheckAPIEndpoint + " and that the keychain uses the same endpoint"
	}
	return c
}

// checkRelease looks for the release in the ECR candidates of the policy,
// with an authenticated manifest HEAD, and pins it by digest. Candidates
// off ECR (quay.io) are never contacted: from a zero-egress cluster they
// are unreachable, and what matters is whether ECR holds the release.
func (p *plan) checkRelease(ctx context.Context, rep *Report) Check {
	var skipped []releaseinfo.Skip
	for _, ref := range p.candidates {
		pctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
		digest, err := p.prober.Probe(pctx, ref)
		cancel()
		if err == nil {
			var pinned string
			if pinned, err = pin(ref, digest); err == nil {
				p.pinned, rep.Pullspec = pinned, pinned
				return p.releaseFound(ref, pinned)
			}
		}
		skipped = append(skipped, releaseinfo.Skip{Ref: ref, Reason: reason(ref, err), Err: err})
		if ctx.Err() != nil {
			break
		}
	}
	nm := &releaseinfo.NotMirroredError{Noun: "release", Image: p.cfg.Release,
		SourceAllowed: p.policy.SourceAllowed(p.cfg.Release), Skipped: skipped}
	nm.Source, nm.SourceHost = sourceOf(p.cfg.Release)
	for _, ref := range p.candidates {
		if r := repository(ref); !slices.Contains(nm.Mirrors, r) && r != nm.Source {
			nm.Mirrors = append(nm.Mirrors, r)
		}
	}
	c := Check{Name: CheckReleaseInMirror, Status: StatusFail, Detail: nm.Error(), Err: nm}
	if len(nm.Mirrors) == 0 { // the release is itself on ECR
		c.Detail = "release " + p.cfg.Release + " not found: " + skipped[0].Reason
	}
	first := skipped[0].Err
	var te *registryauth.TokenError
	switch {
	case errors.Is(first, releaseinfo.ErrManifestUnknown) && p.tagOnDigestMirror:
		c.Hint = "the policy mirrors this release by digest only: give the release by digest (`oc adm release info " +
			p.cfg.Release + "` prints it, from a host with internet access)"
	case errors.Is(first, releaseinfo.ErrManifestUnknown):
		c.Hint = "copy it into the mirror: oc adm release mirror --from=" + p.cfg.Release + " --to=" + p.mirrorRepo +
			" (new releases reach quay.io before their mirror)"
	case errors.Is(first, releaseinfo.ErrUnauthorized):
		c.Hint = "ECR answers 403 when the repository does not exist or the identity may not pull from it: check that " +
			p.mirrorRepo + " exists and that its repository policy or the identity's IAM policy allows ecr:BatchGetImage and ecr:GetDownloadUrlForLayer"
	case errors.As(first, &te):
		c.Hint = te.Hint
	default:
		c.Hint = "cannot reach the registry: in a private VPC create the interface endpoint " + p.vpcService("ecr.dkr") + " with private DNS enabled"
	}
	return c
}

func (p *plan) releaseFound(ref, pinned string) Check {
	c := Check{Name: CheckReleaseInMirror, Status: StatusPass, Detail: "found as " + pinned}
	if p.tagOnDigestMirror {
		// `oc adm release mirror` configures digest mirrors only, and a
		// node never sends a tag pull to a digest mirror.
		source, host := sourceOf(p.cfg.Release)
		c.Status = StatusWarn
		c.Detail = "tag " + ref[strings.LastIndexByte(ref, ':')+1:] + " found as " + pinned +
			", but the policy mirrors this release by digest only: pulls by tag go to " + host
		c.Hint = "give the release by digest: " + source + "@" + pinned[strings.IndexByte(pinned, '@')+1:]
	}
	return c
}

// checkComponents reads the release metadata from the mirror and checks
// that every component image is there, where a node will look for it.
func (p *plan) checkComponents(ctx context.Context, rep *Report) Check {
	c := Check{Name: CheckComponentsInMirror}
	reader, err := remote.NewReader(remote.WithKeychain(p.auth), remote.WithTransport(p.transport),
		remote.WithComponentPolicy(p.policy), remote.WithPlatform(p.platform))
	if err != nil {
		c.Status, c.Detail, c.Err = StatusFail, err.Error(), err
		return c
	}
	p.progressf("%s: reading the release metadata of %s\n", CheckComponentsInMirror, p.pinned)
	rctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	rel, err := reader.Lookup(rctx, p.pinned)
	cancel()
	if err != nil {
		c.Status, c.Detail, c.Err = StatusFail, "cannot read the release metadata: "+err.Error(), err
		var re *remote.Error
		switch {
		case errors.Is(err, remote.ErrReleaseMetadataMissing):
			c.Hint = p.pinned + " is not an OpenShift release image"
		case errors.As(err, &re) && re.Hint != "":
			c.Hint = re.Hint
		default:
			c.Hint = "layers are downloaded from S3 by redirect: check " + CheckS3LayerBucket + " and the S3 gateway endpoint's policy"
		}
		return c
	}

	var refs []string
	for _, ref := range rel.ComponentImages {
		if !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	slices.Sort(refs)
	rep.Components = len(refs)
	res := p.headAll(ctx, refs)

	var repos, offECR []string
	var firstErr error
	for i, ref := range refs {
		switch r := res[i]; {
		case r.offECR:
			offECR = append(offECR, ref)
			rep.Missing = append(rep.Missing, ref)
		case r.err == nil:
			if repo := repository(ref); !slices.Contains(repos, repo) {
				repos = append(repos, repo)
			}
		case errors.Is(r.err, releaseinfo.ErrManifestUnknown), errors.Is(r.err, releaseinfo.ErrUnauthorized):
			rep.Missing = append(rep.Missing, ref)
		default:
			rep.Unchecked = append(rep.Unchecked, ref)
			if firstErr == nil {
				firstErr = r.err
			}
		}
	}

	if len(rep.Missing) == 0 && len(rep.Unchecked) == 0 {
		c.Status = StatusPass
		c.Detail = "all " + strconv.Itoa(len(refs)) + " component images are in " + describeRepos(repos)
		return c
	}
	c.Status = StatusFail
	var parts, hints []string
	if n := len(rep.Missing); n > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d component images are not in the mirror", n, len(refs)))
		c.Err = fmt.Errorf("%d component images of %s: %w", n, p.pinned, releaseinfo.ErrNotMirrored)
	}
	if n := len(offECR); n > 0 {
		parts = append(parts, fmt.Sprintf("%d sent off ECR by the policy (e.g. %s)", n, offECR[0]))
		hints = append(hints, "add a mirror rule for "+repository(offECR[0]))
	}
	if n := len(rep.Missing) - len(offECR); n > 0 {
		hints = append(hints, "copy the release again: oc adm release mirror --from="+p.cfg.Release+" --to="+p.mirrorRepo+
			" (an interrupted or filtered copy leaves components behind)")
	}
	if n := len(rep.Unchecked); n > 0 {
		parts = append(parts, fmt.Sprintf("%d could not be checked: %v", n, firstErr))
		hints = append(hints, "retry; if it persists, check the registry endpoint ("+p.vpcService("ecr.dkr")+")")
		if c.Err == nil {
			c.Err = firstErr
		}
	}
	c.Detail = strings.Join(parts, "; ")
	c.Hint = strings.Join(hints, "; ")
	return c
}

type headResult struct {
	err    error
	offECR bool
}

// headAll checks refs with at most Concurrency manifest HEADs in flight
// and reports progress. One HEAD per component is what a node's pull
// starts with; the layers themselves are not downloaded.
func (p *plan) headAll(ctx context.Context, refs []string) []headResult {
	res := make([]headResult, len(refs))
	prog := &progress{p: p, total: len(refs)}
	var g errgroup.Group
	g.SetLimit(p.cfg.Concurrency)
	for i, ref := range refs {
		if reg, ok := ecrhost.Parse(ref); !ok || reg.Public {
			res[i].offECR = true
			prog.step()
			continue
		}
		g.Go(func() error {
			pctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
			defer cancel()
			_, res[i].err = p.prober.Probe(pctx, ref)
			prog.step()
			return nil
		})
	}
	_ = g.Wait()
	return res
}

// progress writes "checked n/total" at most once a second, and when done.
type progress struct {
	p     *plan
	total int
	mu    sync.Mutex
	done  int
	last  time.Time
}

const progressInterval = time.Second

func (g *progress) step() {
	if g.p.cfg.Progress == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.done++
	if now := time.Now(); g.done == g.total || now.Sub(g.last) >= progressInterval {
		g.last = now
		g.p.progressf("%s: checked %d/%d\n", CheckComponentsInMirror, g.done, g.total)
	}
}

func (p *plan) progressf(format string, args ...any) {
	if p.cfg.Progress == nil {
		return
	}
	p.progressMu.Lock()
	defer p.progressMu.Unlock()
	_, _ = fmt.Fprintf(p.cfg.Progress, format, args...)
}

func describeRepos(repos []string) string {
	if len(repos) <= 3 {
		return strings.Join(repos, ", ")
	}
	return strconv.Itoa(len(repos)) + " repositories on " + hostOf(repos[0])
}

// reason is the short explanation of a failed probe, worded as
// releaseinfo's Resolver words it, for NotMirroredError's message.
func reason(ref string, err error) string {
	switch {
	case errors.Is(err, releaseinfo.ErrManifestUnknown):
		return "manifest unknown"
	case errors.Is(err, releaseinfo.ErrUnauthorized):
		if ecrhost.IsECR(ref) {
			return "unauthorized (on ECR: no such repository, or not readable)"
		}
		return "unauthorized"
	default:
		return "unreachable: " + err.Error()
	}
}

// pin returns <repository>@<digest> for the probed ref, refusing a digest
// reference the registry answered with another digest.
func pin(ref, digest string) (string, error) {
	if _, want, ok := strings.Cut(ref, "@"); ok {
		if digest != "" && digest != want {
			return "", fmt.Errorf("registry reported digest %s for %s", digest, ref)
		}
		return ref, nil
	}
	if !strings.HasPrefix(digest, "sha256:") && !strings.HasPrefix(digest, "sha512:") {
		return "", fmt.Errorf("registry reported no digest for %s", ref)
	}
	return repository(ref) + "@" + digest, nil
}

// sourceOf returns the normalised repository and registry host of image.
func sourceOf(image string) (repo, host string) {
	if _, name, ok := splitTag(image); ok {
		return name, hostOf(name)
	}
	repo = repository(image)
	if named, err := reference.ParseNormalizedNamed(image); err == nil {
		repo = named.Name()
	}
	return repo, hostOf(repo)
}
