package fakeregistry

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	"golang.org/x/sync/errgroup"

	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

// Mirrored says where MirrorRelease put a release and its components.
type Mirrored struct {
	// Release is the digest pullspec of the release on the source registry, the pullspec
	// HyperShift is asked for: "quay.io/openshift-release-dev/ocp-release@sha256:..." by default.
	Release string
	// Mirror is the digest pullspec of the release in the mirror repository (the same digest as
	// Release), or "" when no mirror registry was given.
	Mirror string
	// Components maps each component (image-references tag name) to its digest pullspec in the
	// mirror repository, or on the source registry when no mirror registry was given. It is
	// empty unless the payload was built WithComponents.
	Components map[string]string
}

// MirrorOption changes where MirrorRelease publishes or mirrors a release.
type MirrorOption func(*mirrorConfig)

type mirrorConfig struct {
	publishAs, mirrorTo string
}

// PublishAs sets the tag reference under which MirrorRelease publishes the release on the
// source registry. The default is "<src host>/openshift-release-dev/ocp-release:<version>-x86_64"
// ("-multi" for a manifest list), the version being the payload's image-references name.
func PublishAs(ref string) MirrorOption { return func(c *mirrorConfig) { c.publishAs = ref } }

// MirrorTo sets the repository, without tag or digest, that MirrorRelease mirrors into. The
// default is "<dst host>/ocp4/openshift4".
func MirrorTo(repository string) MirrorOption {
	return func(c *mirrorConfig) { c.mirrorTo = repository }
}

// MirrorRelease sets up the world a mirrored OpenShift release lives in. It publishes p on src
// (normally an anonymous "quay.io" Registry): the release under a tag (see PublishAs) and each
// of its components (p.Components, built by releasepayload.WithComponents) at the pullspec its
// image-references tag names. Then, unless dst is nil, it mirrors them into one repository of
// dst (see MirrorTo) as `oc adm release mirror --to=<repository>` does: byte for byte, so
// digests are kept, the release tagged "<repository>:<release tag>" and each component
// "<repository>:<release tag>-<component>".
//
// Pass dst nil to publish only, as a release is before the mirror has run; calling again with
// dst then mirrors it (publishing again stores nothing new). Like Push and Copy, it bypasses
// authentication, faults and counters, so it works for tests (with t.Context()) and for
// programs alike.
func MirrorRelease(ctx context.Context, src, dst *Registry, p *releasepayload.Payload, opts ...MirrorOption) (Mirrored, error) {
	var c mirrorConfig
	for _, o := range opts {
		o(&c)
	}
	if c.publishAs == "" {
		if p.ImageStream == nil {
			return Mirrored{}, fmt.Errorf("fakeregistry: the payload has no image-references to name its version: use PublishAs")
		}
		arch := "x86_64"
		if p.Index != nil {
			arch = "multi"
		}
		c.publishAs = src.Host() + "/openshift-release-dev/ocp-release:" + p.ImageStream.Name + "-" + arch
	}
	ref, err := name.NewTag(c.publishAs, name.StrictValidation)
	if err != nil {
		return Mirrored{}, fmt.Errorf("fakeregistry: the release must be published under a tag: %w", err)
	}
	tag := ref.TagStr()

	var out Mirrored
	if p.Index != nil {
		out.Release, err = src.PushImageIndex(ctx, c.publishAs, p.Index)
	} else {
		out.Release, err = src.PushImage(ctx, c.publishAs, p.Image)
	}
	if err != nil {
		return Mirrored{}, err
	}
	published := map[string]string{} // component -> pullspec on src
	if p.ImageStream != nil {
		for _, t := range p.ImageStream.Spec.Tags {
			if _, ok := p.Components[t.Name]; ok && t.From != nil {
				published[t.Name] = t.From.Name
			}
		}
	}
	if len(published) != len(p.Components) {
		return Mirrored{}, fmt.Errorf("fakeregistry: %d components but %d image-references tags point at them", len(p.Components), len(published))
	}
	out.Components, err = forEachComponent(ctx, published, func(ctx context.Context, name, pullspec string) (string, error) {
		return src.PushImage(ctx, pullspec, p.Components[name])
	})
	if err != nil {
		return Mirrored{}, err
	}
	if dst == nil {
		return out, nil
	}

	if c.mirrorTo == "" {
		c.mirrorTo = dst.Host() + "/ocp4/openshift4"
	}
	if out.Mirror, err = dst.CopyImage(ctx, out.Release, c.mirrorTo+":"+tag, src); err != nil {
		return Mirrored{}, err
	}
	out.Components, err = forEachComponent(ctx, out.Components, func(ctx context.Context, name, _ string) (string, error) {
		// The very image published on src: the same bytes as a copy, for half the work.
		return dst.PushImage(ctx, c.mirrorTo+":"+tag+"-"+name, p.Components[name])
	})
	if err != nil {
		return Mirrored{}, err
	}
	return out, nil
}

// forEachComponent runs fn on every component, a few at a time, and returns the pullspecs fn
// returned.
func forEachComponent(ctx context.Context, in map[string]string, fn func(ctx context.Context, name, pullspec string) (string, error)) (map[string]string, error) {
	out := make(map[string]string, len(in))
	var mu sync.Mutex
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, n := range slices.Sorted(maps.Keys(in)) {
		g.Go(func() error {
			ref, err := fn(ctx, n, in[n])
			if err != nil {
				return err
			}
			mu.Lock()
			out[n] = ref
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}
