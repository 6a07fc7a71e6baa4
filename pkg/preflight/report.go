package preflight

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// maxListed is how many missing or unchecked components WriteText lists.
const maxListed = 20

// WriteText writes the report for a terminal: the release and mirror, one
// line per check in order ("PASS", "FAIL", "WARN", "SKIP", the name, the
// detail), the hint of a failed or warning check on the line below, the
// first 20 missing and unchecked components with their counts, and a last
// line with the verdict. Durations are left out so that the output of two
// runs compares line by line.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "release: %s\n", r.Release)
	fmt.Fprintf(bw, "mirror:  %s (%s)\n", r.Mirror, r.Region)
	if r.Pullspec != "" {
		fmt.Fprintf(bw, "found:   %s\n", r.Pullspec)
	}
	bw.WriteString("\n")
	width := 0
	for _, c := range r.Checks {
		width = max(width, len(c.Name))
	}
	indent := strings.Repeat(" ", 6+width+2)
	var failed, warned int
	for _, c := range r.Checks {
		fmt.Fprintf(bw, "%-4s  %-*s  %s\n", strings.ToUpper(string(c.Status)), width, c.Name, c.Detail)
		if c.Hint != "" && (c.Status == StatusFail || c.Status == StatusWarn) {
			fmt.Fprintf(bw, "%shint: %s\n", indent, c.Hint)
		}
		switch c.Status {
		case StatusFail:
			failed++
		case StatusWarn:
			warned++
		}
	}
	writeList(bw, "missing from the mirror", r.Missing, r.Components)
	writeList(bw, "could not be checked", r.Unchecked, r.Components)
	bw.WriteString("\n")
	switch {
	case failed > 0:
		fmt.Fprintf(bw, "FAIL: %s failed%s\n", plural(failed, "check"), warnings(warned))
	default:
		fmt.Fprintf(bw, "OK: the release can be pulled from %s%s\n", r.Mirror, warnings(warned))
	}
	return bw.Flush()
}

func writeList(w *bufio.Writer, title string, refs []string, total int) {
	if len(refs) == 0 {
		return
	}
	fmt.Fprintf(w, "\ncomponents %s (%d of %d):\n", title, len(refs), total)
	for _, ref := range refs[:min(len(refs), maxListed)] {
		fmt.Fprintf(w, "  %s\n", ref)
	}
	if n := len(refs) - maxListed; n > 0 {
		fmt.Fprintf(w, "  ... and %d more\n", n)
	}
}

func warnings(n int) string {
	if n == 0 {
		return ""
	}
	return ", " + plural(n, "warning")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// checkJSON is the JSON form of a Check: the duration in milliseconds,
// which is what a dashboard or jq wants, and no error value.
type checkJSON struct {
	Name       string `json:"name"`
	Status     Status `json:"status"`
	Detail     string `json:"detail,omitempty"`
	Hint       string `json:"hint,omitempty"`
	DurationMS int64  `json:"durationMs"`
}

// MarshalJSON writes the check with its duration as "durationMs".
func (c Check) MarshalJSON() ([]byte, error) {
	return json.Marshal(checkJSON{Name: c.Name, Status: c.Status, Detail: c.Detail, Hint: c.Hint,
		DurationMS: c.Duration.Milliseconds()})
}

// UnmarshalJSON reads what MarshalJSON writes; Duration comes back
// truncated to the millisecond and Err is nil.
func (c *Check) UnmarshalJSON(b []byte) error {
	var j checkJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Check{Name: j.Name, Status: j.Status, Detail: j.Detail, Hint: j.Hint,
		Duration: time.Duration(j.DurationMS) * time.Millisecond}
	return nil
}

// MarshalJSON writes the report's fields and "ok", the verdict of OK, so
// that a script need not recompute it.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report // no methods: no recursion
	return json.Marshal(struct {
		plain
		OK bool `json:"ok"`
	}{plain(r), r.OK()})
}
