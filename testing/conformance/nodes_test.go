//go:build conformance

package conformance

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ecr"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"

	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
	"github.com/openshift/hypershift-ecr/pkg/nodeconfig"
	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

const (
	// nodeMirrorRepo is where `oc adm release mirror --to` put the release.
	nodeMirrorRepo = registryHost + "/ocp4/openshift4"
	// nodeReleaseSource is the repository pods and MCO name the release by.
	nodeReleaseSource = "quay.io/openshift-release-dev/ocp-release"
	// quayAddr is where quay.io resolves inside the test's mount namespace:
	// a loopback address on which the test itself listens and drops every
	// connection, so quay.io is unreachable and nothing can leave the host.
	quayAddr = "127.0.0.3:443"
	// nodeTokenLifetime is the life of the fake ECR's tokens in this test.
	// ecr-credential-provider answers with cacheDuration = half the time
	// left, which the helper honours: its cache entry expires after about
	// 10 s, and the test waits for that once.
	nodeTokenLifetime = 20 * time.Second
)

// The node-side components of this module.
var nodeHelper = peer{name: "pkg/nodeconfig docker-credential-" + nodeconfig.DefaultHelperName}

// TestSkopeoWorkerNodeMirrorPull proves, with the client library
// CRI-O, podman and rpm-ostree share (containers/image, in Debian's skopeo),
// that what pkg/nodeconfig renders lets a worker node pull a release named
// quay.io/...@sha256 through its ECR mirror with nothing but the node's AWS
// identity: the pull secret (auth file) holds only quay.io, quay.io itself
// is unreachable, and the ECR credentials come from the rendered
// registries.conf drop-in and helper, which run the real
// ecr-credential-provider against the fake ECR. Static test keys in the
// environment stand in for the instance role the SDK would read from IMDS
// (TestSDKInstanceRole covers that path).
//
// The rendered drop-in and helper are installed at their node paths
// (/etc/containers/registries.conf.d, /usr/local/bin) and /run is private,
// all by bind mounts in a private mount namespace, so the helper runs exactly
// as rendered, with the default PATH and its default cache directory.
// Only the plugin path is a temporary one (Options.PluginPath).
//
// Steps: without the drop-in the pull fails (the mirror gets no credentials);
// with it the pull succeeds; a second pull is served by the helper's cache;
// after an out-of-band rotation the cached, rotated-out password keeps
// failing until the cache entry expires (after the plugin's cacheDuration,
// half the token's life), after which the helper runs the plugin again and
// the pull succeeds with the new token. The failing window exists only on
// this registry, which accepts the newest token alone: ECR keeps every token
// valid for its 12 h, and the helper never keeps one past half of that.
func TestSkopeoWorkerNodeMirrorPull(t *testing.T) {
	skopeo.need(t)
	ecrProvider.need(t)
	ctx := t.Context()
	start := time.Now()
	reg := startRegistry(t)
	e := startECR(t, reg, fakeecr.WithTokenLifetime(nodeTokenLifetime))
	quay := startUnreachable(t, quayAddr)
	payload := buildPayload(t)
	digest, err := payload.Image.Digest()
	harness.must(t, "digest of the fixture", err)
	source := nodeReleaseSource + "@" + digest.String()

	// The release in the mirror repository, as `oc adm release mirror` leaves it.
	// Its keychain keeps one short-lived token for the whole push (the
	// default 5 min margin would fetch one per request, each rotating the
	// registry) and is closed right after, so that no background refresh
	// rotates the registry behind the test's back.
	kc := newKeychain(t, e, registryauth.WithExpiryMargin(time.Second))
	dockerRegistry.must(t, "push the fixture release to the mirror repository "+nodeMirrorRepo,
		reg.Push(ctx, nodeMirrorRepo+":4.10.0-0.nightly-2021-11-14-184249-x86_64", payload, kc))
	_ = kc.Close()

	// The node configuration, rendered from the mirror policy the nodes get.
	rules, err := mirrorpolicy.ECRReleaseMirror(nodeMirrorRepo)
	harness.must(t, "mirror rules for "+nodeMirrorRepo, err)
	policy, err := mirrorpolicy.New(rules...)
	harness.must(t, "mirror policy", err)
	dir := t.TempDir()
	pluginDir := filepath.Join(dir, "plugins")
	plugin := filepath.Join(pluginDir, "ecr-credential-provider")
	harness.must(t, "install ecr-credential-provider as the node's plugin", errors.Join(
		os.MkdirAll(pluginDir, 0o755), os.Symlink(ecrProvider.path, plugin)))
	pullSecret := []byte(`{"auths":{"quay.io":{"auth":"b3BlbnNoaWZ0LXJlbGVhc2UtZGV2K2NpOnNlY3JldA==","email":"ci@example.com"}}}`)
	r, err := nodeconfig.Render(nodeconfig.Options{
		Policy:     policy,
		PullSecret: pullSecret,
		Namespace:  "clusters",
		PluginPath: plugin,
		// What a zero-egress cluster without private DNS for ecr.api passes.
		PluginEnv: []kubeletconfigv1.ExecEnvVar{{Name: "AWS_ENDPOINT_URL_ECR", Value: e.URL}},
	})
	nodeHelper.must(t, "nodeconfig.Render", err)
	for _, w := range r.Warnings {
		// The only expected one: the kubelet would not find a plugin outside its directory.
		nodeHelper.check(t, "render warnings", strings.Contains(w, "kubelet runs credential provider plugins from"),
			"unexpected warning: %s", w)
	}
	nodeHelper.check(t, "rendered paths", path.Dir(r.DropInPath) == nodeconfig.DropInDir && path.Dir(r.HelperPath) == nodeconfig.HelperDir,
		"drop-in %s, helper %s", r.DropInPath, r.HelperPath)

	// The node's files: registries.conf as the MCO writes it for the IDMS,
	// the drop-in and the helper where the MachineConfig writes them, an
	// auth file (the pull secret) with quay.io only.
	home := filepath.Join(dir, "home")
	root := filepath.Join(dir, "root")
	dropInDir := filepath.Join(root, "registries.conf.d")
	binDir := filepath.Join(root, "usr-local-bin")
	runDir := filepath.Join(root, "run")
	registriesConf := filepath.Join(root, "registries.conf")
	authFile := filepath.Join(home, "auth.json")
	policyFile := filepath.Join(home, "policy.json")
	harness.must(t, "write the node's files", errors.Join(
		os.MkdirAll(home, 0o700), os.MkdirAll(dropInDir, 0o755), os.MkdirAll(binDir, 0o755), os.MkdirAll(runDir, 0o755),
		os.WriteFile(registriesConf, registriesConfFor(policy), 0o644),
		os.WriteFile(filepath.Join(binDir, path.Base(r.HelperPath)), r.Helper, 0o755),
		os.WriteFile(authFile, pullSecret, 0o600),
		os.WriteFile(policyFile, []byte(skopeoPolicy), 0o600),
	))
	hosts := "127.0.0.1\tlocalhost\n::1\tlocalhost\n127.0.0.2\t" + registryHost + "\n" +
		strings.Split(quayAddr, ":")[0] + "\tquay.io\n"
	ns := &nodeNamespace{
		home:  home,
		hosts: hosts,
		binds: [][2]string{
			{registriesConf, "/etc/containers/registries.conf"},
			{dropInDir, nodeconfig.DropInDir},
			{binDir, nodeconfig.HelperDir},
			{runDir, "/run"},
		},
		// Stands for the instance role: the plugin inherits these from the
		// helper, which inherits them from the client (on a node the SDK
		// gets the role's keys from IMDS). The region comes from the host.
		env: []string{
			"AWS_ACCESS_KEY_ID=" + testAccessKeyID,
			"AWS_SECRET_ACCESS_KEY=" + testSecretAccessKey,
			"AWS_REGION=" + region,
			"AWS_CONFIG_FILE=/dev/null",
			"AWS_SHARED_CREDENTIALS_FILE=/dev/null",
			"AWS_EC2_METADATA_DISABLED=true",
		},
	}
	// pull runs one skopeo copy and reports how long it took and how many
	// connections quay.io's stand-in dropped meanwhile.
	pull := func(step string) (res runResult, took time.Duration, quayConns int64) {
		t.Helper()
		out := filepath.Join(dir, "pulled-"+strconv.FormatInt(time.Now().UnixNano(), 36))
		began, quayBefore := time.Now(), quay.Accepted()
		res = ns.run(ctx, t, skopeo.path, "--policy", policyFile, "copy", "--retry-times", "0",
			"--authfile", authFile, "--src-cert-dir", reg.ca.certDir,
			"docker://"+source, "dir:"+out)
		took, quayConns = time.Since(began), quay.Accepted()-quayBefore
		t.Logf("%s: %v", step, took.Round(time.Millisecond))
		if res.err == nil {
			manifest, err := os.ReadFile(filepath.Join(out, "manifest.json"))
			skopeo.must(t, step+": read the pulled manifest", err)
			sum := sha256.Sum256(manifest)
			skopeo.check(t, step, "sha256:"+hex.EncodeToString(sum[:]) == digest.String(),
				"pulled manifest sha256:%x, want the pushed %s", sum, digest)
		}
		return res, took, quayConns
	}
	client := skopeo.with(dockerRegistry)
	// The whole chain: skopeo runs the helper, which runs the plugin.
	chain := peer{name: fmt.Sprintf("%s (helper %s, plugin %s) against %s", skopeo, nodeHelper, ecrProvider, dockerRegistry)}
	calls := func() int { return e.Calls(region) }
	mirrorRefused := func(step string, res runResult, quayConns int64) {
		t.Helper()
		client.check(t, step, res.err != nil, "succeeded")
		stderr := strings.ToLower(string(res.stderr))
		client.check(t, step, strings.Contains(stderr, registryHost) &&
			(strings.Contains(stderr, "unauthorized") || strings.Contains(stderr, "authentication required")),
			"failed for another reason than the mirror's 401: %s", res.stderr)
		harness.check(t, step, quayConns > 0, "skopeo never tried quay.io after the mirror: %s", res.stderr)
		t.Logf("%s: failed as expected: %s", step, bytes.TrimSpace(res.stderr))
	}

	// 1. Without the drop-in (everything else the same): containers/image
	// asks only the auth file, which has nothing for the mirror's host.
	callsBefore := calls()
	res, _, quayConns := pull("pull without the drop-in")
	mirrorRefused("pull through the ECR mirror without the drop-in (must fail)", res, quayConns)
	nodeHelper.check(t, "pull without the drop-in", calls() == callsBefore, "the helper ran: %d ECR calls", calls()-callsBefore)

	// 2. With the rendered drop-in: the helper answers for the mirror.
	harness.must(t, "install the rendered drop-in", os.WriteFile(filepath.Join(dropInDir, path.Base(r.DropInPath)), r.DropIn, 0o644))
	callsBefore = calls()
	fetched := time.Now()
	res, firstPull, quayConns := pull("pull with the drop-in")
	chain.must(t, "pull through the ECR mirror with the rendered drop-in and helper", res.failure())
	harness.check(t, "pull with the drop-in", quayConns == 0, "quay.io was contacted although the mirror served the image")
	ecrProvider.check(t, "pull with the drop-in", calls() == callsBefore+1, "%d GetAuthorizationToken calls, want 1", calls()-callsBefore)
	reqs := e.Requests()
	ecrProvider.check(t, "GetAuthorizationToken of the helper's plugin run", reqs[len(reqs)-1].AccessKeyID == testAccessKeyID,
		"signed with %q", reqs[len(reqs)-1].AccessKeyID)
	first := reg.Password()

	// The cache entry: private, and never longer than the plugin's
	// cacheDuration (half the token's life).
	cacheDir := filepath.Join(runDir, nodeconfig.DefaultHelperName)
	cacheFile := filepath.Join(cacheDir, registryHost)
	// The token was issued after fetched and the entry written before
	// fetched+firstPull: the entry must expire no later than half the
	// token's life after that, long before the token itself.
	expires := readHelperCache(t, cacheDir, cacheFile, first)
	nodeHelper.check(t, "cache entry lifetime", expires.After(fetched) && !expires.After(fetched.Add(firstPull+nodeTokenLifetime/2+time.Second)),
		"kept until %s, %v after the fetch; want at most the plugin's cacheDuration (half the token's %v)",
		expires.Format(time.RFC3339), expires.Sub(fetched).Round(time.Second), nodeTokenLifetime)

	// 3. A second pull is served from the helper's cache: no plugin run.
	res, _, _ = pull("pull again (cached)")
	chain.must(t, "pull again with the cached credentials", res.failure())
	nodeHelper.check(t, "pull again", calls() == callsBefore+1, "%d more GetAuthorizationToken calls, want none (cache)", calls()-callsBefore-1)

	// 4. Rotation: another caller (the kubelet's own provider, another node
	// with the same role) gets a new token; this registry then accepts only
	// that one (ECR would keep the old one valid until it expires).
	other := ecr.NewFromConfig(staticConfig(), func(o *ecr.Options) { o.BaseEndpoint = &e.URL })
	_, err = other.GetAuthorizationToken(ctx, &ecr.GetAuthorizationTokenInput{})
	awsSDK.must(t, "out-of-band GetAuthorizationToken (rotation)", err)
	callsBefore = calls()
	if time.Until(expires) > 2*time.Second+firstPull {
		// Within the cache entry's life the helper serves the rotated-out
		// password: the pull fails, as with any client holding a token this
		// registry no longer accepts. Real ECR still accepts it.
		res, _, quayConns = pull("pull right after the rotation (stale cache)")
		mirrorRefused("pull right after the rotation, helper cache still valid (must fail on this single-token registry)", res, quayConns)
		nodeHelper.check(t, "pull right after the rotation", calls() == callsBefore, "the helper ran the plugin before its cache entry expired")
	} else {
		t.Logf("%s: cache entry expires in %v: stale-cache step skipped (machine too slow)", nodeHelper, time.Until(expires).Round(time.Millisecond))
	}

	// 5. Once the entry expires the helper runs the plugin again, which gets
	// the newest token: the pull works with no action on the node.
	wait := time.Until(expires) + 1100*time.Millisecond
	t.Logf("waiting %v for the helper's cache entry to expire", wait.Round(time.Millisecond))
	select {
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	case <-time.After(wait):
	}
	res, _, quayConns = pull("pull after the cache entry expired")
	chain.must(t, "pull after the rotation, once the helper's cache entry expired", res.failure())
	harness.check(t, "pull after the cache entry expired", quayConns == 0, "quay.io was contacted although the mirror served the image")
	ecrProvider.check(t, "pull after the cache entry expired", calls() == callsBefore+1,
		"%d GetAuthorizationToken calls, want 1 (a fresh token)", calls()-callsBefore)
	issued := e.Issued()
	readHelperCache(t, cacheDir, cacheFile, issued[len(issued)-1])
	nodeHelper.check(t, "cache after the refresh", issued[len(issued)-1] != first, "the helper cached the first token again")
	t.Logf("total %v", time.Since(start).Round(time.Millisecond))
}

// readHelperCache checks the helper's cache directory and entry (modes, the
// password it holds) and returns when the entry expires. The password is
// compared, never printed.
func readHelperCache(t *testing.T, dir, file, wantPassword string) time.Time {
	t.Helper()
	st, err := os.Stat(dir)
	nodeHelper.must(t, "cache directory "+dir, err)
	nodeHelper.check(t, "cache directory mode", st.Mode().Perm() == 0o700, "%v, want 0700", st.Mode().Perm())
	st, err = os.Stat(file)
	nodeHelper.must(t, "cache entry", err)
	nodeHelper.check(t, "cache entry mode", st.Mode().Perm() == 0o600, "%v, want 0600", st.Mode().Perm())
	f, err := os.Open(file)
	nodeHelper.must(t, "open cache entry", err)
	defer f.Close()
	var lines []string
	for s := bufio.NewScanner(f); s.Scan(); {
		lines = append(lines, s.Text())
	}
	nodeHelper.check(t, "cache entry format", len(lines) == 4 && lines[0] == "v1" && lines[2] == "AWS",
		"%d lines, want v1, expiry, user AWS, password", len(lines))
	nodeHelper.check(t, "cache entry password", lines[3] == wantPassword, "not the token the plugin returned last")
	secs, err := strconv.ParseInt(lines[1], 10, 64)
	nodeHelper.must(t, "cache entry expiry", err)
	return time.Unix(secs, 0)
}

// registriesConfFor writes policy as the MCO writes an ImageDigestMirrorSet
// into /etc/containers/registries.conf (containers/image 5.23 syntax).
func registriesConfFor(policy *mirrorpolicy.Policy) []byte {
	var b bytes.Buffer
	b.WriteString("unqualified-search-registries = []\nshort-name-mode = \"\"\n")
	bySource := map[string][]mirrorpolicy.Rule{}
	var sources []string
	for _, r := range policy.Rules() {
		if _, ok := bySource[r.Source]; !ok {
			sources = append(sources, r.Source)
		}
		bySource[r.Source] = append(bySource[r.Source], r)
	}
	slices.Sort(sources)
	for _, src := range sources {
		fmt.Fprintf(&b, "\n[[registry]]\n  prefix = \"\"\n  location = %q\n", src)
		if bySource[src][0].NeverContactSource {
			b.WriteString("  blocked = true\n")
		}
		for _, r := range bySource[src] {
			from := map[mirrorpolicy.Kind]string{mirrorpolicy.DigestMirrors: "digest-only", mirrorpolicy.TagMirrors: "tag-only", mirrorpolicy.AllMirrors: "all"}[r.Kind]
			for _, m := range r.Mirrors {
				fmt.Fprintf(&b, "\n  [[registry.mirror]]\n    location = %q\n    pull-from-mirror = %q\n", m, from)
			}
		}
	}
	return b.Bytes()
}

// nodeNamespace runs a client as it would run on a node: in a private mount
// namespace whose /etc/hosts maps the test's names and where node paths are
// bind-mounted from the test's directories, with a minimal environment
// (systemd's default PATH, which has /usr/local/bin) plus env.
type nodeNamespace struct {
	home  string
	hosts string      // contents of /etc/hosts
	binds [][2]string // {from, to}
	env   []string
}

func (n *nodeNamespace) run(ctx context.Context, t *testing.T, argv ...string) runResult {
	t.Helper()
	hosts := filepath.Join(n.home, "hosts")
	harness.must(t, "write hosts file", os.WriteFile(hosts, []byte(n.hosts), 0o644))
	// sh -c 'mount --bind "$1" "$2" && ... && exec "$@"' with the pairs
	// shifted off first.
	script := `set -e; mount --bind "$1" /etc/hosts; shift; n=$1; shift; while [ "$n" -gt 0 ]; do mount --bind "$1" "$2"; shift 2; n=$((n-1)); done; exec "$@"`
	args := []string{"-m", "--propagation", "private", "--", "sh", "-c", script, "sh", hosts, strconv.Itoa(len(n.binds))}
	for _, b := range n.binds {
		args = append(args, b[0], b[1])
	}
	args = append(args, argv...)
	return unshare(ctx, cleanEnv(n.home, n.env...), args...)
}

// unreachable is a loopback address that accepts TCP connections and closes
// them at once, counting them: a registry that cannot be reached, which
// also proves that nothing else answers there.
type unreachable struct {
	l        net.Listener
	accepted atomic.Int64
}

func startUnreachable(t *testing.T, addr string) *unreachable {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	harness.must(t, "listen on "+addr+" (quay.io's stand-in, which drops every connection)", err)
	u := &unreachable{l: l}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u.accepted.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = l.Close(); <-done })
	return u
}

// Accepted returns how many connections were dropped so far.
func (u *unreachable) Accepted() int64 { return u.accepted.Load() }
