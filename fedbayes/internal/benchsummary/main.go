// Command benchsummary reads `go test -bench` output on stdin and prints one line per benchmark: its
// name, the number of runs (-count), the median samples/s (the metric the training-step benchmarks
// report with b.ReportMetric) and the median ns/op.
//
//	go test -run '^$' -bench . -count 5 ./fedbayes/simplegoplus | tee bench.txt | go run ./fedbayes/internal/benchsummary
//
// Every other metric a benchmark reports with b.ReportMetric (s/round, eval-s/1k, ...) follows, as
// its median. Benchmarks without a samples/s metric show "-" there. A skipped benchmark prints no result line
// and so does not appear. The exit status is 1 if stdin holds no benchmark result.
//
// With -kernels it reads nothing and prints which CPU kernels fedbayes's pure-Go backend uses in this
// environment (backend.Kernels), with a WARNING line when OpenBLAS is not in use (backend.SlowKernels):
// the `make bench-*` targets print it before and after their benchmarks, which run in the same
// environment, so that a benchmark of the slow fallback is never read as one of the fast path.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/simplegoplus"
)

// kernelsReport is what -kernels prints for a backend configuration: the kernels line, and a
// WARNING line when they are SimpleGo's own loops rather than OpenBLAS.
func kernelsReport(config string) string {
	out := "kernels: " + backend.Kernels(config) + "\n"
	if w := backend.SlowKernels(config); w != "" {
		out += "WARNING: these benchmarks measure the slow fallback, not the fast path: " + w + "\n"
	}
	return out
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-kernels" {
		fmt.Print(kernelsReport(simplegoplus.BackendName))
		return
	}
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: benchsummary < go-test-bench-output\n       benchsummary -kernels")
		os.Exit(2)
	}
	sums, err := summarize(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchsummary:", err)
		os.Exit(1)
	}
	for _, s := range sums {
		fmt.Println(s)
	}
}

// summary is the median result of one benchmark over its runs.
type summary struct {
	name          string
	runs          int
	samplesPerSec float64 // median, meaningful when hasSamples (some run reported samples/s)
	hasSamples    bool
	nsPerOp       float64
	extra         []metric // other reported metrics, medians, in order of first appearance
}

// metric is one reported value and its unit.
type metric struct {
	unit  string
	value float64
}

// String formats a summary line.
func (s summary) String() string {
	sps := "-"
	if s.hasSamples {
		sps = strconv.FormatFloat(s.samplesPerSec, 'f', 0, 64)
	}
	line := fmt.Sprintf("%-40s runs=%d  samples/s=%s  ns/op=%.0f", s.name, s.runs, sps, s.nsPerOp)
	for _, m := range s.extra {
		line += fmt.Sprintf("  %s=%.4g", m.unit, m.value)
	}
	return line
}

// resultLine matches a benchmark result: name (with the -GOMAXPROCS suffix), iterations, then
// value/unit pairs.
var resultLine = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?\s+(\d+)\s+(.*)$`)

// summarize parses go test -bench output and returns one summary per benchmark, in order of first
// appearance. Benchmarks of different packages are told apart by their package's last path element.
func summarize(r io.Reader) ([]summary, error) {
	type acc struct {
		ns, sps []float64
		units   []string             // extra units in order of first appearance
		extra   map[string][]float64 // extra unit -> values
	}
	var order []string
	runs := map[string]*acc{}
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = p[strings.LastIndex(p, "/")+1:]
			continue
		}
		m := resultLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := m[1]
		if pkg != "" {
			name = pkg + "." + name
		}
		fields := strings.Fields(m[4])
		var ns, sps float64
		var hasNs, hasSps bool
		var extra []metric
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			switch unit := fields[i+1]; unit {
			case "ns/op":
				ns, hasNs = v, true
			case "samples/s":
				sps, hasSps = v, true
			case "B/op", "allocs/op", "MB/s":
			default:
				extra = append(extra, metric{unit, v})
			}
		}
		if !hasNs {
			continue
		}
		a := runs[name]
		if a == nil {
			a = &acc{extra: map[string][]float64{}}
			runs[name] = a
			order = append(order, name)
		}
		a.ns = append(a.ns, ns)
		if hasSps {
			a.sps = append(a.sps, sps)
		}
		for _, m := range extra {
			if _, seen := a.extra[m.unit]; !seen {
				a.units = append(a.units, m.unit)
			}
			a.extra[m.unit] = append(a.extra[m.unit], m.value)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("no benchmark results on stdin")
	}
	out := make([]summary, 0, len(order))
	for _, name := range order {
		a := runs[name]
		s := summary{name: name, runs: len(a.ns), nsPerOp: median(a.ns)}
		if len(a.sps) > 0 {
			s.samplesPerSec, s.hasSamples = median(a.sps), true
		}
		for _, u := range a.units {
			s.extra = append(s.extra, metric{u, median(a.extra[u])})
		}
		out = append(out, s)
	}
	return out, nil
}

// median returns the median of v (mean of the two middle values for an even count).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
