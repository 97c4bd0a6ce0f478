package engine

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/strategy"
)

// TestFormerLayoutSpec checks that a spec file of the former layout (aggregation.server, its
// fedpa_rho, a sweep and a variant of its fields) reads as the current one (results.SpecAliases).
func TestFormerLayoutSpec(t *testing.T) {
	old := `{"dataset": {"name": "digits", "server_fraction": 0.2}, "model": {"kind": "deterministic"},
		"aggregation": {"rule": "fedpa", "server": {"fedpa_rho": 0.3}},
		"training": {"sampler": {"epochs": 2}},
		"sweep": {"aggregation.server.server_lr": [0.5, 1]},
		"variants": [{"label": "a", "set": {"aggregation.server.fedpa_rho": 0.2}}, {"label": "b", "set": {"training.rounds": 2}}]}`
	s, err := ParseSpec([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(s.Aggregation.Options); got != `{"rho":0.3}` {
		t.Errorf("options %s, want {\"rho\":0.3}", got)
	}
	settings, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range settings {
		got = append(got, st.Name+" "+string(st.Spec.Aggregation.Options))
	}
	want := []string{`run-a-0.5 {"rho":0.2,"server_lr":0.5}`, `run-a-1 {"rho":0.2,"server_lr":1}`,
		`run-b-0.5 {"rho":0.3,"server_lr":0.5}`, `run-b-1 {"rho":0.3,"server_lr":1}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("settings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Both layouts at once: the former field is unknown.
	both := strings.Replace(old, `"server": {"fedpa_rho": 0.3}`, `"server": {"fedpa_rho": 0.3}, "options": {"rho": 0.3}`, 1)
	if _, err := ParseSpec([]byte(both)); err == nil || !strings.Contains(err.Error(), "aggregation.server") {
		t.Errorf("both layouts: %v; want aggregation.server refused", err)
	}
}

// TestFormerLayoutRunLoads checks that a finished run whose run.json records its spec in the former
// layout (aggregation.server, as the committed records of the 003 and 004 presets do) is a run of the
// spec as it reads now: the tables' check (RunChecks), the figures and resume take it, and a spec
// with other options does not.
func TestFormerLayoutRunLoads(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Dataset.ServerFraction = 0.2
	s.Model.Kind, s.Model.Hidden = "deterministic", []int{16}
	s.Training.Rounds, s.Seeds = 1, []int64{3}
	s.Aggregation.Rule = strategy.OneshotFLName
	s.Aggregation.Options = optionsJSON(strategy.OneshotFLOptions{Distill: predictive.DistillConfig{Epochs: 1, BatchSize: 32}})
	dir := t.TempDir()
	sum := runQuiet(t, s, dir, false)
	runDir := filepath.Join(dir, results.RunName(sum.Runs[0].Setting, 3))

	// The run.json an older fedbayes wrote: the options under aggregation.server.
	path := filepath.Join(runDir, "run.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&meta); err != nil {
		t.Fatal(err)
	}
	agg := meta["spec"].(map[string]any)["aggregation"].(map[string]any)
	agg["server"] = agg["options"]
	delete(agg, "options")
	former, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, former, 0o644); err != nil {
		t.Fatal(err)
	}

	check := func(spec *Spec) error {
		t.Helper()
		refs, chk, err := RunChecks(spec)
		if err != nil {
			t.Fatal(err)
		}
		run, err := results.ReadRun(filepath.Join(dir, refs[0].Name))
		if err != nil {
			t.Fatal(err)
		}
		return chk.CheckRun(run)
	}
	if err := check(s); err != nil {
		t.Fatalf("tables: the former run is not a run of its spec: %v", err)
	}
	other := s.Clone()
	other.Aggregation.Options = optionsJSON(strategy.OneshotFLOptions{Distill: predictive.DistillConfig{Epochs: 2, BatchSize: 32}})
	if err := check(other); err == nil || !strings.Contains(err.Error(), "aggregation.options.distill.epochs") {
		t.Fatalf("a spec with other options: %v; want the distill epochs named", err)
	}
	if _, skipped, err := writeFigures(dir, "former", nil); err != nil || len(skipped) > 0 {
		t.Fatalf("figures: %v, left out %v", err, skipped)
	}
	again := runQuiet(t, s, dir, true)
	if !again.Runs[0].AlreadyDone {
		t.Fatalf("resume ran the former run again: %+v", again.Runs[0])
	}
	if now, err := os.ReadFile(path); err != nil || !bytes.Equal(now, former) {
		t.Errorf("resume rewrote the former run.json (%v)", err)
	}
}
