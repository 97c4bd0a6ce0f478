package predictive

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// fedpaShapes are the parameters of the test posteriors: "a" [3] and "b" [2], d = 5.
var fedpaShapes = []struct {
	name string
	n    int
}{{"a", 3}, {"b", 2}}

// fedpaInit builds an unstacked posterior from a flat d-vector.
func fedpaInit(x []float32) *posterior.Posterior {
	p := &posterior.Posterior{}
	off := 0
	for _, s := range fedpaShapes {
		p.Params = append(p.Params, posterior.Param{Name: s.name,
			Mean: tensors.FromFlatDataAndDimensions(append([]float32(nil), x[off:off+s.n]...), s.n)})
		off += s.n
	}
	return p
}

// fedpaSamples builds l stacked posteriors [K, ...] from xs[k][s], client k's sample s (flat d).
func fedpaSamples(xs [][][]float32) []*posterior.Posterior {
	K, l := len(xs), len(xs[0])
	out := make([]*posterior.Posterior, l)
	for s := 0; s < l; s++ {
		p := &posterior.Posterior{}
		off := 0
		for _, sh := range fedpaShapes {
			var v []float32
			for k := 0; k < K; k++ {
				v = append(v, xs[k][s][off:off+sh.n]...)
			}
			p.Params = append(p.Params, posterior.Param{Name: sh.name, Mean: tensors.FromFlatDataAndDimensions(v, K, sh.n)})
			off += sh.n
		}
		out[s] = p
	}
	return out
}

// gaussianDraws draws l samples of N(mu, A A^T) in float32.
func gaussianDraws(rng *rand.Rand, mu []float64, A [][]float64, l int) [][]float32 {
	d := len(mu)
	out := make([][]float32, l)
	for s := range out {
		z := make([]float64, d)
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		out[s] = make([]float32, d)
		for i := 0; i < d; i++ {
			v := mu[i]
			for j := 0; j < d; j++ {
				v += A[i][j] * z[j]
			}
			out[s][i] = float32(v)
		}
	}
	return out
}

// denseSolve solves M x = b by Gaussian elimination with partial pivoting (the float64 reference).
func denseSolve(t *testing.T, M [][]float64, b []float64) []float64 {
	t.Helper()
	n := len(b)
	a := make([][]float64, n)
	for i := range a {
		a[i] = append(append([]float64(nil), M[i]...), b[i])
	}
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		if a[c][c] == 0 {
			t.Fatal("singular reference matrix")
		}
		for r := c + 1; r < n; r++ {
			f := a[r][c] / a[c][c]
			for j := c; j <= n; j++ {
				a[r][j] -= f * a[c][j]
			}
		}
	}
	x := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		s := a[i][n]
		for j := i + 1; j < n; j++ {
			s -= a[i][j] * x[j]
		}
		x[i] = s / a[i][i]
	}
	return x
}

// denseShrinkage is the dense FedPA covariance of Al-Shedivat et al. (2021), Sec. 4, and the mean:
// rho_l I + (1 - rho_l) S with S the unbiased sample covariance.
func denseShrinkage(xs [][]float32, rho float64) (mu []float64, sigma [][]float64) {
	l, d := len(xs), len(xs[0])
	mu = make([]float64, d)
	for _, x := range xs {
		for j, v := range x {
			mu[j] += float64(v) / float64(l)
		}
	}
	rhoL := 1 / (1 + float64(l-1)*rho)
	sigma = make([][]float64, d)
	for i := range sigma {
		sigma[i] = make([]float64, d)
		for j := range sigma[i] {
			var s float64
			if l > 1 {
				for _, x := range xs {
					s += (float64(x[i]) - mu[i]) * (float64(x[j]) - mu[j])
				}
				s /= float64(l - 1)
			}
			sigma[i][j] = (1 - rhoL) * s
		}
		sigma[i][i] += rhoL
	}
	return mu, sigma
}

func flatOf(t *testing.T, p *posterior.Posterior) []float64 {
	t.Helper()
	f, err := flatten(p)
	if err != nil {
		t.Fatal(err)
	}
	return f.float64s()
}

func rho(v float64) *float64 { return &v }

// fedpaCase draws K clients' samples from Gaussians with known, different covariances.
func fedpaCase(K, l int, seed uint64) (x0 []float32, xs [][][]float32) {
	rng := rand.New(rand.NewPCG(seed, 1))
	const d = 5
	x0 = make([]float32, d)
	for i := range x0 {
		x0[i] = float32(rng.NormFloat64())
	}
	for k := 0; k < K; k++ {
		mu := make([]float64, d)
		A := make([][]float64, d)
		for i := range A {
			mu[i] = 2 * rng.NormFloat64()
			A[i] = make([]float64, d)
			for j := 0; j <= i; j++ {
				A[i][j] = 0.5 * rng.NormFloat64()
			}
			A[i][i] += 1
		}
		xs = append(xs, gaussianDraws(rng, mu, A, l))
	}
	return x0, xs
}

func TestFedPAMatchesDenseReference(t *testing.T) {
	sizes := []float64{10, 20, 30}
	for _, tc := range []struct {
		name         string
		l            int
		rho, lr      float64
		weights      []float64
		wantWeighted []float64
	}{
		{"rho 0.4, eta 0.5, size weights", 4, 0.4, 0.5, sizes, []float64{1.0 / 6, 2.0 / 6, 3.0 / 6}},
		{"rho 1, eta 1, equal weights", 6, 1, 1, nil, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}},
		{"rho 2.5, two samples", 2, 2.5, 1, sizes, []float64{1.0 / 6, 2.0 / 6, 3.0 / 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x0, xs := fedpaCase(3, tc.l, 7)
			g, err := FedPA(fedpaInit(x0), fedpaSamples(xs), tc.weights, FedPAConfig{Rho: rho(tc.rho), ServerLR: tc.lr})
			if err != nil {
				t.Fatal(err)
			}
			got := flatOf(t, g)
			want := make([]float64, len(x0))
			for j := range want {
				want[j] = float64(x0[j])
			}
			for k, x := range xs {
				mu, sigma := denseShrinkage(x, tc.rho)
				v := make([]float64, len(x0))
				for j := range v {
					v[j] = float64(x0[j]) - mu[j]
				}
				delta := denseSolve(t, sigma, v)
				for j := range want {
					want[j] -= tc.lr * tc.wantWeighted[k] * delta[j]
				}
			}
			for j := range want {
				if !near(got[j], want[j], 1e-5*(1+math.Abs(want[j]))) {
					t.Errorf("parameter %d: FedPA %v, dense reference %v", j, got[j], want[j])
				}
			}
		})
	}
}

// dpDelta is the dynamic program of Al-Shedivat et al. (2021), Sec. 4 (as their public code runs
// it): Delta_l built sample by sample with rank-one updates of the shrinkage inverse. It is the
// second reference for fedPADelta.
func dpDelta(x0 []float64, xs [][]float64, rho float64) []float64 {
	d := len(x0)
	mean := append([]float64(nil), xs[0]...)
	delta := make([]float64, d)
	for j := range delta {
		delta[j] = x0[j] - mean[j]
	}
	dot := func(a, b []float64) float64 {
		var s float64
		for j := range a {
			s += a[j] * b[j]
		}
		return s
	}
	var vs [][]float64
	var uvs []float64
	for t := 2; t <= len(xs); t++ {
		u := make([]float64, d)
		for j := range u {
			u[j] = xs[t-1][j] - mean[j]
		}
		v := append([]float64(nil), u...)
		for i, vk := range vs {
			k := i + 2
			gk := rho * float64(k-1) / float64(k)
			c := gk * dot(vk, u) / (1 + gk*uvs[i])
			for j := range v {
				v[j] -= c * vk[j]
			}
		}
		uv, ud := dot(u, v), dot(u, delta)
		g := rho * float64(t-1) / float64(t)
		c := g * (float64(t)*ud - uv) / (1 + g*uv)
		for j := range delta {
			delta[j] -= (1 + c) * v[j] / float64(t)
		}
		vs, uvs = append(vs, v), append(uvs, uv)
		for j := range mean {
			mean[j] = (float64(t-1)*mean[j] + xs[t-1][j]) / float64(t)
		}
	}
	for j := range delta {
		delta[j] *= 1 + float64(len(xs)-1)*rho
	}
	return delta
}

func TestFedPADeltaMatchesDynamicProgram(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const d = 7
	for _, l := range []int{1, 2, 3, 6, 7, 12} { // l > d = 7 takes the direct d x d solve
		for _, r := range []float64{0, 0.4, 1, 3} {
			x0 := make([]float64, d)
			for j := range x0 {
				x0[j] = rng.NormFloat64()
			}
			xs := make([][]float64, l)
			for s := range xs {
				xs[s] = make([]float64, d)
				for j := range xs[s] {
					xs[s][j] = 1 + rng.NormFloat64()
				}
			}
			got, err := fedPADelta(x0, xs, r)
			if err != nil {
				t.Fatal(err)
			}
			want := dpDelta(x0, xs, r)
			for j := range want {
				if !near(got[j], want[j], 1e-9*(1+math.Abs(want[j]))) {
					t.Errorf("l=%d rho=%g: Delta[%d] = %v, dynamic program %v", l, r, j, got[j], want[j])
				}
			}
		}
	}
}

func TestFedPAReducesToFedAvg(t *testing.T) {
	// rho = 0 makes every covariance the identity; a single sample has no covariance at all. Either
	// way, at eta_s = 1 the global model is the weighted mean of the client means (FedAvg).
	sizes := []float64{1, 3}
	for _, tc := range []struct {
		name string
		l    int
		rho  float64
	}{{"rho 0", 5, 0}, {"one sample", 1, 0.9}} {
		t.Run(tc.name, func(t *testing.T) {
			x0, xs := fedpaCase(2, tc.l, 11)
			g, err := FedPA(fedpaInit(x0), fedpaSamples(xs), sizes, FedPAConfig{Rho: rho(tc.rho)})
			if err != nil {
				t.Fatal(err)
			}
			got := flatOf(t, g)
			for j := range got {
				var want float64
				for k, x := range xs {
					var m float64
					for _, s := range x {
						m += float64(s[j]) / float64(len(x))
					}
					want += sizes[k] / 4 * m
				}
				if !near(got[j], want, 1e-5) {
					t.Errorf("parameter %d: %v, FedAvg of the client means %v", j, got[j], want)
				}
			}
		})
	}
}

func TestFedPAProductModeIsFixedPoint(t *testing.T) {
	// Starting from the mode of the product of the client Gaussians (Al-Shedivat et al. (2021),
	// Sec. 3), sum_k q_k Delta_k = 0 and FedPA stays there.
	_, xs := fedpaCase(3, 5, 13)
	q := []float64{0.2, 0.3, 0.5}
	const r = 0.7
	const d = 5
	prec := make([][]float64, d)
	for i := range prec {
		prec[i] = make([]float64, d)
	}
	rhs := make([]float64, d)
	for k, x := range xs {
		mu, sigma := denseShrinkage(x, r)
		for c := 0; c < d; c++ {
			e := make([]float64, d)
			e[c] = 1
			col := denseSolve(t, sigma, e) // column c of Sigma_k^{-1}
			for i := 0; i < d; i++ {
				prec[i][c] += q[k] * col[i]
				rhs[i] += q[k] * col[i] * mu[c]
			}
		}
	}
	mode := denseSolve(t, prec, rhs)
	start := make([]float32, d)
	for i, v := range mode {
		start[i] = float32(v)
	}
	g, err := FedPA(fedpaInit(start), fedpaSamples(xs), q, FedPAConfig{Rho: rho(r)})
	if err != nil {
		t.Fatal(err)
	}
	for j, v := range flatOf(t, g) {
		if !near(v, mode[j], 1e-4*(1+math.Abs(mode[j]))) {
			t.Errorf("parameter %d moved from the product mode %v to %v", j, mode[j], v)
		}
	}
}

func TestFedPAShrinkageRecoversKnownCovariance(t *testing.T) {
	// With many samples of N(mu, Sigma) and rho = 1 (rho_l = 1/l), the shrinkage estimate tends to
	// the sample covariance and Delta to Sigma^{-1} (x0 - mu) of the true Gaussian.
	rng := rand.New(rand.NewPCG(21, 2))
	mu := []float64{1, -2, 0.5}
	A := [][]float64{{1, 0, 0}, {0.8, 0.6, 0}, {-0.3, 0.4, 0.5}}
	draws := gaussianDraws(rng, mu, A, 20000)
	xs := make([][]float64, len(draws))
	for s, v := range draws {
		xs[s] = []float64{float64(v[0]), float64(v[1]), float64(v[2])}
	}
	x0 := []float64{4, 3, -5}
	got, err := fedPADelta(x0, xs, 1)
	if err != nil {
		t.Fatal(err)
	}
	sigma := make([][]float64, 3)
	for i := range sigma {
		sigma[i] = make([]float64, 3)
		for j := range sigma[i] {
			for c := 0; c < 3; c++ {
				sigma[i][j] += A[i][c] * A[j][c]
			}
		}
	}
	want := denseSolve(t, sigma, []float64{x0[0] - mu[0], x0[1] - mu[1], x0[2] - mu[2]})
	var diff, norm float64
	for j := range want {
		diff += (got[j] - want[j]) * (got[j] - want[j])
		norm += want[j] * want[j]
	}
	if math.Sqrt(diff/norm) > 0.03 {
		t.Errorf("Delta %v, Sigma^-1 (x0 - mu) of the true Gaussian %v", got, want)
	}
}

func TestFedPAErrors(t *testing.T) {
	x0, xs := fedpaCase(2, 3, 5)
	init := fedpaInit(x0)
	samples := fedpaSamples(xs)
	wrongName := fedpaSamples(xs)
	wrongName[1].Params[0].Name = "z"
	tests := []struct {
		name    string
		init    *posterior.Posterior
		samples []*posterior.Posterior
		weights []float64
		cfg     FedPAConfig
		want    string
	}{
		{"no samples", init, nil, nil, FedPAConfig{}, "no samples"},
		{"negative rho", init, samples, nil, FedPAConfig{Rho: rho(-1)}, "fedpa.rho"},
		{"infinite rho", init, samples, nil, FedPAConfig{Rho: rho(math.Inf(1))}, "fedpa.rho"},
		{"negative server lr", init, samples, nil, FedPAConfig{ServerLR: -1}, "fedpa.server_lr"},
		{"weights", init, samples, []float64{1, 2, 3}, FedPAConfig{}, "3 weights for 2 clients"},
		{"parameter names", init, wrongName, nil, FedPAConfig{}, `sample 1: parameter "z"`},
		{"not stacked", init, []*posterior.Posterior{init}, nil, FedPAConfig{}, "client axis"},
	}
	for _, tc := range tests {
		if _, err := FedPA(tc.init, tc.samples, tc.weights, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// BenchmarkFedPA times one FedPA round at the size of the thesis's MLP (784-100-10: 79,510
// parameters), K = 5 clients with l = 6 samples each (Hasan (2023), "Maximum Samples").
func BenchmarkFedPA(b *testing.B) {
	const K, l = 5, 6
	shapes := []struct {
		name string
		dims []int
	}{{"w1", []int{784, 100}}, {"b1", []int{100}}, {"w2", []int{100, 10}}, {"b2", []int{10}}}
	rng := rand.New(rand.NewPCG(1, 2))
	randn := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(0.1 * rng.NormFloat64())
		}
		return v
	}
	init := &posterior.Posterior{}
	samples := make([]*posterior.Posterior, l)
	for s := range samples {
		samples[s] = &posterior.Posterior{}
	}
	for _, sh := range shapes {
		n := 1
		for _, d := range sh.dims {
			n *= d
		}
		init.Params = append(init.Params, posterior.Param{Name: sh.name, Mean: tensors.FromFlatDataAndDimensions(randn(n), sh.dims...)})
		for s := range samples {
			samples[s].Params = append(samples[s].Params, posterior.Param{Name: sh.name,
				Mean: tensors.FromFlatDataAndDimensions(randn(K*n), append([]int{K}, sh.dims...)...)})
		}
	}
	for b.Loop() {
		if _, err := FedPA(init, samples, nil, FedPAConfig{}); err != nil {
			b.Fatal(err)
		}
	}
}
