package remote_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
	"github.com/openshift/hypershift-ecr/releaseinfo/remote"
	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

const (
	ecrHost    = fakeregistry.DefaultHost
	mirrorRepo = ecrHost + "/ocp4/openshift4"
	releaseTag = mirrorRepo + ":4.10.3-x86_64"
	quayRepo   = "quay.io/openshift-release-dev/ocp-release"
	artDevRepo = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"
)

// hostKeychain hands each registry host its authenticator, anonymous elsewhere.
type hostKeychain map[string]authn.Authenticator

func (k hostKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if a, ok := k[r.RegistryStr()]; ok {
		return a, nil
	}
	return authn.Anonymous, nil
}

func build(t testing.TB, opts ...releasepayload.Option) *releasepayload.Payload {
	t.Helper()
	p, err := releasepayload.Build(opts...)
	require.NoError(t, err)
	return p
}

// push stores p under ref and returns its digest pullspec (the list's for a multi-arch payload).
func push(t testing.TB, reg *fakeregistry.Registry, ref string, p *releasepayload.Payload) string {
	t.Helper()
	if p.Index != nil {
		return reg.PushIndex(t, ref, p.Index)
	}
	return reg.Push(t, ref, p.Image)
}

func newReader(t testing.TB, reg *fakeregistry.Registry, opts ...remote.Option) *remote.Reader {
	t.Helper()
	r, err := remote.NewReader(append([]remote.Option{
		remote.WithTransport(reg.Transport()),
		remote.WithKeychain(hostKeychain{reg.Host(): reg.Auth()}),
	}, opts...)...)
	require.NoError(t, err)
	return r
}

// sizes returns the compressed size of every layer of img, first to last, and the image's
// whole size on the registry (manifest, config and layers).
func sizes(t testing.TB, img v1.Image) (layers []int64, total int64) {
	t.Helper()
	m, err := img.Manifest()
	require.NoError(t, err)
	raw, err := img.RawManifest()
	require.NoError(t, err)
	total = int64(len(raw)) + m.Config.Size
	for _, l := range m.Layers {
		layers = append(layers, l.Size)
		total += l.Size
	}
	return layers, total
}

func imageOf(t testing.TB, idx v1.ImageIndex, arch string) (v1.Image, v1.Hash) {
	t.Helper()
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	for _, d := range im.Manifests {
		if d.Platform != nil && d.Platform.Architecture == arch {
			img, err := idx.Image(d.Digest)
			require.NoError(t, err)
			return img, d.Digest
		}
	}
	t.Fatalf("no %s image in the index", arch)
	return nil, v1.Hash{}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		opts       []releasepayload.Option
		platform   *v1.Platform
		byDigest   bool
		wantLayers int
		// wantOSStreams are the data.streams keys; nil before 5.0.
		wantOSStreams []string
		wantStream    string
	}{
		{
			name:       "When the metadata is in the last layer of a single-arch image, it should read that layer only",
			wantLayers: 1,
			wantStream: "rhcos-4.10",
		},
		{
			name:       "When the release is asked for by digest, it should read it and keep the digest",
			byDigest:   true,
			wantLayers: 1,
			wantStream: "rhcos-4.10",
		},
		{
			name:       "When the metadata is below the last layer, it should read past the last layer and stop there",
			opts:       []releasepayload.Option{releasepayload.WithLayout(releasepayload.LayoutNotLast)},
			wantLayers: 2,
			wantStream: "rhcos-4.10",
		},
		{
			name:       "When the files are split over two layers, it should keep going after the first file",
			opts:       []releasepayload.Option{releasepayload.WithLayout(releasepayload.LayoutSplit)},
			wantLayers: 3,
			wantStream: "rhcos-4.10",
		},
		{
			name:       "When stale copies sit in a lower layer, it should return the current files",
			opts:       []releasepayload.Option{releasepayload.WithLayout(releasepayload.LayoutShadowed), releasepayload.WithVersion("4.10.3")},
			wantLayers: 1,
			wantStream: "rhcos-4.10",
		},
		{
			name:       "When the release is a 4.8 payload, it should read its image references",
			opts:       []releasepayload.Option{releasepayload.WithImageReferences(releasepayload.Fixture4_8)},
			wantLayers: 1,
			wantStream: "rhcos-4.10",
		},
		{
			name:          "When the release is a 5.0 payload, it should return data.stream and every data.streams entry",
			opts:          []releasepayload.Option{releasepayload.WithBootImages(releasepayload.Fixture5_0)},
			wantLayers:    1,
			wantOSStreams: []string{"rhel-10", "rhel-9"},
			wantStream:    "rhcos-4.21",
		},
		{
			name:       "When the release is a manifest list, it should read the amd64 image by default",
			opts:       []releasepayload.Option{releasepayload.WithArchitectures("amd64", "arm64")},
			wantLayers: 1,
			wantStream: "rhcos-4.10",
		},
		{
			name:       "When the release is a manifest list and the platform is arm64, it should read the arm64 image",
			opts:       []releasepayload.Option{releasepayload.WithArchitectures("amd64", "arm64", "s390x")},
			platform:   &v1.Platform{OS: "linux", Architecture: "arm64"},
			wantLayers: 1,
			wantStream: "rhcos-4.10",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := build(t, tc.opts...)
			reg := fakeregistry.New(t)
			pinned := push(t, reg, releaseTag, p)
			var opts []remote.Option
			arch := "amd64"
			if tc.platform != nil {
				opts = append(opts, remote.WithPlatform(*tc.platform))
				arch = tc.platform.Architecture
			}
			r := newReader(t, reg, opts...)
			reg.Reset()

			image := releaseTag
			if tc.byDigest {
				image = pinned
			}
			rel, err := r.Lookup(t.Context(), image)
			require.NoError(t, err)

			require.Equal(t, pinned, rel.Pullspec, "pinned by the digest of what was asked for (the list for a manifest list)")
			require.Equal(t, p.ImageStream, rel.ImageStream)
			require.NotNil(t, rel.StreamMetadata)
			require.Equal(t, tc.wantStream, rel.StreamMetadata.Stream)
			if tc.wantOSStreams == nil {
				require.Nil(t, rel.OSStreams)
			} else {
				var keys []string
				for k, s := range rel.OSStreams {
					require.NotNil(t, s)
					require.NotEmpty(t, s.Architectures, "stream %s", k)
					keys = append(keys, k)
				}
				require.ElementsMatch(t, tc.wantOSStreams, keys)
			}
			require.Len(t, rel.ComponentImages, len(p.ImageStream.Spec.Tags))
			for _, tag := range p.ImageStream.Spec.Tags {
				require.Equal(t, tag.From.Name, rel.ComponentImages[tag.Name], "without a policy the pullspecs are as published")
			}

			img := p.Image
			if p.Index != nil {
				var child v1.Hash
				img, child = imageOf(t, p.Index, arch)
				require.True(t, hasRequest(reg, fakeregistry.KindManifestGet, child.String()), "the %s image must be the one read", arch)
			}
			layers, total := sizes(t, img)
			require.Equal(t, tc.wantLayers, rel.Stats.LayersRead)
			var readable int64
			for _, n := range layers[len(layers)-tc.wantLayers:] {
				readable += n
			}
			st := reg.Stats()
			require.Equal(t, int64(tc.wantLayers), st.BlobRedirect, "no layer below the last one needed")
			require.Equal(t, len(reg.Requests()), rel.Stats.RoundTrips, "every request the registry saw is counted")
			require.Less(t, rel.Stats.BytesRead, total/2, "a metadata lookup must cost a fraction of the image")
			require.LessOrEqual(t, rel.Stats.BytesRead, readable+16<<10, "at most the layers opened plus manifests")
			require.Zero(t, st.S3WithAuthorization, "no Authorization header may reach the blob host")
			t.Logf("layers=%d bytes=%d (image %d) roundtrips=%d", rel.Stats.LayersRead, rel.Stats.BytesRead, total, rel.Stats.RoundTrips)
		})
	}
}

func hasRequest(reg *fakeregistry.Registry, kind fakeregistry.Kind, pathSuffix string) bool {
	for _, req := range reg.Requests() {
		if req.Kind == kind && strings.HasSuffix(req.Path, pathSuffix) {
			return true
		}
	}
	return false
}

func TestLookupErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		opts      []releasepayload.Option
		reader    []remote.Option
		image     string // default releaseTag
		arm       func(reg *fakeregistry.Registry)
		wantIs    error
		wantFiles []string
		wantCode  int
		wantText  []string
	}{
		{
			name:      "When image-references is in no layer, it should fail with ErrReleaseMetadataMissing naming the file",
			opts:      []releasepayload.Option{releasepayload.WithoutImageReferences()},
			wantIs:    remote.ErrReleaseMetadataMissing,
			wantFiles: []string{remote.ImageReferencesPath},
		},
		{
			name:      "When the boot images are in no layer, it should fail with ErrReleaseMetadataMissing naming the file",
			opts:      []releasepayload.Option{releasepayload.WithoutBootImages()},
			wantIs:    remote.ErrReleaseMetadataMissing,
			wantFiles: []string{remote.BootImagesPath},
		},
		{
			name:      "When both files are missing, it should name both",
			opts:      []releasepayload.Option{releasepayload.WithoutBootImages(), releasepayload.WithoutImageReferences()},
			wantIs:    remote.ErrReleaseMetadataMissing,
			wantFiles: []string{remote.ImageReferencesPath, remote.BootImagesPath},
		},
		{
			name:     "When the manifest list has no image for the platform, it should fail with ErrPlatformNotFound",
			opts:     []releasepayload.Option{releasepayload.WithArchitectures("amd64", "arm64")},
			reader:   []remote.Option{remote.WithPlatform(v1.Platform{OS: "linux", Architecture: "ppc64le"})},
			wantIs:   remote.ErrPlatformNotFound,
			wantText: []string{"linux/ppc64le", "linux/arm64"},
		},
		{
			name:     "When the tag does not exist, it should return the registry's 404 with the pullspec",
			image:    mirrorRepo + ":4.99.0-x86_64",
			wantCode: http.StatusNotFound,
			wantText: []string{mirrorRepo + ":4.99.0-x86_64", "MANIFEST_UNKNOWN"},
		},
		{
			name:     "When the registry rejects the credential, it should return the 401 and no secret",
			reader:   []remote.Option{remote.WithKeychain(hostKeychain{ecrHost: authn.FromConfig(authn.AuthConfig{Username: "AWS", Password: "not-the-password"})})},
			wantCode: http.StatusUnauthorized,
			wantText: []string{releaseTag},
		},
		{
			name:     "When the layer download is cut, it should fail cleanly naming the layer",
			arm:      func(reg *fakeregistry.Registry) { reg.CutBlobAfter(100) },
			wantIs:   errUnexpectedEOF,
			wantText: []string{"read layer sha256:"},
		},
		{
			name:     "When the blob host fails, it should return its status with the pullspec",
			arm:      func(reg *fakeregistry.Registry) { reg.FailNext(fakeregistry.KindS3Blob, 1, http.StatusForbidden) },
			wantCode: http.StatusForbidden,
			wantText: []string{"read layer sha256:", "hint: the blob host prod-us-east-1-starport-layer-bucket"},
		},
		{
			name:      "When a release file is larger than the limit, it should refuse it before reading it",
			reader:    []remote.Option{remote.WithLimits(1<<10, remote.MaxScanSize)},
			wantIs:    remote.ErrLimitExceeded,
			wantFiles: []string{remote.BootImagesPath},
		},
		{
			name:     "When the layers hold more than the scan budget, it should stop with ErrLimitExceeded",
			opts:     []releasepayload.Option{releasepayload.WithoutImageReferences()},
			reader:   []remote.Option{remote.WithLimits(remote.MaxFileSize, 300<<10)},
			wantIs:   remote.ErrLimitExceeded,
			wantText: []string{"more than 307200 decompressed bytes"},
		},
		{
			name:     "When the resolver fails, it should fail with its error and read nothing",
			reader:   []remote.Option{remote.WithResolver(func(context.Context, string) (string, error) { return "", errNoMirror })},
			wantIs:   errNoMirror,
			wantText: []string{"resolve " + releaseTag},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := fakeregistry.New(t)
			push(t, reg, releaseTag, build(t, tc.opts...))
			r := newReader(t, reg, tc.reader...)
			reg.Reset()
			if tc.arm != nil {
				tc.arm(reg)
			}
			image := tc.image
			if image == "" {
				image = releaseTag
			}

			rel, err := r.Lookup(t.Context(), image)
			require.Error(t, err)
			require.Nil(t, rel)
			var rerr *remote.Error
			require.ErrorAs(t, err, &rerr)
			require.Equal(t, image, rerr.Image)
			if tc.wantIs != nil {
				require.ErrorIs(t, err, tc.wantIs)
			}
			if tc.wantCode != 0 {
				var terr *transport.Error
				require.ErrorAs(t, err, &terr)
				require.Equal(t, tc.wantCode, terr.StatusCode)
			}
			for _, f := range tc.wantFiles {
				require.Contains(t, err.Error(), f)
				require.True(t, strings.Contains(err.Error(), mirrorRepo+"@sha256:"), "the error names the pinned pullspec: %v", err)
			}
			if len(tc.wantFiles) == 1 {
				require.Equal(t, tc.wantFiles[0], rerr.File)
			}
			for _, s := range tc.wantText {
				require.Contains(t, err.Error(), s)
			}
			require.NotContains(t, err.Error(), "not-the-password")
			require.NotRegexp(t, presignedQuery, err.Error(), "pre-signed URL queries are redacted")
			if errors.Is(err, errNoMirror) {
				require.Empty(t, reg.Requests())
			}
			require.Zero(t, reg.Stats().S3WithAuthorization)
			t.Log(err)
		})
	}
}

var (
	// presignedQuery matches an unredacted pre-signed URL credential or signature.
	presignedQuery   = regexp.MustCompile(`X-Amz-(Signature|Credential)=[^R&]`)
	errNoMirror      = errors.New("no reachable mirror")
	errUnexpectedEOF = io.ErrUnexpectedEOF
)

// ECR sends layers to pre-signed S3 URLs on another host; the registry's Authorization header
// must not follow the redirect.
func TestLookupBlobRedirect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		transport func(reg *fakeregistry.Registry) http.RoundTripper
		wantErr   bool
	}{
		{
			name:      "When the transport is plain, it should send no Authorization header to the blob host",
			transport: func(reg *fakeregistry.Registry) http.RoundTripper { return reg.Transport() },
		},
		{
			name: "When a transport adds Authorization to the redirected request, it should fail with the blob host's 400 and a hint",
			transport: func(reg *fakeregistry.Registry) http.RoundTripper {
				return &leakyTransport{base: reg.Transport(), blobHost: reg.BlobHost()}
			},
			wantErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := fakeregistry.New(t)
			push(t, reg, releaseTag, build(t))
			r := newReader(t, reg, remote.WithTransport(tc.transport(reg)))
			reg.Reset()

			_, err := r.Lookup(t.Context(), releaseTag)
			st := reg.Stats()
			require.Equal(t, int64(1), st.BlobRedirect)
			require.Equal(t, int64(1), st.S3BlobGet, "a 400 is not retried")
			if !tc.wantErr {
				require.NoError(t, err)
				require.Zero(t, st.S3WithAuthorization)
				for _, req := range reg.Requests() {
					if req.Kind == fakeregistry.KindS3Blob {
						require.False(t, req.HadAuthorization)
					} else if req.Kind != fakeregistry.KindPing {
						require.True(t, req.HadAuthorization, "the registry itself gets the credential: %+v", req)
					}
				}
				return
			}
			require.Error(t, err)
			require.Equal(t, int64(1), st.S3WithAuthorization)
			var terr *transport.Error
			require.ErrorAs(t, err, &terr)
			require.Equal(t, http.StatusBadRequest, terr.StatusCode)
			var rerr *remote.Error
			require.ErrorAs(t, err, &rerr)
			require.Contains(t, rerr.Hint, "Authorization header")
			require.Contains(t, err.Error(), "Only one auth mechanism allowed")
			require.NotRegexp(t, presignedQuery, err.Error())
			require.NotContains(t, err.Error(), "Basic ")
		})
	}
}

// leakyTransport is the bug the redirect test guards against: it copies a registry credential
// onto requests for the blob host.
type leakyTransport struct {
	base     http.RoundTripper
	blobHost string
}

func (l *leakyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Hostname() == l.blobHost && req.Header.Get("Authorization") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Basic QVdTOmxlYWtlZA==")
	}
	return l.base.RoundTrip(req)
}

func TestLookupComponentPolicy(t *testing.T) {
	t.Parallel()
	rules, err := mirrorpolicy.ECRReleaseMirror(mirrorRepo)
	require.NoError(t, err)
	policy, err := mirrorpolicy.New(rules...)
	require.NoError(t, err)

	p := build(t)
	reg := fakeregistry.New(t)
	pinned := push(t, reg, releaseTag, p)
	digest := pinned[strings.Index(pinned, "@"):]
	// The release as HyperShift is asked for it: the quay.io pullspec `oc adm release mirror` copied.
	requested := quayRepo + digest

	tests := []struct {
		name     string
		opts     []remote.Option
		wantComp func(from string) string
	}{
		{
			name: "When a component policy is set, it should rewrite every component to the ECR mirror",
			opts: []remote.Option{remote.WithComponentPolicy(policy)},
			wantComp: func(from string) string {
				require.True(t, strings.HasPrefix(from, artDevRepo+"@sha256:"), from)
				return mirrorRepo + strings.TrimPrefix(from, artDevRepo)
			},
		},
		{
			name:     "When no component policy is set, it should keep the published pullspecs",
			wantComp: func(from string) string { return from },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resolve := func(_ context.Context, image string) (string, error) {
				c, err := policy.Candidates(image)
				if err != nil {
					return "", err
				}
				return c[0].Ref, nil
			}
			// Only the ECR registry is reachable: reading quay.io would fail to dial.
			r := newReader(t, reg, append([]remote.Option{remote.WithResolver(resolve)}, tc.opts...)...)
			rel, err := r.Lookup(t.Context(), requested)
			require.NoError(t, err)
			require.Equal(t, pinned, rel.Pullspec, "the mirror was read")
			require.Equal(t, p.ImageStream, rel.ImageStream, "the ImageStream stays as published")
			require.Len(t, rel.ComponentImages, len(p.ImageStream.Spec.Tags))
			for _, tag := range p.ImageStream.Spec.Tags {
				require.Equal(t, tc.wantComp(tag.From.Name), rel.ComponentImages[tag.Name], tag.Name)
			}
		})
	}
}

func TestNewReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts []remote.Option
	}{
		{name: "When the keychain is nil, it should refuse", opts: []remote.Option{remote.WithKeychain(nil)}},
		{name: "When the transport is nil, it should refuse", opts: []remote.Option{remote.WithTransport(nil)}},
		{name: "When the platform has no architecture, it should refuse", opts: []remote.Option{remote.WithPlatform(v1.Platform{OS: "linux"})}},
		{name: "When the resolver is nil, it should refuse", opts: []remote.Option{remote.WithResolver(nil)}},
		{name: "When the component policy is nil, it should refuse", opts: []remote.Option{remote.WithComponentPolicy(nil)}},
		{name: "When an option is nil, it should refuse", opts: []remote.Option{nil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := remote.NewReader(tc.opts...)
			require.Error(t, err)
			require.Nil(t, r)
		})
	}
	r, err := remote.NewReader()
	require.NoError(t, err, "the defaults are valid")
	require.NotNil(t, r)
}
