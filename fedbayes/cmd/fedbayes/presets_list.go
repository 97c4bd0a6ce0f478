package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/presets"
)

// presetTimes are wall times measured on the 2-core reference machine with the pure-Go backend
// (docs/engine.md, "Presets"); a preset not listed has not been timed.
var presetTimes = map[string]string{
	"quick-digits":                           "< 1 s",
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
	"fmnist-fast":                            "4.5 min",
	"digits-fast":                            "34 s",
	"diabetes-fast":                          "3 s",
	"boston-fast":                            "4 s",
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

// listPresets prints one line per preset: name, paper, runs, budget, measured time and whether its
// data is installed in dir, then the datasets to install.
func listPresets(w io.Writer, dir string) error {
	present := map[string]data.Availability{}
	for _, a := range data.Status(dir) {
		present[a.Name] = a
	}
	missing := map[string]data.Availability{}
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "preset\tpaper\truns\tbudget\ttime (2 cores)\tdata")
	for _, n := range presets.PresetNames() {
		s, err := presets.Preset(n)
		if err != nil {
			return err
		}
		runs := 0
		settings, err := s.Expand()
		if err != nil {
			return fmt.Errorf("preset %s: %w", n, err)
		}
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
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", n, paperOf(presets.PresetAbout(n)), runs,
			engine.BudgetOf(s, -1, -1).Short(), t, status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "budget: T rounds, E local epochs, seeds, training / test examples (all: the whole dataset).")

	fmt.Fprintln(w, "The full presets run the papers' budgets (hours to weeks on 2 cores); NAME-reduced runs under about 30 minutes.")
	if len(missing) > 0 {
		names := make([]string, 0, len(missing))
		for n := range missing {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintln(w, "Data not installed (those presets are refused until it is):")
		for _, n := range names {
			fmt.Fprintf(w, "  %s: %s\n", n, missing[n].Install)
		}
	}
	return nil
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
