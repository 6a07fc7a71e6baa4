package benchcompare

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The acceptance bars, shared by the summary and TestClaims.
const (
	warmRatioBar  = 1000 // ecr-login's warm lookup (file cache) / ours
	bytesRatioBar = 0.5  // ours / the naive full read, in bytes read
)

// benchResults holds every sample of every metric of a `go test -bench`
// output: name (without the -GOMAXPROCS suffix) -> unit -> samples.
type benchResults struct {
	samples map[string]map[string][]float64
	cpu     string
	failed  bool // a FAIL line, or no PASS/ok line at all
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.+)$`)

// parseBench reads `go test -bench` output. Lines it does not know are
// skipped, so that logs between results do no harm.
func parseBench(r io.Reader) (*benchResults, error) {
	res := &benchResults{samples: map[string]map[string][]float64{}}
	passed := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "cpu: "):
			res.cpu = strings.TrimPrefix(line, "cpu: ")
		case line == "PASS" || strings.HasPrefix(line, "ok "):
			passed = true
		case strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "--- FAIL"):
			res.failed = true
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			if res.samples[m[1]] == nil {
				res.samples[m[1]] = map[string][]float64{}
			}
			res.samples[m[1]][f[i+1]] = append(res.samples[m[1]][f[i+1]], v)
		}
	}
	res.failed = res.failed || !passed
	return res, sc.Err()
}

// median returns the median of name's unit, and false when it was not
// measured.
func (r *benchResults) median(name, unit string) (float64, bool) {
	s := slices.Clone(r.samples[name][unit])
	if len(s) == 0 {
		return 0, false
	}
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2], true
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2, true
}

func (r *benchResults) runs(name string) int { return len(r.samples[name]["ns/op"]) }

// Benchmark names, as the benchmarks build them.
var (
	fanInName = fmt.Sprintf("BenchmarkColdFanIn/callers=%d/accounts=%d/regions=%d/impl=", fanInCallers, fanInAccounts, len(fanInRegions))
	warmName  = "BenchmarkWarmLookup/impl="
	relName   = "BenchmarkReleaseLookup/impl="
)

// summarize prints the summary table of the benchmark output in file as
// Markdown, the claims last, and returns the exit code: 1 when the run
// failed or a claim is not met.
func summarize(file string, w io.Writer) int {
	f, err := os.Open(file)
	if err != nil {
		fmt.Fprintln(w, "summary:", err)
		return 1
	}
	defer f.Close()
	res, err := parseBench(f)
	if err != nil {
		fmt.Fprintln(w, "summary:", err)
		return 1
	}
	ok := writeSummary(w, res)
	if res.failed {
		fmt.Fprintln(w, "\nThe benchmark run failed (see its output above): the table is incomplete.")
		return 1
	}
	if !ok {
		return 1
	}
	return 0
}

// writeSummary writes the tables and reports whether every claim is met.
func writeSummary(w io.Writer, r *benchResults) bool {
	na := func(v float64, ok bool, f func(float64) string) string {
		if !ok {
			return "n/a"
		}
		return f(v)
	}
	if r.cpu != "" {
		fmt.Fprintf(w, "cpu: %s; medians of %d runs per row\n", r.cpu, r.runs(warmName+"ours"))
	}

	fmt.Fprintf(w, "\n**Warm lookup** (credential already cached)\n\n")
	fmt.Fprintln(w, "| contender | time/op | B/op | allocs/op | ours faster by |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	ours, oursOK := r.median(warmName+"ours", "ns/op")
	for _, c := range []struct{ name, label string }{
		{"ours", "ours: `Keychain.Credential`"},
		{"ecr-login", "ecr-login `ECRHelper.Get`, file cache"},
		{"ecr-login-client", "ecr-login API client reused, file cache"},
		{"sdk-nocache", "SDK `GetAuthorizationToken` per lookup, no cache"},
	} {
		ns, ok := r.median(warmName+c.name, "ns/op")
		bop, bok := r.median(warmName+c.name, "B/op")
		allocs, aok := r.median(warmName+c.name, "allocs/op")
		ratio := "—"
		if c.name != "ours" {
			ratio = na(ns/ours, ok && oursOK, fmtRatio)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", c.label, na(ns, ok, fmtNs), na(bop, bok, fmtCount), na(allocs, aok, fmtCount), ratio)
	}

	fmt.Fprintf(w, "\n**Cold fan-in** (%s callers at once, %d accounts, %d regions, nothing cached)\n\n",
		fmtCount(fanInCallers), fanInAccounts, len(fanInRegions))
	fmt.Fprintln(w, "| contender | GetAuthorizationToken calls | time until all served |")
	fmt.Fprintln(w, "|---|---:|---:|")
	for _, c := range []struct{ name, label string }{{"ours", "ours"}, {"ecr-login", "ecr-login (file cache)"}} {
		calls, cok := r.median(fanInName+c.name, "apicalls/op")
		ns, ok := r.median(fanInName+c.name, "ns/op")
		fmt.Fprintf(w, "| %s | %s | %s |\n", c.label, na(calls, cok, fmtCount), na(ns, ok, fmtNs))
	}

	fmt.Fprintf(w, "\n**Release metadata lookup** (ECR-like registry, %s of base layers, metadata in the last layer)\n\n", fmtBytes(float64(sumInt64(releaseBaseLayers))))
	fmt.Fprintln(w, "| reader | bytes read | S3 bytes served | round trips | time/op |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, c := range []struct{ name, label string }{{"ours", "ours: `remote.Reader.Lookup`"}, {"naive-full-read", "naive: every layer (ggcr)"}} {
		n := relName + c.name
		b, bok := r.median(n, "bytesread/op")
		s3, sok := r.median(n, "s3bytes/op")
		rt, rok := r.median(n, "roundtrips/op")
		ns, ok := r.median(n, "ns/op")
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", c.label, na(b, bok, fmtBytes), na(s3, sok, fmtBytes), na(rt, rok, fmtCount), na(ns, ok, fmtNs))
	}
	ob, obOK := r.median(relName+"ours", "bytesread/op")
	nb, nbOK := r.median(relName+"naive-full-read", "bytesread/op")
	ot, otOK := r.median(relName+"ours", "ns/op")
	nt, ntOK := r.median(relName+"naive-full-read", "ns/op")
	fmt.Fprintf(w, "| ours / naive | %s | | | %s |\n", na(ob/nb, obOK && nbOK, fmtFraction), na(ot/nt, otOK && ntOK, fmtFraction))

	fmt.Fprintf(w, "\n**Mirror resolution** (`mirrorpolicy.Policy.Candidates` for a release digest)\n\n")
	fmt.Fprintln(w, "| rules | time/op | allocs/op | vs 10 rules |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|")
	base, baseOK := r.median(fmt.Sprintf("BenchmarkMirrorCandidates/rules=%d", mirrorRuleCounts[0]), "ns/op")
	for _, n := range mirrorRuleCounts {
		name := fmt.Sprintf("BenchmarkMirrorCandidates/rules=%d", n)
		ns, ok := r.median(name, "ns/op")
		allocs, aok := r.median(name, "allocs/op")
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", fmtCount(float64(n)), na(ns, ok, fmtNs), na(allocs, aok, fmtCount), na(ns/base, ok && baseOK, fmtRatio))
	}

	// The claims, from the same run.
	el, elOK := r.median(warmName+"ecr-login", "ns/op")
	oc, ocOK := r.median(fanInName+"ours", "apicalls/op")
	ec, ecOK := r.median(fanInName+"ecr-login", "apicalls/op")
	claims := []struct {
		claim, bar, measured string
		met                  bool
	}{
		{"warm lookup vs ecr-login with its file cache", fmt.Sprintf(">= %dx faster", warmRatioBar),
			na(el/ours, elOK && oursOK, fmtRatio), elOK && oursOK && el/ours >= warmRatioBar},
		{"cold fan-in: API calls", fmt.Sprintf("== %d (regions)", len(fanInRegions)),
			na(oc, ocOK, fmtCount) + " (ecr-login: " + na(ec, ecOK, fmtCount) + ")", ocOK && oc == float64(len(fanInRegions))},
		{"release lookup: bytes read vs naive", fmt.Sprintf("< %g", bytesRatioBar),
			na(ob/nb, obOK && nbOK, fmtFraction), obOK && nbOK && ob/nb < bytesRatioBar},
	}
	fmt.Fprintf(w, "\n**Claims** (this run)\n\n")
	fmt.Fprintln(w, "| claim | bar | measured | |")
	fmt.Fprintln(w, "|---|---|---:|---|")
	all := true
	for _, c := range claims {
		verdict := "met"
		if !c.met {
			verdict, all = "**NOT MET**", false
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", c.claim, c.bar, c.measured, verdict)
	}
	return all
}

func sumInt64(s []int64) (n int64) {
	for _, v := range s {
		n += v
	}
	return n
}

// fmtNs prints a duration in ns with 3 significant digits and a unit.
func fmtNs(ns float64) string {
	switch {
	case ns < 1e3:
		return fmt.Sprintf("%.3g ns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	}
	return fmt.Sprintf("%.3g s", ns/1e9)
}

// fmtCount prints a rounded count with thousands separators.
func fmtCount(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func fmtRatio(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.1fx", v)
	}
	return fmtCount(v) + "x"
}

func fmtFraction(v float64) string { return fmt.Sprintf("%.3f", v) }

func fmtBytes(v float64) string {
	switch {
	case v >= 1<<20:
		return fmt.Sprintf("%.2f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmtCount(v) + " B"
}
