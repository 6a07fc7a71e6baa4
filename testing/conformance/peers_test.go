//go:build conformance

package conformance

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/ggcrauth"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

// The registry as production names it, and where it really listens.
const (
	region       = "us-east-1"
	registryHost = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	registryAddr = "127.0.0.2:443"
	// releaseRepo is where the fixture release is pushed: an ECR mirror of
	// quay.io/openshift-release-dev/ocp-release.
	releaseRepo = registryHost + "/openshift-release-dev/ocp-release"
	releaseTag  = releaseRepo + ":4.10.0-0.nightly-2021-11-14-184249-x86_64"

	// Static test keys (AWS's documented examples).
	testAccessKeyID     = "AKIAIOSFODNN7EXAMPLE"
	testSecretAccessKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

// peer is a component under test, named with its version in every failure.
type peer struct {
	name, version string
	path, detail  string
	missing       error
}

func (p peer) String() string {
	if p.version == "" {
		return p.name
	}
	return p.name + " " + p.version
}

// need fails the test when the component could not be found.
func (p peer) need(t testing.TB) {
	t.Helper()
	if p.missing != nil {
		t.Fatalf("%s: locate: %v", p.name, p.missing)
	}
}

// must fails the test with "<component>: <step>: <err>" when err is not nil.
func (p peer) must(t testing.TB, step string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %s: %v", p, step, err)
	}
}

// check fails the test with "<component>: <step>: <message>" unless ok.
func (p peer) check(t testing.TB, step string, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf("%s: %s: %s", p, step, fmt.Sprintf(format, args...))
	}
}

// with names two components working together, e.g. our reader reading from
// docker-registry: "releaseinfo/remote.Reader against docker-registry 2.8.2+ds1".
func (p peer) with(other peer) peer {
	return peer{name: p.String() + " against " + other.String()}
}

// --- TLS -----------------------------------------------------------------

// testCA is a certificate authority made for one test, and a serving
// certificate it signed for the registry's production name.
type testCA struct {
	pool              *x509.CertPool
	caPEM             []byte
	certPEM, keyPEM   []byte
	certDir, caFile   string // certDir holds ca.crt, as skopeo's --cert-dir wants
	certFile, keyFile string
}

func newTestCA(t *testing.T, dir string) *testCA {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	harness.must(t, "generate CA key", err)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "hypershift-ecr conformance CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(2 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	harness.must(t, "create CA certificate", err)
	caCert, err := x509.ParseCertificate(caDER)
	harness.must(t, "parse CA certificate", err)

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	harness.must(t, "generate server key", err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: registryHost},
		DNSNames:     []string{registryHost},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.2")},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(2 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	harness.must(t, "create server certificate", err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	harness.must(t, "encode server key", err)

	ca := &testCA{
		pool:    x509.NewCertPool(),
		caPEM:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		certDir: filepath.Join(dir, "certs.d"),
	}
	ca.pool.AddCert(caCert)
	ca.caFile = filepath.Join(ca.certDir, "ca.crt")
	ca.certFile = filepath.Join(dir, "tls.crt")
	ca.keyFile = filepath.Join(dir, "tls.key")
	harness.must(t, "write certificates", errors.Join(
		os.MkdirAll(ca.certDir, 0o700),
		os.WriteFile(ca.caFile, ca.caPEM, 0o600),
		os.WriteFile(ca.certFile, ca.certPEM, 0o600),
		os.WriteFile(ca.keyFile, ca.keyPEM, 0o600),
	))
	return ca
}

// --- docker-registry -------------------------------------------------------

// realRegistry is Debian's docker-registry serving registryHost on
// registryAddr over TLS, with htpasswd authentication of the single user
// "AWS" whose password SetPassword rotates while it runs.
type realRegistry struct {
	t        *testing.T
	ca       *testCA
	dir      string
	htpasswd string
	logFile  string

	mu       sync.Mutex
	password string // the one the registry accepts now
	mtime    time.Time
}

func startRegistry(t *testing.T) *realRegistry {
	t.Helper()
	dockerRegistry.need(t)
	htpasswdTool.need(t)
	dir := t.TempDir()
	r := &realRegistry{
		t:        t,
		ca:       newTestCA(t, dir),
		dir:      dir,
		htpasswd: filepath.Join(dir, "htpasswd"),
		logFile:  filepath.Join(dir, "registry.log"),
	}
	// Nobody knows the first password: nothing is accepted before the
	// fake ECR issues a token.
	r.SetPassword(randomHex(t, 24))

	// Fail clearly when the address is taken (another run, a leftover).
	l, err := net.Listen("tcp", registryAddr)
	dockerRegistry.must(t, "listen on "+registryAddr+" (needs root and a free port)", err)
	_ = l.Close()

	cfg := fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
  secret: %s
  tls:
    certificate: %s
    key: %s
auth:
  htpasswd:
    realm: https://%s/
    path: %s
`, filepath.Join(dir, "storage"), registryAddr, randomHex(t, 16), r.ca.certFile, r.ca.keyFile, registryHost, r.htpasswd)
	cfgFile := filepath.Join(dir, "config.yml")
	harness.must(t, "write docker-registry config", os.WriteFile(cfgFile, []byte(cfg), 0o600))

	logf, err := os.Create(r.logFile)
	harness.must(t, "create docker-registry log", err)
	cmd := exec.Command(dockerRegistry.path, "serve", cfgFile)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = cleanEnv(dir) // no REGISTRY_* override from the caller
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	dockerRegistry.must(t, "start `docker-registry serve`", cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		_ = logf.Close()
		if t.Failed() {
			t.Logf("%s log:\n%s", dockerRegistry, r.logTail())
		}
	})

	// Ready when /v2/ asks for credentials over TLS with our CA.
	client := &http.Client{Transport: r.Transport(), Timeout: 2 * time.Second}
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("%s: start: exited early (%v):\n%s", dockerRegistry, err, r.logTail())
		default:
		}
		resp, err := client.Get("https://" + registryHost + "/v2/")
		if err == nil {
			_ = resp.Body.Close()
			dockerRegistry.check(t, "first /v2/ without credentials", resp.StatusCode == http.StatusUnauthorized,
				"status %d, want 401 with a Basic challenge", resp.StatusCode)
			dockerRegistry.check(t, "first /v2/ without credentials", strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic "),
				"challenge %q, want Basic", resp.Header.Get("WWW-Authenticate"))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: start: not serving on %s after 20s: %v\n%s", dockerRegistry, registryAddr, err, r.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return r
}

func (r *realRegistry) logTail() string {
	b, _ := os.ReadFile(r.logFile)
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return string(b)
}

// SetPassword makes "AWS"/password the only credential the registry accepts,
// by rewriting its htpasswd file with `htpasswd -B` (bcrypt) and a new
// modification time, which docker-registry checks on every request. The
// password goes to htpasswd on stdin, never on a command line.
func (r *realRegistry) SetPassword(password string) {
	if err := r.setPassword(password); err != nil {
		r.t.Errorf("%s: rotate password: %v", htpasswdTool, err)
	}
}

func (r *realRegistry) setPassword(password string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	tmp := r.htpasswd + ".new"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, htpasswdTool.path, "-B", "-i", "-c", tmp, "AWS")
	cmd.Stdin = strings.NewReader(password)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("htpasswd -B -i -c: %w: %s", err, out)
	}
	mtime := time.Now()
	if !mtime.After(r.mtime) {
		mtime = r.mtime.Add(time.Second)
	}
	if err := os.Chtimes(tmp, mtime, mtime); err != nil {
		return err
	}
	if err := os.Rename(tmp, r.htpasswd); err != nil {
		return err
	}
	r.mtime, r.password = mtime, password
	return nil
}

// Password returns the password the registry accepts now.
func (r *realRegistry) Password() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.password
}

// Transport reaches registryHost at registryAddr, trusting the test CA,
// and refuses to dial anything else: Go clients use production names
// while nothing leaves loopback.
func (r *realRegistry) Transport() *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr != registryHost+":443" {
				return nil, fmt.Errorf("conformance transport: refusing to dial %s (only %s is served, at %s)", addr, registryHost, registryAddr)
			}
			return d.DialContext(ctx, network, registryAddr)
		},
		TLSClientConfig:     &tls.Config{RootCAs: r.ca.pool, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: 5 * time.Second,
		MaxIdleConnsPerHost: 4,
	}
}

// Ping sends GET /v2/ with Basic credentials and returns the status code.
func (r *realRegistry) Ping(ctx context.Context, username, password string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+registryHost+"/v2/", nil)
	if err != nil {
		return 0, err
	}
	req.SetBasicAuth(username, password)
	tr := r.Transport()
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// Push writes the image with go-containerregistry, authenticated by src
// (through ggcrauth, as a HyperShift component would).
func (r *realRegistry) Push(ctx context.Context, ref string, p *releasepayload.Payload, src registryauth.CredentialSource) error {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return err
	}
	tr := r.Transport()
	defer tr.CloseIdleConnections()
	return remote.Write(tag, p.Image, remote.WithContext(ctx), remote.WithTransport(tr),
		remote.WithAuthFromKeychain(ggcrauth.NewKeychain(src)))
}

// --- fake ECR over HTTP, wired to the registry -----------------------------

// ecrEndpoint is the fake ECR API over its wire protocol on 127.0.0.1. Each
// token it issues becomes the registry's only password before the answer
// leaves, as ECR's registry accepts what GetAuthorizationToken issued (the
// real ECR also keeps earlier tokens valid; htpasswd holds one, which lets the
// tests prove that clients follow rotation).
type ecrEndpoint struct {
	*fakeecr.ECR
	URL    string
	issued []string // passwords, in order
	mu     sync.Mutex
}

func startECR(t *testing.T, reg *realRegistry, opts ...fakeecr.Option) *ecrEndpoint {
	t.Helper()
	e := &ecrEndpoint{ECR: fakeecr.New(opts...)}
	inner := e.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, req)
		if rec.Code == http.StatusOK {
			password, err := passwordOf(rec.Body.Bytes())
			if err != nil {
				t.Errorf("fakeecr: decode own answer: %v", err)
				http.Error(w, "conformance harness: cannot decode the fake's answer", http.StatusInternalServerError)
				return
			}
			if reg != nil {
				if err := reg.setPassword(password); err != nil {
					t.Errorf("%s: rotate password to the new ECR token: %v", htpasswdTool, err)
					http.Error(w, "conformance harness: cannot rotate the registry password", http.StatusInternalServerError)
					return
				}
			}
			e.mu.Lock()
			e.issued = append(e.issued, password)
			e.mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	e.URL = srv.URL
	return e
}

// Issued returns the passwords of every token issued so far, oldest first.
func (e *ecrEndpoint) Issued() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.issued...)
}

func passwordOf(body []byte) (string, error) {
	var out struct {
		AuthorizationData []struct {
			AuthorizationToken string `json:"authorizationToken"`
		} `json:"authorizationData"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return "", err
	}
	if len(out.AuthorizationData) == 0 {
		return "", errors.New("no authorizationData")
	}
	raw, err := base64.StdEncoding.DecodeString(out.AuthorizationData[0].AuthorizationToken)
	if err != nil {
		return "", err
	}
	user, password, ok := strings.Cut(string(raw), ":")
	if !ok || user != "AWS" {
		return "", errors.New("token is not AWS:<password>")
	}
	return password, nil
}

// staticConfig is an AWS config with the static test keys, as a process
// with environment keys gets from config.LoadDefaultConfig.
func staticConfig() aws.Config {
	return aws.Config{
		Region:      region,
		Credentials: credentials.NewStaticCredentialsProvider(testAccessKeyID, testSecretAccessKey, ""),
	}
}

// newKeychain is our Keychain over the real SDK client, sent to the fake ECR.
func newKeychain(t *testing.T, e *ecrEndpoint, opts ...registryauth.Option) *registryauth.Keychain {
	t.Helper()
	kc, err := registryauth.NewKeychain(append([]registryauth.Option{
		registryauth.WithAWSConfig(staticConfig(), registryauth.WithEndpoint(e.URL)),
	}, opts...)...)
	keychain.must(t, "NewKeychain", err)
	t.Cleanup(func() { _ = kc.Close() })
	return kc
}

// --- processes ---------------------------------------------------------------

// cleanEnv is a minimal environment for a child process: no proxy, no AWS or
// REGISTRY_* settings of the caller, a private HOME.
func cleanEnv(home string, extra ...string) []string {
	env := []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + home,
		"TMPDIR=" + home,
		"XDG_RUNTIME_DIR=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"LANG=C.UTF-8",
	}
	return append(env, extra...)
}

// runResult is what a command-line client did.
type runResult struct {
	stdout, stderr []byte
	err            error
}

// runWithHosts runs a command-line client in a private mount namespace
// whose /etc/hosts maps registryHost to 127.0.0.2, so the client dials the
// local docker-registry under the production name. Nothing outside the
// namespace sees the mapping. The process is bounded by a timeout and
// killed with the test binary.
func runWithHosts(ctx context.Context, t *testing.T, home string, argv ...string) runResult {
	t.Helper()
	hosts := filepath.Join(home, "hosts")
	if _, err := os.Stat(hosts); err != nil {
		harness.must(t, "write hosts file", os.WriteFile(hosts,
			[]byte("127.0.0.1\tlocalhost\n::1\tlocalhost\n127.0.0.2\t"+registryHost+"\n"), 0o644))
	}
	args := append([]string{"-m", "--propagation", "private", "--", "sh", "-c",
		`mount --bind "$0" /etc/hosts && exec "$@"`, hosts}, argv...)
	return unshare(ctx, cleanEnv(home), args...)
}

// unshare runs `unshare args...` with env, bounded by a timeout, in a
// process group killed with the test binary or when ctx ends.
func unshare(ctx context.Context, env []string, args ...string) runResult {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return runResult{stdout: stdout.Bytes(), stderr: stderr.Bytes(), err: err}
}

func (r runResult) failure() error {
	if r.err == nil {
		return nil
	}
	return fmt.Errorf("%w\nstderr: %s", r.err, bytes.TrimSpace(r.stderr))
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	_, err := io.ReadFull(rand.Reader, b)
	harness.must(t, "random bytes", err)
	return hex.EncodeToString(b)
}

// buildPayload is the fixture release: 4.10 image-references and boot images
// of a real nightly, with small filler layers.
func buildPayload(t *testing.T) *releasepayload.Payload {
	t.Helper()
	p, err := releasepayload.Build()
	harness.must(t, "build fixture release payload", err)
	return p
}
