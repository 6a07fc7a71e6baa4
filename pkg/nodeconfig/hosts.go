package nodeconfig

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/openshift/hypershift-ecr/pkg/dockerconfig"
	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
)

// The helper's host patterns are the kubelet's matchImages globs with each
// '*' narrowed: the first label of an account form is the 12-digit account,
// any other '*' one DNS label (the region). Narrower than the kubelet, wider
// than ecrhost.Parse only in the region (a region of the wrong partition,
// or FIPS outside the US, still names a host under an AWS-owned domain
// that simply does not resolve).
const (
	accountPattern = `[0-9]{12}`
	labelPattern   = `[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?`
)

var globLabelRE = regexp.MustCompile(`^(\*|[a-z0-9]([a-z0-9-]*[a-z0-9])?)$`)

// hostPatterns returns one extended regular expression per glob, for bash's
// [[ =~ ]] (POSIX ERE) and Go's regexp alike.
func hostPatterns(globs []string) ([]string, error) {
	patterns := make([]string, 0, len(globs))
	for _, g := range globs {
		labels := strings.Split(g, ".")
		parts := make([]string, len(labels))
		for i, l := range labels {
			switch {
			case !globLabelRE.MatchString(l):
				// The table grew a glob shape this generator does not know:
				// refuse rather than emit a pattern that matches too much.
				return nil, fmt.Errorf("nodeconfig: ecrhost glob %q has label %q the helper cannot match", g, l)
			case l == "*" && i == 0:
				parts[i] = accountPattern
			case l == "*":
				parts[i] = labelPattern
			default:
				parts[i] = regexp.QuoteMeta(l)
			}
		}
		patterns = append(patterns, strings.Join(parts, `\.`))
	}
	return patterns, nil
}

// hostRegex is the helper's anchored test for an ECR registry host.
func hostRegex() (string, error) {
	patterns, err := hostPatterns(ecrhost.MatchImages())
	if err != nil {
		return "", err
	}
	return "^(" + strings.Join(patterns, "|") + ")$", nil
}

// aliasTarget is an alias host and the ECR registry host behind it.
type aliasTarget struct {
	host, target, region string
}

// aliasTargets finds, for each alias, the real ECR host the plugin must be
// asked about: the plugin takes the region from the host it is given, so it
// must see "<account>.dkr.ecr.<region>..." and never the alias. The host is
// built from the ecrhost globs and checked with ecrhost.Parse, so it follows
// the table.
func aliasTargets(p *ecrhost.Parser, aliases []ecrhost.Alias) ([]aliasTarget, error) {
	out := make([]aliasTarget, 0, len(aliases))
	for _, a := range aliases {
		r, ok := p.Parse(a.Host)
		if !ok {
			return nil, fmt.Errorf("nodeconfig: alias %s is not recognised by its own parser", a.Host)
		}
		target := ""
		for _, g := range ecrhost.MatchImages() {
			if strings.Count(g, "*") != 2 || !strings.HasPrefix(g, "*.") {
				continue
			}
			h := strings.Replace(strings.Replace(g, "*", r.AccountID, 1), "*", r.Region, 1)
			got, ok := ecrhost.Parse(h)
			if ok && got.AccountID == r.AccountID && got.Region == r.Region && got.Partition == r.Partition &&
				got.FIPS == r.FIPS && got.DualStack == r.DualStack && !got.Public {
				target = got.Host
				break
			}
		}
		if target == "" {
			return nil, fmt.Errorf("nodeconfig: alias %s: no ECR host form for account %s in %s (FIPS %t, dual-stack %t)",
				r.Host, r.AccountID, r.Region, r.FIPS, r.DualStack)
		}
		out = append(out, aliasTarget{host: r.Host, target: target, region: r.Region})
	}
	slices.SortFunc(out, func(a, b aliasTarget) int { return cmp.Compare(a.host, b.host) })
	return out, nil
}

// checkMirrors refuses a policy with a mirror the helper would not serve.
func (c *config) checkMirrors() error {
	if c.Policy == nil {
		c.warn("no mirror policy: the helper serves direct pulls from ECR hosts only")
		return nil
	}
	var errs []error
	ecr := 0
	for _, rule := range c.Policy.Rules() {
		for _, m := range rule.Mirrors {
			host, _, _ := strings.Cut(m, "/")
			if _, ok := c.parser.Parse(host); ok {
				ecr++
				continue
			}
			errs = append(errs, &MirrorError{Host: host, Mirror: m, Source: rule.Source, Origin: rule.Origin})
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if ecr == 0 {
		c.warn("the mirror policy has no mirrors: the helper serves direct pulls from ECR hosts only")
	}
	return nil
}

// checkPullSecret warns about pull-secret entries that would shadow the
// helper. containers/image (pkg/docker/config/config.go,
// getCredentialsWithHomeDir) asks the credential-helpers list in order and
// stops at the first credential; the auth-file pseudo-helper comes first,
// and inside an auth file (findCredentialsInFile) a credHelpers entry for
// the host comes before auths entries, which match the repository,
// its namespaces and then the host. So any such entry for an ECR host wins
// over the helper: a stale token there keeps failing after the helper is
// installed.
func (c *config) checkPullSecret() error {
	if len(strings.TrimSpace(string(c.PullSecret))) == 0 {
		return nil
	}
	ps, err := dockerconfig.Parse(c.PullSecret)
	if err != nil {
		return fmt.Errorf("nodeconfig: pull secret: %w", err)
	}
	for _, key := range ps.Hosts() {
		host, _, _ := strings.Cut(dockerconfig.NormalizeKey(key), "/")
		if r, ok := c.parser.Parse(host); ok && r.Host == host {
			c.warn("the pull secret has an auths entry %q for ECR registry %s: the nodes use it before the helper (auth files come first); remove it so the instance role serves %s", key, host, host)
		}
	}
	// dockerconfig keeps credHelpers but does not expose them; only the
	// keys are read here.
	var top struct {
		CredHelpers map[string]json.RawMessage `json:"credHelpers"`
	}
	if json.Unmarshal(c.PullSecret, &top) == nil {
		for _, key := range slices.Sorted(maps.Keys(top.CredHelpers)) {
			if r, ok := c.parser.Parse(key); ok && r.Host == strings.ToLower(key) {
				c.warn("the pull secret has a credHelpers entry for ECR registry %s: containers/image runs that helper instead of this one", key)
			}
		}
	}
	return nil
}
