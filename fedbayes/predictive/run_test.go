package predictive

import (
	"encoding/json"
	"maps"
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
	// FedKT's distilled vote and FedPA's one server step are well above chance (0.1).
	if !(acc[MethodFedKT] > 0.7 && acc[MethodFedPA] > 0.2) {
		t.Errorf("FedKT accuracy %.3f, FedPA %.3f: want well above chance", acc[MethodFedKT], acc[MethodFedPA])
	}
	t.Logf("accuracies %v", acc)
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

// TestRunRegression runs BCM, mixture, beta-PredBayes and FedPA on diabetes sorted by a feature.
func TestRunRegression(t *testing.T) {
	requireSklearn(t)
	spec, err := Preset("diabetes-fast")
	if err != nil {
		t.Fatal(err)
	}
	spec.Seeds = []int64{2}
	spec.Methods = []string{MethodBCM, MethodMixture, MethodBeta, MethodFedPA}
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
	if len(out) != 4 {
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

// TestSpecFedPAFedKTFields checks that the fedpa and fedkt fields are recorded (with their
// defaults) only in specs that run those methods, so specs without them read as before.
func TestSpecFedPAFedKTFields(t *testing.T) {
	without := Spec{Setup: Setup{Dataset: "digits", Methods: []string{MethodBCM, MethodFedAvg}}}.WithDefaults()
	b, err := json.Marshal(without)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"fedpa"`) || strings.Contains(string(b), `"fedkt"`) {
		t.Errorf("a spec without fedpa and fedkt records them: %s", b)
	}
	with := Spec{Setup: Setup{Dataset: "digits"}, Local: LocalConfig{Epochs: 3}}.WithDefaults()
	if with.FedPA.Rho == nil || *with.FedPA.Rho != DefaultFedPARho || with.FedPA.ServerLR != 1 {
		t.Errorf("fedpa defaults %+v", with.FedPA)
	}
	if with.FedKT.Students != 2 || with.FedKT.Teachers != 5 || with.FedKT.Local != with.Local || with.FedKT.Distill != with.Distill {
		t.Errorf("fedkt defaults %+v, want 2 x 5 with the spec's local %+v and distill", with.FedKT, with.Local)
	}
	// An explicit rho of 0 (FedPA as FedAvg) survives the defaults and a JSON round trip.
	s, err := ParseSpec([]byte(`{"dataset": "digits", "methods": ["fedpa"], "fedpa": {"rho": 0}}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := s.WithDefaults().FedPA.Rho; r == nil || *r != 0 {
		t.Errorf("rho %v, want an explicit 0", r)
	}
}

func TestSpecValidate(t *testing.T) {
	base := Spec{Setup: Setup{Dataset: "digits"}}
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
		{func(s *Spec) { s.Methods = []string{"fedpa"}; s.FedPA.Rho = rho(-1) }, "fedpa.rho = -1"},
		{func(s *Spec) { s.FedPA.ServerLR = math.Inf(1) }, "fedpa.server_lr"},
		{func(s *Spec) { s.Methods = []string{"fedkt"}; s.FedKT.Teachers = -2 }, "fedkt.teachers = -2"},
		{func(s *Spec) { s.FedKT.Students = 2_000_000 }, "fedkt.students = 2000000"},
		{func(s *Spec) { s.Clients = 10_000; s.FedKT.Students = 2 }, "clients x fedkt.students x fedkt.teachers = 100000"},
		{func(s *Spec) { s.Dataset = "diabetes"; s.Methods = []string{"fedkt"} }, "methods = fedkt"},
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

// TestFedPAFedKTLeaveOtherMethodsUnchanged checks that adding fedpa and fedkt to a spec changes no
// other method's numbers: they draw from RNG streams of their own (FedPA reuses the sampler's
// samples, FedKT runs last).
func TestFedPAFedKTLeaveOtherMethodsUnchanged(t *testing.T) {
	requireSklearn(t)
	spec, err := Preset("digits-fast")
	if err != nil {
		t.Fatal(err)
	}
	spec.Seeds, spec.H = []int64{3}, []float64{0.3}
	spec.Methods = []string{MethodFedAvg, MethodEPMCMC, MethodOneshot, MethodBCM, MethodDBCM}
	before, err := Run(spec, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	spec.Methods = append(spec.Methods, MethodFedPA, MethodFedKT)
	after, err := Run(spec, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)+2 {
		t.Fatalf("%d outcomes with fedpa and fedkt, %d without", len(after), len(before))
	}
	for i, o := range before {
		if a := after[i]; a.Method != o.Method || !maps.Equal(a.Metrics, o.Metrics) {
			t.Errorf("%s: %v without fedpa and fedkt, %s: %v with them", o.Method, o.Metrics, a.Method, a.Metrics)
		}
	}
}
