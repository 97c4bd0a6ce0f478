package engine

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseSpecErrors(t *testing.T) {
	base := `"dataset": {"name": "digits"}`
	tests := []struct {
		name, json string
		path, want string // the JSON path and a fragment of the message
	}{
		{"unknown top field", `{` + base + `, "rounds": 3}`, "rounds", "unknown field; fields here: name, dataset"},
		{"unknown nested field", `{` + base + `, "training": {"lrr": 0.1}}`, "training.lrr", "unknown field"},
		{"unknown pretrain field", `{` + base + `, "aggregation": {"pretrain": {"epoch": 3}}}`, "aggregation.pretrain.epoch", "fields here: epochs, patience"},
		{"missing dataset", `{}`, "dataset.name", "missing; one of fashion-mnist"},
		{"bad dataset", `{"dataset": {"name": "mnits"}}`, "dataset.name", `"mnits" is not one of`},
		{"regression dataset split by class", `{"dataset": {"name": "boston"}, "partition": {"method": "dirichlet"}}`, "partition.method", "regression"},
		{"bad optimizer", `{` + base + `, "training": {"optimizer": "rmsprop"}}`, "training.optimizer", `"rmsprop" is not one of sgd, adam`},
		{"bad rule", `{` + base + `, "aggregation": {"rule": "mean"}}`, "aggregation.rule", "EAA, GAA, AALV"},
		{"fedavg on bayes", `{` + base + `, "aggregation": {"rule": "FedAvg"}}`, "aggregation.rule", "drops the variances"},
		{"bad weighting", `{` + base + `, "aggregation": {"weighting": "kl"}}`, "aggregation.weighting", "equal, size, maxdisc, fixedpoint"},
		{"maxdisc deterministic", `{` + base + `, "model": {"kind": "deterministic"}, "aggregation": {"weighting": "maxdisc"}}`, "aggregation.weighting", "needs Gaussian"},
		{"bad partition", `{` + base + `, "partition": {"method": "random"}}`, "partition.method", "iid, dirichlet, shards, classes, heterogeneity"},
		{"alpha without dirichlet", `{` + base + `, "partition": {"alpha": 0.5}}`, "partition.alpha", "does not use it"},
		{"participation", `{` + base + `, "partition": {"participation": 1.5}}`, "partition.participation", "(0, 1]"},
		{"bad arch", `{` + base + `, "model": {"arch": "vgg"}}`, "model.arch", "mlp, lenet, cnn3, resnet20"},
		{"estimator on deterministic", `{` + base + `, "model": {"kind": "deterministic", "estimator": "local"}}`, "model.estimator", "applies to bayesian"},
		{"bad hidden", `{` + base + `, "model": {"hidden": [10, 0]}}`, "model.hidden[1]", "at least 1"},
		{"momentum with adam", `{` + base + `, "training": {"optimizer": "adam", "momentum": 0.9}}`, "training.momentum", "applies to sgd"},
		{"bad schedule", `{` + base + `, "training": {"lr_schedule": {"kind": "cosine"}}}`, "training.lr_schedule.kind", "constant, exponential"},
		{"rate", `{` + base + `, "training": {"lr_schedule": {"kind": "exponential", "rate": 1.5}}}`, "training.lr_schedule.rate", "[0, 1)"},
		{"prior deterministic", `{` + base + `, "model": {"kind": "mcdropout"}, "training": {"prior": "previous-global"}}`, "training.prior", "needs a bayesian model"},
		{"bad mode", `{` + base + `, "training": {"mode": "parallel"}}`, "training.mode", "vectorized, sequential"},
		{"pretrain without server", `{` + base + `, "aggregation": {"rule": "DWC", "pretrain": {}}}`, "aggregation.pretrain", "server_fraction"},
		{"bad fairness", `{` + base + `, "evaluation": {"fairness": "all"}}`, "evaluation.fairness", "local, test-share, off"},
		{"duplicate seed", `{` + base + `, "seeds": [1, 2, 1]}`, "seeds[2]", "listed twice"},
		{"sweep unknown path", `{` + base + `, "sweep": {"aggregation.rules": ["GAA"]}}`, "sweep.aggregation.rules", `unknown field "rules"`},
		{"sweep seeds", `{` + base + `, "sweep": {"seeds": [[1]]}}`, "sweep.seeds", "cannot be swept"},
		{"sweep bad value", `{` + base + `, "sweep": {"aggregation.rule": ["GAA", "XYZ"]}}`, "aggregation.rule", `setting "run-XYZ"`},
		{"sweep empty", `{` + base + `, "sweep": {"aggregation.rule": []}}`, "sweep.aggregation.rule", "empty list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tc.json))
			if err == nil {
				t.Fatalf("ParseSpec accepted %s", tc.json)
			}
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("error %q is not a *SpecError", err)
			}
			if se.Path != tc.path {
				t.Errorf("path = %q, want %q (error %q)", se.Path, tc.path, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestParseSpecTypeError(t *testing.T) {
	_, err := ParseSpec([]byte(`{"dataset": {"name": "digits"}, "training": {"rounds": "ten"}}`))
	if err == nil || !strings.Contains(err.Error(), "training.rounds") {
		t.Errorf("a string for an int: error %v, want it to name training.rounds", err)
	}
}

func TestSpecDefaultsAndJSONRoundTrip(t *testing.T) {
	s, err := ParseSpec([]byte(`{"dataset": {"name": "digits"}, "model": {"kind": "deterministic"}}`))
	if err != nil {
		t.Fatal(err)
	}
	d := s.WithDefaults()
	checks := []struct {
		name      string
		got, want any
	}{
		{"rule", d.Aggregation.Rule, "FedAvg"},
		{"samples", d.Evaluation.Samples, 1},
		{"clients", d.Partition.Clients, 10},
		{"batch", d.Training.BatchSize, 64},
		{"seeds", len(d.Seeds), 1},
		{"mode", d.Training.Mode, "vectorized"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("default %s = %v, want %v", c.name, c.got, c.want)
		}
	}
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseSpec(raw)
	if err != nil {
		t.Fatalf("a spec with defaults does not parse back: %v\n%s", err, raw)
	}
	if again, _ := json.Marshal(back); string(again) != string(raw) {
		t.Errorf("JSON round trip differs:\n%s\n%s", raw, again)
	}
}

func TestExpandSweep(t *testing.T) {
	s := &Spec{
		Name:    "sw",
		Dataset: DatasetSpec{Name: "digits"},
		Sweep: map[string][]json.RawMessage{
			"aggregation.rule":      raws("GAA", "EAA", "CF"),
			"training.local_epochs": raws(1, 2),
		},
	}
	settings, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if len(settings) != 6 {
		t.Fatalf("%d settings, want 3 x 2 = 6", len(settings))
	}
	first, last := settings[0], settings[5]
	if first.Name != "sw-GAA-1" || last.Name != "sw-CF-2" {
		t.Errorf("names %q ... %q, want sw-GAA-1 ... sw-CF-2", first.Name, last.Name)
	}
	if last.Spec.Aggregation.Rule != "CF" || last.Spec.Training.LocalEpochs != 2 {
		t.Errorf("last setting has rule %q, epochs %d", last.Spec.Aggregation.Rule, last.Spec.Training.LocalEpochs)
	}
	if last.Labels["rule"] != "CF" || last.Labels["local_epochs"] != "2" || last.Labels["dataset"] != "digits" {
		t.Errorf("labels %v", last.Labels)
	}
	if last.Spec.Sweep != nil || last.Spec.Training.BatchSize != 64 {
		t.Errorf("a setting keeps its sweep or lacks defaults: %+v", last.Spec)
	}
	// The original spec is not changed.
	if s.Aggregation.Rule != "" || s.Training.LocalEpochs != 0 {
		t.Errorf("Expand changed the spec")
	}
}

func TestSweepCreatesNestedObject(t *testing.T) {
	s := &Spec{Dataset: DatasetSpec{Name: "digits", ServerFraction: 0.1},
		Aggregation: AggregationSpec{Rule: "DWC", Pretrain: &PretrainSpec{}},
		Sweep:       map[string][]json.RawMessage{"aggregation.pretrain.epochs": raws(3, 5), "partition.alpha": raws(0.5)}}
	if _, err := s.Expand(); err == nil || !strings.Contains(err.Error(), "partition.alpha") {
		t.Errorf("sweeping alpha with the iid method: error %v, want partition.alpha", err)
	}
	delete(s.Sweep, "partition.alpha")
	settings, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if got := settings[1].Spec.Aggregation.Pretrain.Epochs; got != 5 {
		t.Errorf("pretrain epochs = %d, want 5", got)
	}
	if settings[1].Labels["epochs"] != "5" {
		t.Errorf("labels %v", settings[1].Labels)
	}
}

func TestVariants(t *testing.T) {
	base := func() *Spec {
		return &Spec{Name: "v", Dataset: DatasetSpec{Name: "digits"}, Model: ModelSpec{Arch: "mlp"},
			Sweep: map[string][]json.RawMessage{"partition": {json.RawMessage(`{"method":"iid"}`), json.RawMessage(`{"method":"dirichlet","alpha":0.5}`)}},
			Variants: []Variant{
				variant("DET", "model", map[string]any{"arch": "mlp", "kind": "deterministic"}, "aggregation.rule", "FedAvg"),
				variant("B-EAA", "aggregation.rule", "EAA"),
			}}
	}
	settings, err := base().Expand()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range settings {
		names = append(names, st.Name)
	}
	want := "v-DET-iid v-DET-dirichlet-0.5 v-B-EAA-iid v-B-EAA-dirichlet-0.5"
	if strings.Join(names, " ") != want {
		t.Errorf("names %q, want %q", strings.Join(names, " "), want)
	}
	if st := settings[1]; st.Spec.Model.Kind != "deterministic" || st.Spec.Aggregation.Rule != "FedAvg" || st.Spec.Partition.Alpha != 0.5 ||
		st.Labels["variant"] != "DET" || st.Labels["partition"] != "dirichlet-0.5" {
		t.Errorf("setting 1: %+v %+v labels %v", st.Spec.Model, st.Spec.Partition, st.Labels)
	}
	if st := settings[2]; st.Spec.Model.Kind != "bayesian" && st.Spec.Model.Kind != "" || st.Spec.Aggregation.Rule != "EAA" {
		t.Errorf("setting 2: %+v %+v", st.Spec.Model, st.Spec.Aggregation)
	}
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"empty label", func(s *Spec) { s.Variants[0].Label = "" }, "variants[0].label"},
		{"bad label", func(s *Spec) { s.Variants[0].Label = "a b" }, "variants[0].label"},
		{"duplicate", func(s *Spec) { s.Variants[1].Label = "DET" }, "used twice"},
		{"unknown path", func(s *Spec) { s.Variants[1].Set["aggregation.nope"] = raw(1) }, "variants[1].set.aggregation.nope"},
		{"also swept", func(s *Spec) { s.Variants[1].Set["partition"] = raw(map[string]any{"method": "iid"}) }, "also swept"},
		{"invalid value", func(s *Spec) { s.Variants[1].Set["aggregation.rule"] = raw("NOPE") }, "aggregation.rule"},
		{"no fields", func(s *Spec) { s.Variants[1].Set = nil }, "sets no field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tc.edit(s)
			_, err := s.Expand()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestLearningRateSchedule(t *testing.T) {
	tr := TrainingSpec{LearningRate: 0.001, Schedule: &ScheduleSpec{Kind: "exponential", SilentRounds: 50, Rate: 0.04}}
	tests := []struct {
		round int
		want  float64
	}{{1, 0.001}, {50, 0.001}, {51, 0.001 * 0.96}, {52, 0.001 * 0.96 * 0.96}}
	for _, tc := range tests {
		if got := learningRate(tr, tc.round); abs(got-tc.want) > 1e-15 {
			t.Errorf("round %d: lr %v, want %v", tc.round, got, tc.want)
		}
	}
	if got := learningRate(TrainingSpec{LearningRate: 0.1}, 99); got != 0.1 {
		t.Errorf("constant: %v", got)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestDerive(t *testing.T) {
	a := derive(1, tagBatchOrder, 2, 3, 0)
	if a != derive(1, tagBatchOrder, 2, 3, 0) {
		t.Fatal("derive is not deterministic")
	}
	seen := map[uint64]string{}
	for _, c := range []struct {
		name string
		v    uint64
	}{
		{"base", a}, {"seed", derive(2, tagBatchOrder, 2, 3, 0)}, {"tag", derive(1, tagClientNoise, 2, 3, 0)},
		{"round", derive(1, tagBatchOrder, 3, 3, 0)}, {"client", derive(1, tagBatchOrder, 2, 4, 0)},
		{"epoch", derive(1, tagBatchOrder, 2, 3, 1)}, {"swap", derive(1, tagBatchOrder, 3, 2, 0)},
	} {
		if prev, dup := seen[c.v]; dup {
			t.Errorf("%s gives the same stream as %s", c.name, prev)
		}
		seen[c.v] = c.name
	}
}

func TestShareQuota(t *testing.T) {
	got := shareQuota([]int{10, 0, 30}, 7)
	if got[0]+got[1]+got[2] != 7 || got[1] != 0 || got[0] != 2 || got[2] != 5 {
		t.Errorf("shareQuota = %v, want [2 0 5]", got)
	}
	if got := shareQuota([]int{1, 1}, 10); got[0] != 1 || got[1] != 1 {
		t.Errorf("quota beyond the counts: %v", got)
	}
}
