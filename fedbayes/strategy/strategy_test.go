package strategy

import (
	"errors"
	"math"
	"slices"
	"sort"
	"testing"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/predictive"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// twoClients returns a K-client MLP of the given kind (4 inputs, 3 classes) and its stacked posterior.
func twoClients(t *testing.T, kind models.Kind, K int) (models.Config, *posterior.Posterior) {
	return clientsWithSeed(t, kind, K, 7)
}

// clientsWithSeed is twoClients with another initialisation seed.
func clientsWithSeed(t *testing.T, kind models.Kind, K int, seed int64) (models.Config, *posterior.Posterior) {
	t.Helper()
	cfg := models.Config{Options: models.Options{Arch: models.ArchMLP, Hidden: []int{5}, Kind: kind}, InputShape: []int{4}, NumClasses: 3, Clients: K, Seed: seed}
	m, err := models.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Posterior()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clients = 1
	return cfg, p
}

// inputs are n examples of 4 features.
func inputs(n int) []float32 {
	x := make([]float32, 4*n)
	for i := range x {
		x[i] = float32(math.Sin(float64(i) * 0.7))
	}
	return x
}

// crossEntropy is the mean cross-entropy, over the examples of x, from the class probabilities
// target ([N, C]) to the predictions of the one network p.
func crossEntropy(t *testing.T, cfg models.Config, p *posterior.Posterior, x []float32, target []float64) float64 {
	t.Helper()
	st, err := posterior.Stack([]*posterior.Posterior{p})
	if err != nil {
		t.Fatal(err)
	}
	q := clientProbs(t, cfg, st, x)[0]
	ce := 0.0
	for i, v := range target {
		ce -= v * math.Log(math.Max(q[i], 1e-12))
	}
	return ce / float64(len(target)/cfg.NumClasses)
}

// clientProbs predicts every client of stacked on x with a deterministic net, in float64.
func clientProbs(t *testing.T, cfg models.Config, stacked *posterior.Posterior, x []float32) [][]float64 {
	t.Helper()
	cfg.Clients = stacked.Params[0].Mean.Shape().Dimensions[0]
	m, err := models.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetPosterior(stacked); err != nil {
		t.Fatal(err)
	}
	pred, err := m.Predict(x, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, cfg.Clients)
	for k := range out {
		for _, v := range pred.ClientMean(k) {
			out[k] = append(out[k], float64(v))
		}
	}
	return out
}

// TestEnsembleAgainstHandComputed checks the BCM (Hasan (2023), Eq. 3.3 with a uniform prior: the
// normalised product) and the size-weighted mixture (Eq. 4.5) of two deterministic clients against a
// float64 computation from the clients' own predictions.
func TestEnsembleAgainstHandComputed(t *testing.T) {
	cfg, stacked := twoClients(t, models.Deterministic, 2)
	x := inputs(6)
	p := clientProbs(t, cfg, stacked, x)
	sizes := []int{30, 10}
	for _, tc := range []struct {
		method string
		want   func(a, b float64) float64
		norm   bool
	}{
		{BCM, func(a, b float64) float64 { return a * b }, true},
		{Mixture, func(a, b float64) float64 { return 0.75*a + 0.25*b }, false},
	} {
		st, err := New(tc.method, Settings{Kind: models.Deterministic})
		if err != nil {
			t.Fatal(err)
		}
		g, err := st.Aggregate(&Round{Number: 1, IDs: []int{0, 1}, Sizes: sizes, Stacked: stacked, Model: cfg, Samples: 1, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		if g.Predictor == nil || g.Posterior == nil {
			t.Fatalf("%s: no predictor or no carried posterior", tc.method)
		}
		got, err := g.Predictor.Predict(x, 5)
		if err != nil {
			t.Fatal(err)
		}
		for n := range 6 {
			row := make([]float64, 3)
			sum := 0.0
			for c := range 3 {
				row[c] = tc.want(p[0][n*3+c], p[1][n*3+c])
				sum += row[c]
			}
			for c := range 3 {
				want := row[c]
				if tc.norm {
					want /= sum
				}
				if d := math.Abs(float64(got[n*3+c]) - want); d > 2e-6 {
					t.Errorf("%s: example %d class %d: got %v, want %v", tc.method, n, c, got[n*3+c], want)
				}
			}
		}
		if !slices.Equal(g.Weights, []float64{0.75, 0.25}) {
			t.Errorf("%s: weights %v, want [0.75 0.25]", tc.method, g.Weights)
		}
	}
}

// TestBetaPredBayesFitsOnServer checks that beta-PredBayes fits beta on the server set, within its
// range, and predicts with that interpolation.
func TestBetaPredBayesFitsOnServer(t *testing.T) {
	cfg, stacked := twoClients(t, models.Deterministic, 2)
	server := &data.Dataset{Name: "server", X: inputs(20), Shape: []int{4}, NumClasses: 3, Labels: make([]int32, 20)}
	for i := range server.Labels {
		server.Labels[i] = int32(i % 3)
	}
	if _, err := New(BetaPredBayes, Settings{Kind: models.Deterministic}); err == nil {
		t.Fatal("beta-PredBayes without a server set was accepted")
	} else if fe := (*FieldError)(nil); !errors.As(err, &fe) || fe.Field != "dataset.server_fraction" {
		t.Fatalf("error %v does not name dataset.server_fraction", err)
	}
	st, err := New(BetaPredBayes, Settings{Kind: models.Deterministic, HasServer: true})
	if err != nil {
		t.Fatal(err)
	}
	r := &Round{Number: 1, IDs: []int{0, 1}, Sizes: []int{10, 10}, Stacked: stacked, Model: cfg, Server: server, Samples: 1}
	g, err := st.Aggregate(r)
	if err != nil {
		t.Fatal(err)
	}
	beta := g.Metrics[MetricBeta]
	if !(beta >= 0 && beta <= 1) {
		t.Fatalf("beta %v outside [0, 1]", beta)
	}
	p := clientProbs(t, cfg, stacked, server.X)
	f32 := func(v []float64) []float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(x)
		}
		return out
	}
	agg, err := predictive.NewClassAggregate([][]float32{f32(p[0]), f32(p[1])}, []float64{10, 10}, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	fit, err := predictive.FitBetaClass(agg, server.Labels, predictive.FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(fit.Beta-beta) > 1e-6 {
		t.Errorf("beta %v, want %v (fitted directly)", beta, fit.Beta)
	}
}

// TestFedBEBayesianKeepsAALVLogVars checks FedBE's reading for Bayesian clients: the means are
// predictive.FedBEServer's on the clients' means, the log-variances the clients' size-weighted average.
func TestFedBEBayesianKeepsAALVLogVars(t *testing.T) {
	cfg, stacked := twoClients(t, models.Bayesian, 3)
	server := &data.Dataset{Name: "server", X: inputs(12), Shape: []int{4}, NumClasses: 3, Labels: make([]int32, 12)}
	s := Settings{Kind: models.Bayesian, HasServer: true, Options: mustJSON(FedBEOptions{Samples: 2, Distill: predictive.DistillConfig{Epochs: 2, BatchSize: 4, SWACycles: 2}})}
	st, err := New(FedBEGaussian, s)
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{5, 10, 15}
	g, err := st.Aggregate(&Round{Number: 2, IDs: []int{0, 1, 2}, Sizes: sizes, Stacked: stacked, Model: cfg, Server: server, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	fc := st.(*FedBE).Config
	fc.Seed = 11
	wantMeans, err := predictive.FedBEServer(cfg, Means(stacked), []float64{5, 10, 15}, server.X, fc, 2)
	if err != nil {
		t.Fatal(err)
	}
	wantLV, err := aggregate.Stacked(aggregate.AALV, stacked, []float64{5, 10, 15}, aggregate.Options{Normalize: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range g.Posterior.Params {
		if q.LogVar == nil {
			t.Fatalf("parameter %s lost its log-variance", q.Name)
		}
		same := func(a, b *tensors.Tensor) bool {
			x, _ := tensors.CopyFlatData[float32](a)
			y, _ := tensors.CopyFlatData[float32](b)
			return slices.Equal(x, y)
		}
		if !same(q.Mean, wantMeans.Params[i].Mean) {
			t.Errorf("parameter %s: means differ from FedBEServer's", q.Name)
		}
		if !same(q.LogVar, wantLV.Params[i].LogVar) {
			t.Errorf("parameter %s: log-variances differ from AALV's", q.Name)
		}
	}
	if _, err := New(FedBEGaussian, Settings{Kind: models.Bayesian}); err == nil {
		t.Error("FedBE without a server set was accepted")
	}
}

// median is the example strategy of the package documentation.
type median struct{}

func (median) Aggregate(r *Round) (*Global, error) {
	g, err := PerElement(r, func(means, logVars []float64) (float64, float64) {
		sort.Float64s(means)
		lv := 0.0
		for _, v := range logVars {
			lv += v / float64(len(logVars))
		}
		return means[len(means)/2], lv
	})
	return &Global{Posterior: g}, err
}

// TestRegisterAndPerElement registers the documentation's median strategy and checks it by hand on
// three clients, and the registry's refusals.
func TestRegisterAndPerElement(t *testing.T) {
	if err := Register("median-test", func(Settings) (Strategy, error) { return median{}, nil }); err != nil {
		t.Fatal(err)
	}
	if !Known("Median-Test") || !slices.Contains(Names(), "median-test") {
		t.Fatal("registered strategy not known")
	}
	for _, bad := range []string{"GAA", "bcm", "", "a b"} {
		if err := Register(bad, func(Settings) (Strategy, error) { return median{}, nil }); err == nil {
			t.Errorf("Register(%q) accepted", bad)
		}
	}
	mk := func(vals ...float32) *tensors.Tensor { return tensors.FromFlatDataAndDimensions(vals, len(vals)) }
	var list []*posterior.Posterior
	for k, v := range [][2]float32{{3, -1}, {1, -2}, {2, -6}} {
		list = append(list, &posterior.Posterior{Params: []posterior.Param{
			{Name: "b", Mean: mk(float32(k))},
			{Name: "w", Mean: mk(v[0], float32(10*k)), LogVar: mk(v[1], 0)},
		}})
	}
	st, err := New("median-test", Settings{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := st.Aggregate(&Round{Number: 1, IDs: []int{0, 1, 2}, Sizes: []int{1, 1, 1}, List: list})
	if err != nil {
		t.Fatal(err)
	}
	w := g.Posterior.Find("w")
	m, _ := tensors.CopyFlatData[float32](w.Mean)
	lv, _ := tensors.CopyFlatData[float32](w.LogVar)
	if !slices.Equal(m, []float32{2, 10}) || !slices.Equal(lv, []float32{-3, 0}) {
		t.Errorf("median of w: means %v log-variances %v, want [2 10] [-3 0]", m, lv)
	}
	if b := g.Posterior.Find("b"); b.LogVar != nil {
		t.Error("a deterministic parameter got a log-variance")
	}
	if _, err := New("no-such", Settings{}); err == nil {
		t.Error("an unknown strategy was built")
	} else if fe := (*FieldError)(nil); !errors.As(err, &fe) || fe.Field != "aggregation.rule" {
		t.Errorf("error %v does not name aggregation.rule", err)
	}
}

// TestRuleStrategyIsAggregate checks that a rule strategy (with an alias name) gives the aggregate
// package's result bit for bit, with DWC's fallback count.
func TestRuleStrategyIsAggregate(t *testing.T) {
	_, stacked := twoClients(t, models.Bayesian, 3)
	for _, name := range []string{"WS", "EAA", "DWC"} {
		st, err := New(name, Settings{Weighting: "size", Kind: models.Bayesian})
		if err != nil {
			t.Fatal(err)
		}
		list, _ := posterior.Unstack(stacked)
		r := &Round{Number: 1, IDs: []int{0, 1, 2}, Sizes: []int{1, 2, 3}, Stacked: stacked, Previous: list[0], Seed: 4}
		g, err := st.Aggregate(r)
		if err != nil {
			t.Fatal(err)
		}
		rule, _ := aggregate.ParseRule(name)
		opt := aggregate.Options{Seed: 4}
		if rule == aggregate.DWC {
			opt.PreviousGlobal = list[0]
		}
		w, _ := aggregate.SizeWeights([]int{1, 2, 3})
		want, rep, err := aggregate.StackedWithReport(rule, stacked, w, opt)
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range g.Posterior.Params {
			x, _ := tensors.CopyFlatData[float32](q.Mean)
			y, _ := tensors.CopyFlatData[float32](want.Params[i].Mean)
			if !slices.Equal(x, y) {
				t.Errorf("%s: parameter %s differs from aggregate's", name, q.Name)
			}
		}
		if rule == aggregate.DWC && g.Metrics[MetricDWCFallbacks] != float64(rep.DWCFallbacks) {
			t.Errorf("DWC fallbacks %v, want %d", g.Metrics[MetricDWCFallbacks], rep.DWCFallbacks)
		}
	}
	if _, err := New("FedAvg", Settings{Kind: models.Bayesian}); err == nil {
		t.Error("FedAvg of Bayesian clients was accepted")
	}
}

// TestDistilledBCMApproachesTeacher checks D-BCM (Hasan (2023), Alg. 1): the distilled network's
// predictive on the server inputs is closer to the BCM's (cross-entropy) than the clients' average it
// starts from, and the global model is one network (no Predictor).
func TestDistilledBCMApproachesTeacher(t *testing.T) {
	cfg, stacked := twoClients(t, models.Deterministic, 2)
	server := &data.Dataset{Name: "server", X: inputs(40), Shape: []int{4}, NumClasses: 3, Labels: make([]int32, 40)}
	s := Settings{Kind: models.Deterministic, HasServer: true, Options: mustJSON(DistilledOptions{Distill: predictive.DistillConfig{Epochs: 30, BatchSize: 8, LearningRate: 0.01}})}
	if _, err := New(DBCM, Settings{Kind: models.Deterministic}); err == nil {
		t.Fatal("D-BCM without a server set was accepted")
	}
	r := &Round{Number: 1, IDs: []int{0, 1}, Sizes: []int{10, 10}, Stacked: stacked, Model: cfg, Server: server, Samples: 1, Seed: 5}
	bcm, err := New(BCM, Settings{Kind: models.Deterministic, HasServer: true})
	if err != nil {
		t.Fatal(err)
	}
	gb, err := bcm.Aggregate(r)
	if err != nil {
		t.Fatal(err)
	}
	teacher, err := gb.Predictor.Predict(server.X, 5)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(DBCM, s)
	if err != nil {
		t.Fatal(err)
	}
	gd, err := d.Aggregate(r)
	if err != nil {
		t.Fatal(err)
	}
	if gd.Predictor != nil || gd.Posterior == nil {
		t.Fatal("D-BCM's global model is not one network")
	}
	target := make([]float64, len(teacher))
	for i, v := range teacher {
		target[i] = float64(v)
	}
	before, after := crossEntropy(t, cfg, gb.Posterior, server.X, target), crossEntropy(t, cfg, gd.Posterior, server.X, target)
	if !(after < before) {
		t.Errorf("cross-entropy to the BCM: %v before distillation, %v after", before, after)
	}
	t.Logf("cross-entropy to the BCM on the server set: %.4f at the clients' average, %.4f distilled", before, after)
}

// TestFedPAWithoutShrinkageIsFedAvg checks the FedPA strategy on its limit case (Al-Shedivat et al.
// 2021, Sec. 4): with rho = 0 and server step 1 it is FedAvg of the clients' sample means, and it
// refuses clients that do not sample.
func TestFedPAWithoutShrinkageIsFedAvg(t *testing.T) {
	if _, err := New(FedPAName, Settings{Kind: models.Deterministic}); err == nil {
		t.Fatal("FedPA without sampling clients was accepted")
	}
	_, a := clientsWithSeed(t, models.Deterministic, 2, 7)
	_, b := clientsWithSeed(t, models.Deterministic, 2, 8)
	list, _ := posterior.Unstack(a)
	zero := 0.0
	st, err := New(FedPAName, Settings{Kind: models.Deterministic, Sampling: true, Options: mustJSON(FedPAOptions{Rho: &zero, ServerLR: 1})})
	if err != nil {
		t.Fatal(err)
	}
	r := &Round{Number: 1, IDs: []int{0, 1}, Sizes: []int{30, 10}, Draws: []*posterior.Posterior{a, b}, Previous: list[0]}
	g, err := st.Aggregate(r)
	if err != nil {
		t.Fatal(err)
	}
	// FedAvg of each client's mean of its two samples: (a + b) / 2 weighted 3:1.
	mean, err := aggregate.Stacked(aggregate.FedAvg, a, []float64{30, 10}, aggregate.Options{Normalize: true})
	if err != nil {
		t.Fatal(err)
	}
	other, err := aggregate.Stacked(aggregate.FedAvg, b, []float64{30, 10}, aggregate.Options{Normalize: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range g.Posterior.Params {
		x, _ := tensors.CopyFlatData[float32](q.Mean)
		y1, _ := tensors.CopyFlatData[float32](mean.Params[i].Mean)
		y2, _ := tensors.CopyFlatData[float32](other.Params[i].Mean)
		for j := range x {
			want := (float64(y1[j]) + float64(y2[j])) / 2
			if d := math.Abs(float64(x[j]) - want); d > 1e-5 {
				t.Fatalf("parameter %s element %d: FedPA %v, FedAvg of the sample means %v", q.Name, j, x[j], want)
			}
		}
	}
}
