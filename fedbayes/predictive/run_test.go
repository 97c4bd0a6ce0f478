package predictive

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/results"
)

func requireSklearn(t *testing.T) {
	t.Helper()
	for _, a := range data.Status(data.Dir()) {
		if a.Name == "digits" && a.Present {
			return
		}
	}
	t.Skipf("scikit-learn data not installed in %s (run `fedbayes data install`)", data.Dir())
}

// TestRunClassification runs every method once on digits (h = 0.6, one seed) and checks the runs.
func TestRunClassification(t *testing.T) {
	requireSklearn(t)
	spec, err := Preset("digits-fast")
	if err != nil {
		t.Fatal(err)
	}
	spec.Seeds, spec.H = []int64{1}, []float64{0.6}
	dir := t.TempDir()
	out, err := Run(spec, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(ClassificationMethods) {
		t.Fatalf("%d outcomes, want %d", len(out), len(ClassificationMethods))
	}
	acc := map[string]float64{}
	for _, o := range out {
		a, n, e := o.Metrics[results.Accuracy], o.Metrics[results.NLL], o.Metrics[results.ECE]
		if !(a >= 0 && a <= 1) || !(n > 0) || math.IsInf(n, 0) || !(e >= 0 && e <= 1) {
			t.Errorf("%s: metrics %v", o.Method, o.Metrics)
		}
		acc[o.Method] = a
		r, err := results.ReadRun(o.Dir)
		if err != nil || r.Status.State != results.Completed || len(r.Rows) != 1 || r.Meta.Labels["method"] != o.Method || r.Meta.Labels["h"] != "0.6" {
			t.Errorf("%s: run %+v (%v)", o.Method, r.Status, err)
		}
	}
	// One-round FedAvg of clients that saw skewed classes is worse than the predictive-space ensembles.
	if !(acc[MethodBCM] > acc[MethodFedAvg] && acc[MethodBeta] > acc[MethodFedAvg] && acc[MethodBCM] > 0.8) {
		t.Errorf("accuracies %v", acc)
	}
	b, err := os.ReadFile(filepath.Join(dir, results.RunName(settingName(spec.WithDefaults(), 0.6, MethodBeta), 1), BetaFile))
	if err != nil {
		t.Fatal(err)
	}
	var fit BetaFit
	if err := json.Unmarshal(b, &fit); err != nil {
		t.Fatal(err)
	}
	if fit.Beta < 0 || fit.Beta > 1 || len(fit.Curve) != 21 || fit.NLL > fit.Curve[0].NLL || fit.NLL > fit.Curve[20].NLL {
		t.Errorf("beta fit %+v", fit)
	}
	// A second Run finds the trial complete and does nothing.
	again, err := Run(spec, dir, nil)
	if err != nil || len(again) != 0 {
		t.Errorf("rerun: %d outcomes, %v", len(again), err)
	}
	// Finished runs of another spec are refused, not kept silently.
	changed := spec
	changed.Distill.Epochs++
	if _, err := Run(changed, dir, nil); err == nil || !strings.Contains(err.Error(), "different spec") {
		t.Errorf("changed spec: %v", err)
	}
	// An incomplete run directory is reported, not overwritten.
	if err := os.Remove(filepath.Join(out[0].Dir, "status.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(spec, dir, nil); err == nil || !strings.Contains(err.Error(), "not a completed run") {
		t.Errorf("incomplete run: %v", err)
	}
}

// TestRunRegression runs BCM, mixture and beta-PredBayes on diabetes sorted by a feature.
func TestRunRegression(t *testing.T) {
	requireSklearn(t)
	spec, err := Preset("diabetes-fast")
	if err != nil {
		t.Fatal(err)
	}
	spec.Seeds = []int64{2}
	spec.Methods = []string{MethodBCM, MethodMixture, MethodBeta}
	spec.SortFeature = "bmi"
	out, err := Run(spec, t.TempDir(), nil)
	if err != nil {
		if strings.Contains(err.Error(), "sort_feature") {
			spec.SortFeature = ""
			out, err = Run(spec, t.TempDir(), nil)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) != 3 {
		t.Fatalf("%d outcomes", len(out))
	}
	for _, o := range out {
		if m, n := o.Metrics[results.MSE], o.Metrics[results.NLL]; !(m > 0 && m < 2) || math.IsNaN(n) || math.IsInf(n, 0) {
			t.Errorf("%s: %v", o.Method, o.Metrics)
		}
	}
	if out[2].Beta == nil || out[2].Metrics["beta"] != out[2].Beta.Beta {
		t.Errorf("beta-PredBayes without its fit: %+v", out[2])
	}
}

func TestSpecValidate(t *testing.T) {
	base := Spec{Dataset: "digits"}
	tests := []struct {
		edit func(*Spec)
		want string
	}{
		{func(s *Spec) { s.Dataset = "" }, "dataset"},
		{func(s *Spec) { s.H = []float64{1.2} }, "field h = 1.2"},
		{func(s *Spec) { s.Clients = 1 }, "clients"},
		{func(s *Spec) { s.ServerFraction = 1 }, "server_fraction"},
		{func(s *Spec) { s.Methods = []string{"bcm", "bcm"} }, "listed twice"},
		{func(s *Spec) { s.Methods = []string{"fedprox"} }, "methods = fedprox"},
		{func(s *Spec) { s.Dataset = "diabetes"; s.Methods = []string{"fedbe"} }, "methods = fedbe"},
		{func(s *Spec) { s.Sampler.Cycles = -1 }, "Cycles"},
		{func(s *Spec) { s.Beta = FitOptions{Min: 2, Max: 1} }, "beta"},
	}
	for _, tc := range tests {
		s := base
		tc.edit(&s)
		if err := s.WithDefaults().Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
	if err := base.WithDefaults().Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
	if _, err := ParseSpec([]byte(`{"dataset": "digits", "hh": [0.1]}`)); err == nil || !strings.Contains(err.Error(), "hh") {
		t.Errorf("unknown field: %v", err)
	}
	for _, name := range PresetNames() {
		p, _ := Preset(name)
		if err := p.WithDefaults().Validate(); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
}
