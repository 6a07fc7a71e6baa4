package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
)

// policyFlags are the mirror-rule flags shared by resolve and preflight.
type policyFlags struct {
	mirrors            stringList
	tagMirrors         stringList
	overrides          stringList
	releaseMirrors     stringList
	pullThrough        stringList
	files              stringList
	neverContactSource bool
}

func (p *policyFlags) register(fs *flag.FlagSet) {
	fs.Var(&p.mirrors, "mirror", "add a digest mirror, `source=mirror`, as an ImageDigestMirrorSet does; repeat for more mirrors, tried in the order given")
	fs.Var(&p.tagMirrors, "tag-mirror", "add a tag mirror, `source=mirror`, as an ImageTagMirrorSet does; repeatable")
	fs.Var(&p.overrides, "overrides", "add digest mirrors in HyperShift's OPENSHIFT_IMG_OVERRIDES form, `src=mirror,...`; repeatable")
	fs.Var(&p.releaseMirrors, "ecr-release-mirror", "add the rules for a `repository` that 'oc adm release mirror --to' wrote, e.g. 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4; repeatable")
	fs.Var(&p.pullThrough, "pull-through-cache", "add an ECR pull-through cache, `upstream=prefix`, e.g. quay.io=123456789012.dkr.ecr.us-east-1.amazonaws.com/quay; repeatable")
	fs.Var(&p.files, "f", "read mirror rules from a YAML or JSON `file` of ImageDigestMirrorSets, ImageTagMirrorSets, ImageContentSourcePolicies or HostedClusters (spec.imageContentSources); - is stdin; repeatable")
	fs.BoolVar(&p.neverContactSource, "never-contact-source", false, "forbid pulling from the sources of the rules given by flags (mirrorSourcePolicy: NeverContactSource); files keep their own policy")
}

// policy builds the mirror policy. Every error is a usage error: the rules
// come from the command line or files the user named.
func (p *policyFlags) policy(stdin io.Reader) (*mirrorpolicy.Policy, error) {
	var rules []mirrorpolicy.Rule
	flagRules, err := p.flagRules()
	if err != nil {
		return nil, usagef("%v", err)
	}
	rules = append(rules, flagRules...)
	for _, name := range p.files {
		data, err := readInput(name, stdin)
		if err != nil {
			return nil, usagef("%v", err)
		}
		fileRules, err := rulesFromManifests(name, data)
		if err != nil {
			return nil, usagef("%v", err)
		}
		rules = append(rules, fileRules...)
	}
	policy, err := mirrorpolicy.New(rules...)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return policy, nil
}

func (p *policyFlags) flagRules() ([]mirrorpolicy.Rule, error) {
	var rules []mirrorpolicy.Rule
	// Mirrors of one source given by repeated flags form one rule, so that
	// they are tried in the order given (the policy orders mirrors of
	// separate rules lexically, as a node merges separate mirror sets).
	for _, set := range []struct {
		flag   string
		values []string
		kind   mirrorpolicy.Kind
	}{{"--mirror", p.mirrors, mirrorpolicy.DigestMirrors}, {"--tag-mirror", p.tagMirrors, mirrorpolicy.TagMirrors}} {
		bySource := map[string]int{}
		for _, v := range set.values {
			src, mirror, err := splitPair(set.flag, v, "source=mirror")
			if err != nil {
				return nil, err
			}
			if i, ok := bySource[src]; ok {
				rules[i].Mirrors = append(rules[i].Mirrors, mirror)
				continue
			}
			bySource[src] = len(rules)
			rules = append(rules, mirrorpolicy.Rule{Source: src, Mirrors: []string{mirror}, Kind: set.kind, Origin: set.flag})
		}
	}
	for _, v := range p.overrides {
		m, err := mirrorpolicy.ParseOverrides(v)
		if err != nil {
			return nil, fmt.Errorf("--overrides: %w", err)
		}
		or, err := mirrorpolicy.FromOverrides(m)
		if err != nil {
			return nil, fmt.Errorf("--overrides: %w", err)
		}
		for i := range or {
			or[i].Origin = "--overrides"
		}
		rules = append(rules, or...)
	}
	for _, repo := range p.releaseMirrors {
		rm, err := mirrorpolicy.ECRReleaseMirror(repo)
		if err != nil {
			return nil, fmt.Errorf("--ecr-release-mirror: %w", err)
		}
		rules = append(rules, rm...)
	}
	for _, v := range p.pullThrough {
		upstream, prefix, err := splitPair("--pull-through-cache", v, "upstream=prefix")
		if err != nil {
			return nil, err
		}
		if !ecrhost.IsECR(prefix) {
			return nil, fmt.Errorf("--pull-through-cache %q: %q is not on an Amazon ECR registry host", v, prefix)
		}
		r, err := mirrorpolicy.ECRPullThroughCache(upstream, prefix)
		if err != nil {
			return nil, fmt.Errorf("--pull-through-cache: %w", err)
		}
		rules = append(rules, r)
	}
	if p.neverContactSource {
		if len(rules) == 0 {
			return nil, errors.New("--never-contact-source needs a mirror rule given by a flag")
		}
		for i := range rules {
			rules[i].NeverContactSource = true
		}
	}
	return rules, nil
}

func (p *policyFlags) empty() bool {
	return len(p.mirrors)+len(p.tagMirrors)+len(p.overrides)+len(p.releaseMirrors)+len(p.pullThrough)+len(p.files) == 0
}

func splitPair(flagName, v, form string) (string, string, error) {
	a, b, ok := strings.Cut(v, "=")
	if !ok || a == "" || b == "" || strings.Contains(b, "=") {
		return "", "", fmt.Errorf("%s %q: want %s", flagName, v, form)
	}
	return strings.TrimSpace(a), strings.TrimSpace(b), nil
}

// readInput reads a named file, or stdin for "-". Read at most 16 MiB: a
// mirror configuration is a few KiB.
func readInput(name string, stdin io.Reader) ([]byte, error) {
	const limit = 16 << 20
	var r io.Reader
	if name == "-" {
		if stdin == nil {
			return nil, errors.New("-f -: no standard input")
		}
		r = stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%s: larger than %d MiB", name, limit>>20)
	}
	return data, nil
}

// aliasFlags declare CNAMEs of ECR registries: "alias=ECR host".
type aliasFlags struct{ values stringList }

func (a *aliasFlags) register(fs *flag.FlagSet) {
	fs.Var(&a.values, "alias", "declare a DNS alias (CNAME) of an ECR registry, `alias=ecr-host`, e.g. registry.example.com=123456789012.dkr.ecr.us-east-1.amazonaws.com; repeatable")
}

// aliases validates the flags into ecrhost aliases; errors are usage errors.
func (a *aliasFlags) aliases() ([]ecrhost.Alias, *ecrhost.Parser, error) {
	var out []ecrhost.Alias
	for _, v := range a.values {
		host, target, err := splitPair("--alias", v, "alias=ecr-host")
		if err != nil {
			return nil, nil, usagef("%v", err)
		}
		reg, ok := ecrhost.Parse(target)
		if !ok || reg.Public || reg.Host != strings.ToLower(target) {
			return nil, nil, usagef("--alias %q: %q is not a private Amazon ECR registry host", v, target)
		}
		out = append(out, ecrhost.Alias{Host: host, AccountID: reg.AccountID, Region: reg.Region, FIPS: reg.FIPS, DualStack: reg.DualStack})
	}
	parser, err := ecrhost.NewParser(out...)
	if err != nil {
		return nil, nil, usagef("--alias: %v", err)
	}
	return out, parser, nil
}
