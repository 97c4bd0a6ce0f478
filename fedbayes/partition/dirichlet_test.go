package partition

import (
	"math"
	"strings"
	"testing"
	"time"

	"fedbayes.dev/fedbayes/internal/randx"
)

func nan() float64 { return math.NaN() }

// TestDirichletSampler checks the moments of the symmetric Dirichlet draws: E[p_i] = 1/K and
// Var[p_i] = (K-1) / (K^2 (K alpha + 1)).
func TestDirichletSampler(t *testing.T) {
	const k, draws = 4, 40000
	for _, alpha := range []float64{0.05, 0.5, 1, 5} {
		rng := newRNG(11, 12)
		p := make([]float64, k)
		var sum, sumSq [k]float64
		for range draws {
			randx.Dirichlet(rng, p, alpha)
			var s float64
			for i, v := range p {
				if !(v >= 0 && v <= 1) {
					t.Fatalf("alpha %v: component %v", alpha, v)
				}
				s += v
				sum[i] += v
				sumSq[i] += v * v
			}
			if math.Abs(s-1) > 1e-12 {
				t.Fatalf("alpha %v: draw sums to %v", alpha, s)
			}
		}
		wantVar := float64(k-1) / (k * k * (k*alpha + 1))
		for i := range k {
			mean := sum[i] / draws
			v := sumSq[i]/draws - mean*mean
			if math.Abs(mean-0.25) > 0.01 || math.Abs(v-wantVar)/wantVar > 0.05 {
				t.Errorf("alpha %v component %d: mean %.4f (want 0.25), variance %.5f (want %.5f)", alpha, i, mean, v, wantVar)
			}
		}
	}
	// Tiny alpha: the draw is (nearly) a vertex of the simplex, still finite and normalised.
	rng := newRNG(1, 1)
	p := make([]float64, 10)
	randx.Dirichlet(rng, p, 1e-4)
	if mx := maxF(p); !(mx > 0.99) {
		t.Errorf("alpha 1e-4 draw %v is not near a vertex", p)
	}
}

func maxF(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

func TestDirichlet(t *testing.T) {
	labels := balancedLabels(6000, 10, 2)
	skew := func(p *Partition) float64 { // mean over clients of the largest class share
		var s float64
		for k, row := range p.Counts {
			mx := 0
			for _, n := range row {
				mx = max(mx, n)
			}
			s += float64(mx) / float64(len(p.Clients[k]))
		}
		return s / float64(p.NumClients())
	}
	var prev float64 = 2
	for _, alpha := range []float64{0.1, 0.5, 5, 100} {
		p, err := Dirichlet(labels, 10, 10, DirichletOptions{Alpha: alpha, MinSize: DefaultDirichletMinSize, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, p, 6000, 10, 0)
		for k, s := range p.Sizes() {
			if s < DefaultDirichletMinSize {
				t.Errorf("alpha %v: client %d has %d examples", alpha, k, s)
			}
			// Li et al.'s cap: a client stops receiving classes once it holds N/K = 600 examples,
			// so it ends below 600 + one class (600).
			if s >= 1200 {
				t.Errorf("alpha %v: client %d has %d examples, over the cap", alpha, k, s)
			}
		}
		// Smaller alpha, more skew: the largest class share falls as alpha grows, towards 0.1.
		sk := skew(p)
		if sk >= prev {
			t.Errorf("alpha %v: skew %.3f not below %.3f of the smaller alpha", alpha, sk, prev)
		}
		prev = sk
	}
	if prev > 0.2 {
		t.Errorf("alpha 100: skew %.3f, want near 0.1 (almost IID)", prev)
	}
	checkDeterministic(t, func(seed uint64) (*Partition, error) {
		return Dirichlet(labels, 10, 10, DirichletOptions{Alpha: 0.5, MinSize: 10, Seed: seed})
	})
}

// TestDirichletTinyAlphaTerminates: alpha 1e-3 with a minimum size almost never succeeds; it must
// fail quickly with a clear message, and succeed without the minimum.
func TestDirichletTinyAlphaTerminates(t *testing.T) {
	labels := balancedLabels(6000, 10, 3)
	start := time.Now()
	_, err := Dirichlet(labels, 10, 100, DirichletOptions{Alpha: 1e-3, MinSize: 10, MaxAttempts: 20, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "no draw in 20 attempts") || !strings.Contains(err.Error(), "raise alpha") {
		t.Errorf("tiny alpha: error %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("tiny alpha took %v", d)
	}
	p, err := Dirichlet(labels, 10, 100, DirichletOptions{Alpha: 1e-3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, p, 6000, 100, 0)
	// Each class goes to very few of the 100 clients (one, or a few when the chosen client is
	// already full and the leftover tiny proportions are renormalised).
	for c := range 10 {
		holders := 0
		for _, row := range p.Counts {
			if row[c] > 0 {
				holders++
			}
		}
		if holders > 5 {
			t.Errorf("alpha 1e-3: class %d is spread over %d clients", c, holders)
		}
	}
}

func TestDirichletErrors(t *testing.T) {
	labels := balancedLabels(100, 2, 4)
	for _, tc := range []struct {
		name string
		opt  DirichletOptions
		k    int
		want string
	}{
		{"alpha zero", DirichletOptions{Alpha: 0}, 2, "alpha must be positive"},
		{"alpha nan", DirichletOptions{Alpha: nan()}, 2, "alpha must be positive"},
		{"alpha inf", DirichletOptions{Alpha: math.Inf(1)}, 2, "alpha must be positive"},
		{"min size", DirichletOptions{Alpha: 1, MinSize: 30}, 4, "4 clients of at least 30 examples need 120 examples, have 100"},
		{"negative min", DirichletOptions{Alpha: 1, MinSize: -1}, 2, "minimum client size"},
		{"attempts", DirichletOptions{Alpha: 1, MaxAttempts: -1}, 2, "MaxAttempts"},
	} {
		_, err := Dirichlet(labels, 2, tc.k, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
