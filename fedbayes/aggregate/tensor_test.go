package aggregate

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// paramSpec describes one parameter of the test model.
type paramSpec struct {
	name     string
	dims     []int
	gaussian bool
}

var testModel = []paramSpec{
	{"/a/bias", []int{5}, false},
	{"/a/weights", []int{3, 4}, true},
	{"/b/weights", []int{2, 2, 2}, true},
}

// randomPosteriors draws K clients of testModel: means N(0, 3^2), variances log-uniform on
// [1e-8, 1e4], and a previous global of the same kind.
func randomPosteriors(rng *rand.Rand, K int) (clients []*posterior.Posterior, prev *posterior.Posterior) {
	draw := func() *posterior.Posterior {
		p := &posterior.Posterior{}
		for _, s := range testModel {
			n := 1
			for _, d := range s.dims {
				n *= d
			}
			mu, lv := make([]float32, n), make([]float32, n)
			for i := range mu {
				mu[i] = float32(rng.NormFloat64() * 3)
				lv[i] = float32(rng.Float64()*27.6 - 18.4)
			}
			q := posterior.Param{Name: s.name, Mean: tensors.FromFlatDataAndDimensions(mu, s.dims...)}
			if s.gaussian {
				q.LogVar = tensors.FromFlatDataAndDimensions(lv, s.dims...)
			}
			p.Params = append(p.Params, q)
		}
		return p
	}
	for range K {
		clients = append(clients, draw())
	}
	return clients, draw()
}

func flat(t *testing.T, x *tensors.Tensor) []float32 {
	t.Helper()
	v, err := tensors.CopyFlatData[float32](x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// scalarAt returns the clients' element i of parameter p as float64 Gaussians.
func scalarAt(t *testing.T, ps []*posterior.Posterior, p, i int) []Gaussian {
	out := make([]Gaussian, len(ps))
	for k, c := range ps {
		out[k].Mean = float64(flat(t, c.Params[p].Mean)[i])
		if c.Params[p].LogVar != nil {
			out[k].Var = math.Exp(float64(flat(t, c.Params[p].LogVar)[i]))
		}
	}
	return out
}

// TestTensorMatchesScalar checks every closed-form rule of the tensor form (list and stacked)
// against the float64 scalar form, element by element, on random inputs with variances from 1e-8
// to 1e4.
func TestTensorMatchesScalar(t *testing.T) {
	be := backend.MustDefault()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, K := range []int{1, 2, 7} {
		clients, prev := randomPosteriors(rng, K)
		raw := make([]float64, K)
		for k := range raw {
			raw[k] = 0.2 + rng.Float64()
		}
		w, _ := NormalizeWeights(raw)
		stacked, err := posterior.Stack(clients)
		if err != nil {
			t.Fatal(err)
		}
		for _, rule := range Rules() {
			if rule == PPA {
				continue
			}
			opt := Options{Backend: be, PreviousGlobal: prev, DWCPolicy: DWCUseConflation}
			got, rep, err := PosteriorsWithReport(rule, clients, w, opt)
			if err != nil {
				t.Fatalf("K=%d %s: %v", K, rule, err)
			}
			gotS, err := Stacked(rule, stacked, w, opt)
			if err != nil {
				t.Fatalf("K=%d %s stacked: %v", K, rule, err)
			}
			if len(rep.Weights) != K {
				t.Errorf("report weights %v", rep.Weights)
			}
			for p, spec := range testModel {
				mean, meanS := flat(t, got.Params[p].Mean), flat(t, gotS.Params[p].Mean)
				gaussianOut := spec.gaussian && rule != FedAvg
				if gaussianOut != (got.Params[p].LogVar != nil) {
					t.Fatalf("K=%d %s %s: LogVar presence %v", K, rule, spec.name, got.Params[p].LogVar != nil)
				}
				var lv, lvS []float32
				if gaussianOut {
					lv, lvS = flat(t, got.Params[p].LogVar), flat(t, gotS.Params[p].LogVar)
				}
				for i := range mean {
					sc := scalarAt(t, clients, p, i)
					r := rule
					if !spec.gaussian {
						r = FedAvg
					}
					pv := scalarAt(t, []*posterior.Posterior{prev}, p, i)[0]
					want, err := Scalar(r, sc, w, Options{Previous: &pv, DWCPolicy: DWCUseConflation})
					if err != nil {
						t.Fatal(err)
					}
					scale := 0.0
					for _, c := range sc {
						scale = math.Max(scale, math.Abs(c.Mean))
					}
					if math.Abs(float64(mean[i])-want.Mean) > 2e-5*math.Max(1, scale) || mean[i] != meanS[i] {
						t.Errorf("K=%d %s %s[%d]: mean %v (stacked %v), scalar %v", K, rule, spec.name, i, mean[i], meanS[i], want.Mean)
					}
					if gaussianOut && (math.Abs(float64(lv[i])-math.Log(want.Var)) > 2e-5*math.Max(1, math.Abs(math.Log(want.Var))) ||
						lv[i] != lvS[i]) {
						t.Errorf("K=%d %s %s[%d]: log-variance %v (stacked %v), scalar %v", K, rule, spec.name, i, lv[i], lvS[i], math.Log(want.Var))
					}
				}
			}
		}
	}
}

// TestTensorPPA checks PPA's tensor form: same seed same result, another seed another result, and
// within sampling error of the population's limit (LP's moment-matched Gaussian).
func TestTensorPPA(t *testing.T) {
	be := backend.MustDefault()
	rng := rand.New(rand.NewPCG(8, 9))
	clients, _ := randomPosteriors(rng, 3)
	w := []float64{0.2, 0.3, 0.5}
	// 4000: every sample drawn; 1e7: the sums drawn from their law (ppaSums), in constant memory.
	for _, N := range []int{4000, 10_000_000} {
		testTensorPPA(t, be, clients, w, N)
	}
}

func testTensorPPA(t *testing.T, be backends.Backend, clients []*posterior.Posterior, w []float64, N int) {
	a, err := Posteriors(PPA, clients, w, Options{Backend: be, PopulationSize: N, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Posteriors(PPA, clients, w, Options{Backend: be, PopulationSize: N, Seed: 1})
	c, _ := Posteriors(PPA, clients, w, Options{Backend: be, PopulationSize: N, Seed: 2})
	p := 1 // "/a/weights"
	am, bm, cm, alv := flat(t, a.Params[p].Mean), flat(t, b.Params[p].Mean), flat(t, c.Params[p].Mean), flat(t, a.Params[p].LogVar)
	for i := range am {
		if am[i] != bm[i] {
			t.Fatalf("PPA seed 1 twice: %v != %v at %d", am[i], bm[i], i)
		}
		if am[i] == cm[i] {
			t.Errorf("PPA seeds 1 and 2 agree at %d", i)
		}
		lp, _ := Scalar(LP, scalarAt(t, clients, p, i), w, Options{})
		sd := math.Sqrt(lp.Var)
		if d := math.Abs(float64(am[i]) - lp.Mean); d > 5*sd/math.Sqrt(float64(N))+1e-6*math.Abs(lp.Mean) {
			t.Errorf("PPA mean %v, population limit %v (sd %v)", am[i], lp.Mean, sd)
		}
		// The variance of a normal-ish sample variance is about 2 var^2 / N; mixtures have heavier
		// tails, so allow 8 standard errors.
		if r := math.Exp(float64(alv[i])) / lp.Var; math.Abs(r-1) > 8*math.Sqrt(2.0/float64(N))*3+1e-5 {
			t.Errorf("PPA variance ratio to LP %v at %d", r, i)
		}
	}
}

func TestTensorDWCPolicies(t *testing.T) {
	be := backend.MustDefault()
	mk := func(mu, v float32) *posterior.Posterior {
		return &posterior.Posterior{Params: []posterior.Param{{
			Name:   "/w",
			Mean:   tensors.FromFlatDataAndDimensions([]float32{mu, mu}, 2),
			LogVar: tensors.FromFlatDataAndDimensions([]float32{float32(math.Log(float64(v))), 0}, 2),
		}}}
	}
	clients := []*posterior.Posterior{mk(0, 2), mk(1, 2)}
	prev := mk(3, 0.5) // element 0: P = 1/2 + 1/2 - 2 < 0; element 1: P = 1 + 1 - 1 > 0.
	for _, tc := range []struct {
		policy        DWCPolicy
		mean0, logVar float64
	}{
		{DWCKeepPrevious, 3, math.Log(0.5)},
		{DWCUseConflation, 0.5, 0},
	} {
		out, rep, err := PosteriorsWithReport(DWC, clients, nil, Options{Backend: be, PreviousGlobal: prev, DWCPolicy: tc.policy})
		if err != nil {
			t.Fatal(err)
		}
		m, lv := flat(t, out.Params[0].Mean), flat(t, out.Params[0].LogVar)
		if rep.DWCFallbacks != 1 || !near(float64(m[0]), tc.mean0, 1e-6) || !near(float64(lv[0]), tc.logVar, 1e-6) {
			t.Errorf("%v: element 0 N(%v, exp %v), %d fallbacks; want N(%v, exp %v), 1", tc.policy, m[0], lv[0],
				rep.DWCFallbacks, tc.mean0, tc.logVar)
		}
		// Element 1: P = 1, mean (0 + 1 - 1*3)/1 = -2, log-variance 0.
		if !near(float64(m[1]), -2, 1e-6) || !near(float64(lv[1]), 0, 1e-6) {
			t.Errorf("%v: element 1 N(%v, exp %v), want N(-2, exp 0)", tc.policy, m[1], lv[1])
		}
	}
	_, err := Posteriors(DWC, clients, nil, Options{Backend: be, PreviousGlobal: prev, DWCPolicy: DWCFail})
	if err == nil || !strings.Contains(err.Error(), `parameter "/w"`) || !strings.Contains(err.Error(), "flat index 0") {
		t.Errorf("DWCFail: %v", err)
	}
}

func TestTensorBadInput(t *testing.T) {
	be := backend.MustDefault()
	rng := rand.New(rand.NewPCG(10, 11))
	clients, prev := randomPosteriors(rng, 3)
	withNaN, _ := randomPosteriors(rng, 3)
	_ = tensors.MutableFlatData(withNaN[2].Params[2].LogVar, func(f []float32) { f[5] = float32(math.NaN()) })
	withInf, _ := randomPosteriors(rng, 3)
	_ = tensors.MutableFlatData(withInf[1].Params[0].Mean, func(f []float32) { f[3] = float32(math.Inf(-1)) })
	shapeBad, _ := randomPosteriors(rng, 3)
	shapeBad[1].Params[1].Mean = tensors.FromShape(shapeBad[1].Params[1].Mean.Shape().Clone())
	shapeBad[1].Params[1].LogVar = tensors.FromFlatDataAndDimensions(make([]float32, 12), 4, 3)
	shapeBad[1].Params[1].Mean = tensors.FromFlatDataAndDimensions(make([]float32, 12), 4, 3)
	stackedNaN, _ := posterior.Stack(withNaN)
	tests := []struct {
		name    string
		rule    Rule
		clients []*posterior.Posterior
		weights []float64
		opt     Options
		want    string
	}{
		{"NaN log-variance", EAA, withNaN, nil, Options{}, `client 2: parameter "/b/weights": log-variance[5] (flat index) is NaN`},
		{"Inf mean", GAA, withInf, nil, Options{}, `client 1: parameter "/a/bias": mean[3] (flat index) is -Inf`},
		// FedAvg does not use log-variances, and the rules leave zero-weight clients out; both are still checked.
		{"NaN log-variance, FedAvg", FedAvg, withNaN, nil, Options{}, `client 2: parameter "/b/weights": log-variance[5] (flat index) is NaN`},
		{"NaN, zero weight", CF, withNaN, []float64{0.5, 0.5, 0}, Options{}, `client 2: parameter "/b/weights": log-variance[5] (flat index) is NaN`},
		{"NaN, graph", LP, withNaN, nil, Options{Graph: true}, `client 2: parameter "/b/weights": log-variance[5] (flat index) is NaN`},
		{"shapes", LP, shapeBad, nil, Options{}, `client 1: parameter "/a/weights": mean shape (Float32)[4 3] differs`},
		{"weights", EAA, clients, []float64{0.5, 0.5, 0.5}, Options{}, "sum to 1.5"},
		{"negative weight", EAA, clients, []float64{0.5, 0.6, -0.1}, Options{}, "client 2: weight -0.1 is negative"},
		{"DWC without previous", DWC, clients, nil, Options{}, "needs the previous global"},
		{"DWC previous mismatch", DWC, clients, nil, Options{PreviousGlobal: &posterior.Posterior{Params: prev.Params[:2]}}, "previous global has 2 parameters"},
		{"unknown rule", Rule("mode"), clients, nil, Options{}, `unknown rule "mode"`},
		{"PPA population", PPA, clients, nil, Options{PopulationSize: 1}, "at least 2"},
		{"no clients", EAA, nil, nil, Options{}, "no clients"},
	}
	for _, tc := range tests {
		tc.opt.Backend = be
		_, err := Posteriors(tc.rule, tc.clients, tc.weights, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	_, err := Stacked(EAA, stackedNaN, nil, Options{Backend: be})
	if err == nil || !strings.Contains(err.Error(), `client 2: parameter "/b/weights": log-variance[5]`) {
		t.Errorf("stacked NaN: %v", err)
	}
}

// TestTensorExtremeVariances aggregates clients whose variances are 1e-8 and 1e4 (and far
// beyond, log-variances of +-80) and checks every closed-form rule against float64.
func TestTensorExtremeVariances(t *testing.T) {
	be := backend.MustDefault()
	lvs := [][]float32{
		{float32(math.Log(1e-8)), float32(math.Log(1e4)), -80, 80},
		{float32(math.Log(2e-8)), float32(math.Log(3e4)), -79, 79.5},
	}
	var clients []*posterior.Posterior
	for k, lv := range lvs {
		clients = append(clients, &posterior.Posterior{Params: []posterior.Param{{
			Name:   "/w",
			Mean:   tensors.FromFlatDataAndDimensions([]float32{1, float32(k), -2, 3}, 4),
			LogVar: tensors.FromFlatDataAndDimensions(lv, 4),
		}}})
	}
	w := []float64{0.25, 0.75}
	for _, rule := range []Rule{EAA, GAA, AALV, LP, Conflation, CF, RKLB, WB} {
		out, err := Posteriors(rule, clients, w, Options{Backend: be})
		if err != nil {
			t.Fatalf("%s: %v", rule, err)
		}
		m, lv := flat(t, out.Params[0].Mean), flat(t, out.Params[0].LogVar)
		for i := range m {
			sc := scalarAt(t, clients, 0, i)
			want, _ := Scalar(rule, sc, w, Options{})
			if !near(float64(m[i]), want.Mean, 1e-5) || !near(float64(lv[i]), math.Log(want.Var), 1e-5) {
				t.Errorf("%s element %d: N(%v, exp %v), float64 N(%v, exp %v)", rule, i, m[i], lv[i], want.Mean, math.Log(want.Var))
			}
		}
	}
}

func TestFirstNonFinite(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	big := make([]float32, 5000)
	for i := range big {
		big[i] = float32(i) * 1e30 // up to ~5e33, finite
	}
	big[0] = math.MaxFloat32
	big[1] = -math.MaxFloat32
	big[2] = math.SmallestNonzeroFloat32
	tests := []struct {
		flat []float32
		want int
	}{
		{nil, -1},
		{[]float32{0, 1, -2}, -1},
		{big, -1},
		{[]float32{0, nan}, 1},
		{[]float32{-inf, 0}, 0},
		{append(append([]float32{}, big...), inf), 5000},
	}
	for i, tc := range tests {
		if got := firstNonFinite(tc.flat); got != tc.want {
			t.Errorf("case %d: %d, want %d", i, got, tc.want)
		}
	}
}
