package predictive

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
)

// linearClients returns K regression datasets y = a.x + b + noise with F features.
func linearClients(K, F, n int, seed uint64) []*data.Dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]*data.Dataset, K)
	for k := range out {
		d := &data.Dataset{Name: "linear", Shape: []int{F}}
		for i := 0; i < n+k; i++ {
			var y float64 = 0.5
			for f := 0; f < F; f++ {
				x := rng.NormFloat64()
				d.X = append(d.X, float32(x))
				y += float64(f+1) * 0.3 * x
			}
			d.Targets = append(d.Targets, float32(y+0.1*rng.NormFloat64()))
		}
		out[k] = d
	}
	return out
}

func newLinear(t testing.TB, K, F int) *models.Model {
	t.Helper()
	m, err := models.NewWithBackend(backend.MustDefault(), models.Config{Options: models.Options{Arch: models.ArchMLP, Hidden: []int{}}, Task: models.Regression,
		InputShape: []int{F}, Clients: K, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSamplerMatchesReference runs both samplers on a linear regression model and compares every
// sample with a float64 host implementation of the same update (analytic gradient of the Gaussian
// NLL, the same batches and the same noise stream).
func TestSamplerMatchesReference(t *testing.T) {
	const K, F = 2, 3
	for _, method := range []SamplerMethod{CSGHMC, SGLD} {
		clients := linearClients(K, F, 40, 5)
		m := newLinear(t, K, F)
		p0, err := m.Posterior()
		if err != nil {
			t.Fatal(err)
		}
		init, err := flatten(p0)
		if err != nil {
			t.Fatal(err)
		}
		cfg := SamplerConfig{Method: method, LearningRate: 0.05, Epochs: 6, Cycles: 2, SamplesPerCycle: 2, BatchSize: 16,
			PriorStd: 2, Temperature: 0.5, Seed: 11}
		got, err := Sample(m, clients, cfg)
		if err != nil {
			t.Fatal(err)
		}
		// Clients of 40 and 41 examples in batches of 16: 3 steps an epoch, 18 in 6 epochs, each reading
		// a full batch of both clients (the feed drops an epoch's incomplete batch and starts the next).
		if got.TotalSteps != 18 || got.Examples != 18*2*16 {
			t.Fatalf("%s: %d steps over %d examples, want 18 over %d", method, got.TotalSteps, got.Examples, 18*2*16)
		}
		want := referenceSampler(t, init, clients, cfg.WithDefaults())
		if len(got.Models) != len(want) || len(want) != 4 {
			t.Fatalf("%s: %d samples, reference %d", method, len(got.Models), len(want))
		}
		for s := range want {
			g, err := flatten(got.Models[s])
			if err != nil {
				t.Fatal(err)
			}
			for i := range g.values {
				for j, v := range g.values[i] {
					if math.Abs(float64(v)-want[s].values[i][j]) > 2e-4 {
						t.Fatalf("%s: sample %d, %s[%d]: %v, reference %v", method, s, g.names[i], j, v, want[s].values[i][j])
					}
				}
			}
		}
		// Same seed, same samples.
		again, err := Sample(newLinear(t, K, F), clients, cfg)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := flatten(again.Models[3])
		b, _ := flatten(got.Models[3])
		for i := range a.values {
			for j := range a.values[i] {
				if a.values[i][j] != b.values[i][j] {
					t.Fatalf("%s: same seed gave a different sample", method)
				}
			}
		}
	}
}

type float64Params struct{ values [][]float64 }

// referenceSampler is Sample in float64 for the linear Gaussian model with unit noise variance.
func referenceSampler(t *testing.T, init *flatParams, clients []*data.Dataset, cfg SamplerConfig) []float64Params {
	K := len(clients)
	f, err := newFeed(clients, cfg.BatchSize, uint64(cfg.Seed))
	if err != nil {
		t.Fatal(err)
	}
	theta := make([][]float64, len(init.values))
	vel := make([][]float64, len(init.values))
	wIdx, bIdx := -1, -1
	for i, v := range init.values {
		theta[i] = make([]float64, len(v))
		vel[i] = make([]float64, len(v))
		for j, x := range v {
			theta[i][j] = float64(x)
		}
		if len(init.dims[i]) == 3 {
			wIdx = i
		} else {
			bIdx = i
		}
	}
	if wIdx < 0 || bIdx < 0 {
		t.Fatalf("unexpected parameters %v %v", init.names, init.dims)
	}
	F := init.dims[wIdx][1]
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5a4d91e))
	total := cfg.Epochs * f.stepsPerEpoch()
	plan := newSchedule(cfg, total)
	alpha := cfg.Friction
	if cfg.Method == SGLD {
		alpha = 1
	}
	var out []float64Params
	for s := 0; s < total; s++ {
		lr := plan.lr(s)
		b := f.next()
		B := len(b.Targets) / K
		grads := [][]float64{make([]float64, len(theta[0])), make([]float64, len(theta[1]))}
		for k := 0; k < K; k++ {
			for i := 0; i < B; i++ {
				x := b.X[(k*B+i)*F : (k*B+i+1)*F]
				pred := theta[bIdx][k]
				for j := 0; j < F; j++ {
					pred += theta[wIdx][k*F+j] * float64(x[j])
				}
				r := pred - float64(b.Targets[k*B+i])
				grads[bIdx][k] += r / float64(B)
				for j := 0; j < F; j++ {
					grads[wIdx][k*F+j] += r * float64(x[j]) / float64(B)
				}
			}
		}
		for i := range theta {
			per := len(theta[i]) / K
			for j := range theta[i] {
				k := j / per
				n := float64(f.sizes[k])
				d := -lr*grads[i][j] - lr/(cfg.PriorStd*cfg.PriorStd)/n*theta[i][j]
				if plan.noisy(s) {
					d += math.Sqrt(2*alpha*lr*cfg.Temperature/n) * rng.NormFloat64()
				}
				if cfg.Method == CSGHMC {
					vel[i][j] = (1-alpha)*vel[i][j] + d
					d = vel[i][j]
				}
				theta[i][j] += d
			}
		}
		if plan.take(s) {
			c := float64Params{values: make([][]float64, len(theta))}
			for i := range theta {
				c.values[i] = append([]float64(nil), theta[i]...)
			}
			out = append(out, c)
		}
	}
	return out
}

func TestSchedule(t *testing.T) {
	cfg := SamplerConfig{Cycles: 2, SamplesPerCycle: 2, ExploreFraction: 0.5}.WithDefaults()
	s := newSchedule(cfg, 20)
	var taken []int
	for i := 0; i < 20; i++ {
		if s.take(i) {
			taken = append(taken, i)
		}
	}
	// Cycles [0, 9] and [10, 19]; sampling phases of 5 steps; samples 2 apart ending at the cycle end.
	if want := []int{7, 9, 17, 19}; !equalInts(taken, want) {
		t.Errorf("samples at %v, want %v", taken, want)
	}
	if !near(s.lr(0), 0.1, 1e-12) || !near(s.lr(5), 0.05, 1e-12) || !near(s.lr(10), 0.1, 1e-12) {
		t.Errorf("cosine schedule: %v %v %v", s.lr(0), s.lr(5), s.lr(10))
	}
	if s.noisy(4) || !s.noisy(5) || s.noisy(10) || !s.noisy(19) {
		t.Errorf("noise phase wrong")
	}
	sg := newSchedule(SamplerConfig{Method: SGLD}.WithDefaults(), 10)
	if sg.lr(3) != 0.1 || !sg.noisy(0) {
		t.Errorf("SGLD: constant step size with noise throughout")
	}
}

func TestSamplerErrors(t *testing.T) {
	clients := linearClients(2, 3, 10, 1)
	tests := []struct {
		cfg  SamplerConfig
		sets []*data.Dataset
		want string
	}{
		{SamplerConfig{Method: "hmc"}, clients, "Method"},
		{SamplerConfig{Friction: 2}, clients, "Friction"},
		{SamplerConfig{ExploreFraction: 1}, clients, "ExploreFraction"},
		{SamplerConfig{}, clients[:1], "1 client datasets for a model of 2"},
	}
	for _, tc := range tests {
		_, err := Sample(newLinear(t, 2, 3), tc.sets, tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.want)
		}
	}
	bayes, err := models.NewWithBackend(backend.MustDefault(), models.Config{Options: models.Options{Arch: models.ArchMLP, Hidden: []int{}, Kind: models.Bayesian}, Task: models.Regression,
		InputShape: []int{3}, Clients: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Sample(bayes, clients, SamplerConfig{}); err == nil || !strings.Contains(err.Error(), "deterministic") {
		t.Errorf("variational net: %v", err)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
