package ecrhost

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewParser(t *testing.T) {
	valid := Alias{Host: "registry.example.com", AccountID: "123456789012", Region: "us-east-1"}
	with := func(mutate func(*Alias)) Alias {
		a := valid
		mutate(&a)
		return a
	}

	testCases := []struct {
		name      string
		aliases   []Alias
		wantIndex int
		wantField string
	}{
		{name: "When the host is empty, it should blame Host", aliases: []Alias{with(func(a *Alias) { a.Host = "" })}, wantField: "Host"},
		{name: "When the host has one label, it should blame Host", aliases: []Alias{with(func(a *Alias) { a.Host = "registry" })}, wantField: "Host"},
		{name: "When the host has a port, it should blame Host", aliases: []Alias{with(func(a *Alias) { a.Host = "registry.example.com:5000" })}, wantField: "Host"},
		{name: "When the host has a scheme, it should blame Host", aliases: []Alias{with(func(a *Alias) { a.Host = "https://registry.example.com" })}, wantField: "Host"},
		{name: "When the host has a path, it should blame Host", aliases: []Alias{with(func(a *Alias) { a.Host = "registry.example.com/team" })}, wantField: "Host"},
		{name: "When the host has an empty label, it should blame Host", aliases: []Alias{with(func(a *Alias) { a.Host = "registry..example.com" })}, wantField: "Host"},
		{name: "When a host label starts with a hyphen, it should blame Host", aliases: []Alias{with(func(a *Alias) { a.Host = "-registry.example.com" })}, wantField: "Host"},
		{name: "When a host label is longer than 63 characters, it should blame Host", aliases: []Alias{with(func(a *Alias) { a.Host = strings.Repeat("a", 64) + ".example.com" })}, wantField: "Host"},
		{name: "When the host is an IPv4 address, it should blame Host", aliases: []Alias{with(func(a *Alias) { a.Host = "10.0.0.5" })}, wantField: "Host"},
		{name: "When the host has whitespace, it should blame Host", aliases: []Alias{with(func(a *Alias) { a.Host = "registry.example.com " })}, wantField: "Host"},
		{name: "When the host has a non-ASCII letter that lower-cases to ASCII, it should blame Host", aliases: []Alias{with(func(a *Alias) { a.Host = "\u212aregistry.example.com" })}, wantField: "Host"},
		{name: "When the host is itself an ECR host, it should blame Host", aliases: []Alias{with(func(a *Alias) { a.Host = commercialHost })}, wantField: "Host"},
		{name: "When the host is ECR Public in upper case, it should blame Host", aliases: []Alias{with(func(a *Alias) { a.Host = "PUBLIC.ECR.AWS" })}, wantField: "Host"},
		{name: "When the account has 11 digits, it should blame AccountID", aliases: []Alias{with(func(a *Alias) { a.AccountID = "12345678901" })}, wantField: "AccountID"},
		{name: "When the account is not numeric, it should blame AccountID", aliases: []Alias{with(func(a *Alias) { a.AccountID = "12345678901a" })}, wantField: "AccountID"},
		{name: "When the region is empty, it should blame Region", aliases: []Alias{with(func(a *Alias) { a.Region = "" })}, wantField: "Region"},
		{name: "When the region is malformed, it should blame Region", aliases: []Alias{with(func(a *Alias) { a.Region = "us-east" })}, wantField: "Region"},
		{name: "When FIPS is set in a region without FIPS, it should blame FIPS", aliases: []Alias{with(func(a *Alias) { a.Region, a.FIPS = "eu-west-1", true })}, wantField: "FIPS"},
		{name: "When DualStack is set in an ISO region, it should blame DualStack", aliases: []Alias{with(func(a *Alias) { a.Region, a.DualStack = "us-iso-east-1", true })}, wantField: "DualStack"},
		{
			name:      "When a host is given twice with different case, it should blame the second",
			aliases:   []Alias{valid, with(func(a *Alias) { a.Host = "Registry.Example.COM"; a.Region = "us-west-2" })},
			wantIndex: 1,
			wantField: "Host",
		},
		{
			name:      "When the second alias is invalid, it should report index 1",
			aliases:   []Alias{valid, with(func(a *Alias) { a.Host = "mirror.example.com"; a.AccountID = "" })},
			wantIndex: 1,
			wantField: "AccountID",
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewParser(tc.aliases...)
			require.Nil(t, p)
			var aliasErr *AliasError
			require.True(t, errors.As(err, &aliasErr), "error %v is not an *AliasError", err)
			require.Equal(t, tc.wantIndex, aliasErr.Index)
			require.Equal(t, tc.wantField, aliasErr.Field)
			require.Equal(t, tc.aliases[tc.wantIndex].Host, aliasErr.Host)
			require.NotEmpty(t, aliasErr.Reason)
			require.Contains(t, err.Error(), tc.wantField)
		})
	}

	t.Run("When every alias is valid, it should succeed", func(t *testing.T) {
		p, err := NewParser(
			valid,
			Alias{Host: "fips.registry.example.com", AccountID: "210987654321", Region: "us-gov-west-1", FIPS: true, DualStack: true},
			Alias{Host: "mirror.example.cn", AccountID: "123456789012", Region: "cn-north-1", DualStack: true},
		)
		require.NoError(t, err)
		require.NotNil(t, p)
	})
}

func TestParserParse(t *testing.T) {
	p, err := NewParser(
		Alias{Host: "Registry.Example.com", AccountID: "210987654321", Region: "eu-west-1"},
		Alias{Host: "fips-registry.example.com", AccountID: "123456789012", Region: "us-gov-west-1", FIPS: true},
	)
	require.NoError(t, err)
	aliasRegistry := Registry{Host: "registry.example.com", AccountID: "210987654321", Region: "eu-west-1", Partition: "aws"}

	testCases := []struct {
		name   string
		parser *Parser
		input  string
		want   Registry
		wantOK bool
	}{
		{name: "When the input is an alias host, it should return the alias registry", parser: p, input: "registry.example.com", want: aliasRegistry, wantOK: true},
		{name: "When the alias host is upper case, it should match case-insensitively", parser: p, input: "REGISTRY.EXAMPLE.COM", want: aliasRegistry, wantOK: true},
		{name: "When the alias is in an image reference, it should match", parser: p, input: "registry.example.com/team/app@" + digest, want: aliasRegistry, wantOK: true},
		{name: "When the alias is in an https URL with a port, it should match", parser: p, input: "https://registry.example.com:443/v2/", want: aliasRegistry, wantOK: true},
		{
			name:   "When the alias is FIPS in GovCloud, it should report FIPS and aws-us-gov",
			parser: p, input: "fips-registry.example.com/team/app:latest",
			want:   Registry{Host: "fips-registry.example.com", AccountID: "123456789012", Region: "us-gov-west-1", Partition: "aws-us-gov", FIPS: true},
			wantOK: true,
		},
		{name: "When the input is a subdomain of an alias, it should not match", parser: p, input: "evil.registry.example.com"},
		{name: "When the input extends an alias, it should not match", parser: p, input: "registry.example.com.attacker.example"},
		{name: "When the input has userinfo before an alias, it should not match", parser: p, input: "user@registry.example.com"},
		{
			name:   "When the input is an ECR host, it should fall back to the table",
			parser: p, input: commercialHost + "/team/app:latest",
			want:   Registry{Host: commercialHost, AccountID: "123456789012", Region: "us-east-1", Partition: "aws"},
			wantOK: true,
		},
		{
			name:   "When the Parser is the zero value, it should behave like Parse",
			parser: &Parser{}, input: commercialHost,
			want:   Registry{Host: commercialHost, AccountID: "123456789012", Region: "us-east-1", Partition: "aws"},
			wantOK: true,
		},
		{name: "When the Parser is the zero value, it should know no aliases", parser: &Parser{}, input: "registry.example.com"},
		{name: "When the Parser is nil, it should know no aliases", parser: nil, input: "registry.example.com"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.parser.Parse(tc.input)
			require.Equal(t, tc.wantOK, ok)
			require.Equal(t, tc.want, got)
		})
	}

	t.Run("When the package-level Parse sees an alias host, it should not know it", func(t *testing.T) {
		_, ok := Parse("registry.example.com")
		require.False(t, ok)
	})
}

func TestParserMatchImages(t *testing.T) {
	p, err := NewParser(
		Alias{Host: "Registry.Example.com", AccountID: "210987654321", Region: "eu-west-1"},
		Alias{Host: "mirror.example.net", AccountID: "123456789012", Region: "us-east-1"},
	)
	require.NoError(t, err)

	t.Run("When aliases are configured, it should append the lower-case alias hosts in order", func(t *testing.T) {
		want := append(MatchImages(), "registry.example.com", "mirror.example.net")
		require.Equal(t, want, p.MatchImages())
	})
	t.Run("When the caller modifies the result, it should not affect later calls", func(t *testing.T) {
		got := p.MatchImages()
		got[len(got)-1] = "mutated"
		require.Equal(t, "mirror.example.net", p.MatchImages()[len(got)-1])
	})
	t.Run("When the kubelet sees an alias image, it should match the alias glob", func(t *testing.T) {
		require.True(t, anyKubeletMatch(t, p.MatchImages(), "registry.example.com/team/app:latest"))
	})
	t.Run("When the Parser is the zero value or nil, it should return the table globs", func(t *testing.T) {
		require.Equal(t, MatchImages(), (&Parser{}).MatchImages())
		var nilParser *Parser
		require.Equal(t, MatchImages(), nilParser.MatchImages())
	})
}
