package engine

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestParseSpecStrict covers the hostile inputs of issue 21: every one is a clear *SpecError or
// positioned error naming the field, never a panic or a silent default.
func TestParseSpecStrict(t *testing.T) {
	base := `"dataset": {"name": "digits"}`
	tests := []struct {
		name, json string
		want       []string // fragments of the message
	}{
		{"duplicate key", `{` + base + `, "training": {"rounds": 1, "rounds": 2}}`, []string{"training.rounds", `"rounds" appears twice`, "line 1"}},
		{"NaN", "{" + base + ",\n \"training\": {\"lr\": NaN}}", []string{"training.lr", "line 2, column 21", "NaN is not a JSON number"}},
		{"Infinity", `{` + base + `, "model": {"prior_std": Infinity}}`, []string{"model.prior_std", "Infinity is not a JSON number"}},
		{"1e999", `{` + base + `, "training": {"lr": 1e999}}`, []string{"training.lr", "1e999 is outside the range"}},
		{"int at 2^63-1", `{` + base + `, "training": {"rounds": 9223372036854775807}}`, []string{"training.rounds", "9223372036854775807 is too large"}},
		{"int beyond int64", `{` + base + `, "training": {"rounds": 9223372036854775808}}`, []string{"training.rounds", "does not fit"}},
		{"swept int at 2^63-1", `{` + base + `, "sweep": {"training.rounds": [9223372036854775807]}}`, []string{"training.rounds", "9223372036854775807 is too large"}},
		{"rounds 0", `{` + base + `, "training": {"rounds": 0}}`, []string{"training.rounds", "0 would silently mean the default 10"}},
		{"lr 0", `{` + base + `, "training": {"lr": 0}}`, []string{"training.lr", "default 0.01"}},
		{"alpha 0", `{` + base + `, "partition": {"method": "dirichlet", "alpha": 0.0}}`, []string{"partition.alpha", "default 0.5"}},
		{"swept rounds 0", `{` + base + `, "sweep": {"training.rounds": [5, 0]}}`, []string{"training.rounds", "default 10", `setting "run-0"`}},
		{"batch_size 2^62", `{` + base + `, "training": {"batch_size": 4611686018427387904}}`, []string{"training.batch_size", "too large"}},
		{"samples 2^62", `{` + base + `, "evaluation": {"samples": 4611686018427387904}}`, []string{"evaluation.samples", "too large"}},
		{"bins 2^62", `{` + base + `, "evaluation": {"bins": 4611686018427387904}}`, []string{"evaluation.bins", "too large"}},
		{"batch_size 2^31", `{` + base + `, "training": {"batch_size": 2147483648}}`, []string{"training.batch_size", "too large"}},
		{"samples 2^31", `{` + base + `, "evaluation": {"samples": 2147483648}}`, []string{"evaluation.samples", "too large"}},
		{"bins 2^31", `{` + base + `, "evaluation": {"bins": 2147483648}}`, []string{"evaluation.bins", "too large"}},
		{"hidden 2^40", `{` + base + `, "model": {"hidden": [1099511627776]}}`, []string{"model.hidden[0]", "too large"}},
		{"hidden 100000x100000", `{` + base + `, "model": {"hidden": [100000, 100000]}}`, []string{"needs about", "GiB of memory", "this process may use"}},
		{"FedBE samples 1e8", `{"dataset": {"name": "fashion-mnist", "server_fraction": 0.2}, "aggregation": {"rule": "fedbe-gaussian", "options": {"samples": 100000000}}}`,
			[]string{"aggregation.options.samples: 100000000; must be in [0, 1000] (0 takes the default)"}},
		{"FedBE samples 2^31-1", `{"dataset": {"name": "fashion-mnist", "server_fraction": 0.2}, "aggregation": {"rule": "fedbe-gaussian", "options": {"samples": 2147483647}}}`,
			[]string{"aggregation.options.samples: 2147483647", "[0, 1000]"}},
		{"FedBE distill epochs 1e9", `{"dataset": {"name": "fashion-mnist", "server_fraction": 0.2}, "aggregation": {"rule": "fedbe-gaussian", "options": {"distill": {"epochs": 1000000000}}}}`,
			[]string{"aggregation.options.distill.epochs: 1000000000; must be in [0, 10000]"}},
		{"FedBE samples x wide model", `{"dataset": {"name": "cifar100", "server_fraction": 0.5}, "model": {"hidden": [50000]}, "aggregation": {"rule": "fedbe-gaussian", "options": {"samples": 1000}}}`,
			[]string{"aggregation.options: this setting needs about", "the server step's 1011 networks"}},
		{"samples x test set", `{"dataset": {"name": "cifar100"}, "evaluation": {"samples": 100000}}`, []string{"evaluation.samples", "needs about", "GiB of memory"}},
		{"clients 2^62", `{` + base + `, "partition": {"clients": 4611686018427387904}}`, []string{"partition.clients", "too large"}},
		{"population 1e9", `{` + base + `, "aggregation": {"rule": "PPA", "population": 1000000000}}`, []string{"aggregation.population", "too large"}},
		{"long name", `{"name": "` + strings.Repeat("n", 10<<20) + `", ` + base + `}`, []string{"spec: name: 10485760 bytes; at most 200"}},
		{"trailing data", `{` + base + `} {}`, []string{"trailing data"}},
		{"wrong type", "{" + base + ",\n \"training\": {\"rounds\": \"x\"}}", []string{"training.rounds", "(line 2, column"}},
		{"swept wrong type", `{` + base + `, "sweep": {"training.rounds": ["x"]}}`, []string{"training.rounds", `setting "run-x"`}},
		{"sweep 1000x1000", sweepJSON(1000, 1000), []string{"expands to 1000000 settings", "at most 10000"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tc.json))
			if err == nil {
				t.Fatalf("ParseSpec accepted %.200s", tc.json)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// sweepJSON is a spec sweeping a x b values.
func sweepJSON(a, b int) string {
	var x, y []string
	for i := range a {
		x = append(x, fmt.Sprint(i+1))
	}
	for i := range b {
		y = append(y, fmt.Sprint(i+1))
	}
	return `{"dataset": {"name": "digits"}, "sweep": {"training.rounds": [` + strings.Join(x, ",") +
		`], "training.local_epochs": [` + strings.Join(y, ",") + `]}}`
}

func TestParseSpecExact(t *testing.T) {
	// A byte-order mark is skipped; a seed above 2^53 survives the sweep expansion exactly.
	raw := "\xEF\xBB\xBF" + `{"dataset": {"name": "digits"}, "seeds": [9007199254740993],
		"sweep": {"aggregation.rule": ["GAA", "EAA"]}}`
	s, err := ParseSpec([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	settings, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range settings {
		if got := st.Spec.Seeds; len(got) != 1 || got[0] != 9007199254740993 {
			t.Errorf("%s: seeds %v, want [9007199254740993]", st.Name, got)
		}
	}
}

func TestSweepNameShortened(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	_, err := ParseSpec([]byte(`{"dataset": {"name": "digits"}, "sweep": {"aggregation.rule": ["` + long + `"]}}`))
	var se *SpecError
	if !errors.As(err, &se) {
		t.Fatalf("error %v", err)
	}
	if len(err.Error()) > 2000 {
		t.Errorf("the error quotes the long name in full (%d bytes)", len(err.Error()))
	}
}

func TestExpandLargestSweepIsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("expands 10,000 settings")
	}
	s, err := ParseSpec([]byte(sweepJSON(100, 100)))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	settings, err := s.Expand()
	if err != nil || len(settings) != 10_000 {
		t.Fatalf("%d settings, %v", len(settings), err)
	}
	t.Logf("10,000 settings in %v", time.Since(start))
}

// TestMemoryEstimateCountsServerNetworks checks that FedBE's samples enter the memory estimate:
// each more sample is one more network of the MLP [784, 100, 10] (79,510 parameters) with its
// class probabilities on the server set (20% of 60,000 examples, 10 classes), in float32:
// 4 x (79,510 + 12,000 x 10) = 798,040 bytes.
func TestMemoryEstimateCountsServerNetworks(t *testing.T) {
	estimate := func(samples int) float64 {
		s, err := ParseSpec([]byte(fmt.Sprintf(`{"dataset": {"name": "fashion-mnist", "server_fraction": 0.2}, "model": {"kind": "deterministic"},
			"aggregation": {"rule": "fedbe-gaussian", "options": {"samples": %d}}}`, samples)))
		if err != nil {
			t.Fatal(err)
		}
		return MemoryEstimate(s.WithDefaults())
	}
	if got, want := estimate(100)-estimate(10), 90*798_040.0; got != want {
		t.Errorf("90 more samples add %.0f bytes to the estimate, want %.0f", got, want)
	}
}

// TestFedBECountsRefusedCheaply checks that FedBE's samples at 10^8 and its distillation's epochs at
// 10^9, which ran the process out of memory or for days, are refused at spec check having
// allocated less than 8 MiB (runtime.MemStats.TotalAlloc).
func TestFedBECountsRefusedCheaply(t *testing.T) {
	for _, opts := range []string{`{"samples": 100000000}`, `{"distill": {"epochs": 1000000000}}`} {
		spec := `{"dataset": {"name": "fashion-mnist", "server_fraction": 0.2}, "aggregation": {"rule": "fedbe-gaussian", "options": ` + opts + `}}`
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ParseSpec([]byte(spec))
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "must be in [0, ") {
			t.Errorf("%s: %v, want a refusal with the bound", opts, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
			t.Errorf("%s: allocated %d bytes before refusing", opts, got)
		}
	}
}
