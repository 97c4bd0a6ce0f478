package notebook

import (
	"encoding/json"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/presets"
)

// rawList is the hand-written sweep list notebooks 02 and 06 used before Sweep.
func rawList(t *testing.T, values ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(values))
	for i, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

func sameSpec(t *testing.T, what string, got, want *engine.Spec) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s differs from the hand-built spec:\n got %s\nwant %s", what, g, w)
	}
}

// The builder gives notebooks 02 and 06 the very specs their first cells built by hand (so their
// runs and results folders are unchanged).
func TestSpecBuilderMatchesTheNotebooks(t *testing.T) {
	rules, partitions := []string{"EAA", "GAA", "AALV", "PPA", "CF"}, []string{"iid", "dirichlet"}

	// Notebook 02 at the reduced budget, by hand.
	old, err := presets.Preset("ozer2022-fmnist-c10-iid" + presets.ReducedSuffix)
	if err != nil {
		t.Fatal(err)
	}
	old.Name, old.Variants = "vi", nil
	old.Evaluation.Fairness, old.Aggregation.Weighting, old.Model.Kind = "local", "size", "bayesian"
	old.Sweep = map[string][]json.RawMessage{"aggregation.rule": rawList(t, rules...), "partition.method": rawList(t, partitions...)}
	oldBase := old.Clone()
	oldBase.Name = "fedavg"
	oldBase.Model = engine.ModelSpec{Arch: oldBase.Model.Arch, Kind: "deterministic", Hidden: oldBase.Model.Hidden}
	oldBase.Aggregation.Rule = "FedAvg"
	oldBase.Evaluation.Samples = 1
	oldBase.Sweep = map[string][]json.RawMessage{"partition.method": rawList(t, partitions...)}

	s, err := PresetSpec("ozer2022-fmnist-c10-iid", true)
	if err != nil {
		t.Fatal(err)
	}
	s.Name = "vi"
	s.Evaluation.Fairness, s.Aggregation.Weighting, s.Model.Kind = "local", "size", "bayesian"
	if err := Sweep(s, map[string][]string{"aggregation.rule": rules, "partition.method": partitions}); err != nil {
		t.Fatal(err)
	}
	sameSpec(t, "02's Bayesian sweep", s, old)
	sameSpec(t, "02's FedAvg baseline", FedAvgBaseline(s, "fedavg", "partition.method"), oldBase)

	// Notebook 06's FedAvg row at the quick budget, by hand.
	p, err := PresetSpec("ozer2022-fmnist-c10-iid", true)
	if err != nil {
		t.Fatal(err)
	}
	p = presets.Fast(p)
	if err := Sweep(p, map[string][]string{"aggregation.rule": rules, "aggregation.weighting": {"size"}}); err != nil {
		t.Fatal(err)
	}
	// 06's Bayesian sweep: the hand-built spec set its sweep before presets.Fast, the builder after.
	hand, err := presets.Preset("ozer2022-fmnist-c10-iid" + presets.ReducedSuffix)
	if err != nil {
		t.Fatal(err)
	}
	hand.Variants = nil
	hand.Sweep = map[string][]json.RawMessage{"aggregation.rule": rawList(t, rules...), "aggregation.weighting": rawList(t, "equal", "size")}
	hand = presets.Fast(hand)
	hand.Sweep["aggregation.weighting"] = rawList(t, "size")
	sameSpec(t, "06's Bayesian sweep", p, hand)
	row := p.Clone()
	row.Name = p.Name + "-fedavg"
	row.Variants, row.Sweep = nil, nil
	row.Model = engine.ModelSpec{Arch: "lenet", Kind: "deterministic"}
	row.Aggregation = engine.AggregationSpec{Rule: "FedAvg", Weighting: "size"}
	row.Evaluation.Samples = 1
	b := FedAvgBaseline(p, p.Name+"-fedavg")
	b.Aggregation.Weighting = "size"
	sameSpec(t, "06's FedAvg row", b, row)
}

func TestSpecBuilderErrors(t *testing.T) {
	if _, err := PresetSpec("no-such-preset", false); err == nil || !strings.Contains(err.Error(), "no-such-preset") {
		t.Errorf("PresetSpec(unknown): %v", err)
	}
	s, err := PresetSpec("ozer2022-fmnist-c10-iid", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Variants) != 0 {
		t.Errorf("PresetSpec kept %d variants", len(s.Variants))
	}
	if err := Sweep(s, map[string][]string{"aggregation.rule": nil}); err == nil || !strings.Contains(err.Error(), "no values") {
		t.Errorf("Sweep with no values: %v", err)
	}
}
