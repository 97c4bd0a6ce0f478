package groundtruth

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func logisticProblem(t *testing.T, split Split, h float64) *Problem {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Likelihood, cfg.Split, cfg.Heterogeneity = Logistic, split, h
	cfg.Clients, cfg.Dims, cfg.PerClient, cfg.Test = 4, 3, 25, 200
	p, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGroundTruthLaplace checks the Laplace approximation: the gradient of the log posterior is 0
// at its mean, and its precision matches minus the finite-difference Hessian.
func TestGroundTruthLaplace(t *testing.T) {
	p := logisticProblem(t, IID, 0)
	lm := LogisticModel{Prior: p.Model.Prior}
	g, err := lm.Laplace(p.Clients[0])
	if err != nil {
		t.Fatal(err)
	}
	logp, err := lm.LogDensity(p.Clients[:1])
	if err != nil {
		t.Fatal(err)
	}
	d := g.Dim()
	w := append([]float64(nil), g.Mean.RawVector().Data...)
	grad := make([]float64, d)
	logp(w, grad)
	for i, v := range grad {
		if math.Abs(v) > 1e-8 {
			t.Errorf("gradient[%d] = %v at the mode", i, v)
		}
	}
	prec, _, err := g.natural()
	if err != nil {
		t.Fatal(err)
	}
	const h = 1e-5
	gp, gm := make([]float64, d), make([]float64, d)
	for j := 0; j < d; j++ {
		wp, wm := append([]float64(nil), w...), append([]float64(nil), w...)
		wp[j] += h
		wm[j] -= h
		logp(wp, gp)
		logp(wm, gm)
		for i := 0; i < d; i++ {
			if fd := -(gp[i] - gm[i]) / (2 * h); !near(fd, prec.At(i, j), 1e-5) {
				t.Errorf("precision[%d][%d] = %v, finite difference %v", i, j, prec.At(i, j), fd)
			}
		}
	}
	if _, err := lm.Laplace(Data{X: mat.NewDense(1, 3, []float64{1, 2, 3}), Y: []float64{0.5}}); err == nil {
		t.Error("label 0.5: no error")
	}
}

// TestGroundTruthScoreLogistic checks the predictive scores on hand cases: a logit N(0, v) gives
// probability 1/2 (NLL log 2) whatever v; E[sigmoid] matches the probit approximation
// sigmoid(mu / sqrt(1 + pi v / 8)) to 0.02 (MacKay 1992; Bishop (2006), Eq. 4.153).
func TestGroundTruthScoreLogistic(t *testing.T) {
	test := Data{X: mat.NewDense(2, 1, []float64{1, -1}), Y: []float64{1, 0}}
	for _, v := range []float64{0, 0.5, 4} {
		sc, err := ScoreLogistic([]float64{0}, mat.NewSymDense(1, []float64{v}), []float64{0}, test)
		if err != nil {
			t.Fatal(err)
		}
		if !near(sc.NLL, math.Log(2), 1e-12) || sc.Coverage90 != 1 {
			t.Errorf("variance %v: %+v, want NLL log 2 and coverage 1", v, sc)
		}
	}
	for _, c := range []struct{ mu, v float64 }{{1, 1}, {-2, 3}, {0.5, 0.1}, {3, 10}} {
		want := sigmoid(c.mu / math.Sqrt(1+math.Pi*c.v/8))
		if got := probOne(c.mu, c.v); math.Abs(got-want) > 0.02 {
			t.Errorf("E[sigmoid] over N(%v, %v) = %v, probit approximation %v", c.mu, c.v, got, want)
		}
	}
	sc, _ := ScoreLogistic([]float64{0}, mat.NewSymDense(1, []float64{1}), []float64{5}, test)
	if sc.Coverage90 != 0 {
		t.Errorf("true logit 5 outside N(0, 1)'s 90 %% interval: coverage %v", sc.Coverage90)
	}
}

// TestGroundTruthLogistic runs a logistic problem end to end: the HMC reference (R-hat, ESS), its
// closeness to the Laplace approximation of all the data (within half a posterior standard
// deviation: the posterior is skewed and the Laplace mean is its mode), every rule scored, and the cache.
func TestGroundTruthLogistic(t *testing.T) {
	p := logisticProblem(t, CovariateShift, 0.5)
	dir := t.TempDir()
	hc := HMCConfig{Chains: 4, Warmup: 1000, Samples: 1000, Leapfrog: 16, TargetAccept: 0.8, Seed: 1}
	res, err := RunLogistic(p, RuleOptions{Seed: 1}, hc, dir)
	if err != nil {
		t.Fatal(err)
	}
	ref := res.Reference
	for i := range ref.Mean {
		if ref.RHat[i] > 1.01 || ref.ESS[i] < 400 {
			t.Errorf("weight %d: R-hat %v, ESS %v", i, ref.RHat[i], ref.ESS[i])
		}
	}
	all, err := stack(p.Clients)
	if err != nil {
		t.Fatal(err)
	}
	lap, err := LogisticModel{Prior: p.Model.Prior}.Laplace(all)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ref.Mean {
		if sd := math.Sqrt(ref.Cov[i][i]); math.Abs(ref.Mean[i]-lap.Mean.AtVec(i)) > 0.5*sd {
			t.Errorf("weight %d: HMC mean %v, Laplace %v (sd %v)", i, ref.Mean[i], lap.Mean.AtVec(i), sd)
		}
	}
	if len(res.Rules) == 0 || len(res.References) != 5 || res.References[4].Label != RefLaplaceProduct {
		t.Fatalf("%d rules, %d references", len(res.Rules), len(res.References))
	}
	for _, r := range res.Rules {
		if r.Distances.Predictive.NLL <= 0 || math.IsNaN(r.Distances.W2) {
			t.Errorf("%s: %+v", r.Label, r.Distances)
		}
	}
	// The product of the clients' Laplace fits, recomputed: its full-covariance KL divergences to the
	// HMC reference.
	fits := make([]*Gaussian, len(p.Clients))
	for k, c := range p.Clients {
		if fits[k], err = (LogisticModel{Prior: p.Model.Prior}).Laplace(c); err != nil {
			t.Fatal(err)
		}
	}
	product, err := GlobalFromClients(p.Model.Prior, fits)
	if err != nil {
		t.Fatal(err)
	}
	truth, err := res.ExactGaussian()
	if err != nil {
		t.Fatal(err)
	}
	lp := res.References[4].Distances
	toTruth, _ := KL(product, truth)
	fromTruth, _ := KL(truth, product)
	if !near(float64(lp.KLToTruth), toTruth, 1e-9) || !near(float64(lp.KLFromTruth), fromTruth, 1e-9) {
		t.Errorf("Laplace product: KL %v / %v, recomputed %v / %v", lp.KLToTruth, lp.KLFromTruth, toTruth, fromTruth)
	}
	// Its marginals alone give other distances: the row is computed from the full covariance.
	if marg, err := compareMoments(MeanFieldMoment(product), truth); err != nil || near(float64(marg.KLFromTruth), fromTruth, 1e-6) {
		t.Errorf("Laplace product's marginals: KL(p || q) %v (err %v), the full product's %v", marg.KLFromTruth, err, fromTruth)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "hmc-*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	cached, err := HMCReference(p, hc, dir)
	if err != nil || !cached.Cached || cached.HMC.Mean[0] != ref.Mean[0] {
		t.Errorf("second reference: cached %v, err %v", cached != nil && cached.Cached, err)
	}
	// A cache file whose content is not what was asked, or not strict JSON, is refused with its name.
	good, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(h map[string]any)) []byte {
		var d map[string]any
		_ = json.Unmarshal(good, &d)
		f(d["hmc"].(map[string]any))
		raw, _ := json.Marshal(d)
		return raw
	}
	for name, raw := range map[string][]byte{
		"truncated":          []byte("{"),
		"duplicate key":      []byte(`{"hmc": {},` + strings.TrimPrefix(strings.TrimSpace(string(good)), "{")),
		"unknown field":      []byte(`{"extra": 1,` + strings.TrimPrefix(strings.TrimSpace(string(good)), "{")),
		"another sampler":    edit(func(h map[string]any) { h["config"].(map[string]any)["chains"] = 2.0 }),
		"a weight missing":   edit(func(h map[string]any) { h["mean"] = h["mean"].([]any)[1:] }),
		"negative variance":  edit(func(h map[string]any) { h["cov"].([]any)[0].([]any)[0] = -1.0 }),
		"asymmetric entries": edit(func(h map[string]any) { h["cov"].([]any)[0].([]any)[1] = 7.0 }),
	} {
		if err := os.WriteFile(files[0], raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := HMCReference(p, hc, dir); err == nil || !strings.Contains(err.Error(), files[0]) {
			t.Errorf("cache %s: error %v, want one naming %s", name, err, files[0])
		}
	}
	if _, err := RunProblem(p, RuleOptions{}); err == nil {
		t.Error("RunProblem on a logistic problem: no error")
	}
}
