package results

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLoadRefusesRowsThatDoNotMatchTheStatus writes three completed seeds of one setting at rounds
// 1..3 (final accuracies 0.5, 0.55, 0.6), damages seed 3 in one way per case, and checks that Load
// either skips it with a reason naming the damage, or (a final newline only missing) keeps it, and
// that the table's final-round mean is always the mean of round 3 of the runs kept.
func TestLoadRefusesRowsThatDoNotMatchTheStatus(t *testing.T) {
	final := []float64{0.5, 0.55, 0.6}
	rowsOf := func(seed int) []Row {
		acc := final[seed-1]
		return []Row{accRow(1, acc-0.2, 2), accRow(2, acc-0.1, 1.5), accRow(3, acc, 1)}
	}
	line := func(r Row) string {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	lines := func(rows ...Row) string {
		var s strings.Builder
		for _, r := range rows {
			s.WriteString(line(r))
		}
		return s.String()
	}
	r3 := rowsOf(3)
	with := func(r Row, metric string, v float64) Row {
		m := map[string]float64{}
		for k, x := range r.Metrics {
			m[k] = x
		}
		m[metric] = v
		r.Metrics = m
		return r
	}
	tests := []struct {
		name   string
		rows   string // the damaged rounds.jsonl of seed 3; "" keeps the file
		damage func(t *testing.T, dir string)
		reason string // "" when seed 3 must be kept
	}{
		{name: "intact", reason: ""},
		{name: "final newline missing", rows: strings.TrimSuffix(lines(r3...), "\n"), reason: ""},
		{name: "short file", rows: lines(r3[:2]...), reason: "ends at round 2, but the run completed after round 3"},
		{name: "torn last line", rows: lines(r3[:2]...) + line(r3[2])[:40], reason: "torn line (40 bytes"},
		{name: "extra row after the status round", rows: lines(r3...) + line(accRow(4, 0.9, 0.1)), reason: "line 4 holds round 4, after the run's last round 3"},
		{name: "accuracy 5", rows: lines(r3[0], r3[1], with(r3[2], Accuracy, 5)), reason: "line 3: results: row of round 3: accuracy 5 is outside [0, 1]"},
		{name: "accuracy 1e308", rows: lines(r3[0], r3[1], with(r3[2], Accuracy, 1e308)), reason: "accuracy 1e+308 is outside [0, 1]"},
		{name: "negative accuracy", rows: lines(r3[0], r3[1], with(r3[2], Accuracy, -0.1)), reason: "accuracy -0.1 is outside"},
		{name: "NaN accuracy", rows: lines(r3[0], r3[1], with(r3[2], Accuracy, math.NaN())), reason: "accuracy is NaN"},
		{name: "ece above 1", rows: lines(r3[0], r3[1], with(r3[2], ECE, 1.5)), reason: "ece 1.5 is outside [0, 1]"},
		{name: "NaN nll", rows: lines(r3[0], r3[1], with(r3[2], NLL, math.NaN())), reason: "nll is NaN"},
		{name: "-Inf nll", rows: lines(r3[0], r3[1], with(r3[2], NLL, math.Inf(-1))), reason: "nll is -Inf"},
		{name: "+Inf nll is a real value", rows: lines(r3[0], r3[1], with(r3[2], NLL, math.Inf(1))), reason: ""},
		{name: "client accuracy 2", rows: lines(r3[0], r3[1], func(r Row) Row { r.ClientAccuracy = []float64{0.5, 2}; return r }(r3[2])), reason: "client 1: accuracy 2 is outside"},
		{name: "no run.json", damage: func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, MetaFile)); err != nil {
				t.Fatal(err)
			}
		}, reason: "no run.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for seed := 1; seed <= 3; seed++ {
				writeRun(t, root, "gaa", nil, int64(seed), rowsOf(seed), Completed)
			}
			dir := filepath.Join(root, RunName("gaa", 3))
			if tc.rows != "" {
				if err := os.WriteFile(filepath.Join(dir, RowsFile), []byte(tc.rows), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.damage != nil {
				tc.damage(t, dir)
			}
			runs, skipped, err := Load(root)
			if err != nil {
				t.Fatal(err)
			}
			if tc.reason != "" { // the damaged run given on its own is reported too
				_, alone, err := Load(dir)
				if err != nil || len(alone) != 1 || !strings.Contains(alone[0].Reason, tc.reason) {
					t.Errorf("Load(%s) alone: skipped %v, %v", dir, alone, err)
				}
			}
			want := []float64{0.5, 0.55, 0.6}
			if tc.reason == "" {
				if len(skipped) != 0 {
					t.Fatalf("skipped %v, want none", skipped)
				}
			} else {
				want = want[:2]
				if len(skipped) != 1 || skipped[0].Dir != dir || !strings.Contains(skipped[0].Reason, tc.reason) {
					t.Fatalf("skipped %v, want %s with a reason mentioning %q", skipped, dir, tc.reason)
				}
			}
			if len(runs) != len(want) {
				t.Fatalf("%d runs loaded, want %d", len(runs), len(want))
			}
			var final []float64
			for _, r := range runs {
				final = append(final, r.Rows[len(r.Rows)-1].Metrics[Accuracy])
			}
			slices.Sort(final)
			if !slices.Equal(final, want) {
				t.Errorf("final-round accuracies %v, want %v", final, want)
			}
		})
	}
}

// TestCheckAgainstSpec checks rows against the rounds a spec evaluates (every 2nd of 5 and the last).
func TestCheckAgainstSpec(t *testing.T) {
	expect := func(rounds ...int) Expect {
		return func(Meta) ([]int, bool) { return rounds, true }
	}
	run := func(state State, round int, rounds ...int) Run {
		r := Run{Dir: "d", Status: Status{State: state, Round: round, Reason: "NaN loss"}}
		for _, k := range rounds {
			r.Rows = append(r.Rows, accRow(k, 0.5, 1))
		}
		return r
	}
	unknown := func(Meta) ([]int, bool) { return nil, false }
	tests := []struct {
		name   string
		run    Run
		expect Expect
		want   string // "" for no error
	}{
		{"complete", run(Completed, 5, 2, 4, 5), expect(2, 4, 5), ""},
		{"no expectation", run(Completed, 5, 2, 4, 5), nil, ""},
		{"spec unknown", run(Completed, 5, 4, 5), unknown, ""},
		{"middle row missing", run(Completed, 5, 2, 5), expect(2, 4, 5), "line 2 holds round 5; the spec evaluates round 4 there"},
		{"first row missing", run(Completed, 5, 4, 5), expect(2, 4, 5), "line 1 holds round 4; the spec evaluates round 2 there"},
		{"row the spec does not evaluate", run(Completed, 5, 2, 3, 4, 5), expect(2, 4, 5), "line 2 holds round 3"},
		{"completed early", run(Completed, 4, 2, 4), expect(2, 4, 5), "completed after round 4, but its spec ends at round 5"},
		{"diverged holds a prefix", run(Diverged, 5, 2, 4), expect(2, 4, 5), ""},
		{"diverged with a gap", run(Diverged, 5, 4), expect(2, 4, 5), "line 1 holds round 4; the spec evaluates round 2"},
		{"incomplete is not checked", run("", 0, 7), expect(2, 4, 5), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run.Check(tc.expect)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantErr(t, err, tc.want)
		})
	}
}

// TestClientDistributionRanges checks the ranges of the per-client distribution metrics: an
// accuracy or ECE outside [0, 1] and a negative NLL are refused, an infinite NLL is allowed.
func TestClientDistributionRanges(t *testing.T) {
	for _, tc := range []struct {
		metric string
		v      float64
		ok     bool
	}{
		{"client_accuracy_p10", 0.4, true}, {"client_accuracy_median", 1.2, false},
		{"client_ece_max", -0.1, false}, {"client_ece_p90", 0.3, true},
		{"client_nll_min", -1, false}, {"client_nll_max", math.Inf(1), true}, {"client_nll_p10", math.NaN(), false},
	} {
		if err := checkValue(tc.metric, tc.v); (err == nil) != tc.ok {
			t.Errorf("%s = %v: error %v, want ok %v", tc.metric, tc.v, err, tc.ok)
		}
	}
}
