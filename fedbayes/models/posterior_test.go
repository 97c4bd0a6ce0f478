package models

import (
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

func TestPosteriorRoundTrip(t *testing.T) {
	cfgs := []Config{
		{Options: Options{Arch: ArchMLP, Hidden: []int{4}, Kind: Bayesian}, InputShape: []int{5}, NumClasses: 3, Clients: 3},
		{Options: Options{Arch: ArchMLP, Hidden: []int{4, 3}, Kind: Bayesian, BayesianLayers: 1}, InputShape: []int{5}, NumClasses: 3, Clients: 2},
		{Options: Options{Arch: ArchMLP, Hidden: []int{4}, Kind: MCDropout}, InputShape: []int{5}, Task: Regression, LearnNoise: true, Clients: 2},
		{Options: Options{Arch: ArchLeNet, ConvChannels: []int{2, 3}, DenseWidths: []int{5}, Kind: Bayesian, BayesianLayers: 2}, InputShape: []int{16, 16, 1}, NumClasses: 4},
	}
	for i, cfg := range cfgs {
		cfg.Seed = 1
		a := newModel(t, cfg)
		cfg.Seed = 2
		b := newModel(t, cfg)
		pa, err := a.Posterior()
		if err != nil {
			t.Fatal(err)
		}
		if err := pa.Validate(); err != nil {
			t.Fatalf("config %d: %v", i, err)
		}
		if err := b.SetPosterior(pa); err != nil {
			t.Fatalf("config %d: %v", i, err)
		}
		pb, err := b.Posterior()
		if err != nil {
			t.Fatal(err)
		}
		samePosterior(t, pa, pb)

		// Broadcast client 1's (or 0's) posterior to every client, then read each client back.
		src := min(1, a.Clients()-1)
		one, err := a.ClientPosterior(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.SetPosterior(one); err != nil {
			t.Fatalf("config %d broadcast: %v", i, err)
		}
		for k := 0; k < b.Clients(); k++ {
			ck, err := b.ClientPosterior(k)
			if err != nil {
				t.Fatal(err)
			}
			samePosterior(t, one, ck)
		}
		// Hybrid: only the last layer is Gaussian.
		if cfg.BayesianLayers == 1 {
			for _, p := range pa.Params {
				if p.IsGaussian() != strings.HasPrefix(p.Name, "/l02_dense") {
					t.Errorf("hybrid: %s Gaussian = %v", p.Name, p.IsGaussian())
				}
			}
		}
	}
}

func TestSoftplusRoundTrip(t *testing.T) {
	cfg := Config{Options: Options{Arch: ArchMLP, Hidden: []int{4}, Kind: Bayesian, VarParam: SoftplusParam, InitLogVar: -4}, InputShape: []int{3}, NumClasses: 2}
	a := newModel(t, cfg)
	pa, _ := a.Posterior()
	lv := flat32(t, pa.Params[0].LogVar)
	if math.Abs(float64(lv[0])+4) > 1e-5 {
		t.Errorf("initial log-variance %v, want -4", lv[0])
	}
	b := newModel(t, cfg)
	if err := b.SetPosterior(pa); err != nil {
		t.Fatal(err)
	}
	pb, _ := b.Posterior()
	for i := range pa.Params {
		x, y := flat32(t, pa.Params[i].LogVar), flat32(t, pb.Params[i].LogVar)
		for j := range x {
			if math.Abs(float64(x[j]-y[j])) > 1e-5 {
				t.Fatalf("%s[%d]: log-variance %v came back as %v", pa.Params[i].Name, j, x[j], y[j])
			}
		}
	}
}

func TestSetPosteriorErrors(t *testing.T) {
	cfg := Config{Options: Options{Arch: ArchMLP, Hidden: []int{4}, Kind: Bayesian}, InputShape: []int{3}, NumClasses: 2, Clients: 2}
	m := newModel(t, cfg)
	good, _ := m.Posterior()
	det := newModel(t, Config{Options: Options{Arch: ArchMLP, Hidden: []int{4}}, InputShape: []int{3}, NumClasses: 2, Clients: 2})
	detPost, _ := det.Posterior()
	tests := []struct {
		name string
		edit func(p *posterior.Posterior)
		use  *posterior.Posterior
		want string
	}{
		{"missing", func(p *posterior.Posterior) { p.Params = p.Params[1:] }, good, `"/l00_dense/biases" is missing`},
		{"extra", func(p *posterior.Posterior) {
			p.Params = append(p.Params, posterior.Param{Name: "/zz/extra", Mean: tensors.FromValue([]float32{1})})
		}, good, `"/zz/extra" is not in the model`},
		{"shape", func(p *posterior.Posterior) {
			p.Params[0].Mean = tensors.FromValue([]float32{1, 2, 3})
			p.Params[0].LogVar = tensors.FromValue([]float32{1, 2, 3})
		}, good, "has shape [3], want [2 4] or [4]"},
		{"deterministic into Gaussian", func(*posterior.Posterior) {}, detPost, "the posterior's is deterministic but the model's is Gaussian"},
		{"nan", func(p *posterior.Posterior) {
			p.Params[0].Mean = tensors.FromValue([][]float32{{0, 0, float32(math.NaN()), 0}, {0, 0, 0, 0}})
		}, good, "is NaN"},
	}
	for _, tc := range tests {
		p := &posterior.Posterior{Params: append([]posterior.Param(nil), tc.use.Params...)}
		tc.edit(p)
		err := m.SetPosterior(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
	// Nothing changed.
	after, _ := m.Posterior()
	samePosterior(t, good, after)
	if err := m.SetPrior(good); err == nil || !strings.Contains(err.Error(), "PriorVariables") {
		t.Errorf("SetPrior without PriorVariables: got %v", err)
	}
	if _, err := m.ClientPosterior(2); err == nil {
		t.Error("ClientPosterior(2) of a 2-client model: no error")
	}
}

// TestSetPrior sets every client's prior to its own posterior: the KL term must vanish.
func TestSetPrior(t *testing.T) {
	cfg := Config{Options: Options{Arch: ArchMLP, Hidden: []int{4}, Kind: Bayesian, InitLogVar: -2}, InputShape: []int{3}, NumClasses: 2,
		PriorVariables: true, Clients: 2}
	m := newModel(t, cfg)
	tr, err := m.NewTrainer(OptimizerConfig{Kind: SGD, LearningRate: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	x, y := synthetic(2, 2, 4, 3, 2)
	batch := Batch{X: x, Labels: y, DatasetSizes: []int{10, 10}}
	st, err := tr.Step(batch)
	if err != nil {
		t.Fatal(err)
	}
	if st.KL[0] < 1 {
		t.Fatalf("KL to N(0, 1) is %v, expected clearly positive", st.KL[0])
	}
	post, _ := m.Posterior()
	if err := m.SetPrior(post); err != nil {
		t.Fatal(err)
	}
	st, err = tr.Step(batch)
	if err != nil {
		t.Fatal(err)
	}
	for k, kl := range st.KL {
		if math.Abs(kl) > 1e-4 {
			t.Errorf("client %d: KL to its own posterior is %v, want 0", k, kl)
		}
	}
}
