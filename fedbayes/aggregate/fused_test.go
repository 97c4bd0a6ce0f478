package aggregate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// fusedModel has a parameter of several blocks (blockSize(K) is at most 4096), so that blocks and
// goroutines split it, and small ones.
var fusedModel = []paramSpec{
	{"/a/bias", []int{7}, false},
	{"/a/weights", []int{3, 3001}, true},
	{"/b/weights", []int{1}, true},
	{"/c/bias", []int{5000}, false},
}

// fusedClients draws K clients of fusedModel and a previous global: means N(0, 3^2), log-variances
// uniform on [-18.4, 9.2] (variances 1e-8 to 1e4), and at a few elements log-variances up to ±80
// and up to ±350 (more than fastmath.ExpSafe apart, and e^-700 is still a normal float64).
func fusedClients(rng *rand.Rand, K int) (clients []*posterior.Posterior, prev *posterior.Posterior) {
	draw := func() *posterior.Posterior {
		p := &posterior.Posterior{}
		for _, s := range fusedModel {
			n := 1
			for _, d := range s.dims {
				n *= d
			}
			mu, lv := make([]float32, n), make([]float32, n)
			for i := range mu {
				mu[i] = float32(rng.NormFloat64() * 3)
				lv[i] = float32(rng.Float64()*27.6 - 18.4)
				switch i % 997 {
				case 5:
					lv[i] = float32(160*rng.Float64() - 80)
				case 7: // beyond fastmath.ExpSafe apart: the kernels' exact path
					lv[i] = float32(700*rng.Float64() - 350)
				}
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

// fusedWeights returns K normalised weights; with zero, client 1's weight is 0.
func fusedWeights(rng *rand.Rand, K int, zero bool) []float64 {
	raw := make([]float64, K)
	for k := range raw {
		raw[k] = 0.2 + rng.Float64()
	}
	if zero && K > 1 {
		raw[1] = 0
	}
	w, _ := NormalizeWeights(raw)
	return w
}

// linearOutput reports whether the graph computes output field ("mean" or "logvar") of a Gaussian
// parameter under rule as a float32 weighted sum, which the fused kernels reproduce bit for bit.
func linearOutput(rule Rule, field string) bool {
	switch rule {
	case EAA, GAA, WB, LP, FedAvg:
		return field == "mean"
	case AALV:
		return true
	}
	return false
}

// errStats are the largest errors of a set of outputs: means relative to the largest of 1, the
// reference's and the clients' |mean| at the element, log-variances relative to max(1, |reference|).
type errStats struct{ mean, logVar float64 }

func (e *errStats) add(field string, d float64) {
	if field == "mean" {
		e.mean = max(e.mean, d)
	} else {
		e.logVar = max(e.logVar, d)
	}
}

// TestFusedMatchesGraphAndFloat64 checks the fused kernels of every closed-form rule, in the papers'
// form and under Options.BFLP and Options.BABFL, against the graph (Options.Graph) and against the
// float64 scalar form (on clamped log-variances where BFL-P clamps): weighted means bit for bit as on
// the graph, every other output within 1e-6 (relative, as errStats) of float64. Where the scalar form
// has no such mode (BFL-P's EAA and GAA, BA-BFL's GAA) it checks them against the graph, within 2e-5.
// It logs the largest errors of both paths.
func TestFusedMatchesGraphAndFloat64(t *testing.T) {
	be := backend.MustDefault()
	rng := rand.New(rand.NewPCG(21, 22))
	var fusedErr, graphErr, apart errStats
	for _, K := range []int{1, 2, 3, 5, 8, 13} { // 1, 2, 2, 4, 7 and 12 weighted terms
		clients, prev := fusedClients(rng, K)
		w := fusedWeights(rng, K, K > 2)
		prevEls := newElements(t, []*posterior.Posterior{prev}, false)
		for _, mode := range []string{"paper", "BFLP", "BABFL"} {
			for _, rule := range Rules() {
				if rule == PPA {
					continue
				}
				opt := Options{Backend: be, PreviousGlobal: prev, DWCPolicy: DWCUseConflation, BFLP: mode == "BFLP", BABFL: mode == "BABFL"}
				fused, frep, err := PosteriorsWithReport(rule, clients, w, opt)
				if err != nil {
					t.Fatalf("K=%d %s %s: %v", K, mode, rule, err)
				}
				opt.Graph = true
				graph, grep, err := PosteriorsWithReport(rule, clients, w, opt)
				if err != nil && rule == DWC && strings.Contains(err.Error(), "non-finite global") {
					// The graph's float32 precisions underflow where a client's variance exceeds the
					// previous global's by more than e^88 (log-variances of ±80 here): 0/0 in the
					// conflation fallback. The fused kernels work in float64; check them alone.
					t.Logf("K=%d %s DWC: graph fails (%v); fused checked against float64 only", K, mode, err)
					graph, grep = nil, frep
				} else if err != nil {
					t.Fatalf("K=%d %s %s graph: %v", K, mode, rule, err)
				}
				if frep.DWCFallbacks != grep.DWCFallbacks {
					t.Logf("K=%d %s %s: %d DWC fallbacks, graph %d (elements at the threshold)", K, mode, rule, frep.DWCFallbacks, grep.DWCFallbacks)
				}
				scalarRef := !(mode == "BFLP" && (rule == EAA || rule == GAA)) && !(mode == "BABFL" && rule == GAA)
				els := newElements(t, clients, mode == "BFLP" && rule != AALV)
				for p, spec := range fusedModel {
					gaussian := spec.gaussian && rule != FedAvg
					if (fused.Params[p].LogVar != nil) != gaussian {
						t.Fatalf("K=%d %s %s %s: LogVar presence %v", K, mode, rule, spec.name, fused.Params[p].LogVar != nil)
					}
					for _, field := range []string{"mean", "logvar"} {
						if field == "logvar" && !gaussian {
							continue
						}
						f := flat(t, fused.Params[p].Mean)
						var g []float32
						if field == "logvar" {
							f = flat(t, fused.Params[p].LogVar)
						}
						if graph != nil {
							g = flat(t, graph.Params[p].Mean)
							if field == "logvar" {
								g = flat(t, graph.Params[p].LogVar)
							}
						}
						exact := !gaussian || linearOutput(rule, field)
						for i := range f {
							where := fmt.Sprintf("K=%d %s %s %s %s[%d]", K, mode, rule, spec.name, field, i)
							if g != nil && exact && math.Float32bits(f[i]) != math.Float32bits(g[i]) {
								t.Fatalf("%s: fused %v, graph %v: want bit for bit", where, f[i], g[i])
							}
							if exact {
								continue
							}
							var ref float64
							if scalarRef {
								want, err := Scalar(rule, els.at(p, i), w, Options{Previous: &prevEls.at(p, i)[0], DWCPolicy: DWCUseConflation})
								if err != nil {
									t.Fatal(err)
								}
								ref = want.Mean
								if field == "logvar" {
									ref = math.Log(want.Var)
								}
							} else {
								ref = float64(g[i])
							}
							scale := math.Abs(ref)
							if field == "mean" {
								scale = max(scale, els.meanScale(p, i))
							}
							d := math.Abs(float64(f[i])-ref) / math.Max(1, scale)
							tol := 1e-6
							if !scalarRef {
								tol = 2e-5
							} else {
								fusedErr.add(field, d)
							}
							if d > tol {
								t.Errorf("%s: fused %v, reference %v", where, f[i], ref)
							}
							if g != nil && scalarRef {
								graphErr.add(field, math.Abs(float64(g[i])-ref)/math.Max(1, scale))
							}
							if g != nil {
								apart.add(field, math.Abs(float64(f[i]-g[i]))/math.Max(1, scale))
							}
						}
					}
				}
			}
		}
	}
	t.Logf("largest error against float64 (nonlinear outputs): fused mean %.2g log-variance %.2g; graph mean %.2g log-variance %.2g",
		fusedErr.mean, fusedErr.logVar, graphErr.mean, graphErr.logVar)
	t.Logf("largest difference fused - graph: mean %.2g, log-variance %.2g", apart.mean, apart.logVar)
}

// elements reads posteriors' elements as float64 Gaussians: mean[p][k][i], logVar[p][k][i].
type elements struct{ mean, logVar [][][]float32 }

// newElements reads ps; with clamp, log-variances are clamped to BFL-P's range.
func newElements(t *testing.T, ps []*posterior.Posterior, clamp bool) *elements {
	e := &elements{}
	for p := range ps[0].Params {
		var mu, lv [][]float32
		for _, c := range ps {
			mu = append(mu, flat(t, c.Params[p].Mean))
			if c.Params[p].LogVar != nil {
				v := flat(t, c.Params[p].LogVar)
				for i := range v {
					if clamp {
						v[i] = min(max(v[i], BFLPLogVarMin), BFLPLogVarMax)
					}
				}
				lv = append(lv, v)
			}
		}
		e.mean, e.logVar = append(e.mean, mu), append(e.logVar, lv)
	}
	return e
}

// at returns every posterior's element i of parameter p (variance 0 for a deterministic one).
func (e *elements) at(p, i int) []Gaussian {
	out := make([]Gaussian, len(e.mean[p]))
	for k := range out {
		out[k].Mean = float64(e.mean[p][k][i])
		if e.logVar[p] != nil {
			out[k].Var = math.Exp(float64(e.logVar[p][k][i]))
		}
	}
	return out
}

// meanScale is the largest |mean| of the posteriors at element i of parameter p.
func (e *elements) meanScale(p, i int) float64 {
	s := 0.0
	for _, m := range e.mean[p] {
		s = max(s, math.Abs(float64(m[i])))
	}
	return s
}

// TestFusedSameAtAnyGOMAXPROCS checks that every rule gives the same bits at GOMAXPROCS 1, 2 and 3,
// from the client list and from the stacked posterior.
func TestFusedSameAtAnyGOMAXPROCS(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	K := 6
	clients, prev := fusedClients(rng, K)
	stacked, err := posterior.Stack(clients)
	if err != nil {
		t.Fatal(err)
	}
	w := fusedWeights(rng, K, true)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, rule := range Rules() {
		if rule == PPA {
			continue
		}
		opt := Options{PreviousGlobal: prev}
		var ref *posterior.Posterior
		for _, procs := range []int{1, 2, 3} {
			runtime.GOMAXPROCS(procs)
			for _, useStacked := range []bool{false, true} {
				var got *posterior.Posterior
				if useStacked {
					got, err = Stacked(rule, stacked, w, opt)
				} else {
					got, err = Posteriors(rule, clients, w, opt)
				}
				if err != nil {
					t.Fatalf("%s GOMAXPROCS=%d: %v", rule, procs, err)
				}
				if ref == nil {
					ref = got
					continue
				}
				if d := firstBitDifference(t, ref, got); d != "" {
					t.Errorf("%s GOMAXPROCS=%d stacked=%v differs from GOMAXPROCS=1: %s", rule, procs, useStacked, d)
				}
			}
		}
	}
}

// firstBitDifference describes the first element where a and b differ in their bits ("" if none).
func firstBitDifference(t *testing.T, a, b *posterior.Posterior) string {
	for p := range a.Params {
		for _, pair := range [][2]*tensors.Tensor{{a.Params[p].Mean, b.Params[p].Mean}, {a.Params[p].LogVar, b.Params[p].LogVar}} {
			if pair[0] == nil {
				continue
			}
			x, y := flat(t, pair[0]), flat(t, pair[1])
			for i := range x {
				if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
					return fmt.Sprintf("parameter %q element %d: %v vs %v", a.Params[p].Name, i, x[i], y[i])
				}
			}
		}
	}
	return ""
}

// TestFusedSameTensorTwice passes one client twice (its tensors are opened once) and the previous
// global as a client: the result is that of distinct copies.
func TestFusedSameTensorTwice(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	clients, _ := fusedClients(rng, 2)
	twice := []*posterior.Posterior{clients[0], clients[0], clients[1]}
	copied := []*posterior.Posterior{clients[0], clone(t, clients[0]), clients[1]}
	for _, rule := range []Rule{EAA, DWC, FedAvg} {
		opt := Options{PreviousGlobal: clients[1]}
		a, err := Posteriors(rule, twice, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Posteriors(rule, copied, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		if d := firstBitDifference(t, a, b); d != "" {
			t.Errorf("%s: same tensor twice differs from a copy: %s", rule, d)
		}
	}
}

func clone(t *testing.T, p *posterior.Posterior) *posterior.Posterior {
	out := &posterior.Posterior{}
	for _, q := range p.Params {
		c := posterior.Param{Name: q.Name, Mean: tensors.FromFlatDataAndDimensions(flat(t, q.Mean), q.Mean.Shape().Dimensions...)}
		if q.LogVar != nil {
			c.LogVar = tensors.FromFlatDataAndDimensions(flat(t, q.LogVar), q.LogVar.Shape().Dimensions...)
		}
		out.Params = append(out.Params, c)
	}
	return out
}

// TestBlockSize checks the block sizes: aligned, within bounds, and a tile near fusedTileBytes.
func TestBlockSize(t *testing.T) {
	for _, tc := range []struct{ K, want int }{{1, maxBlock}, {16, 4096}, {20, 3264}, {100, 640}, {2000, minBlock}} {
		if got := blockSize(tc.K); got != tc.want {
			t.Errorf("blockSize(%d) = %d, want %d", tc.K, got, tc.want)
		}
	}
}

// TestFusedNonFinite puts one NaN or Inf into a client's mean or log-variance, in a weighted and in a
// zero-weight client, and checks that every rule, in the papers' form and under BFL-P, reports it
// by client, parameter and element, whichever of the kernels' checks finds it.
func TestFusedNonFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	K := 4
	w := []float64{0.5, 0.25, 0, 0.25}
	for _, client := range []int{1, 2} {
		for _, field := range []string{"mean", "log-variance"} {
			for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
				clients, prev := fusedClients(rng, K)
				p := 1 // "/a/weights", Gaussian; element 4500 lies in the second block
				x := clients[client].Params[p].Mean
				if field == "log-variance" {
					x = clients[client].Params[p].LogVar
				}
				_ = tensors.MutableFlatData(x, func(f []float32) { f[4500] = bad })
				want := fmt.Sprintf(`client %d: parameter "/a/weights": %s[4500] (flat index) is %v`, client, field, bad)
				for _, bflp := range []bool{false, true} {
					for _, rule := range Rules() {
						if rule == PPA {
							continue
						}
						_, err := Posteriors(rule, clients, w, Options{PreviousGlobal: prev, BFLP: bflp})
						if err == nil || !strings.Contains(err.Error(), want) {
							t.Errorf("%s (BFLP %v), %v in client %d %s: error %v, want %q", rule, bflp, bad, client, field, err, want)
						}
					}
				}
			}
		}
	}
}

// TestFusedLPNearEqualMeans checks LP where the clients' means agree to a few float32 units around
// 1000 and their variances are tiny, so that the spread of the means, computed as a difference of
// moments (lpSums), is nearly all of the variance: within 1e-6 of float64 in the log-variance.
func TestFusedLPNearEqualMeans(t *testing.T) {
	K := 5
	var clients []*posterior.Posterior
	for k := range K {
		mu := []float32{1000 + float32(k)*1e-4, -3e4 + float32(k*k)*4e-3, 7}
		lv := []float32{-30, -25, -40}
		clients = append(clients, &posterior.Posterior{Params: []posterior.Param{{Name: "/w",
			Mean: tensors.FromFlatDataAndDimensions(mu, 3), LogVar: tensors.FromFlatDataAndDimensions(lv, 3)}}})
	}
	w := []float64{0.1, 0.3, 0.2, 0.15, 0.25}
	out, err := Posteriors(LP, clients, w, Options{})
	if err != nil {
		t.Fatal(err)
	}
	els := newElements(t, clients, false)
	lv := flat(t, out.Params[0].LogVar)
	for i := range lv {
		want, _ := Scalar(LP, els.at(0, i), w, Options{})
		if d := math.Abs(float64(lv[i]) - math.Log(want.Var)); d > 1e-6*math.Max(1, math.Abs(math.Log(want.Var))) {
			t.Errorf("element %d: log-variance %v, float64 %v", i, lv[i], math.Log(want.Var))
		}
	}
}
