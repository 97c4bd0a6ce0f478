package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/reproduce"
)

// TestListPresets checks `run -list` and `run -list -all`: one table whose first preset is
// quick-digits (the README's first run), the first runs before any paper's presets, each paper under
// its heading; the short listing stays short and counts each paper's presets, -all lists every
// preset once; a preset whose data is missing says so, and the install command follows.
func TestListPresets(t *testing.T) {
	empty := t.TempDir()
	rows := func(all bool) (lines []string, names []string, out string) {
		var b bytes.Buffer
		if err := listPresets(&b, empty, all); err != nil {
			t.Fatal(err)
		}
		lines = strings.Split(strings.TrimSpace(b.String()), "\n")
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 1 && slices.Contains(presets.PresetNames(), f[0]) {
				names = append(names, f[0])
			}
		}
		return lines, names, b.String()
	}
	short, shortNames, shortOut := rows(false)
	all, allNames, allOut := rows(true)
	if !strings.HasPrefix(short[0], "preset ") || !strings.Contains(short[0], "data") {
		t.Errorf("header %q", short[0])
	}
	for _, names := range [][]string{shortNames, allNames} {
		if len(names) == 0 || names[0] != "quick-digits" {
			t.Errorf("first preset listed: %v, want quick-digits", names[:min(3, len(names))])
		}
		last := slices.IndexFunc(names, func(n string) bool { return !firstRun(n) })
		if last < 0 || slices.ContainsFunc(names[last:], firstRun) {
			t.Errorf("first runs and paper presets interleave: %v", names)
		}
	}
	if len(short) > 45 || !strings.Contains(shortOut, "Ozer et al. (2022), paper 000 of docs/reproduction.md: 74 presets, 4 of them above") ||
		!strings.Contains(shortOut, "fedbayes run -list -all") {
		t.Errorf("short listing of %d lines:\n%s", len(short), shortOut)
	}
	if !slices.Equal(slices.Sorted(slices.Values(allNames)), presets.PresetNames()) {
		t.Errorf("-list -all lists %d presets, want each of the %d once", len(allNames), len(presets.PresetNames()))
	}
	for _, heading := range []string{"First runs (seconds to minutes on 2 cores)", "Ozer et al. (2022), paper 000 of docs/reproduction.md",
		"Chen & Chao, paper 004 of docs/reproduction.md"} {
		if !slices.Contains(all, heading) {
			t.Errorf("-list -all lacks the heading %q", heading)
		}
	}
	var quick string
	for _, l := range all {
		if strings.HasPrefix(l, "quick-digits ") {
			quick = l
		}
		if strings.HasPrefix(l, "fischer2024-cifar10-e1 ") && !strings.Contains(l, "missing: cifar10") {
			t.Errorf("CIFAR preset without its data not flagged: %q", l)
		}
		if strings.HasSuffix(l, " ") {
			t.Errorf("line with trailing blanks: %q", l)
		}
		if strings.Contains(l, headingMark) {
			t.Errorf("a heading's mark is left in %q", l)
		}
		if strings.HasPrefix(l, "ozer") && len([]rune(l)) > 180 {
			t.Errorf("line of %d characters: %q", len([]rune(l)), l)
		}
	}
	if !strings.Contains(quick, "T=3, E=2, 1 seed") || !strings.Contains(quick, "missing: digits") || strings.Contains(quick, "full budget") {
		t.Errorf("quick-digits line %q", quick)
	}
	if !strings.Contains(allOut, "Data not installed") || !strings.Contains(allOut, "digits: fedbayes data install") {
		t.Errorf("no install hint:\n%s", allOut)
	}
	runCommandCases(t, []commandCase{
		{args: []string{"run", "-all"}, status: 2, wantStderr: "-all goes with -list"},
		{args: []string{"run", "-list", "-all"}, status: 0, wantOut: "ozer2022-svhn-c100-iid-reduced"},
	})
}

// TestGroupPresets checks the groups of `run -list` on a hand-picked list: quick-digits, then the
// other first runs by name, each paper's presets under its number in order, and a preset of no paper
// last.
func TestGroupPresets(t *testing.T) {
	got := groupPresets([]string{"boston-fast", "chen-lenet-dirichlet", "fedbe-fmnist-full", "fischer2024-fmnist-e1",
		"fmnist-medium", "hasan-lenet-h", "jamoussi-fmnist", "my-own", "ozer2022-fmnist-c10-iid", "quick-digits", "zeta-fast"})
	want := []presetGroup{
		{"First runs (seconds to minutes on 2 cores)", []string{"quick-digits", "boston-fast", "zeta-fast"}},
		{"Ozer et al. (2022), paper 000 of docs/reproduction.md", []string{"ozer2022-fmnist-c10-iid"}},
		{"Fischer et al. (2024), paper 001 of docs/reproduction.md", []string{"fischer2024-fmnist-e1"}},
		{"Jamoussi et al. (BA-BFL), paper 002 of docs/reproduction.md", []string{"jamoussi-fmnist"}},
		{"Hasan (2023), paper 003 of docs/reproduction.md", []string{"fmnist-medium", "hasan-lenet-h"}},
		{"Chen & Chao, paper 004 of docs/reproduction.md", []string{"chen-lenet-dirichlet", "fedbe-fmnist-full"}},
		{"Other presets", []string{"my-own"}},
	}
	if len(got) != len(want) {
		t.Fatalf("groups %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].title != want[i].title || !slices.Equal(got[i].names, want[i].names) {
			t.Errorf("group %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestPaperHeadingsAreTheReports checks that each paper heading of `run -list` gives the paper's
// number and short reference as docs/reproduction.md's heading of that paper does ("## 000 · Ozer et
// al. (2022): ..."), that each of the report's papers has one, and that a family no paper of the
// report runs gets no number.
func TestPaperHeadingsAreTheReports(t *testing.T) {
	report, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "reproduction.md"))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, g := range paperGroups {
		id := reportPaper(g.match)
		if id == "" {
			t.Errorf("%s: no paper of the report runs its presets", g.name)
			continue
		}
		if ids[id] {
			t.Errorf("%s: paper %s has two headings", g.name, id)
		}
		ids[id] = true
		if want := "\n## " + id + " · " + g.name + ": "; !strings.Contains(string(report), want) {
			t.Errorf("heading %q: docs/reproduction.md has no %q", paperHeading(g.name, g.match), strings.TrimSpace(want))
		}
	}
	for _, p := range reproduce.Papers() {
		if !ids[p.ID] {
			t.Errorf("paper %s (%s) of the report has no heading in run -list", p.ID, p.Title)
		}
	}
	if h := paperHeading("Nobody (2030)", func(n string) bool { return strings.HasPrefix(n, "nobody-") }); h != "Nobody (2030)" {
		t.Errorf("heading of a family the report does not run: %q", h)
	}
}

// TestFirstRunTimesStated checks that `run -list` states a measured time for every first run (the
// presets a new user starts with: quick-digits and the -fast ones), and for no preset that does not
// exist.
func TestFirstRunTimesStated(t *testing.T) {
	names := presets.PresetNames()
	n := 0
	for _, name := range names {
		if firstRun(name) {
			n++
			if presetTimes[name] == "" {
				t.Errorf("first run %s has no measured time in presetTimes (run -list shows -)", name)
			}
		}
	}
	if n < 2 {
		t.Errorf("%d first runs among %d presets", n, len(names))
	}
	for name := range presetTimes {
		if !slices.Contains(names, name) {
			t.Errorf("presetTimes times %s, which is no preset", name)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"ozer2022-fmnist-c10-iid", "ozer2022-fmnist-c10-iid-reduced", "quick-digits"}
	for in, want := range map[string]string{
		"ozer2022-fmnst-c10-iid": "ozer2022-fmnist-c10-iid",
		"quick-digit":            "quick-digits",
		"quick":                  "quick-digits", // a part of the name
		"zzzzzzzz":               "",
	} {
		if got := closest(in, names); got != want {
			t.Errorf("closest(%q) = %q, want %q", in, got, want)
		}
	}
}

// A preset whose data is not installed is refused before any run folder is made.
func TestRunRefusesMissingData(t *testing.T) {
	empty := t.TempDir()
	spec := filepath.Join(t.TempDir(), "spec.json")
	writeFile(t, spec, `{"name": "x", "dataset": {"name": "cifar10", "dir": "`+empty+`"}, "training": {"rounds": 1}}`)
	out := filepath.Join(t.TempDir(), "results")
	var stdout, stderr bytes.Buffer
	if got := runMain([]string{"run", spec, "-o", out}, &stdout, &stderr); got != 1 {
		t.Fatalf("status %d; stderr %s", got, stderr.String())
	}
	if !strings.Contains(stderr.String(), `dataset.name "cifar10": not installed in `+empty) {
		t.Errorf("stderr %q", stderr.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("results folder created: %v", err)
	}
}

// `run -list` lists the predictive-space presets too: Hasan (2023)'s one-round presets
// (presets.HasanPresetNames) and Chen & Chao's FedBE presets (presets.ChenPresetNames) are engine presets.
func TestRunTakesPredictivePresets(t *testing.T) {
	var out bytes.Buffer
	if err := listPresets(&out, t.TempDir(), true); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fmnist-fast", "fedbe-fmnist-fast", "chen-lenet-dirichlet-reduced"} {
		if !strings.Contains(out.String(), "\n"+name+" ") {
			t.Errorf("-list does not list %s", name)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fmnist-fast", "-print"}, `"name": "fmnist-fast-fedavg-0"`},
		{[]string{"fedbe-digits-fast", "-print"}, `"name": "fedbe-digits-fast-fedavg"`},
	} {
		var b bytes.Buffer
		if err := runRun(tc.args, &b); err != nil {
			t.Fatalf("run %v: %v", tc.args, err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("run %v printed %q", tc.args, b.String())
		}
	}
}
