//go:build conformance

package conformance

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/credentialprovider"
)

// Environment of the suite (set by `make conformance`).
const (
	// envProvider is the path of the ecr-credential-provider binary that
	// setup.sh built; without it the default cache location is tried.
	envProvider = "ECR_CREDENTIAL_PROVIDER"
	// envProviderVersion is the k8s.io/cloud-provider-aws module version it
	// was built from.
	envProviderVersion = "ECR_PROVIDER_VERSION"
	// envPluginMode makes the test binary act as a KEP-2133 plugin whose main
	// is credentialprovider.Serve (see servePlugin).
	envPluginMode = "CONFORMANCE_PLUGIN_MODE"
)

const defaultProviderVersion = "v1.37.1"

// The components under test. Their versions are found once, in TestMain.
var (
	dockerRegistry = peer{name: "docker-registry"}
	skopeo         = peer{name: "skopeo"}
	htpasswdTool   = peer{name: "htpasswd"}
	ecrProvider    = peer{name: "ecr-credential-provider"}
	awsSDK         = peer{name: "aws-sdk-go-v2/config"}
	fakeIMDS       = peer{name: "fakeimds"}
	// Ours.
	keychain     = peer{name: "registryauth.Keychain"}
	augment      = peer{name: "registryauth.Keychain.Augment"}
	pluginSource = peer{name: "credentialprovider.PluginSource"}
	serve        = peer{name: "credentialprovider.Serve"}
	reader       = peer{name: "releaseinfo/remote.Reader"}
	harness      = peer{name: "conformance harness"}
)

func TestMain(m *testing.M) {
	if os.Getenv(envPluginMode) != "" {
		os.Exit(servePlugin())
	}
	discoverPeers()
	code := m.Run()
	if left := leftoverChildren(); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "conformance harness: processes left behind: %s\n", strings.Join(left, ", "))
		code = 1
	}
	os.Exit(code)
}

// discoverPeers finds each real component and its version. A missing one is
// recorded in its peer and fails the tests that need it, naming it.
func discoverPeers() {
	version := func(p *peer, path string, args ...string) {
		p.path = path
		if p.path == "" {
			lp, err := exec.LookPath(p.name)
			if err != nil {
				p.missing = fmt.Errorf("not installed (run `make conformance`, which runs testing/conformance/setup.sh): %w", err)
				return
			}
			p.path = lp
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, p.path, args...).CombinedOutput()
		if err != nil {
			p.missing = fmt.Errorf("%s %s: %w: %s", p.path, strings.Join(args, " "), err, out)
			return
		}
		p.version = lastField(string(out))
	}
	// "docker-registry github.com/docker/distribution 2.8.2+ds1"
	version(&dockerRegistry, "", "--version")
	// "skopeo version 1.9.3"
	version(&skopeo, "", "--version")

	// htpasswd has no --version; the Debian package's version stands for it.
	htpasswdTool.path, _ = exec.LookPath("htpasswd")
	if htpasswdTool.path == "" {
		htpasswdTool.missing = fmt.Errorf("not installed (apt-get install apache2-utils, or `make conformance`)")
	} else if out, err := exec.Command("dpkg-query", "-W", "-f=${Version}", "apache2-utils").Output(); err == nil {
		htpasswdTool.version = "(apache2-utils " + strings.TrimSpace(string(out)) + ")"
	}

	providerPath := os.Getenv(envProvider)
	moduleVersion := os.Getenv(envProviderVersion)
	if moduleVersion == "" {
		moduleVersion = defaultProviderVersion
	}
	if providerPath == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		providerPath = filepath.Join(cache, "hypershift-ecr", "conformance", "ecr-credential-provider", moduleVersion, "ecr-credential-provider")
	}
	if _, err := os.Stat(providerPath); err != nil {
		ecrProvider.missing = fmt.Errorf("not built (run `make conformance`, which runs testing/conformance/setup.sh): %w", err)
	} else {
		version(&ecrProvider, providerPath, "--version")
		// The module and the SDK it was linked with, from the binary itself.
		if bi, err := buildinfo.ReadFile(providerPath); err == nil {
			ecrProvider.detail = "module " + bi.Main.Path + "@" + moduleVersion
			if v := depVersion(bi.Deps, "github.com/aws/aws-sdk-go-v2/config"); v != "" {
				ecrProvider.detail += ", aws-sdk-go-v2/config " + v
			}
		}
	}

	if bi, ok := debug.ReadBuildInfo(); ok {
		awsSDK.version = depVersion(bi.Deps, "github.com/aws/aws-sdk-go-v2/config")
	}
	if awsSDK.version == "" {
		// Test binaries may carry no dependency list: read the main go.mod
		// (go test runs in the package directory).
		awsSDK.version = goModVersion("../../go.mod", "github.com/aws/aws-sdk-go-v2/config")
	}
	fakeIMDS.version = "(testing/fakeimds)"
}

func depVersion(deps []*debug.Module, path string) string {
	for _, d := range deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}

// goModVersion returns the version a go.mod requires of module, or "".
func goModVersion(file, module string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == module {
			return f[1]
		}
	}
	return ""
}

func lastField(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

// TestComponentVersions records, in the test log, the version of every real
// component the suite ran against.
func TestComponentVersions(t *testing.T) {
	for _, p := range []*peer{&dockerRegistry, &skopeo, &htpasswdTool, &ecrProvider, &awsSDK} {
		if p.missing != nil {
			t.Errorf("%s: locate: %v", p.name, p.missing)
			continue
		}
		line := p.String()
		if p.path != "" {
			line += " at " + p.path
		}
		if p.detail != "" {
			line += " (" + p.detail + ")"
		}
		t.Log(line)
	}
}

// leftoverChildren lists the processes whose parent is this test binary:
// every process a test started must have been stopped by then.
func leftoverChildren() []string {
	me := strconv.Itoa(os.Getpid())
	entries, _ := os.ReadDir("/proc")
	var left []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so cut at the last ')'.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[1] != me {
			continue
		}
		left = append(left, fmt.Sprintf("%d %s", pid, s[strings.IndexByte(s, '(')+1:i]))
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return left
}

// servePlugin is the main of a KEP-2133 plugin binary built on this module:
// a Keychain over the real SDK credential chain (static keys, region and
// AWS_ENDPOINT_URL_ECR from the environment, as the kubelet passes them)
// answering one request with credentialprovider.Serve.
func servePlugin() int {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load AWS config:", err)
		return 1
	}
	kc, err := registryauth.NewKeychain(registryauth.WithAWSConfig(cfg))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer kc.Close()
	if err := credentialprovider.Serve(ctx, kc, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
