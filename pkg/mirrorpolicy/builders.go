package mirrorpolicy

import (
	"fmt"
	"slices"
	"sort"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
)

// The builders below turn API objects into Rules. Like runtime-utils'
// addMirrorSet they skip an entry with no mirror other than its source
// (and ignore that entry's mirrorSourcePolicy): the API allows it and a
// node treats it as absent. Every kept Rule is validated as New would,
// so a bad entry is reported with its Origin.

// FromImageContentSources converts HostedCluster.spec.imageContentSources,
// which the control-plane-operator renders into the ImageDigestMirrorSet
// "cluster" of the guest's nodes: DigestMirrors rules, source always
// allowed. Origin is "HostedCluster.spec.imageContentSources[i]".
func FromImageContentSources(srcs []hyperv1.ImageContentSource) ([]Rule, error) {
	var rules []Rule
	for i, s := range srcs {
		origin := fmt.Sprintf("HostedCluster.spec.imageContentSources[%d]", i)
		r, ok, err := buildRule(origin, s.Source, s.Mirrors, DigestMirrors, false)
		if err != nil {
			return nil, err
		}
		if ok {
			rules = append(rules, r)
		}
	}
	return rules, nil
}

// FromImageDigestMirrorSets converts ImageDigestMirrorSets into
// DigestMirrors rules, honouring mirrorSourcePolicy. Origin is
// "ImageDigestMirrorSet/<name>".
func FromImageDigestMirrorSets(sets ...configv1.ImageDigestMirrorSet) ([]Rule, error) {
	var rules []Rule
	for _, set := range sets {
		origin := "ImageDigestMirrorSet/" + set.Name
		for _, m := range set.Spec.ImageDigestMirrors {
			r, ok, err := buildMirrorSetRule(origin, m.Source, m.Mirrors, m.MirrorSourcePolicy, DigestMirrors)
			if err != nil {
				return nil, err
			}
			if ok {
				rules = append(rules, r)
			}
		}
	}
	return rules, nil
}

// FromImageTagMirrorSets converts ImageTagMirrorSets into TagMirrors
// rules, honouring mirrorSourcePolicy. Origin is
// "ImageTagMirrorSet/<name>".
func FromImageTagMirrorSets(sets ...configv1.ImageTagMirrorSet) ([]Rule, error) {
	var rules []Rule
	for _, set := range sets {
		origin := "ImageTagMirrorSet/" + set.Name
		for _, m := range set.Spec.ImageTagMirrors {
			r, ok, err := buildMirrorSetRule(origin, m.Source, m.Mirrors, m.MirrorSourcePolicy, TagMirrors)
			if err != nil {
				return nil, err
			}
			if ok {
				rules = append(rules, r)
			}
		}
	}
	return rules, nil
}

// FromImageContentSourcePolicies converts the deprecated
// ImageContentSourcePolicy into DigestMirrors rules; ICSP has no
// mirrorSourcePolicy, so the source stays allowed. Origin is
// "ImageContentSourcePolicy/<name>".
func FromImageContentSourcePolicies(ps ...operatorv1alpha1.ImageContentSourcePolicy) ([]Rule, error) {
	var rules []Rule
	for _, p := range ps {
		origin := "ImageContentSourcePolicy/" + p.Name
		for _, m := range p.Spec.RepositoryDigestMirrors {
			r, ok, err := buildRule(origin, m.Source, m.Mirrors, DigestMirrors, false)
			if err != nil {
				return nil, err
			}
			if ok {
				rules = append(rules, r)
			}
		}
	}
	return rules, nil
}

// overridesOrigin is the Origin of rules made by FromOverrides.
const overridesOrigin = "OpenShiftImageRegistryOverrides"

// FromOverrides converts HyperShift's source -> mirrors map (from
// GetOpenShiftImageRegistryOverrides or OPENSHIFT_IMG_OVERRIDES) into one
// rule per source, sorted by source; a mirror repeated for a source is
// kept once, at its first position, and a source with no real mirror is
// skipped.
//
// The rules are DigestMirrors: the map is built from the management
// cluster's ImageDigestMirrorSets and ImageContentSourcePolicies, which a
// node applies to digest references only. HyperShift's own decorator also
// applies them to tag pulls; we do not, so control-plane lookups resolve
// the way the nodes will. Add a TagMirrors or AllMirrors rule to mirror
// tags on purpose. The map carries no mirrorSourcePolicy, so sources stay
// allowed. Origin is "OpenShiftImageRegistryOverrides".
func FromOverrides(m map[string][]string) ([]Rule, error) {
	sources := make([]string, 0, len(m))
	for s := range m {
		sources = append(sources, s)
	}
	sort.Strings(sources)
	var rules []Rule
	for _, s := range sources {
		var mirrors []string
		for _, mirror := range m[s] {
			if !slices.Contains(mirrors, mirror) {
				mirrors = append(mirrors, mirror)
			}
		}
		r, ok, err := buildRule(overridesOrigin, s, mirrors, DigestMirrors, false)
		if err != nil {
			return nil, err
		}
		if ok {
			rules = append(rules, r)
		}
	}
	return rules, nil
}

func buildMirrorSetRule(origin, source string, mirrors []configv1.ImageMirror, policy configv1.MirrorSourcePolicy, kind Kind) (Rule, bool, error) {
	switch policy {
	case "", configv1.AllowContactingSource, configv1.NeverContactSource:
	default:
		return Rule{}, false, &RuleError{Origin: origin, Source: source, Reason: fmt.Sprintf("unknown mirrorSourcePolicy %q", policy)}
	}
	ms := make([]string, len(mirrors))
	for i, m := range mirrors {
		ms[i] = string(m)
	}
	return buildRule(origin, source, ms, kind, policy == configv1.NeverContactSource)
}

// buildRule returns ok=false for an entry a node ignores.
func buildRule(origin, source string, mirrors []string, kind Kind, never bool) (Rule, bool, error) {
	real := false
	for _, m := range mirrors {
		real = real || m != source
	}
	if !real {
		return Rule{}, false, nil
	}
	r := Rule{Source: source, Mirrors: slices.Clone(mirrors), Kind: kind, NeverContactSource: never, Origin: origin}
	if _, err := validateRule(r, origin); err != nil {
		return Rule{}, false, err
	}
	return r, true, nil
}

// ECRPullThroughCache returns the rule for an Amazon ECR pull-through
// cache: images under upstream are served by ecrPrefix (registry host plus
// the rule's ecrRepositoryPrefix), so with upstream "quay.io" and prefix
// "123456789012.dkr.ecr.us-east-1.amazonaws.com/quay",
// quay.io/org/repo@sha256:... becomes
// 123456789012.dkr.ecr.us-east-1.amazonaws.com/quay/org/repo@sha256:....
// A cache serves tags as well as digests, so the Kind is AllMirrors.
//
// ECR names Docker Hub "registry-1.docker.io"; images are named
// "docker.io/...", so that upstream (and "index.docker.io") becomes
// "docker.io" and docker.io/library/nginx maps to <prefix>/library/nginx,
// the layout ECR uses. Whether ecrPrefix really is an ECR host is not
// checked here. Origin is "ECRPullThroughCache/<ecrPrefix>".
func ECRPullThroughCache(upstream, ecrPrefix string) (Rule, error) {
	switch upstream {
	case "registry-1.docker.io", "index.docker.io":
		upstream = "docker.io"
	}
	r := Rule{Source: upstream, Mirrors: []string{ecrPrefix}, Kind: AllMirrors, Origin: "ECRPullThroughCache/" + ecrPrefix}
	if _, err := validateRule(r, r.Origin); err != nil {
		return Rule{}, err
	}
	return r, nil
}

// Release repositories that `oc adm release mirror` copies.
const (
	releaseSource   = "quay.io/openshift-release-dev/ocp-release"
	componentSource = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"
)

// ECRReleaseMirror returns the rules `oc adm release mirror --to=<mirrorRepo>`
// prints: the release repository and the component repository both map to
// the single repository mirrorRepo (for example
// "123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4"). They are
// DigestMirrors rules, like the ImageDigestMirrorSet oc prints: releases and
// their components are referenced by digest. mirrorRepo must name a
// repository, not a bare host. Origin is "ECRReleaseMirror/<mirrorRepo>".
func ECRReleaseMirror(mirrorRepo string) ([]Rule, error) {
	origin := "ECRReleaseMirror/" + mirrorRepo
	if reason := checkLocation(mirrorRepo); reason == "" && hostOf(mirrorRepo) == mirrorRepo {
		return nil, &RuleError{Origin: origin, Source: releaseSource, Reason: fmt.Sprintf("mirror %q is a bare registry host; oc adm release mirror needs a repository", mirrorRepo)}
	}
	var rules []Rule
	for _, src := range []string{releaseSource, componentSource} {
		r := Rule{Source: src, Mirrors: []string{mirrorRepo}, Kind: DigestMirrors, Origin: origin}
		if _, err := validateRule(r, origin); err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return rules, nil
}
