package credentialprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	v1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
	"k8s.io/utils/clock"

	"github.com/openshift/hypershift-ecr/registryauth"
)

const (
	globalCacheKey = "global"
	// maxCacheEntries bounds the cache: Image keys come from image strings.
	maxCacheEntries = 1024
	// maxStderrRead bounds what of stderr is held before redaction.
	maxStderrRead = 64 << 10
	// waitDelay bounds the wait for the plugin's output pipes after it was
	// killed, should a child of the plugin still hold them.
	waitDelay = 2 * time.Second
)

// PluginSource is a registryauth.CredentialSource that runs a kubelet
// credential provider plugin, as the kubelet does, and caches its answers
// as the kubelet does. Make it with NewPluginSource; it is safe for
// concurrent use. The zero value matches no image.
type PluginSource struct {
	path                 string
	name                 string
	args                 []string
	env                  []string
	matchImages          []glob
	defaultCacheDuration time.Duration
	timeout              time.Duration
	clock                clock.PassiveClock

	group singleflight.Group

	mu    sync.Mutex
	cache map[string]*cacheEntry
}

var _ registryauth.CredentialSource = (*PluginSource)(nil)

// cacheEntry is one plugin answer. It is never modified once stored.
type cacheEntry struct {
	// auth holds the answer's entries, keys normalized, in the order the
	// kubelet tries them: reverse-sorted, so longer and literal keys first.
	auth      []authEntry
	expiresAt time.Time
}

type authEntry struct {
	key                string
	glob               glob
	valid              bool // the key parses; the kubelet skips keys that do not
	username, password string
}

// NewPluginSource returns a PluginSource running the executable at
// binaryPath (looked up in PATH when it has no slash), which must exist and
// be executable now. See the Option docs for the defaults.
func NewPluginSource(binaryPath string, opts ...Option) (*PluginSource, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("credentialprovider: %w", err)
		}
	}
	if binaryPath == "" {
		return nil, errors.New("credentialprovider: empty plugin path")
	}
	// Fail at construction, not at the first pull, when the binary is
	// missing or not executable.
	path, err := exec.LookPath(binaryPath)
	if err != nil {
		return nil, fmt.Errorf("credentialprovider: plugin %s: %w", binaryPath, err)
	}
	var globs []glob
	for _, m := range o.matchImages {
		g, _ := parseGlob(m) // validated by WithMatchImages
		globs = append(globs, g)
	}
	return &PluginSource{
		path:                 path,
		name:                 filepath.Base(path),
		args:                 slices.Clone(o.args),
		env:                  slices.Clone(o.env),
		matchImages:          globs,
		defaultCacheDuration: o.defaultCacheDuration,
		timeout:              o.timeout,
		clock:                o.clock,
		cache:                map[string]*cacheEntry{},
	}, nil
}

// Credential returns the plugin's credential for registryHostOrImage (a
// host, host:port, URL or image reference; scheme, tag and digest are
// dropped before the plugin sees it).
//
// An image that no matchImages glob matches, or for which the plugin's
// answer has no matching auth key, gives a *NoCredentialsError, which
// matches registryauth.ErrNotECR. A cached answer (keyed by image, then
// registry, then globally, as the kubelet looks them up) is served without
// running the plugin. Otherwise concurrent calls for one image share one
// run; if ctx ends first the call returns ctx's error while the run goes
// on, bounded by the timeout, and fills the cache. Failures are not cached.
//
// Credential.ExpiresAt is when the answer leaves the cache (the run's end
// plus its cache duration): a plugin does not say when its token expires.
func (p *PluginSource) Credential(ctx context.Context, registryHostOrImage string) (registryauth.Credential, error) {
	image := normalizeImage(registryHostOrImage)
	target, ok := parseGlob(image)
	if !ok || !p.allowed(target) {
		return registryauth.Credential{}, &NoCredentialsError{Plugin: p.name, Image: image, NotMatched: true}
	}
	if e := p.cached(image); e != nil {
		return p.pick(e, image, target)
	}
	// The run must outlive a caller who gives up, to fill the cache for
	// the others; it keeps the caller's values (its logger).
	runCtx := context.WithoutCancel(ctx)
	ch := p.group.DoChan(image, func() (e any, err error) {
		// singleflight re-panics on a goroutine of its own, which no
		// caller could recover: turn a panic into this run's error.
		defer func() {
			if r := recover(); r != nil {
				e, err = nil, fmt.Errorf("credentialprovider: running plugin %s panicked: %v", p.name, r)
			}
		}()
		if e := p.cached(image); e != nil {
			return e, nil // a run for another image of this registry just answered
		}
		return p.run(runCtx, image)
	})
	select {
	case <-ctx.Done():
		return registryauth.Credential{}, ctx.Err()
	case res := <-ch:
		if res.Err != nil {
			return registryauth.Credential{}, res.Err
		}
		return p.pick(res.Val.(*cacheEntry), image, target)
	}
}

func (p *PluginSource) allowed(target glob) bool {
	for _, g := range p.matchImages {
		if g.match(target) {
			return true
		}
	}
	return false
}

// cached looks image up as the kubelet does: by image, registry, global.
func (p *PluginSource) cached(image string) *cacheEntry {
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, key := range []string{"image:" + image, "registry:" + registryOf(image), globalCacheKey} {
		if e, ok := p.cache[key]; ok {
			if now.Before(e.expiresAt) {
				return e
			}
			delete(p.cache, key)
		}
	}
	return nil
}

func (p *PluginSource) pick(e *cacheEntry, image string, target glob) (registryauth.Credential, error) {
	for _, a := range e.auth {
		if a.valid && a.glob.match(target) {
			return registryauth.Credential{
				Registry:  registryHost(image),
				Username:  a.username,
				Password:  a.password,
				ExpiresAt: e.expiresAt,
			}, nil
		}
	}
	return registryauth.Credential{}, &NoCredentialsError{Plugin: p.name, Image: image}
}

// run executes the plugin once for image and caches its answer.
func (p *PluginSource) run(ctx context.Context, image string) (*cacheEntry, error) {
	log := logr.FromContextOrDiscard(ctx).WithValues("plugin", p.name, "image", image)
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()

	req, err := encodeRequest(image)
	if err != nil {
		return nil, fmt.Errorf("credentialprovider: encoding the request: %w", err)
	}
	stdout := &cappedBuffer{max: maxResponseSize}
	stderr := &cappedBuffer{max: maxStderrRead}
	cmd := exec.CommandContext(ctx, p.path, p.args...)
	cmd.Stdin = bytes.NewReader(req)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Inherit the environment as the kubelet does; later entries win.
	cmd.Env = append(os.Environ(), p.env...)
	cmd.WaitDelay = waitDelay

	start := time.Now()
	runErr := cmd.Run()
	log.V(4).Info("Ran credential provider plugin", "duration", time.Since(start).Round(time.Millisecond))

	perr := &PluginError{Plugin: p.name, Image: image, ExitCode: -1}
	if cmd.ProcessState != nil && cmd.ProcessState.Exited() {
		perr.ExitCode = cmd.ProcessState.ExitCode()
	}
	switch {
	case ctx.Err() != nil:
		perr.Kind, perr.Err = ErrPluginTimeout, fmt.Errorf("killed after %v: %w", p.timeout, ctx.Err())
	case runErr != nil:
		perr.Kind, perr.Err = ErrPluginFailed, runErr
	case stdout.overflow:
		perr.Kind, perr.Err = ErrMalformedResponse, &ResponseError{Reason: "larger than " + strconv.Itoa(maxResponseSize) + " bytes"}
	}
	if perr.Kind != nil {
		perr.Stderr = redactStderr(stderr.Bytes(), p.knownSecrets(stdout.Bytes()))
		return nil, perr
	}

	resp, err := ParseResponse(stdout.Bytes())
	if err != nil {
		perr.Kind, perr.Err = ErrMalformedResponse, err
		perr.Stderr = redactStderr(stderr.Bytes(), p.knownSecrets(stdout.Bytes()))
		return nil, perr
	}
	e := p.store(image, resp)
	log.V(4).Info("Credential provider plugin answered", "cacheKeyType", resp.CacheKeyType, "entries", len(e.auth), "expiresAt", e.expiresAt)
	return e, nil
}

// store caches resp under the key its cacheKeyType names. A nil
// cacheDuration means the default; zero or less means "do not cache",
// and the entry then serves only the callers of this run.
func (p *PluginSource) store(image string, resp *v1.CredentialProviderResponse) *cacheEntry {
	now := p.clock.Now()
	d := p.defaultCacheDuration
	if resp.CacheDuration != nil {
		d = resp.CacheDuration.Duration
	}
	e := &cacheEntry{expiresAt: now.Add(max(d, 0))}
	for k, a := range resp.Auth {
		key := normalizeAuthKey(k)
		g, ok := parseGlob(key)
		e.auth = append(e.auth, authEntry{key: key, glob: g, valid: ok, username: a.Username, password: a.Password})
	}
	slices.SortFunc(e.auth, func(a, b authEntry) int { return strings.Compare(b.key, a.key) })
	if d <= 0 {
		return e
	}
	var key string
	switch resp.CacheKeyType {
	case v1.ImagePluginCacheKeyType:
		key = "image:" + image
	case v1.RegistryPluginCacheKeyType:
		key = "registry:" + registryOf(image)
	default:
		key = globalCacheKey
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.cache) >= maxCacheEntries {
		p.evictLocked(now)
	}
	p.cache[key] = e
	return e
}

// evictLocked drops expired entries and, if the cache is still full, the
// one closest to expiry.
func (p *PluginSource) evictLocked(now time.Time) {
	var soonest string
	for k, e := range p.cache {
		if !now.Before(e.expiresAt) {
			delete(p.cache, k)
		} else if soonest == "" || e.expiresAt.Before(p.cache[soonest].expiresAt) {
			soonest = k
		}
	}
	if len(p.cache) >= maxCacheEntries {
		delete(p.cache, soonest)
	}
}

// knownSecrets lists the passwords stderr must not show: those of the
// cached answers, and those of this run's stdout if it decodes at all.
func (p *PluginSource) knownSecrets(stdout []byte) []string {
	var out []string
	var partial struct {
		Auth map[string]struct {
			Password string `json:"password"`
		} `json:"auth"`
	}
	if json.Unmarshal(stdout, &partial) == nil {
		for _, a := range partial.Auth {
			out = append(out, a.Password)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.cache {
		for _, a := range e.auth {
			out = append(out, a.password)
		}
	}
	return out
}

// encodeRequest writes the request exactly as the kubelet does: TypeMeta
// first, no service account fields, a trailing newline.
func encodeRequest(image string) ([]byte, error) {
	b, err := json.Marshal(&v1.CredentialProviderRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: APIVersion, Kind: requestKind},
		Image:    image,
	})
	return append(b, '\n'), err
}

// cappedBuffer keeps the first max bytes written and notes any overflow,
// while accepting everything so that the plugin never blocks on a pipe.
type cappedBuffer struct {
	bytes.Buffer
	max      int
	overflow bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.overflow = true
		b.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return b.Buffer.Write(p)
}
