package nodeconfig

import (
	"cmp"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
)

const (
	// DefaultName is the default name of the MachineConfig and its
	// ConfigMap. It sorts after the MCO's "00-worker" and
	// "01-worker-kubelet", so its kubelet credential provider file replaces
	// the stock one.
	DefaultName = "99-worker-ecr-credential-helper"
	// DefaultHelperName is the default credential helper name: the
	// registries.conf entry, the executable "docker-credential-<name>" and
	// the cache directory "/run/<name>".
	DefaultHelperName = "ecr-login-kubelet"
	// HelperDir is where the helper is installed. On RHCOS /usr/local is
	// writable (/var/usrlocal) and /usr/local/bin is on systemd's default
	// PATH, which CRI-O and rpm-ostreed inherit; /usr/bin is read-only.
	HelperDir = "/usr/local/bin"
	// DropInDir is the registries.conf drop-in directory containers/image reads.
	DropInDir = "/etc/containers/registries.conf.d"
	// PluginDir is the kubelet's --image-credential-provider-bin-dir on
	// OpenShift (MCO), where RHCOS ships ecr-credential-provider.
	PluginDir = "/usr/libexec/kubelet-image-credential-provider-plugins"
	// DefaultPluginPath is the RHCOS ecr-credential-provider plugin.
	DefaultPluginPath = PluginDir + "/ecr-credential-provider"
	// KubeletConfigPath is the kubelet's --image-credential-provider-config
	// on OpenShift on AWS.
	KubeletConfigPath = "/etc/kubernetes/credential-providers/ecr-credential-provider.yaml"
	// DefaultCacheDuration is the default of Options.CacheDuration: half
	// an ECR token's 12 h life.
	DefaultCacheDuration = 6 * time.Hour
	// CacheDirEnv names the environment variable that moves the helper's
	// cache directory away from /run/<helper name>. It exists for tests.
	CacheDirEnv = "HYPERSHIFT_ECR_HELPER_CACHE_DIR"
	// RoleLabel is the MachineConfig label HyperShift and the MCO select on.
	RoleLabel = "machineconfiguration.openshift.io/role"

	// authFileHelper is containers/image's pseudo-helper for auth files
	// (sysregistriesv2.AuthenticationFileHelper).
	authFileHelper          = "containers-auth.json"
	kubeletConfigAPIVersion = "kubelet.config.k8s.io/v1"
	pluginAPIVersion        = "credentialprovider.kubelet.k8s.io/v1"
	// mcoKubeletMachineConfig is the last stock MachineConfig that writes
	// the kubelet's files; ours must sort after it to win.
	mcoKubeletMachineConfig = "01-worker-kubelet"
	maxCacheDuration        = 12 * time.Hour
)

// Options says what to render. The zero value of every field but Policy has
// a documented default.
type Options struct {
	// Policy is the mirror policy the nodes will apply. Every mirror host in
	// it must be an ECR registry host or one of Aliases: the helper serves
	// nothing else. A nil Policy has no mirrors (the configuration then
	// serves direct ECR pulls only, with a warning).
	Policy *mirrorpolicy.Policy
	// Aliases are CNAMEs of ECR registries (see ecrhost.Alias). The helper
	// and the kubelet serve them with the registry behind each one.
	Aliases []ecrhost.Alias
	// PullSecret is the HostedCluster pull secret, read only to warn about
	// entries that would shadow the helper. It is never rendered.
	PullSecret []byte
	// Name names the MachineConfig and the ConfigMap. It must sort after
	// "01-worker-kubelet". The default is DefaultName.
	Name string
	// Namespace is the ConfigMap's namespace (the NodePool's). The default
	// is none.
	Namespace string
	// HelperName is the credential helper's name (lower-case letters,
	// digits and '-'). The default is DefaultHelperName.
	HelperName string
	// PluginPath is the kubelet credential provider plugin the helper runs
	// and the kubelet config names (by its base name). The default is
	// DefaultPluginPath.
	PluginPath string
	// PluginArgs and PluginEnv are given to the plugin by the kubelet and
	// by the helper alike. PluginEnv is rendered sorted by name.
	PluginArgs []string
	PluginEnv  []kubeletconfigv1.ExecEnvVar
	// CacheDuration is the kubelet's defaultCacheDuration and the longest
	// time the helper keeps an answer; both use the plugin's cacheDuration
	// when it is shorter. It must be at least a second and under 12 h. The
	// default is DefaultCacheDuration.
	CacheDuration time.Duration
	// ExtraProviders are rendered after the ECR provider in the kubelet
	// config, which replaces the stock file whole: list here any other
	// provider the stock file has that the nodes still need (newer MCOs add
	// crio-credential-provider).
	ExtraProviders []kubeletconfigv1.CredentialProvider
}

// File is one file of the rendered configuration.
type File struct {
	Path     string
	Mode     int // permission bits, e.g. 0o755
	Contents []byte
}

// Rendered is the node configuration. It holds no credential.
type Rendered struct {
	// DropIn is the registries.conf drop-in at DropInPath.
	DropIn     []byte
	DropInPath string
	// Helper is the credential helper executable at HelperPath.
	Helper     []byte
	HelperPath string
	// KubeletConfig is the CredentialProviderConfig at KubeletConfigPath.
	KubeletConfig []byte
	// Files are the three files, sorted by path, as the Ignition config
	// writes them.
	Files []File
	// MachineConfig writes Files on the worker nodes.
	MachineConfig *mcfgv1.MachineConfig
	// ConfigMap holds MachineConfig as YAML under the key "config", ready
	// for NodePool.spec.config.
	ConfigMap *corev1.ConfigMap
	// Ignition is the Ignition 3.2.0 config inside MachineConfig, as JSON.
	Ignition []byte
	// Warnings are problems that do not stop the configuration from
	// working but need attention, sorted. They name hosts, never secrets.
	Warnings []string
}

// config is Options with defaults applied and everything derived from them.
type config struct {
	Options
	parser      *ecrhost.Parser
	aliases     []aliasTarget // sorted by host
	helperPath  string
	dropInPath  string
	cacheSecs   int64
	env         []kubeletconfigv1.ExecEnvVar // sorted by name
	matchImages []string
	warnings    []string
}

// Render renders the node configuration for opts. It fails with an
// *OptionError for invalid options, an *ecrhost.AliasError for an invalid
// alias, *MirrorError values (joined) for mirror hosts the helper cannot
// serve, and a wrapped *dockerconfig.ParseError for a malformed pull secret.
// The same options always give the same bytes.
func Render(opts Options) (*Rendered, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := c.checkMirrors(); err != nil {
		return nil, err
	}
	if err := c.checkPullSecret(); err != nil {
		return nil, err
	}
	c.planKubeletAliases()

	r := &Rendered{DropInPath: c.dropInPath, HelperPath: c.helperPath}
	r.DropIn = c.dropIn()
	if r.Helper, err = c.helper(); err != nil {
		return nil, err
	}
	if r.KubeletConfig, err = c.kubeletConfig(); err != nil {
		return nil, err
	}
	r.Files = []File{
		{Path: c.dropInPath, Mode: 0o644, Contents: r.DropIn},
		{Path: KubeletConfigPath, Mode: 0o644, Contents: r.KubeletConfig},
		{Path: c.helperPath, Mode: 0o755, Contents: r.Helper},
	}
	slices.SortFunc(r.Files, func(a, b File) int { return cmp.Compare(a.Path, b.Path) })
	if err := c.manifests(r); err != nil {
		return nil, err
	}
	slices.Sort(c.warnings)
	r.Warnings = slices.Compact(c.warnings)
	return r, nil
}

var (
	helperNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$`)
	envNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// dns1123Subdomain is Kubernetes' rule for object names.
	dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	dns1123Label     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
)

func newConfig(opts Options) (*config, error) {
	c := &config{Options: opts}
	// Copy what the caller passed so later mutation cannot leak in.
	c.Aliases = slices.Clone(opts.Aliases)
	c.PullSecret = slices.Clone(opts.PullSecret)
	c.PluginArgs = slices.Clone(opts.PluginArgs)
	c.ExtraProviders = make([]kubeletconfigv1.CredentialProvider, len(opts.ExtraProviders))
	for i := range opts.ExtraProviders {
		opts.ExtraProviders[i].DeepCopyInto(&c.ExtraProviders[i])
	}
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.HelperName == "" {
		c.HelperName = DefaultHelperName
	}
	if c.PluginPath == "" {
		c.PluginPath = DefaultPluginPath
	}
	if c.CacheDuration == 0 {
		c.CacheDuration = DefaultCacheDuration
	}

	switch {
	case len(c.Name) > 253 || !dns1123Subdomain.MatchString(c.Name):
		return nil, optionError("Name", "must be a Kubernetes object name (lower-case DNS subdomain)")
	case c.Name <= mcoKubeletMachineConfig:
		return nil, optionError("Name", fmt.Sprintf("must sort after %q, or the stock kubelet credential provider config wins", mcoKubeletMachineConfig))
	case c.Namespace != "" && (len(c.Namespace) > 63 || !dns1123Label.MatchString(c.Namespace)):
		return nil, optionError("Namespace", "must be a Kubernetes namespace name")
	case !helperNameRE.MatchString(c.HelperName):
		return nil, optionError("HelperName", "must be 1-40 lower-case letters, digits or '-', not starting or ending with '-'")
	case !path.IsAbs(c.PluginPath) || path.Clean(c.PluginPath) != c.PluginPath || c.PluginPath == "/":
		return nil, optionError("PluginPath", "must be a clean absolute path")
	case hasControl(c.PluginPath):
		return nil, optionError("PluginPath", "must not contain control characters")
	case c.CacheDuration < time.Second || c.CacheDuration >= maxCacheDuration:
		return nil, optionError("CacheDuration", "must be at least 1s and under 12h, the life of an ECR token")
	}
	for i, a := range c.PluginArgs {
		if hasControl(a) {
			return nil, optionError(fmt.Sprintf("PluginArgs[%d]", i), "must not contain control characters")
		}
	}
	c.env = slices.Clone(opts.PluginEnv)
	slices.SortStableFunc(c.env, func(a, b kubeletconfigv1.ExecEnvVar) int { return cmp.Compare(a.Name, b.Name) })
	for i, e := range c.env {
		field := "PluginEnv[" + e.Name + "]"
		switch {
		case !envNameRE.MatchString(e.Name):
			return nil, optionError("PluginEnv", fmt.Sprintf("name %q is not an environment variable name", e.Name))
		case i > 0 && c.env[i-1].Name == e.Name:
			return nil, optionError(field, "is given more than once")
		case hasControl(e.Value):
			return nil, optionError(field, "must not contain control characters")
		}
	}
	pluginName := path.Base(c.PluginPath)
	seen := map[string]bool{pluginName: true}
	for i, p := range c.ExtraProviders {
		if seen[p.Name] {
			return nil, optionError(fmt.Sprintf("ExtraProviders[%d]", i), fmt.Sprintf("repeats provider name %q", p.Name))
		}
		seen[p.Name] = true
	}
	if path.Dir(c.PluginPath) != PluginDir {
		c.warn("the kubelet runs credential provider plugins from %s only, so provider %q of the kubelet config will not be found; the CRI-O helper runs %s as given",
			PluginDir, pluginName, c.PluginPath)
	}

	var err error
	if c.parser, err = ecrhost.NewParser(c.Aliases...); err != nil {
		return nil, fmt.Errorf("nodeconfig: %w", err)
	}
	if c.aliases, err = aliasTargets(c.parser, c.Aliases); err != nil {
		return nil, err
	}
	c.cacheSecs = int64(c.CacheDuration / time.Second)
	c.helperPath = HelperDir + "/docker-credential-" + c.HelperName
	c.dropInPath = DropInDir + "/99-" + c.HelperName + ".conf"
	return c, nil
}

func (c *config) warn(format string, args ...any) {
	c.warnings = append(c.warnings, fmt.Sprintf(format, args...))
}

// planKubeletAliases decides which alias hosts the kubelet may serve. The
// plugin takes the region from an ECR host; for an alias it falls back to
// AWS_REGION, so an alias goes into matchImages only when AWS_REGION names
// its region. Otherwise the kubelet would hand CRI-O a token for the wrong
// region, which CRI-O uses without asking the helper.
func (c *config) planKubeletAliases() {
	c.matchImages = ecrhost.MatchImages()
	if len(c.aliases) == 0 {
		return
	}
	region, set := "", false
	for _, e := range c.env {
		if e.Name == "AWS_REGION" {
			region, set = e.Value, true
		}
	}
	if !set {
		regions := map[string]bool{}
		for _, a := range c.aliases {
			regions[a.region] = true
		}
		if len(regions) == 1 {
			region = c.aliases[0].region
			c.env = append(c.env, kubeletconfigv1.ExecEnvVar{Name: "AWS_REGION", Value: region})
			slices.SortStableFunc(c.env, func(a, b kubeletconfigv1.ExecEnvVar) int { return cmp.Compare(a.Name, b.Name) })
		}
	}
	for _, a := range c.aliases {
		if a.region == region {
			c.matchImages = append(c.matchImages, a.host)
			continue
		}
		c.warn("alias %s (region %s) is left out of the kubelet's matchImages: the plugin can serve aliases of one region only (AWS_REGION); CRI-O still gets its credentials from the helper", a.host, a.region)
	}
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// DropIn returns the registries.conf drop-in that adds helper after the
// auth files. containers/image asks the helpers in this order for each
// registry host it contacts, so the pull secret keeps serving every
// registry it has an entry for and the helper is asked only for the others.
func DropIn(helper string) []byte {
	return fmt.Appendf(nil, `# Written by hypershift-ecr pkg/nodeconfig. containers/image asks these
# in order for every registry host it contacts, mirrors included: the auth
# files (the pull secret) first, then the helper docker-credential-%s,
# which serves Amazon ECR hosts only, with the instance role.
credential-helpers = [%q, %q]
`, helper, authFileHelper, helper)
}

func (c *config) dropIn() []byte { return DropIn(c.HelperName) }
