package benchcompare

import (
	"strings"
	"testing"
)

// A trimmed `go test -bench` output: three runs of the warm lookups, one of
// the rest; a log line between results.
const sampleBench = `goos: linux
cpu: AMD EPYC
BenchmarkWarmLookup/impl=ours-2         	 1000000	       100.0 ns/op	         0 apicalls/op	       0 B/op	       0 allocs/op
BenchmarkWarmLookup/impl=ours-2         	 1000000	       300.0 ns/op	         0 apicalls/op	       0 B/op	       0 allocs/op
BenchmarkWarmLookup/impl=ours-2         	 1000000	       120.0 ns/op	         0 apicalls/op	       0 B/op	       0 allocs/op
    some_test.go:1: a log line
BenchmarkWarmLookup/impl=ecr-login-2    	      46	   2400000 ns/op	         0 apicalls/op	 1731323 B/op	   12081 allocs/op
BenchmarkWarmLookup/impl=ecr-login-2    	      46	   2000000 ns/op	         0 apicalls/op	 1731323 B/op	   12081 allocs/op
BenchmarkWarmLookup/impl=ecr-login-2    	      46	   2600000 ns/op	         0 apicalls/op	 1731323 B/op	   12081 allocs/op
BenchmarkColdFanIn/callers=1000/accounts=50/regions=3/impl=ours-2      	      12	   9077103 ns/op	         3.000 apicalls/op
BenchmarkColdFanIn/callers=1000/accounts=50/regions=3/impl=ecr-login-2 	       1	2619137100 ns/op	       997.0 apicalls/op
BenchmarkReleaseLookup/impl=ours-2            	      43	   2720747 ns/op	     19917 bytesread/op	         4.000 roundtrips/op	     18781 s3bytes/op
BenchmarkReleaseLookup/impl=naive-full-read-2 	       7	  14633687 ns/op	   7373931 bytesread/op	        14.00 roundtrips/op	   7372795 s3bytes/op
PASS
ok  	github.com/openshift/hypershift-ecr/testing/benchcompare	4.122s
`

func TestSummary(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		wantMet     bool
		want        []string
	}{
		{
			name:    "When every claim holds, it should print the medians and report them met",
			input:   sampleBench,
			wantMet: true,
			want: []string{
				"cpu: AMD EPYC; medians of 3 runs per row",
				"| ours: `Keychain.Credential` | 120 ns | 0 | 0 | — |",
				"| ecr-login `ECRHelper.Get`, file cache | 2.4 ms | 1,731,323 | 12,081 | 20,000x |",
				"| ours | 3 | 9.08 ms |",
				"| ecr-login (file cache) | 997 | 2.62 s |",
				"| ours / naive | 0.003 | | | 0.186 |",
				"| 10 | n/a | n/a | n/a |",
				"| cold fan-in: API calls | == 3 (regions) | 3 (ecr-login: 997) | met |",
			},
		},
		{
			name:    "When ours made more calls than regions, it should report the claim not met",
			input:   strings.Replace(sampleBench, "3.000 apicalls/op", "4.000 apicalls/op", 1),
			wantMet: false,
			want:    []string{"| cold fan-in: API calls | == 3 (regions) | 4 (ecr-login: 997) | **NOT MET** |"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := parseBench(strings.NewReader(tc.input))
			if err != nil {
				t.Fatal(err)
			}
			if res.failed {
				t.Fatal("a passing run was parsed as failed")
			}
			var out strings.Builder
			if met := writeSummary(&out, res); met != tc.wantMet {
				t.Errorf("writeSummary = %v, want %v", met, tc.wantMet)
			}
			for _, line := range tc.want {
				if !strings.Contains(out.String(), line+"\n") {
					t.Errorf("summary lacks %q:\n%s", line, out.String())
				}
			}
		})
	}
}

func TestParseBenchFailed(t *testing.T) {
	for name, input := range map[string]string{
		"When a benchmark failed, it should say so":    sampleBench + "--- FAIL: BenchmarkX\nFAIL\n",
		"When the run was cut short, it should say so": strings.TrimSuffix(sampleBench, "PASS\nok  \tgithub.com/openshift/hypershift-ecr/testing/benchcompare\t4.122s\n"),
	} {
		t.Run(name, func(t *testing.T) {
			res, err := parseBench(strings.NewReader(input))
			if err != nil || !res.failed {
				t.Errorf("parseBench = failed %v, %v; want failed", res.failed, err)
			}
		})
	}
}
