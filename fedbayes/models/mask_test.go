package models

import (
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// maxDiff is the largest absolute difference between two posteriors (same names and shapes).
func maxDiff(t *testing.T, a, b *posterior.Posterior) float64 {
	t.Helper()
	if len(a.Params) != len(b.Params) {
		t.Fatalf("%d vs %d parameters", len(a.Params), len(b.Params))
	}
	worst := 0.0
	for i := range a.Params {
		pa, pb := a.Params[i], b.Params[i]
		for _, pr := range [][2]*tensors.Tensor{{pa.Mean, pb.Mean}, {pa.LogVar, pb.LogVar}} {
			if pr[0] == nil {
				continue
			}
			fa, fb := flat32(t, pr[0]), flat32(t, pr[1])
			for e := range fa {
				worst = math.Max(worst, math.Abs(float64(fa[e]-fb[e])))
			}
		}
	}
	return worst
}

// clientSlice returns client k's part [B, ...] of a batch [K, B, ...] of per-client size n.
func clientSlice[T any](v []T, k, n int) []T { return v[k*n : (k+1)*n] }

// optimizerState reads the values of the optimizer's variables of client k (leading axis K).
func optimizerState(t *testing.T, m *Model, tr *Trainer, k int) []float32 {
	t.Helper()
	var out []float32
	for v := range m.ctx.IterVariables() {
		if !strings.HasPrefix(v.Scope(), tr.scope) || !v.HasValue() {
			continue
		}
		d := v.Shape().Dimensions
		if len(d) == 0 || d[0] != m.k {
			continue
		}
		val, err := v.Value()
		if err != nil {
			t.Fatal(err)
		}
		f, err := flatFloat32(val)
		if err != nil {
			t.Fatal(err)
		}
		size := len(f) / m.k
		out = append(out, f[k*size:(k+1)*size]...)
	}
	if len(out) == 0 {
		t.Fatalf("no optimizer state under %s", tr.scope)
	}
	return out
}

// TestInactiveClientIsFrozen: a client that is inactive for a step keeps its parameters, optimizer
// state and noise stream, and afterwards continues exactly like a one-client model that never saw that
// step; the active client matches its one-client model throughout.
func TestInactiveClientIsFrozen(t *testing.T) {
	tests := []struct {
		name string
		opt  OptimizerConfig
		est  Estimator
	}{
		{"sgd momentum, local reparam", OptimizerConfig{Kind: SGD, LearningRate: 0.05, Momentum: 0.9, WeightDecay: 1e-3}, LocalReparam},
		{"adam, flipout", OptimizerConfig{Kind: Adam, LearningRate: 0.01, WeightDecay: 1e-3}, Flipout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const k, n, dim, classes = 2, 5, 4, 3
			cfg := Config{Options: Options{Arch: ArchMLP, Hidden: []int{6}, Kind: Bayesian, Estimator: tc.est}, InputShape: []int{dim}, NumClasses: classes,
				Clients: k, Seed: 11}
			m := newModel(t, cfg)
			tr, err := m.NewTrainer(tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			var xs [3][]float32
			var ys [3][]int32
			for s := range xs {
				xs[s], ys[s] = synthetic(int64(20+s), k, n, dim, classes)
			}
			sizes := []int{40, 60}
			step := func(s int, active []bool) {
				t.Helper()
				if _, err := tr.Step(Batch{X: xs[s], Labels: ys[s], DatasetSizes: sizes, Active: active}); err != nil {
					t.Fatal(err)
				}
			}
			step(0, nil)
			before, _ := m.ClientPosterior(1)
			optBefore := optimizerState(t, m, tr, 1)
			step(1, []bool{true, false})
			after, _ := m.ClientPosterior(1)
			samePosterior(t, before, after)
			optAfter := optimizerState(t, m, tr, 1)
			for i := range optBefore {
				if optBefore[i] != optAfter[i] {
					t.Fatalf("inactive client's optimizer state changed at %d: %v -> %v", i, optBefore[i], optAfter[i])
				}
			}
			step(2, nil)

			// One-client references: client 0 took steps 0, 1, 2; client 1 steps 0 and 2.
			for c, steps := range [][]int{{0, 1, 2}, {0, 2}} {
				one := cfg
				one.Clients, one.Seed = 1, cfg.Seed+int64(c)
				ref := newModel(t, one)
				rt, err := ref.NewTrainer(tc.opt)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range steps {
					b := Batch{X: clientSlice(xs[s], c, n*dim), Labels: clientSlice(ys[s], c, n), DatasetSizes: sizes[c : c+1]}
					if _, err := rt.Step(b); err != nil {
						t.Fatal(err)
					}
				}
				got, _ := m.ClientPosterior(c)
				want, _ := ref.ClientPosterior(0)
				if d := maxDiff(t, got, want); d > 1e-6 {
					t.Errorf("client %d differs from its one-client model by %g", c, d)
				}
			}
		})
	}
}

// TestMaskedPaddingIsIgnored: a batch of 4 real examples padded to 6 with masked-out junk trains a
// deterministic net exactly like the batch of 4 alone.
func TestMaskedPaddingIsIgnored(t *testing.T) {
	const dim, classes = 4, 3
	cfg := Config{Options: Options{Arch: ArchMLP, Hidden: []int{6}}, InputShape: []int{dim}, NumClasses: classes, Seed: 2}
	x, y := synthetic(5, 1, 6, dim, classes)
	for i := 4 * dim; i < len(x); i++ {
		x[i] = 100 // junk in the padding
	}
	opt := OptimizerConfig{Kind: SGD, LearningRate: 0.1, Momentum: 0.9}
	padded, short := newModel(t, cfg), newModel(t, cfg)
	tp, _ := padded.NewTrainer(opt)
	ts, _ := short.NewTrainer(opt)
	mask := []float32{1, 1, 1, 1, 0, 0}
	for s := 0; s < 2; s++ {
		sp, err := tp.Step(Batch{X: x, Labels: y, DatasetSizes: []int{4}, Mask: mask})
		if err != nil {
			t.Fatal(err)
		}
		ss, err := ts.Step(Batch{X: x[:4*dim], Labels: y[:4], DatasetSizes: []int{4}})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(sp.NLL[0]-ss.NLL[0]) > 1e-6 {
			t.Errorf("step %d: masked NLL %v, short batch %v", s, sp.NLL[0], ss.NLL[0])
		}
	}
	a, _ := padded.Posterior()
	b, _ := short.Posterior()
	if d := maxDiff(t, a, b); d > 1e-6 {
		t.Errorf("masked padding changed training by %g", d)
	}
}

// TestMaskedBatchNorm: ResNet-20's batch statistics and running averages ignore masked examples.
func TestMaskedBatchNorm(t *testing.T) {
	cfg := Config{Options: Options{Arch: ArchResNet20, ConvChannels: []int{2, 2, 2}}, InputShape: []int{8, 8, 3}, NumClasses: 2, Seed: 1}
	x, y := synthetic(9, 1, 3, 8*8*3, 2)
	for i := 2 * 8 * 8 * 3; i < len(x); i++ {
		x[i] = -50
	}
	opt := OptimizerConfig{Kind: SGD, LearningRate: 0.05}
	padded, short := newModel(t, cfg), newModel(t, cfg)
	tp, _ := padded.NewTrainer(opt)
	ts, _ := short.NewTrainer(opt)
	if _, err := tp.Step(Batch{X: x, Labels: y, DatasetSizes: []int{2}, Mask: []float32{1, 1, 0}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Step(Batch{X: x[:2*8*8*3], Labels: y[:2], DatasetSizes: []int{2}}); err != nil {
		t.Fatal(err)
	}
	a, _ := padded.Posterior()
	b, _ := short.Posterior()
	if d := maxDiff(t, a, b); d > 1e-5 {
		t.Errorf("masked batch norm differs from the short batch by %g", d)
	}
}

func TestBatchMaskErrors(t *testing.T) {
	cfg := Config{Options: Options{Arch: ArchMLP, Hidden: []int{3}}, InputShape: []int{2}, NumClasses: 2, Clients: 2}
	m := newModel(t, cfg)
	tr, err := m.NewTrainer(OptimizerConfig{Kind: SGD, LearningRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 2*2*2)
	y := make([]int32, 4)
	tests := []struct {
		name   string
		mask   []float32
		active []bool
		want   string
	}{
		{"mask length", []float32{1, 1, 1}, nil, "len(Batch.Mask) = 3"},
		{"mask value", []float32{1, 0.5, 1, 1}, nil, "client 0, example 1: 0.5"},
		{"active without examples", []float32{1, 1, 0, 0}, nil, "client 1 is active but has no example"},
		{"active length", nil, []bool{true}, "len(Batch.Active) = 1"},
		{"nobody active", nil, []bool{false, false}, "no client is active"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tr.Step(Batch{X: x, Labels: y, DatasetSizes: []int{1, 1}, Mask: tc.mask, Active: tc.active})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	// An inactive client may have an all-zero mask.
	if _, err := tr.Step(Batch{X: x, Labels: y, DatasetSizes: []int{1, 1}, Mask: []float32{1, 1, 0, 0}, Active: []bool{true, false}}); err != nil {
		t.Errorf("inactive client with an empty mask: %v", err)
	}
	// A single client must be active: its step graph has no masking of inactive clients.
	one := newModel(t, Config{Options: Options{Arch: ArchMLP, Hidden: []int{3}}, InputShape: []int{2}, NumClasses: 2, Clients: 1})
	tr1, err := one.NewTrainer(OptimizerConfig{Kind: SGD, LearningRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr1.Step(Batch{X: x[:4], Labels: y[:2], DatasetSizes: []int{1}, Active: []bool{false}})
	if err == nil || !strings.Contains(err.Error(), "no client is active") {
		t.Errorf("one inactive client: error %v, want it to contain %q", err, "no client is active")
	}
}

// TestProximalTerm: with FedProx's term mu/2 ||w - c||^2 and plain SGD, the second step differs from
// the step without it by exactly -lr mu (w1 - c) (Li et al. 2020, Eq. 2).
func TestProximalTerm(t *testing.T) {
	const lr, mu = 0.1, 0.5
	cfg := Config{Options: Options{Arch: ArchMLP, Hidden: []int{5}}, InputShape: []int{4}, NumClasses: 3, Seed: 3}
	x, y := synthetic(4, 1, 6, 4, 3)
	batch := Batch{X: x, Labels: y, DatasetSizes: []int{6}}
	prox, plain := newModel(t, cfg), newModel(t, cfg)
	tp, err := prox.NewTrainer(OptimizerConfig{Kind: SGD, LearningRate: lr, ProxMu: mu})
	if err != nil {
		t.Fatal(err)
	}
	tq, _ := plain.NewTrainer(OptimizerConfig{Kind: SGD, LearningRate: lr})
	if err := tq.SetProxCenter(); err == nil {
		t.Error("SetProxCenter without ProxMu: no error")
	}
	if err := tp.SetProxCenter(); err != nil {
		t.Fatal(err)
	}
	c, _ := prox.Posterior()
	for _, tr := range []*Trainer{tp, tq} {
		if _, err := tr.Step(batch); err != nil {
			t.Fatal(err)
		}
	}
	w1, _ := prox.Posterior()
	if d := maxDiff(t, w1, mustPosterior(t, plain)); d != 0 {
		t.Fatalf("first step from the centre differs by %g; the proximal gradient is 0 there", d)
	}
	for _, tr := range []*Trainer{tp, tq} {
		if _, err := tr.Step(batch); err != nil {
			t.Fatal(err)
		}
	}
	w2, q2 := mustPosterior(t, prox), mustPosterior(t, plain)
	for i := range w2.Params {
		a, b := flat32(t, w2.Params[i].Mean), flat32(t, q2.Params[i].Mean)
		wv, cv := flat32(t, w1.Params[i].Mean), flat32(t, c.Params[i].Mean)
		for e := range a {
			want := float64(b[e]) - lr*mu*float64(wv[e]-cv[e])
			if math.Abs(float64(a[e])-want) > 1e-6 {
				t.Fatalf("%s[%d]: %v, want %v", w2.Params[i].Name, e, a[e], want)
			}
		}
	}
}

func mustPosterior(t *testing.T, m *Model) *posterior.Posterior {
	t.Helper()
	p, err := m.Posterior()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSetNoiseSeeds: a client slot seeded with s draws what a one-client model seeded with s draws.
func TestSetNoiseSeeds(t *testing.T) {
	cfg := Config{Options: Options{Arch: ArchMLP, Hidden: []int{4}, Kind: Bayesian, InitLogVar: -1}, InputShape: []int{3}, NumClasses: 2, Clients: 2, Seed: 5}
	two := newModel(t, cfg)
	one := cfg
	one.Clients = 1
	single := newModel(t, one)
	p, _ := two.ClientPosterior(1)
	if err := single.SetPosterior(p); err != nil {
		t.Fatal(err)
	}
	if err := two.SetNoiseSeeds([]int64{7, 42}); err != nil {
		t.Fatal(err)
	}
	if err := single.SetNoiseSeeds([]int64{42}); err != nil {
		t.Fatal(err)
	}
	x := []float32{0.1, -0.4, 0.9, 1, 2, 3}
	a, err := two.Predict(x, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := single.Predict(x, 3)
	if err != nil {
		t.Fatal(err)
	}
	for s := 0; s < 3; s++ {
		ga, gb := a.Sample(1, s), b.Sample(0, s)
		for i := range ga {
			if ga[i] != gb[i] {
				t.Fatalf("sample %d, value %d: %v vs %v", s, i, ga[i], gb[i])
			}
		}
	}
	if err := two.SetNoiseSeeds([]int64{1}); err == nil {
		t.Error("one seed for two clients: no error")
	}
}
