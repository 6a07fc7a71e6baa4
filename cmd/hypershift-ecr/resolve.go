package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
	"github.com/openshift/hypershift-ecr/releaseinfo"
	"github.com/openshift/hypershift-ecr/releaseinfo/ggcrprobe"
)

func resolveCommand() *command {
	return &command{
		name:    "resolve",
		summary: "resolve a release image through mirror rules: which pullspec, and why",
		usage:   "resolve [flags] IMAGE",
		description: `
Resolve an image, usually an OpenShift release, through image mirror rules the
way a node does (path-boundary matching, most specific source, mirrors in
order, digest and tag mirrors kept apart, NeverContactSource honoured), and
check each candidate with an authenticated manifest HEAD: the first candidate
that holds the image wins. ECR mirrors are read with a token fetched in memory
with the AWS SDK's default credentials; other registries with the docker
config's credentials, if any.

Prints the pinned pullspec to use, where it comes from, why earlier candidates
were skipped, and every candidate in order. Exits 1 when no allowed candidate
holds the image.`,
		example: `hypershift-ecr resolve \
  --ecr-release-mirror 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4 \
  quay.io/openshift-release-dev/ocp-release@sha256:<digest>
hypershift-ecr resolve -f idms.yaml -o json quay.io/openshift-release-dev/ocp-release@sha256:<digest>
hypershift-ecr resolve -o pullspec --overrides "quay.io/openshift-release-dev=mirror.example.com/ocp" IMAGE`,
		setup: func(c *cli, fs *flag.FlagSet) func(context.Context, []string) error {
			var pf policyFlags
			pf.register(fs)
			var af awsFlags
			af.register(fs)
			timeout := fs.Duration("timeout", 2*time.Minute, "give up after this long")
			out := newOutputFlag(fs, "text", "text", "json", "pullspec")
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usagef("want exactly one IMAGE, got %d arguments", len(args))
				}
				return c.resolve(ctx, args[0], &pf, &af, *timeout, out.value)
			}
		},
	}
}

// resolveReport is the JSON form of a resolution.
type resolveReport struct {
	Image      string          `json:"image"`
	Pullspec   string          `json:"pullspec"`
	Digest     string          `json:"digest"`
	Mirror     bool            `json:"mirror"`
	Origin     string          `json:"origin,omitempty"`
	Skipped    []skipReport    `json:"skipped"`
	Candidates []candidateInfo `json:"candidates"`
}

type skipReport struct {
	Ref    string `json:"ref"`
	Reason string `json:"reason"`
}

type candidateInfo struct {
	Ref    string `json:"ref"`
	Mirror bool   `json:"mirror"`
	Source string `json:"source,omitempty"`
	Origin string `json:"origin,omitempty"`
}

func (c *cli) resolve(ctx context.Context, image string, pf *policyFlags, af *awsFlags, timeout time.Duration, format string) error {
	policy, err := pf.policy(c.stdin)
	if err != nil {
		return err
	}
	cands, err := policy.Candidates(image)
	if err != nil {
		if errors.Is(err, mirrorpolicy.ErrInvalidReference) {
			return usagef("%v", err)
		}
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	kc, _, err := c.keychain(ctx, af)
	if err != nil {
		return err
	}
	defer kc.Close()

	prober := ggcrprobe.New(c.registryAuth(kc), ggcrprobe.WithTransport(c.transport))
	resolver, err := releaseinfo.NewResolver(policy, prober, releaseinfo.WithNoun("image"))
	if err != nil {
		return err
	}
	res, err := resolver.Resolve(ctx, image)
	if err != nil {
		return err
	}

	switch format {
	case "pullspec":
		_, err = fmt.Fprintln(c.stdout, res.Pullspec)
		return err
	case "json":
		rep := resolveReport{
			Image: res.Image, Pullspec: res.Pullspec, Digest: res.Digest(), Mirror: res.Candidate.Mirror,
			Origin: res.Candidate.Origin, Skipped: []skipReport{}, Candidates: candidateInfos(cands),
		}
		for _, s := range res.Skipped {
			rep.Skipped = append(rep.Skipped, skipReport{Ref: s.Ref, Reason: s.Reason})
		}
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	default:
		if _, err := io.WriteString(c.stdout, res.Explain()); err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, "candidates:")
		return writeCandidates(c.stdout, "  ", cands)
	}
}

func candidateInfos(cands []mirrorpolicy.Candidate) []candidateInfo {
	out := make([]candidateInfo, 0, len(cands))
	for _, cd := range cands {
		out = append(out, candidateInfo{Ref: cd.Ref, Mirror: cd.Mirror, Source: cd.Source, Origin: cd.Origin})
	}
	return out
}

// writeCandidates prints the candidates in order, one per line:
// number, pullspec, mirror or source, and the rule that produced it.
func writeCandidates(w io.Writer, indent string, cands []mirrorpolicy.Candidate) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, cd := range cands {
		if cd.Mirror {
			fmt.Fprintf(tw, "%s%d. %s\tmirror\t%s\n", indent, i+1, cd.Ref, cd.Origin)
		} else {
			// No origin column: a trailing tab would pad the line with spaces.
			fmt.Fprintf(tw, "%s%d. %s\tsource\n", indent, i+1, cd.Ref)
		}
	}
	return tw.Flush()
}
