package reproduce

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerdictChange checks what a finding whose verdict changed says changed since the baseline: a
// preset's set-up field by field, its seeds, its runs, the verdict rule, or the finding's checks.
func TestVerdictChange(t *testing.T) {
	spec := func(lr float64) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"name":"p-a","training":{"lr":%g}}`, lr))
	}
	specNow := func(lr float64) func(string, string) (json.RawMessage, bool) {
		return func(preset, setting string) (json.RawMessage, bool) {
			if setting != "p-a" {
				return nil, false
			}
			return spec(lr), true
		}
	}
	base := &Baseline{From: "the old report", Rule: "old rule",
		Findings: []BaselineFinding{{Paper: "001", Claim: "A beats B", Verdict: Partly}, {Paper: "001", Claim: "old words", Verdict: Holds}},
		Presets:  map[string]BaselinePreset{"p": {Runs: 6, Seeds: []int64{0, 1, 2}, Setting: "p-a", Spec: spec(0.01)}}}
	same := map[string]BaselinePreset{"p": {Runs: 6, Seeds: []int64{0, 1, 2}}}
	for _, tc := range []struct {
		name  string
		f     Finding
		rule  string
		cur   map[string]BaselinePreset
		lr    float64
		want  string
		empty bool
	}{
		{name: "same verdict", f: Finding{Claim: "A beats B", Verdict: Partly, Presets: []string{"p"}}, rule: "old rule", cur: same, lr: 0.01, empty: true},
		{name: "not in the baseline", f: Finding{Claim: "new claim", Verdict: Holds, Presets: []string{"p"}}, rule: "old rule", cur: same, lr: 0.01, empty: true},
		{name: "checks only", f: Finding{Claim: "A beats B", Verdict: Holds, Presets: []string{"p"}}, rule: "old rule", cur: same, lr: 0.01,
			want: "from *holds in part*; since then: how the report judges this finding (its checks), on the same runs under the same rule"},
		{name: "rule", f: Finding{Claim: "A beats B", Verdict: Holds, Presets: []string{"p"}}, rule: "new rule", cur: same, lr: 0.01,
			want: "since then: the verdict rule"},
		{name: "set-up and not run", f: Finding{Claim: "A beats B", Verdict: NotRun, Presets: []string{"p"}}, rule: "old rule",
			cur: map[string]BaselinePreset{"p": {}}, lr: 0.001,
			want: "`p`: set-up (training.lr: 0.01 before, 0.001 now); `p`: no runs the report reads now (6 before): not run yet as it stands"},
		{name: "seeds", f: Finding{Claim: "A beats B", Verdict: Holds, Presets: []string{"p"}}, rule: "old rule",
			cur: map[string]BaselinePreset{"p": {Runs: 10, Seeds: []int64{0, 1, 2, 3, 4}}}, lr: 0.01, want: "`p`: seeds (0–2 before, 0–4 now)"},
		{name: "renamed", f: Finding{Claim: "new words", Formerly: "old words", Verdict: Fails, Presets: []string{"p"}}, rule: "old rule", cur: same, lr: 0.01,
			want: `from *holds* (as "old words")`},
		{name: "no presets", f: Finding{Claim: "A beats B", Verdict: Holds, Presets: []string{}}, rule: "old rule", cur: same, lr: 0.001,
			want: "how the report judges this finding"},
	} {
		got := verdictChangeWith(base, tc.cur, tc.rule, "001", tc.f, specNow(tc.lr))
		if tc.empty != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want it to contain %q", tc.name, got, tc.want)
		}
	}
	if got := verdictChange(nil, same, "rule", "001", Finding{Claim: "A beats B", Verdict: Holds}); got != "" {
		t.Errorf("no baseline: %q", got)
	}
}

// TestSetupChanges checks the set-up differences of a preset whose baseline records every setting:
// each distinct difference once, with how many settings it applies to where not all, and the
// settings the preset no longer has.
func TestSetupChanges(t *testing.T) {
	spec := func(name string, lr float64) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"name":%q,"training":{"lr":%g}}`, name, lr))
	}
	was := BaselinePreset{Setting: "p-a", Spec: spec("p-a", 0.01), Settings: map[string]json.RawMessage{
		"p-a": spec("p-a", 0.01), "p-b": spec("p-b", 0.01), "p-c": spec("p-c", 0.01), "p-d": spec("p-d", 0.01)}}
	for _, tc := range []struct {
		name string
		now  map[string]float64 // each setting's lr now; a setting left out is gone
		want []string
	}{
		{"unchanged", map[string]float64{"p-a": 0.01, "p-b": 0.01, "p-c": 0.01, "p-d": 0.01}, nil},
		{"all alike", map[string]float64{"p-a": 0.1, "p-b": 0.1, "p-c": 0.1, "p-d": 0.1},
			[]string{"set-up (training.lr: 0.01 before, 0.1 now)"}},
		{"some, two ways", map[string]float64{"p-a": 0.01, "p-b": 0.1, "p-c": 0.1, "p-d": 0.2},
			[]string{"set-up of 2 of its 4 settings (training.lr: 0.01 before, 0.1 now)", "set-up of 1 of its 4 settings (training.lr: 0.01 before, 0.2 now)"}},
		{"one gone", map[string]float64{"p-a": 0.01, "p-b": 0.01, "p-c": 0.01}, []string{"settings (p-d is not one of them now)"}},
		{"two gone", map[string]float64{"p-a": 0.01, "p-b": 0.01}, []string{"settings (2 of its 4 are not among them now, p-c first)"}},
	} {
		specNow := func(_, setting string) (json.RawMessage, bool) {
			lr, ok := tc.now[setting]
			return spec(setting, lr), ok
		}
		got := setupChanges("p", was, specNow)
		if strings.Join(got, " | ") != strings.Join(tc.want, " | ") {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// A baseline that records one setting compares that one.
	one := BaselinePreset{Setting: "p-a", Spec: spec("p-a", 0.01)}
	got := setupChanges("p", one, func(_, s string) (json.RawMessage, bool) { return spec(s, 0.1), true })
	if len(got) != 1 || got[0] != "set-up (training.lr: 0.01 before, 0.1 now)" {
		t.Errorf("one recorded setting: %q", got)
	}
}

// TestBaselineRoundTrip writes a report as the baseline and writes it again from the same runs: no
// finding says its verdict changed and the page is the same each time; lost runs make the findings
// say so.
// A baseline file that is not one is refused with its name.
func TestBaselineRoundTrip(t *testing.T) {
	dir := t.TempDir()
	name := jamoussiPreset.Name(Medium)
	writeJamoussiRuns(t, dir, name, []int64{0, 1, 2}, 0, 0)
	papers, _ := SelectPapers([]string{"002"})
	out := filepath.Join(dir, "docs", "reproduction.md")
	opt := ReportOptions{Dir: dir, Budget: Medium, Output: out, NoFigures: true, Command: "test", SetBaseline: true}
	if _, err := Write(t.Context(), papers, opt); err != nil {
		t.Fatal(err)
	}
	opt.SetBaseline = false
	if _, err := Write(t.Context(), papers, opt); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(out)
	if _, err := Write(t.Context(), papers, opt); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(out)
	if string(first) != string(again) || strings.Contains(string(again), "Verdict changed") || !strings.Contains(string(again), "**Baseline.**") {
		t.Error("the report written twice over its own baseline differs, says a verdict changed, or does not name its baseline")
	}
	// Seed 2's runs are lost: the preset is not complete, its findings are not run, and say why.
	if err := os.RemoveAll(filepath.Join(dir, "002")); err != nil {
		t.Fatal(err)
	}
	writeJamoussiRuns(t, dir, name, []int64{0, 1}, 0, 0)
	findings, err := Write(t.Context(), papers, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		if f.Verdict == NotRun && !strings.Contains(f.Changed, "`"+name+"`: no runs the report reads now (48 before)") {
			t.Errorf("finding %q: changed %q; want the preset's runs named", f.Claim, f.Changed)
		}
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"from":"x","rule":"r","findings":[{"paper":"002"}],"presets":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBaseline(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a baseline finding without a claim: %v", err)
	}
	if b, err := ReadBaseline(filepath.Join(dir, "missing.json")); b != nil || err != nil {
		t.Errorf("missing baseline: %v, %v", b, err)
	}
}
