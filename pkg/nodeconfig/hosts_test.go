package nodeconfig

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
)

// realHosts has one host per ecrhost form (the package documentation's
// examples).
var realHosts = []string{
	"123456789012.dkr.ecr.us-east-1.amazonaws.com",
	"123456789012.dkr.ecr.us-gov-west-1.amazonaws.com",
	"123456789012.dkr.ecr-fips.us-east-1.amazonaws.com",
	"123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com",
	"123456789012.dkr-ecr.us-east-1.on.aws",
	"123456789012.dkr-ecr.us-gov-east-1.on.aws",
	"123456789012.dkr-ecr-fips.us-west-2.on.aws",
	"123456789012.dkr-ecr-fips.us-gov-west-1.on.aws",
	"123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn",
	"123456789012.dkr-ecr.cn-northwest-1.on.amazonwebservices.com.cn",
	"123456789012.dkr.ecr.eusc-de-east-1.amazonaws.eu",
	"123456789012.dkr.ecr.us-iso-east-1.c2s.ic.gov",
	"123456789012.dkr.ecr.us-isob-east-1.sc2s.sgov.gov",
	"123456789012.dkr.ecr.eu-isoe-west-1.cloud.adc-e.uk",
	"123456789012.dkr.ecr.us-isof-south-1.csp.hci.ic.gov",
	"public.ecr.aws",
	"ecr-public.aws.com",
}

// kubeletGlobMatch is the kubelet's matchImages rule for a bare host: the
// same number of labels, each '*' matching one label.
func kubeletGlobMatch(glob, host string) bool {
	g, h := strings.Split(glob, "."), strings.Split(host, ".")
	if len(g) != len(h) {
		return false
	}
	for i := range g {
		if g[i] != "*" && g[i] != h[i] {
			return false
		}
	}
	return true
}

func compiledHostRegex(t testing.TB) *regexp.Regexp {
	re, err := hostRegex()
	require.NoError(t, err)
	return regexp.MustCompile(re)
}

// checkHost asserts the two properties that keep the helper and ecrhost
// from drifting: every host ecrhost.Parse accepts is served, and nothing is
// served that the kubelet's globs (the same table) would not match.
func checkHost(t testing.TB, re *regexp.Regexp, host string) {
	served := re.MatchString(host)
	if r, ok := ecrhost.Parse(host); ok && r.Host == host {
		require.True(t, served, "ecrhost.Parse accepts %q but the helper would refuse it", host)
	}
	if !served {
		return
	}
	for _, g := range ecrhost.MatchImages() {
		if kubeletGlobMatch(g, host) {
			if strings.HasPrefix(g, "*.") {
				account, _, _ := strings.Cut(host, ".")
				require.Regexp(t, `^[0-9]{12}$`, account, "host %q", host)
			}
			return
		}
	}
	t.Fatalf("the helper would serve %q, which no kubelet glob matches", host)
}

func TestHostRegex(t *testing.T) {
	re := compiledHostRegex(t)
	tests := []struct {
		name  string
		hosts []string
		want  bool
	}{
		{name: "When the host is any ECR form, it should be served", hosts: realHosts, want: true},
		{name: "When the host only looks like ECR, it should not be served", hosts: []string{
			"123456789012.dkr.ecr.us-east-1.amazonaws.com.attacker.example",
			"evil-123456789012.dkr.ecr.us-east-1.amazonaws.com",
			"x.123456789012.dkr.ecr.us-east-1.amazonaws.com",
			"1234567890123.dkr.ecr.us-east-1.amazonaws.com",
			"123456789012.dkr.ecr.us-east-1.amazonaws.com.",
			"123456789012.dkr.ecr..amazonaws.com",
			"123456789012.dkr.ecr.-us-east-1.amazonaws.com",
			"123456789012.dkrxecr.us-east-1.amazonaws.com",
			"123456789012.dkr.ecr.us-east-1.amazonawsxcom",
			"123456789012.DKR.ECR.US-EAST-1.AMAZONAWS.COM", // the helper lower-cases first
			"public.ecr.aws.attacker.example",
			"x.public.ecr.aws",
			"quay.io",
			"",
		}, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, h := range tc.hosts {
				require.Equal(t, tc.want, re.MatchString(h), "host %q", h)
				checkHost(t, re, h)
			}
		})
	}
}

func TestHostPatterns(t *testing.T) {
	tests := []struct {
		name    string
		globs   []string
		want    []string
		wantErr string
	}{
		{name: "When a glob has the account form, it should narrow the account and the region",
			globs: []string{"*.dkr.ecr.*.amazonaws.com"},
			want:  []string{`[0-9]{12}\.dkr\.ecr\.` + labelPattern + `\.amazonaws\.com`}},
		{name: "When a glob is a fixed host, it should match it literally",
			globs: []string{"public.ecr.aws"}, want: []string{`public\.ecr\.aws`}},
		{name: "When a glob has a partial wildcard, it should refuse it rather than match too much",
			globs: []string{"*.dkr.ecr.us-*.amazonaws.com"}, wantErr: `label "us-*"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := hostPatterns(tc.globs)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestAliasTargets(t *testing.T) {
	tests := []struct {
		name  string
		alias ecrhost.Alias
		want  string
	}{
		{name: "When the alias is commercial, it should point at the dkr.ecr host",
			alias: ecrhost.Alias{Host: "Registry.Example.com", AccountID: "123456789012", Region: "eu-west-1"},
			want:  "123456789012.dkr.ecr.eu-west-1.amazonaws.com"},
		{name: "When the alias is GovCloud FIPS, it should point at the dkr.ecr-fips host",
			alias: ecrhost.Alias{Host: "registry.example.com", AccountID: "123456789012", Region: "us-gov-west-1", FIPS: true},
			want:  "123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com"},
		{name: "When the alias is China dual-stack, it should point at the China dual-stack host",
			alias: ecrhost.Alias{Host: "registry.example.com", AccountID: "123456789012", Region: "cn-northwest-1", DualStack: true},
			want:  "123456789012.dkr-ecr.cn-northwest-1.on.amazonwebservices.com.cn"},
		{name: "When the alias is in the EU sovereign cloud, it should point at amazonaws.eu",
			alias: ecrhost.Alias{Host: "registry.example.com", AccountID: "123456789012", Region: "eusc-de-east-1"},
			want:  "123456789012.dkr.ecr.eusc-de-east-1.amazonaws.eu"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ecrhost.NewParser(tc.alias)
			require.NoError(t, err)
			got, err := aliasTargets(p, []ecrhost.Alias{tc.alias})
			require.NoError(t, err)
			require.Equal(t, []aliasTarget{{host: strings.ToLower(tc.alias.Host), target: tc.want, region: tc.alias.Region}}, got)
			require.True(t, compiledHostRegex(t).MatchString(got[0].target))
		})
	}
}

func FuzzHostRegex(f *testing.F) {
	for _, h := range realHosts {
		f.Add(h)
	}
	f.Add("123456789012.dkr.ecr.us-east-1.amazonaws.com.attacker.example")
	f.Add("123456789012.dkr.ecr-fips.eu-west-1.amazonaws.com")
	f.Add("123456789012.dkr.ecr.cn-north-1.amazonaws.com")
	re := compiledHostRegex(f)
	f.Fuzz(func(t *testing.T, host string) {
		checkHost(t, re, host)
	})
}
