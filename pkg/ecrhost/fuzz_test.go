package ecrhost

import (
	"regexp"
	"strings"
	"testing"
)

var twelveDigits = regexp.MustCompile(`^[0-9]{12}$`)

// inputHost is an independent, simpler extraction of the host part of a
// lower-cased input, for checking Parse's result against.
func inputHost(lowered string) string {
	rest := strings.TrimPrefix(strings.TrimPrefix(lowered, "https://"), "http://")
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	host, _, _ := strings.Cut(rest, ":")
	return host
}

func FuzzParse(f *testing.F) {
	for _, row := range forms {
		f.Add(row.example)
		f.Add(strings.ToUpper(row.example) + ":5000/team/app:v1")
		f.Add("https://" + row.example + "/v2/")
		f.Add(row.example + "/team/app@" + digest)
	}
	for _, tc := range lookAlikes {
		f.Add(tc.input)
	}
	f.Add("Registry.Example.com/team/app:v1")
	globs := MatchImages()
	const aliasHost = "registry.example.com"
	aliased, err := NewParser(Alias{Host: aliasHost, AccountID: "123456789012", Region: "us-east-1"})
	if err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, input string) {
		if want := strings.ContainsFunc(input, func(c rune) bool { return c <= ' ' || c == 0x7f }); hasControlOrSpace(input) != want {
			t.Fatalf("hasControlOrSpace(%q) = %t, want %t", input, !want, want)
		}
		r, ok := Parse(input)
		ar, aok := aliased.Parse(input)
		if aok && ar.Host == aliasHost {
			if inputHost(strings.ToLower(input)) != aliasHost {
				t.Fatalf("Parser.Parse(%q) matched the alias, but the input's host is not the alias", input)
			}
		} else if ar != r || aok != ok {
			t.Fatalf("Parser.Parse(%q) = %+v, %t; Parse = %+v, %t", input, ar, aok, r, ok)
		}
		if !ok {
			if r != (Registry{}) {
				t.Fatalf("Parse(%q) = %+v, false; want the zero Registry", input, r)
			}
			return
		}
		if r.Host != strings.ToLower(r.Host) {
			t.Fatalf("Parse(%q).Host = %q is not lower case", input, r.Host)
		}
		if want := inputHost(strings.ToLower(input)); r.Host != want || !strings.HasSuffix(want, r.Host) {
			t.Fatalf("Parse(%q).Host = %q; the input's host is %q", input, r.Host, want)
		}
		if r.Public != (r.AccountID == "") || (!r.Public && !twelveDigits.MatchString(r.AccountID)) {
			t.Fatalf("Parse(%q) = %+v: AccountID must be 12 digits unless Public", input, r)
		}
		if p, ok := PartitionForRegion(r.Region); !ok || p != r.Partition {
			t.Fatalf("Parse(%q) = %+v: partition of region is %q, %t", input, r, p, ok)
		}
		if again, ok := Parse(r.Host); !ok || again != r {
			t.Fatalf("Parse(%q) = %+v, but Parse(Host) = %+v, %t", input, r, again, ok)
		}
		if !anyKubeletMatch(t, globs, r.Host) {
			t.Fatalf("Parse(%q) = %+v, but no matchImages glob matches %q", input, r, r.Host)
		}
	})
}
