package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/reproduce"
)

// presetTimes are wall times of `fedbayes run NAME -o NEW_FOLDER` on the 2-core reference machine
// with the pure-Go backend, first runs included (nothing cached). The first runs were timed on
// 2026-12-02 at a load of 17-21 (one to three runs each: quick-digits 0.9-1.5 s, fedbe-digits-fast
// 5.4-10.4 s, diabetes-fast 3.5 s, boston-fast 3.5 s, digits-fast 26 s), fmnist-fast and
// fedbe-fmnist-fast on 2026-11-24, the reduced presets on 2026-11-21 (docs/engine.md, "Presets").
// Every first run has one (TestFirstRunTimesStated); a paper preset not listed has not been timed.
var presetTimes = map[string]string{
	"quick-digits":                           "1-2 s",
	"ozer2022-fmnist-c10-iid-reduced":        "8 min",
	"ozer2022-fmnist-c10-dirichlet-reduced":  "10 min",
	"ozer2022-fmnist-c100-iid-reduced":       "10 min",
	"ozer2022-fmnist-c100-dirichlet-reduced": "12-15 min",
	"fischer2024-fmnist-e1-reduced":          "10 min",
	"fischer2024-fmnist-e5-reduced":          "19 min",
	"fischer2024-fmnist-prior-reduced":       "1 min",
	"fischer2024-fmnist-dwc-reduced":         "8 min",
	"jamoussi-fmnist-reduced":                "17 min",
	"fedbe-fmnist-fast":                      "2 min",
	"fedbe-digits-fast":                      "5-10 s",
	"fmnist-fast":                            "4.5 min",
	"digits-fast":                            "26-34 s",
	"diabetes-fast":                          "3-4 s",
	"boston-fast":                            "3-4 s",
}

// paperOf is the short reference of a preset's description: the text before its first colon
// ("Fischer et al. (2024) Table 4, cifar10"), at most 41 characters.
func paperOf(about string) string {
	p, _, _ := strings.Cut(about, ":")
	if r := []rune(p); len(r) > 41 {
		p = string(r[:40]) + "…"
	}
	return p
}

// presetGroup is one heading of `fedbayes run -list` and its presets.
type presetGroup struct {
	title string
	names []string
}

// firstRun reports whether a preset is one of the first runs a user makes: quick-digits (the
// README's first run) and the -fast presets (seconds to minutes on 2 cores).
func firstRun(name string) bool {
	return name == "quick-digits" || strings.HasSuffix(name, "-fast")
}

// paperGroups are the preset families of the papers of the reproduction report: the short reference
// that the report's heading of the paper gives ("## 000 · Ozer et al. (2022): ..." in
// docs/reproduction.md), and which presets are the paper's at every budget (NAME, NAME-medium,
// NAME-reduced, and the paper's presets that the report does not run).
var paperGroups = []struct {
	name  string
	match func(name string) bool
}{
	{"Ozer et al. (2022)", func(n string) bool { return strings.HasPrefix(n, "ozer2022-") }},
	{"Fischer et al. (2024)", func(n string) bool { return strings.HasPrefix(n, "fischer2024-") }},
	{"Jamoussi et al. (BA-BFL)", func(n string) bool { return strings.HasPrefix(n, "jamoussi-") }},
	{"Hasan (2023)", func(n string) bool {
		return slices.Contains(presets.HasanPresetNames(), n) || strings.HasPrefix(n, "hasan-")
	}},
	{"Chen & Chao", func(n string) bool {
		return slices.Contains(presets.ChenPresetNames(), n) || strings.HasPrefix(n, "chen-")
	}},
}

// reportPaper returns the number (reproduce.Paper's ID) of the report's paper that runs a preset
// match accepts, at any budget, or "" when no paper of the report runs one.
func reportPaper(match func(name string) bool) string {
	for _, p := range reproduce.Papers() {
		for _, pr := range p.Presets {
			for _, b := range []reproduce.Budget{reproduce.Full, reproduce.Medium, reproduce.Reduced} {
				if match(pr.Name(b)) {
					return p.ID
				}
			}
		}
	}
	return ""
}

// paperHeading is the heading of a paper's presets in `fedbayes run -list`: its short reference and,
// when the report runs its presets, its number there ("Ozer et al. (2022), paper 000 of
// docs/reproduction.md").
func paperHeading(name string, match func(name string) bool) string {
	if id := reportPaper(match); id != "" {
		return name + ", paper " + id + " of docs/reproduction.md"
	}
	return name
}

// groupPresets sorts names into the groups of `fedbayes run -list`, in this order: the first runs
// (quick-digits first, then the others by name), then each paper's other presets (paperGroups), then
// any preset of no paper; empty groups are left out.
func groupPresets(names []string) []presetGroup {
	first := presetGroup{title: "First runs (seconds to minutes on 2 cores)"}
	papers := make([]presetGroup, len(paperGroups))
	other := presetGroup{title: "Other presets"}
	for i, g := range paperGroups {
		papers[i].title = paperHeading(g.name, g.match)
	}
next:
	for _, n := range names {
		if firstRun(n) {
			first.names = append(first.names, n)
			continue
		}
		for i, g := range paperGroups {
			if g.match(n) {
				papers[i].names = append(papers[i].names, n)
				continue next
			}
		}
		other.names = append(other.names, n)
	}
	sort.SliceStable(first.names, func(i, j int) bool { return first.names[i] == "quick-digits" && first.names[j] != "quick-digits" })
	var out []presetGroup
	for _, g := range append(append([]presetGroup{first}, papers...), other) {
		if len(g.names) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// presetRow is the line of preset n in `fedbayes run -list`: name, paper, runs, budget, measured time
// and whether its dataset is installed (present, by dataset name); a missing dataset is added to
// missing.
func presetRow(n string, present, missing map[string]data.Availability) (string, error) {
	s, err := presets.Preset(n)
	if err != nil {
		return "", err
	}
	settings, err := s.Expand()
	if err != nil {
		return "", fmt.Errorf("preset %s: %w", n, err)
	}
	runs := 0
	for _, st := range settings {
		runs += len(st.Spec.Seeds)
	}
	t := presetTimes[n]
	if t == "" {
		t = "-"
	}
	name := s.WithDefaults().Dataset.Name
	status := "yes"
	if a, ok := present[name]; ok && !a.Present {
		status = "missing: " + name
		missing[name] = a
	}
	return fmt.Sprintf("%s\t%s\t%d\t%s\t%s\t%s", n, paperOf(presets.PresetAbout(n)), runs, engine.BudgetOf(s, -1, -1).Short(), t, status), nil
}

// listPresets prints the presets for `fedbayes run -list` as one table under the headings of
// groupPresets. The short listing shows the first runs and the paper presets with a measured time
// (presetTimes), then one line per paper with its number of presets; with all, every preset. Each
// preset's line has its name, paper, runs, budget, measured time and whether its data is installed
// in dir; the datasets of the listed presets that are not installed follow, with how to install them.
func listPresets(w io.Writer, dir string, all bool) error {
	present := map[string]data.Availability{}
	for _, a := range data.Status(dir) {
		present[a.Name] = a
	}
	missing := map[string]data.Availability{}
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "preset\tpaper\truns\tbudget\ttime (2 cores)\tdata")
	var summary []string  // the short listing's line per paper
	var headings []string // the groups' headings, by the index in their row's mark
	for i, g := range groupPresets(presets.PresetNames()) {
		shown := g.names
		if !all && i > 0 {
			shown = slices.DeleteFunc(slices.Clone(g.names), func(n string) bool { return presetTimes[n] == "" })
			summary = append(summary, fmt.Sprintf("  %s: %d presets, %d of them above", g.title, len(g.names), len(shown)))
		}
		if len(shown) == 0 {
			continue
		}
		// A heading is a row of empty cells, which keeps one column width for the whole table, whose
		// first cell marks it (headingMark and its index); the heading replaces the row once the
		// widths are set, so that a long heading does not widen the preset column.
		fmt.Fprintf(tw, "\t\t\t\t\t\n%s%d\t\t\t\t\t\n", headingMark, len(headings))
		headings = append(headings, g.title)
		for _, n := range shown {
			row, err := presetRow(n, present, missing)
			if err != nil {
				return err
			}
			fmt.Fprintln(tw, row)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		if line == "" {
			continue
		}
		line = strings.TrimRight(line, " \n")
		if rest, ok := strings.CutPrefix(line, headingMark); ok {
			i, err := strconv.Atoi(rest)
			if err != nil || i >= len(headings) {
				return fmt.Errorf("run -list: heading row %q", line)
			}
			line = headings[i]
		}
		fmt.Fprintln(w, line)
	}
	if !all {
		fmt.Fprintln(w, "\nThe presets of each paper (fedbayes run -list -all lists every one):")
		fmt.Fprintln(w, strings.Join(summary, "\n"))
	}
	fmt.Fprintln(w, "\nbudget: T rounds, E local epochs, seeds, training / test examples (all: the whole dataset).")
	fmt.Fprintln(w, "NAME runs a paper's budget (hours to weeks on 2 cores), NAME-medium (where there is one) the report's, NAME-reduced under about 30 minutes.")
	writeMissingData(w, missing)
	return nil
}

// headingMark starts the first cell of a heading's row in listPresets's table (a byte no preset
// name holds).
const headingMark = "\x01"

// writeMissingData prints the datasets of the listed presets that are not installed, with how to
// install each.
func writeMissingData(w io.Writer, missing map[string]data.Availability) {
	if len(missing) == 0 {
		return
	}
	fmt.Fprintln(w, "Data not installed (those presets are refused until it is):")
	for _, n := range slices.Sorted(maps.Keys(missing)) {
		fmt.Fprintf(w, "  %s: %s\n", n, missing[n].Install)
	}
}

// checkData fails, naming the dataset and how to install it, when a setting's data is not in its
// data folder. Datasets that data.Status does not know are left to the loader.
func checkData(settings []engine.Setting) error {
	for _, st := range settings {
		dir := st.Spec.Dataset.Dir
		if dir == "" {
			dir = data.Dir()
		}
		for _, a := range data.Status(dir) {
			if a.Name == st.Spec.Dataset.Name && !a.Present {
				return fmt.Errorf("dataset.name %q: not installed in %s; %s. Nothing was run", a.Name, dir, a.Install)
			}
		}
	}
	return nil
}

// closest returns the name nearest to s (edit distance at most a third of its length, at least 2),
// or a name that contains s, or "".
func closest(s string, names []string) string {
	best, bestD := "", max(2, len(s)/3)+1
	for _, n := range names {
		if d := editDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" && len(s) >= 4 {
		for _, n := range names {
			if strings.Contains(n, s) {
				return n
			}
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
