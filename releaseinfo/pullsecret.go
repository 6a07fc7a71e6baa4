package releaseinfo

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
)

// PullSecrets is a pull secret in the two forms HyperShift's ignition
// generator needs. Both are secrets; String and GoString print sizes only.
type PullSecrets struct {
	// Original is a copy of the pull secret as stored (the
	// <hcp-namespace>/pull-secret Secret). The ignition generator uses it,
	// and only it, for its hash gate (HashSimple against the NodePool token
	// secret's pull-secret-hash) and as MCO bootstrap's --pull-secret, which
	// MCO renders verbatim into the nodes' /var/lib/kubelet/config.json.
	// It never holds an ECR token, so neither do the payload and the hash.
	Original []byte `datapolicy:"secret"`
	// Effective is Original plus fresh ECR credentials, for registry access
	// only: looking the release up, resolving and extracting images. It
	// must never be hashed, stored, logged or written into a payload: its
	// tokens expire after 12 hours and change on every refresh.
	Effective []byte `datapolicy:"token"`
}

// String prints sizes only.
func (p PullSecrets) String() string {
	return "PullSecrets{Original:<" + strconv.Itoa(len(p.Original)) + " bytes> Effective:<" + strconv.Itoa(len(p.Effective)) + " bytes>}"
}

// GoString prints sizes only, for %#v.
func (p PullSecrets) GoString() string { return p.String() }

// EffectivePullSecret applies the ignition rule: it returns a copy of
// original as Original and, as Effective, original augmented with ECR
// credentials for the ECR registries among images (pullspecs or hosts; pass
// CandidateRefs to include the mirrors a policy may send pulls to). With a
// nil aug, Effective is a copy of original. original is never modified and
// the two results share no memory with it or with each other.
//
// The ignition generator must use Effective only for registry access and
// Original for its hash gate and for MCO bootstrap: the hash then stays
// stable across token rotations (no "pull secret does not match hash"
// failures, no NodePool rollouts) and no 12-hour token is baked into a
// payload or a node's config.json.
func EffectivePullSecret(ctx context.Context, aug Augmenter, original []byte, images ...string) (PullSecrets, error) {
	ps := PullSecrets{Original: bytes.Clone(original)}
	if aug == nil {
		ps.Effective = bytes.Clone(original)
		return ps, nil
	}
	eff, err := aug.Augment(ctx, original, images...)
	if err != nil {
		return PullSecrets{}, fmt.Errorf("releaseinfo: adding ECR credentials to the pull secret: %w", err)
	}
	if len(eff) > 0 && len(original) > 0 && &eff[0] == &original[0] {
		eff = bytes.Clone(eff) // an Augmenter that returns its input must not alias Original's source
	}
	ps.Effective = eff
	return ps, nil
}

// CandidateRefs returns every pullspec the policy may send pulls of images
// to (mirrors and allowed sources, in order, without repeats), to pass to
// EffectivePullSecret or an Augmenter so that the pull secret holds
// credentials for the ECR mirrors too.
func CandidateRefs(policy *mirrorpolicy.Policy, images ...string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, image := range images {
		cands, err := policy.Candidates(image)
		if err != nil {
			return nil, fmt.Errorf("releaseinfo: %w", err)
		}
		for _, c := range cands {
			if !seen[c.Ref] {
				seen[c.Ref] = true
				out = append(out, c.Ref)
			}
		}
	}
	return out, nil
}
