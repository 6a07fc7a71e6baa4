package ecrhost

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	commercialHost = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	digest         = "sha256:4a5e1e4baab7a2b1f7c2d6e4f1b0e8a1c3d5e7f9a2b4c6d8e0f1a3b5c7d9e1f2"
)

func TestParse(t *testing.T) {
	commercial := Registry{Host: commercialHost, AccountID: "123456789012", Region: "us-east-1", Partition: "aws"}

	testCases := []struct {
		name  string
		input string
		want  Registry
	}{
		// Every form, with its partition, region and flags.
		{
			name:  "When the host is a commercial registry, it should report partition aws",
			input: commercialHost,
			want:  commercial,
		},
		{
			name:  "When the host is a GovCloud registry, it should report partition aws-us-gov",
			input: "123456789012.dkr.ecr.us-gov-west-1.amazonaws.com",
			want:  Registry{Host: "123456789012.dkr.ecr.us-gov-west-1.amazonaws.com", AccountID: "123456789012", Region: "us-gov-west-1", Partition: "aws-us-gov"},
		},
		{
			name:  "When the host is a commercial FIPS registry, it should set FIPS",
			input: "123456789012.dkr.ecr-fips.us-east-2.amazonaws.com",
			want:  Registry{Host: "123456789012.dkr.ecr-fips.us-east-2.amazonaws.com", AccountID: "123456789012", Region: "us-east-2", Partition: "aws", FIPS: true},
		},
		{
			name:  "When the host is a GovCloud FIPS registry, it should set FIPS in aws-us-gov",
			input: "123456789012.dkr.ecr-fips.us-gov-east-1.amazonaws.com",
			want:  Registry{Host: "123456789012.dkr.ecr-fips.us-gov-east-1.amazonaws.com", AccountID: "123456789012", Region: "us-gov-east-1", Partition: "aws-us-gov", FIPS: true},
		},
		{
			name:  "When the host is a dual-stack registry, it should set DualStack",
			input: "123456789012.dkr-ecr.eu-west-1.on.aws",
			want:  Registry{Host: "123456789012.dkr-ecr.eu-west-1.on.aws", AccountID: "123456789012", Region: "eu-west-1", Partition: "aws", DualStack: true},
		},
		{
			name:  "When the host is a GovCloud dual-stack registry, it should set DualStack in aws-us-gov",
			input: "123456789012.dkr-ecr.us-gov-west-1.on.aws",
			want:  Registry{Host: "123456789012.dkr-ecr.us-gov-west-1.on.aws", AccountID: "123456789012", Region: "us-gov-west-1", Partition: "aws-us-gov", DualStack: true},
		},
		{
			name:  "When the host is a dual-stack FIPS registry, it should set FIPS and DualStack",
			input: "123456789012.dkr-ecr-fips.us-west-2.on.aws",
			want:  Registry{Host: "123456789012.dkr-ecr-fips.us-west-2.on.aws", AccountID: "123456789012", Region: "us-west-2", Partition: "aws", FIPS: true, DualStack: true},
		},
		{
			name:  "When the host is a GovCloud dual-stack FIPS registry, it should set FIPS and DualStack in aws-us-gov",
			input: "123456789012.dkr-ecr-fips.us-gov-west-1.on.aws",
			want:  Registry{Host: "123456789012.dkr-ecr-fips.us-gov-west-1.on.aws", AccountID: "123456789012", Region: "us-gov-west-1", Partition: "aws-us-gov", FIPS: true, DualStack: true},
		},
		{
			name:  "When the host is a China registry, it should report partition aws-cn",
			input: "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn",
			want:  Registry{Host: "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn", AccountID: "123456789012", Region: "cn-north-1", Partition: "aws-cn"},
		},
		{
			name:  "When the host is a China dual-stack registry, it should set DualStack in aws-cn",
			input: "123456789012.dkr-ecr.cn-northwest-1.on.amazonwebservices.com.cn",
			want:  Registry{Host: "123456789012.dkr-ecr.cn-northwest-1.on.amazonwebservices.com.cn", AccountID: "123456789012", Region: "cn-northwest-1", Partition: "aws-cn", DualStack: true},
		},
		{
			name:  "When the host is an EU sovereign cloud registry, it should report partition aws-eusc",
			input: "123456789012.dkr.ecr.eusc-de-east-1.amazonaws.eu",
			want:  Registry{Host: "123456789012.dkr.ecr.eusc-de-east-1.amazonaws.eu", AccountID: "123456789012", Region: "eusc-de-east-1", Partition: "aws-eusc"},
		},
		{
			name:  "When the host is an ISO registry, it should report partition aws-iso",
			input: "123456789012.dkr.ecr.us-iso-east-1.c2s.ic.gov",
			want:  Registry{Host: "123456789012.dkr.ecr.us-iso-east-1.c2s.ic.gov", AccountID: "123456789012", Region: "us-iso-east-1", Partition: "aws-iso"},
		},
		{
			name:  "When the host is an ISO registry in another ISO region, it should accept it",
			input: "123456789012.dkr.ecr.us-iso-west-1.c2s.ic.gov",
			want:  Registry{Host: "123456789012.dkr.ecr.us-iso-west-1.c2s.ic.gov", AccountID: "123456789012", Region: "us-iso-west-1", Partition: "aws-iso"},
		},
		{
			name:  "When the host is an ISO-B registry, it should report partition aws-iso-b",
			input: "123456789012.dkr.ecr.us-isob-east-1.sc2s.sgov.gov",
			want:  Registry{Host: "123456789012.dkr.ecr.us-isob-east-1.sc2s.sgov.gov", AccountID: "123456789012", Region: "us-isob-east-1", Partition: "aws-iso-b"},
		},
		{
			name:  "When the host is an ISO-E registry, it should report partition aws-iso-e",
			input: "123456789012.dkr.ecr.eu-isoe-west-1.cloud.adc-e.uk",
			want:  Registry{Host: "123456789012.dkr.ecr.eu-isoe-west-1.cloud.adc-e.uk", AccountID: "123456789012", Region: "eu-isoe-west-1", Partition: "aws-iso-e"},
		},
		{
			name:  "When the host is an ISO-F registry, it should report partition aws-iso-f",
			input: "123456789012.dkr.ecr.us-isof-south-1.csp.hci.ic.gov",
			want:  Registry{Host: "123456789012.dkr.ecr.us-isof-south-1.csp.hci.ic.gov", AccountID: "123456789012", Region: "us-isof-south-1", Partition: "aws-iso-f"},
		},
		{
			name:  "When the host is ECR Public, it should report no account and us-east-1",
			input: "public.ecr.aws",
			want:  Registry{Host: "public.ecr.aws", Region: "us-east-1", Partition: "aws", Public: true},
		},
		{
			name:  "When the host is ECR Public dual-stack, it should set Public and DualStack",
			input: "ecr-public.aws.com",
			want:  Registry{Host: "ecr-public.aws.com", Region: "us-east-1", Partition: "aws", Public: true, DualStack: true},
		},
		{
			name:  "When the region is a two-digit region number, it should accept it",
			input: "123456789012.dkr.ecr.ap-southeast-10.amazonaws.com",
			want:  Registry{Host: "123456789012.dkr.ecr.ap-southeast-10.amazonaws.com", AccountID: "123456789012", Region: "ap-southeast-10", Partition: "aws"},
		},

		// Input shapes.
		{
			name:  "When the input has a port, it should drop the port",
			input: commercialHost + ":443",
			want:  commercial,
		},
		{
			name:  "When the input is an https URL without a path, it should drop the scheme",
			input: "https://" + commercialHost,
			want:  commercial,
		},
		{
			name:  "When the input is an https URL with a port and path, it should keep only the host",
			input: "https://" + commercialHost + ":443/v2/team/app/manifests/latest",
			want:  commercial,
		},
		{
			name:  "When the input is an http URL with a path, it should keep only the host",
			input: "http://" + commercialHost + "/v2/",
			want:  commercial,
		},
		{
			name:  "When the input is a URL with a query, it should keep only the host",
			input: "https://" + commercialHost + "?service=ecr",
			want:  commercial,
		},
		{
			name:  "When the input is an image reference with a tag, it should keep only the host",
			input: commercialHost + "/team/app:v1.2.3",
			want:  commercial,
		},
		{
			name:  "When the input is an image reference with a digest, it should keep only the host",
			input: commercialHost + "/team/app@" + digest,
			want:  commercial,
		},
		{
			name:  "When the input is an image reference with a port, tag and digest, it should keep only the host",
			input: commercialHost + ":443/team/app:v1@" + digest,
			want:  commercial,
		},
		{
			name:  "When the input is an ECR Public image reference, it should report ECR Public",
			input: "public.ecr.aws/docker/library/busybox:1.36",
			want:  Registry{Host: "public.ecr.aws", Region: "us-east-1", Partition: "aws", Public: true},
		},

		// Upper case is normalised.
		{
			name:  "When the host is upper case, it should lower-case Host",
			input: strings.ToUpper(commercialHost),
			want:  commercial,
		},
		{
			name:  "When the scheme and host are mixed case, it should lower-case Host and keep the path out",
			input: "HTTPS://123456789012.DKR.ECR.Us-East-1.AmazonAWS.com/Team/App",
			want:  commercial,
		},
		{
			name:  "When an image reference has an upper-case host, it should lower-case only the host",
			input: "PUBLIC.ECR.AWS/Docker/Library/BusyBox:Latest",
			want:  Registry{Host: "public.ecr.aws", Region: "us-east-1", Partition: "aws", Public: true},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Parse(tc.input)
			require.True(t, ok, "Parse(%q)", tc.input)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.want.Host, got.String())
			require.True(t, IsECR(tc.input))
		})
	}
}

// lookAlikes are inputs that resemble ECR hosts but must not get ECR
// credentials. Shared with the fuzz seed corpus.
var lookAlikes = []struct {
	name  string
	input string
}{
	{"When an ECR host is followed by another domain, it should reject it", commercialHost + ".attacker.example"},
	{"When an ECR host is followed by another domain in an image reference, it should reject it", commercialHost + ".attacker.example/team/app:latest"},
	{"When the account label has a prefix, it should reject it", "evil-" + commercialHost},
	{"When a label precedes the account, it should reject it", "evil." + commercialHost},
	{"When the account is missing, it should reject it", "dkr.ecr.us-east-1.amazonaws.com"},
	{"When the account has 11 digits, it should reject it", "12345678901.dkr.ecr.us-east-1.amazonaws.com"},
	{"When the account has 13 digits, it should reject it", "1234567890123.dkr.ecr.us-east-1.amazonaws.com"},
	{"When the account has a non-digit, it should reject it", "12345678901a.dkr.ecr.us-east-1.amazonaws.com"},
	{"When the account is empty, it should reject it", ".dkr.ecr.us-east-1.amazonaws.com"},
	{"When the region is empty, it should reject it", "123456789012.dkr.ecr..amazonaws.com"},
	{"When a label is empty, it should reject it", "123456789012..dkr.ecr.us-east-1.amazonaws.com"},
	{"When the host has a trailing dot, it should reject it", commercialHost + "."},
	{"When the region has an extra label, it should reject it", "123456789012.dkr.ecr.evil.us-east-1.amazonaws.com"},
	{"When the service label is unknown, it should reject it", "123456789012.dkr.ecs.us-east-1.amazonaws.com"},
	{"When the service is api.ecr, it should reject it as not a registry host", "123456789012.api.ecr.us-east-1.amazonaws.com"},
	{"When a China region is on amazonaws.com, it should reject it", "123456789012.dkr.ecr.cn-north-1.amazonaws.com"},
	{"When a commercial region is on amazonaws.com.cn, it should reject it", "123456789012.dkr.ecr.us-east-1.amazonaws.com.cn"},
	{"When an ISO region is on amazonaws.com, it should reject it", "123456789012.dkr.ecr.us-iso-east-1.amazonaws.com"},
	{"When an ISO-B region is on c2s.ic.gov, it should reject it", "123456789012.dkr.ecr.us-isob-east-1.c2s.ic.gov"},
	{"When a commercial region is on amazonaws.eu, it should reject it", "123456789012.dkr.ecr.eu-central-1.amazonaws.eu"},
	{"When a China region is on on.aws, it should reject it", "123456789012.dkr-ecr.cn-north-1.on.aws"},
	{"When a FIPS host is in a European region, it should reject it", "123456789012.dkr.ecr-fips.eu-west-1.amazonaws.com"},
	{"When a FIPS host is in a Canadian region, it should reject it", "123456789012.dkr.ecr-fips.ca-central-1.amazonaws.com"},
	{"When a dual-stack FIPS host is in an Asian region, it should reject it", "123456789012.dkr-ecr-fips.ap-northeast-1.on.aws"},
	{"When a FIPS host is in China, it should reject it", "123456789012.dkr.ecr-fips.cn-north-1.amazonaws.com.cn"},
	{"When a dual-stack host is in an ISO partition, it should reject it", "123456789012.dkr-ecr.us-iso-east-1.c2s.ic.gov"},
	{"When the region has no number, it should reject it", "123456789012.dkr.ecr.us-east.amazonaws.com"},
	{"When the region has only two segments, it should reject it", "123456789012.dkr.ecr.us-1.amazonaws.com"},
	{"When the region number has a leading zero, it should reject it", "123456789012.dkr.ecr.us-east-01.amazonaws.com"},
	{"When the region number has three digits, it should reject it", "123456789012.dkr.ecr.us-east-100.amazonaws.com"},
	{"When the region has a digit in a word, it should reject it", "123456789012.dkr.ecr.us-e4st-1.amazonaws.com"},
	{"When the region has a doubled hyphen, it should reject it", "123456789012.dkr.ecr.us--east-1.amazonaws.com"},
	{"When the region area is too long, it should reject it", "123456789012.dkr.ecr.useast-east-1.amazonaws.com"},
	{"When the region has an underscore, it should reject it", "123456789012.dkr.ecr.us_east_1.amazonaws.com"},
	{"When the port is empty, it should reject it", commercialHost + ":"},
	{"When the port is zero, it should reject it", commercialHost + ":0"},
	{"When the port is above 65535, it should reject it", commercialHost + ":65536"},
	{"When the port is not numeric, it should reject it", commercialHost + ":https"},
	{"When the port has a sign, it should reject it", commercialHost + ":+443"},
	{"When the host has two ports, it should reject it", commercialHost + ":443:443"},
	{"When the input has userinfo, it should reject it", "user@" + commercialHost},
	{"When a URL has userinfo, it should reject it", "https://user:secret@" + commercialHost + "/v2/"},
	{"When a URL puts the ECR host in userinfo, it should reject it", "https://" + commercialHost + "@attacker.example/v2/"},
	{"When the scheme is not http or https, it should reject it", "oci://" + commercialHost},
	{"When the host has leading whitespace, it should reject it", " " + commercialHost},
	{"When the host has trailing whitespace, it should reject it", commercialHost + " "},
	{"When the input has a newline, it should reject it", commercialHost + "\n/team/app"},
	{"When the input has a tab in the path, it should reject it", commercialHost + "/team\t/app"},
	{"When the host is ECR Public under another domain, it should reject it", "public.ecr.aws.attacker.example"},
	{"When the host is a subdomain of ECR Public, it should reject it", "evil.public.ecr.aws"},
	{"When the host is a subdomain of ECR Public dual-stack, it should reject it", "evil.ecr-public.aws.com"},
	{"When the host is non-ASCII, it should reject it", "123456789012.dkr.ecr.us-east-1.amazonaws.cοm"},
	{"When the input is empty, it should reject it", ""},
	{"When the input is a scheme only, it should reject it", "https://"},
	{"When the input is a Docker Hub image, it should reject it", "library/busybox:latest"},
	{"When the input is another registry, it should reject it", "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"},
	{"When the input is an IPv6 literal, it should reject it", "[::1]:5000/team/app"},
}

func TestParseRejects(t *testing.T) {
	for _, tc := range lookAlikes {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Parse(tc.input)
			require.False(t, ok, "Parse(%q) = %+v", tc.input, got)
			require.Equal(t, Registry{}, got)
			require.False(t, IsECR(tc.input))
		})
	}
}

func TestParseTableExamples(t *testing.T) {
	for _, f := range forms {
		t.Run("When the input is the "+f.name+" example, it should parse to that form", func(t *testing.T) {
			for _, input := range []string{
				f.example,
				strings.ToUpper(f.example),
				f.example + ":443",
				"https://" + f.example + "/v2/",
				f.example + "/team/app:latest",
				f.example + "/team/app@" + digest,
			} {
				got, ok := Parse(input)
				require.True(t, ok, "Parse(%q)", input)
				require.Equal(t, f.example, got.Host)
				require.Equal(t, f.partition, got.Partition)
				require.Equal(t, f.fips, got.FIPS)
				require.Equal(t, f.dualStack, got.DualStack)
				require.Equal(t, f.public, got.Public)
				wantPartition, ok := PartitionForRegion(got.Region)
				require.True(t, ok)
				require.Equal(t, wantPartition, got.Partition)
			}
		})
	}
}

func TestPartitionForRegion(t *testing.T) {
	testCases := []struct {
		name      string
		region    string
		partition string
		ok        bool
	}{
		{name: "When the region is commercial US, it should return aws", region: "us-east-1", partition: "aws", ok: true},
		{name: "When the region is commercial Asia, it should return aws", region: "ap-southeast-4", partition: "aws", ok: true},
		{name: "When the region is in China, it should return aws-cn", region: "cn-northwest-1", partition: "aws-cn", ok: true},
		{name: "When the region is GovCloud, it should return aws-us-gov", region: "us-gov-west-1", partition: "aws-us-gov", ok: true},
		{name: "When the region is ISO, it should return aws-iso", region: "us-iso-east-1", partition: "aws-iso", ok: true},
		{name: "When the region is ISO-B, it should return aws-iso-b", region: "us-isob-east-1", partition: "aws-iso-b", ok: true},
		{name: "When the region is ISO-E, it should return aws-iso-e", region: "eu-isoe-west-1", partition: "aws-iso-e", ok: true},
		{name: "When the region is ISO-F, it should return aws-iso-f", region: "us-isof-south-1", partition: "aws-iso-f", ok: true},
		{name: "When the region is EU sovereign cloud, it should return aws-eusc", region: "eusc-de-east-1", partition: "aws-eusc", ok: true},
		{name: "When the region is empty, it should fail", region: ""},
		{name: "When the region is upper case, it should fail", region: "US-EAST-1"},
		{name: "When the region has a trailing hyphen, it should fail", region: "us-east-1-"},
		{name: "When the region has a leading hyphen, it should fail", region: "-us-east-1"},
		{name: "When the region is a single word, it should fail", region: "useast1"},
		{name: "When the region has too many segments, it should fail", region: "us-gov-east-west-north-1"},
		{name: "When the region is too long, it should fail", region: "us-" + strings.Repeat("a", 40) + "-1"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			partition, ok := PartitionForRegion(tc.region)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.partition, partition)
		})
	}
}

func TestParseAllocations(t *testing.T) {
	var inputs []string
	for _, f := range forms {
		inputs = append(inputs,
			f.example,
			f.example+":443",
			"https://"+f.example+"/v2/",
			f.example+"/team/app:latest",
			f.example+"/team/app@"+digest,
		)
	}
	inputs = append(inputs, lookAlikes[0].input, "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64")

	aliased, err := NewParser(Alias{Host: "registry.example.com", AccountID: "123456789012", Region: "us-east-1"})
	require.NoError(t, err)

	for _, input := range inputs {
		t.Run("When the input "+input+" is lower case, it should not allocate", func(t *testing.T) {
			require.Zero(t, testing.AllocsPerRun(100, func() { Parse(input) }))
			require.Zero(t, testing.AllocsPerRun(100, func() { aliased.Parse(input) }))
		})
	}
	t.Run("When the input is a lower-case alias, it should not allocate", func(t *testing.T) {
		require.Zero(t, testing.AllocsPerRun(100, func() { aliased.Parse("registry.example.com/team/app:latest") }))
	})
}

var sinkRegistry Registry

func BenchmarkParse(b *testing.B) {
	benchmarks := []struct {
		name  string
		input string
	}{
		{name: "bare host", input: commercialHost},
		{name: "image ref", input: commercialHost + "/team/app@" + digest},
		{name: "upper case", input: strings.ToUpper(commercialHost)},
		{name: "https URL", input: "https://" + commercialHost + "/v2/"},
		{name: "ISO-F host", input: "123456789012.dkr.ecr.us-isof-south-1.csp.hci.ic.gov"},
		{name: "public image ref", input: "public.ecr.aws/docker/library/busybox:1.36"},
		{name: "not ECR", input: "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkRegistry, _ = Parse(bm.input)
			}
		})
	}
}

func TestFormTable(t *testing.T) {
	t.Run("When the table is built, it should have unique names and examples", func(t *testing.T) {
		names, examples := map[string]bool{}, map[string]bool{}
		for _, f := range forms {
			require.False(t, names[f.name], "duplicate name %q", f.name)
			require.False(t, examples[f.example], "duplicate example %q", f.example)
			names[f.name], examples[f.example] = true, true
		}
	})
	t.Run("When a row is FIPS, it should be limited to US commercial or GovCloud regions", func(t *testing.T) {
		for _, f := range forms {
			if !f.fips {
				continue
			}
			require.True(t, f.partition == "aws-us-gov" || (f.partition == "aws" && f.regionPrefix == "us-"), f.name)
		}
	})
}

func TestHasControlOrSpace(t *testing.T) {
	t.Run("When every byte is checked at every offset, it should agree with a byte loop", func(t *testing.T) {
		for b := 0; b < 256; b++ {
			want := b <= ' ' || b == 0x7f
			for offset := 0; offset < 17; offset++ {
				s := []byte(strings.Repeat("a", 17))
				s[offset] = byte(b)
				require.Equal(t, want, hasControlOrSpace(string(s)), "byte %#x at %d", b, offset)
			}
		}
	})
	t.Run("When the input is empty, it should report none", func(t *testing.T) {
		require.False(t, hasControlOrSpace(""))
	})
}

func TestIsAccountID(t *testing.T) {
	t.Run("When any byte of twelve is not a digit, it should refuse it", func(t *testing.T) {
		for b := 0; b < 256; b++ {
			want := '0' <= b && b <= '9'
			for offset := 0; offset < accountIDLen; offset++ {
				s := []byte("123456789012")
				s[offset] = byte(b)
				require.Equal(t, want, isAccountID(string(s)), "byte %#x at %d", b, offset)
			}
		}
	})
	t.Run("When the length is not twelve, it should refuse it", func(t *testing.T) {
		require.False(t, isAccountID("12345678901"))
		require.False(t, isAccountID("1234567890123"))
	})
}

func TestEndpointVariant(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, host, want string
	}{
		{name: "When the host is standard, it should name no variant", host: "123456789012.dkr.ecr.us-east-1.amazonaws.com", want: ""},
		{name: "When the host is FIPS, it should name fips", host: "123456789012.dkr.ecr-fips.us-east-1.amazonaws.com", want: "fips"},
		{name: "When the host is dual-stack, it should name dualstack", host: "123456789012.dkr-ecr.us-east-1.on.aws", want: "dualstack"},
		{name: "When the host is dual-stack FIPS, it should name both", host: "123456789012.dkr-ecr-fips.us-west-2.on.aws", want: "fips+dualstack"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg, ok := Parse(tc.host)
			require.True(t, ok)
			require.Equal(t, tc.want, reg.EndpointVariant())
		})
	}
}
