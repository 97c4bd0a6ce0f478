package models

import (
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// meanStd returns the sample mean and (1/n) standard deviation of xs.
func meanStd(xs []float32) (mean, std float64) {
	for _, x := range xs {
		mean += float64(x)
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		std += (float64(x) - mean) * (float64(x) - mean)
	}
	return mean, math.Sqrt(std / float64(len(xs)))
}

// TestBFLPInitialisation checks CompatBFLP's initial values (BFL-P's VBLinear.reset_parameters and
// PyTorch's default layers): Gaussian means N(0, 1/fan_in), log sigma^2 N(-9, 0.001^2), deterministic
// zero biases; deterministic layers U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
func TestBFLPInitialisation(t *testing.T) {
	// 50 inputs -> 200 hidden (Gaussian), 200 -> 2: 10,000 first-layer weights.
	m := newModel(t, Config{Options: Options{Arch: ArchMLP, Hidden: []int{200}, Kind: Bayesian, BayesianLayers: 1, Compat: CompatBFLP}, InputShape: []int{50}, NumClasses: 2,
		Seed: 1})
	if got := m.Config().InitLogVar; got != BFLPInitLogVar {
		t.Errorf("default InitLogVar under bfl-p: %v, want %v", got, BFLPInitLogVar)
	}
	post, err := m.Posterior()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]posterior.Param{}
	for _, p := range post.Params {
		byName[p.Name] = p
	}
	// Layer 0 is deterministic (PyTorch's uniform), layer 1 Gaussian.
	w0 := flat32(t, byName["/l00_dense/weights"].Mean)
	b0 := flat32(t, byName["/l00_dense/biases"].Mean)
	bound := 1 / math.Sqrt(50)
	for _, v := range append(append([]float32{}, w0...), b0...) {
		if math.Abs(float64(v)) > bound {
			t.Fatalf("deterministic layer value %v outside +-1/sqrt(50) = %v", v, bound)
		}
	}
	if _, s := meanStd(w0); math.Abs(s-bound/math.Sqrt(3)) > 0.03*bound/math.Sqrt(3) {
		t.Errorf("deterministic weights: std %v, want U(-b, b)'s b/sqrt(3) = %v", s, bound/math.Sqrt(3))
	}
	g := byName["/l01_dense/weights"]
	if !g.IsGaussian() {
		t.Fatal("the last layer's weights should be Gaussian")
	}
	if mu, s := meanStd(flat32(t, g.Mean)); math.Abs(s-1/math.Sqrt(200)) > 0.12/math.Sqrt(200) || math.Abs(mu) > 0.03 {
		t.Errorf("Gaussian means: mean %v std %v, want N(0, 1/200): std %v", mu, s, 1/math.Sqrt(200))
	}
	if mu, s := meanStd(flat32(t, g.LogVar)); math.Abs(mu+9) > 5e-4 || math.Abs(s-1e-3) > 3e-4 {
		t.Errorf("log-variances: mean %v std %v, want N(-9, 0.001^2)", mu, s)
	}
	if b := byName["/l01_dense/biases"]; b.IsGaussian() {
		t.Error("bfl-p biases must be deterministic")
	} else {
		for _, v := range flat32(t, b.Mean) {
			if v != 0 {
				t.Fatalf("Gaussian layer's bias starts at %v, want 0", v)
			}
		}
	}
}

// TestBFLPClampFreezesVariances checks the clamp at -8: the KL uses the clamped value, a log-variance
// below -8 gets no gradient, so one SGD step moves it by the weight decay alone,
// lv (1 - lr wd), while one above -8 moves by its gradient too.
func TestBFLPClampFreezesVariances(t *testing.T) {
	cfg := Config{Options: Options{Arch: ArchMLP, Hidden: []int{4}, Kind: Bayesian, Compat: CompatBFLP}, InputShape: []int{3}, NumClasses: 2,
		Seed: 2, DType: dtypes.Float64}
	m := newModel(t, cfg)
	post, err := m.Posterior()
	if err != nil {
		t.Fatal(err)
	}
	// Element 0 of every weight tensor is set to -7 (inside the range); the rest stay near -9.
	for i, p := range post.Params {
		if p.LogVar != nil {
			lv := flat32(t, p.LogVar)
			lv[0] = -7
			post.Params[i].LogVar = tensors.FromFlatDataAndDimensions(lv, p.LogVar.Shape().Dimensions...)
		}
	}
	if err := m.SetPosterior(post); err != nil {
		t.Fatal(err)
	}
	var wantKL float64
	for _, p := range post.Params {
		if p.LogVar == nil {
			continue
		}
		mu, lv := flat32(t, p.Mean), flat32(t, p.LogVar)
		for i := range mu {
			wantKL += KLGaussian(float64(mu[i]), math.Max(float64(lv[i]), BFLPLogVarMin), 0, 0)
		}
	}
	const lr, wd = 0.5, 1e-3
	tr, err := m.NewTrainer(OptimizerConfig{Kind: SGD, LearningRate: lr, WeightDecay: wd})
	if err != nil {
		t.Fatal(err)
	}
	x, y := synthetic(3, 1, 8, 3, 2)
	st, err := tr.Step(Batch{X: x, Labels: y, DatasetSizes: []int{10}})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(st.KL[0]-wantKL) > 1e-6*wantKL {
		t.Errorf("KL %v, want %v (biases left out, log-variances clamped at -8)", st.KL[0], wantKL)
	}
	after, err := m.Posterior()
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range post.Params {
		if p.LogVar == nil {
			continue
		}
		before, now := flat32(t, p.LogVar), flat32(t, after.Params[i].LogVar)
		for j := range before {
			decayed := float64(before[j]) * (1 - lr*wd)
			moved := math.Abs(float64(now[j]) - decayed)
			if j == 0 {
				if moved < 1e-4 {
					t.Errorf("%s[0] at -7 moved only by the weight decay (%v -> %v): it should learn", p.Name, before[j], now[j])
				}
				continue
			}
			if moved > 1e-6 {
				t.Errorf("%s[%d]: %v -> %v, want lv (1 - lr wd) = %v (frozen below -8)", p.Name, j, before[j], now[j], decayed)
			}
		}
	}
}

// TestBFLPConfigErrors checks the compatibility mode's validation.
func TestBFLPConfigErrors(t *testing.T) {
	base := Config{Options: Options{Arch: ArchMLP, Kind: Bayesian}, InputShape: []int{3}, NumClasses: 2}
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Compat = "bflp" }, `Config.Compat: unknown compatibility mode "bflp"`},
		{func(c *Config) { c.Compat, c.VarParam = CompatBFLP, SoftplusParam }, `needs VarParam "logvar"`},
	} {
		cfg := base
		c.edit(&cfg)
		if _, err := NewWithBackend(testBackend(t), cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
	for _, name := range []string{"bfl-p", "ba-bfl", ""} {
		if _, err := ParseCompat(name); err != nil {
			t.Error(err)
		}
	}
	// BA-BFL's layers are BFL-P's: deterministic biases, log-variances near -9.
	m := newModel(t, Config{Options: Options{Arch: ArchMLP, Hidden: []int{4}, Kind: Bayesian, Compat: CompatBABFL}, InputShape: []int{3}, NumClasses: 2})
	post, err := m.Posterior()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range post.Params {
		if strings.HasSuffix(p.Name, "biases") == p.IsGaussian() {
			t.Errorf("ba-bfl: %s Gaussian = %v; want deterministic biases and Gaussian weights", p.Name, p.IsGaussian())
		}
		if p.IsGaussian() {
			if mu, _ := meanStd(flat32(t, p.LogVar)); math.Abs(mu+9) > 0.01 {
				t.Errorf("ba-bfl: %s log-variances average %v, want about -9", p.Name, mu)
			}
		}
	}
	if _, err := ParseCompat("BFL"); err == nil {
		t.Error("ParseCompat(BFL): want an error")
	}
}
