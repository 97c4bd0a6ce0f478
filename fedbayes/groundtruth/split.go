package groundtruth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Split names how the examples are spread over the clients. Each split is controlled by the
// heterogeneity h in [0, 1]: h = 0 is the IID split with equal sizes, h = 1 the strongest form.
type Split string

// The client splits.
const (
	// IID gives every client the same number of examples from the same distribution (h is unused).
	IID Split = "iid"
	// CovariateShift moves and rescales each client's inputs: x = c_k + D_k z, z ~ N(0, C), with
	// c_k = 2h g_k, g_k ~ N(0, I), and D_k = diag(exp(h a_k)), a_k ~ N(0, I). The targets follow the
	// same w, so every client's likelihood is right, but the clients see different directions.
	CovariateShift Split = "covariate-shift"
	// TargetSkew draws a pool of examples IID and deals them out sorted by the key
	// h rank(y)/N + (1-h) u, u ~ U(0, 1): at h = 1 each client holds one band of target values.
	TargetSkew Split = "target-skew"
	// UnequalSizes keeps the total number of examples and gives client k (k = 1..K) a share
	// proportional to k^(-2h) (Zipf), each at least one example.
	UnequalSizes Split = "unequal-sizes"
	// ManySmall keeps the total number of examples and spreads them IID over M = 1 + round(9h) times
	// as many clients (h = 1: ten times as many clients, each with a tenth of the data).
	ManySmall Split = "many-small"
	// ConceptShift gives each client its own true weights, w_k = w + h s δ_k with δ_k ~ N(0, I),
	// s = ConceptShiftScale·σ0 (σ0² the prior variance), around the shared w of every other split;
	// the inputs are IID. The clients' model (and the exact posterior's) keeps one shared w, so at
	// h > 0 it is misspecified; the held-out targets come from the clients' own weights.
	ConceptShift Split = "concept-shift"
)

// ConceptShiftScale is the spread of the clients' weights around the shared one at h = 1, in prior
// standard deviations (ConceptShift).
const ConceptShiftScale = 0.5

// Splits returns every split, in the order of the documentation.
func Splits() []Split {
	return []Split{IID, CovariateShift, TargetSkew, UnequalSizes, ManySmall, ConceptShift}
}

// ParseSplit returns the split with the given name (case ignored).
func ParseSplit(name string) (Split, error) {
	for _, s := range Splits() {
		if strings.EqualFold(string(s), strings.TrimSpace(name)) {
			return s, nil
		}
	}
	names := make([]string, 0, 5)
	for _, s := range Splits() {
		names = append(names, string(s))
	}
	return "", fmt.Errorf("groundtruth: unknown split %q; known splits: %s", name, strings.Join(names, ", "))
}

// Likelihood names the model of the targets.
type Likelihood string

// The likelihoods.
const (
	// Linear is y = x^T w + e, e ~ N(0, NoiseVar): the exact posterior is Gaussian.
	Linear Likelihood = "linear"
	// Logistic is y ~ Bernoulli(sigmoid(x^T w)), y in {0, 1}: the reference posterior comes from HMC.
	Logistic Likelihood = "logistic"
)

// Config describes one synthetic regression problem and its client split.
type Config struct {
	// Likelihood is Linear ("" means Linear) or Logistic.
	Likelihood Likelihood `json:"likelihood,omitempty"`
	// Split and Heterogeneity (h in [0, 1]) choose how the data is spread over the clients.
	Split         Split   `json:"split"`
	Heterogeneity float64 `json:"heterogeneity"`
	// Clients is the number of clients K (ManySmall multiplies it, see ManySmall).
	Clients int `json:"clients"`
	// Dims is the number of weights d.
	Dims int `json:"dims"`
	// PerClient is the mean number of examples per client (the total is Clients * PerClient).
	PerClient int `json:"per_client"`
	// Test is the number of held-out examples, drawn from the clients' pooled input distribution.
	Test int `json:"test"`
	// NoiseVar is the known noise variance s2; PriorVar the prior variance of every weight (prior
	// N(0, PriorVar I)); Correlation the correlation rho between any two input features
	// (C = (1 - rho) I + rho 1 1^T), which makes the posterior's precision non-diagonal.
	NoiseVar    float64 `json:"noise_var"`
	PriorVar    float64 `json:"prior_var"`
	Correlation float64 `json:"correlation"`
	// Seed seeds the true weights, the inputs, the noise and the split: same seed, same problem.
	Seed uint64 `json:"seed"`
}

// DefaultConfig returns the defaults: IID, 10 clients, 5 weights, 20 examples per client, 2,000
// held-out examples, noise and prior variance 1, feature correlation 0.5, seed 1.
func DefaultConfig() Config {
	return Config{Split: IID, Clients: 10, Dims: 5, PerClient: 20, Test: 2000, NoiseVar: 1, PriorVar: 1, Correlation: 0.5, Seed: 1}
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if _, err := ParseSplit(string(c.Split)); err != nil {
		return err
	}
	if c.Likelihood != "" && c.Likelihood != Linear && c.Likelihood != Logistic {
		return fmt.Errorf("groundtruth: unknown likelihood %q (want %q or %q)", c.Likelihood, Linear, Logistic)
	}
	switch {
	case !(c.Heterogeneity >= 0 && c.Heterogeneity <= 1):
		return fmt.Errorf("groundtruth: heterogeneity %v: want a value in [0, 1]", c.Heterogeneity)
	case c.Clients < 1 || c.Clients > 10000:
		return fmt.Errorf("groundtruth: clients %d: want 1 to 10000", c.Clients)
	case c.Dims < 1 || c.Dims > 500:
		return fmt.Errorf("groundtruth: dims %d: want 1 to 500", c.Dims)
	case c.PerClient < 1 || c.PerClient > 1_000_000:
		return fmt.Errorf("groundtruth: examples per client %d: want 1 to 1000000", c.PerClient)
	case c.Clients*c.PerClient > 10_000_000:
		return fmt.Errorf("groundtruth: %d clients of %d examples: at most 10000000 examples in all", c.Clients, c.PerClient)
	case c.Test < 1 || c.Test > 10_000_000:
		return fmt.Errorf("groundtruth: held-out examples %d: want 1 to 10000000", c.Test)
	case !(c.NoiseVar > 0) || math.IsInf(c.NoiseVar, 0):
		return fmt.Errorf("groundtruth: noise variance %v: want positive and finite", c.NoiseVar)
	case !(c.PriorVar > 0) || math.IsInf(c.PriorVar, 0):
		return fmt.Errorf("groundtruth: prior variance %v: want positive and finite", c.PriorVar)
	case !(c.Correlation >= 0 && c.Correlation < 1):
		return fmt.Errorf("groundtruth: feature correlation %v: want a value in [0, 1)", c.Correlation)
	}
	if c.Split == ManySmall {
		m := 1 + int(math.Round(9*c.Heterogeneity))
		if c.Clients*m > 100000 {
			return fmt.Errorf("groundtruth: many-small with %d clients makes %d clients; at most 100000", c.Clients, c.Clients*m)
		}
		if c.PerClient < m {
			return fmt.Errorf("groundtruth: many-small at heterogeneity %v splits each client's %d examples %d ways: "+
				"want at least %d examples per client", c.Heterogeneity, c.PerClient, m, m)
		}
	}
	return nil
}

// Problem is a simulated problem: the model, the true weights, the clients' data and held-out data.
type Problem struct {
	Config  Config
	Model   LinearModel
	WTrue   []float64
	Clients []Data
	Test    Data
	// Server is a labelled server set of ServerExamples examples from the pooled distribution.
	Server Data
}

// ServerExamples is the size of the server's labelled set of every problem.
const ServerExamples = 200

// Sizes returns the clients' numbers of examples.
func (p *Problem) Sizes() []int {
	s := make([]int, len(p.Clients))
	for k, c := range p.Clients {
		s[k] = c.N()
	}
	return s
}

// inputs draws inputs x = c + D z, z ~ N(0, C), for one client, and its targets with the weights w.
type inputs struct {
	shift, scale []float64
	w            []float64
}

// Simulate draws a problem from cfg.
func Simulate(cfg Config) (*Problem, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := cfg.Dims
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6772_6f75_6e64)) // "ground"
	norm := distuv.Normal{Mu: 0, Sigma: 1, Src: rng}
	priorCov := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		priorCov.SetSym(i, i, cfg.PriorVar)
	}
	prior, err := NewGaussian(make([]float64, d), priorCov)
	if err != nil {
		return nil, err
	}
	p := &Problem{Config: cfg, Model: LinearModel{Prior: prior, NoiseVar: cfg.NoiseVar}}
	p.WTrue = make([]float64, d)
	for i := range p.WTrue {
		p.WTrue[i] = math.Sqrt(cfg.PriorVar) * norm.Rand()
	}
	// The input correlation's Cholesky factor: z = L e.
	corr := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := cfg.Correlation
			if i == j {
				v = 1
			}
			corr.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(corr) {
		return nil, fmt.Errorf("groundtruth: feature correlation %v gives no valid covariance", cfg.Correlation)
	}
	var l mat.TriDense
	ch.LTo(&l)

	sizes := clientSizes(cfg)
	K := len(sizes)
	in := make([]inputs, K)
	h := cfg.Heterogeneity
	// The clients' shifts come from their own stream, so that the examples are the same draws at
	// every h (covariate shift at h = 0 is the IID problem).
	shiftNorm := distuv.Normal{Mu: 0, Sigma: 1, Src: rand.NewPCG(cfg.Seed, 0x7368_6966_74)} // "shift"
	// The clients' weights under concept shift, from a stream of their own (the same draws at every h).
	conceptNorm := distuv.Normal{Mu: 0, Sigma: 1, Src: rand.NewPCG(cfg.Seed, 0x636f_6e63_6570)} // "concep"
	for k := range in {
		in[k] = inputs{shift: make([]float64, d), scale: make([]float64, d), w: p.WTrue}
		if cfg.Split == ConceptShift {
			in[k].w = make([]float64, d)
			for j := range in[k].w {
				in[k].w[j] = p.WTrue[j] + h*ConceptShiftScale*math.Sqrt(cfg.PriorVar)*conceptNorm.Rand()
			}
		}
		for j := 0; j < d; j++ {
			in[k].scale[j] = 1
		}
		if cfg.Split == CovariateShift {
			for j := 0; j < d; j++ {
				in[k].shift[j] = 2 * h * shiftNorm.Rand()
			}
			for j := 0; j < d; j++ {
				in[k].scale[j] = math.Exp(h * shiftNorm.Rand())
			}
		}
	}
	draw := func(src inputs, n int) Data {
		x := mat.NewDense(n, d, nil)
		y := make([]float64, n)
		e := mat.NewVecDense(d, nil)
		z := mat.NewVecDense(d, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				e.SetVec(j, norm.Rand())
			}
			z.MulVec(&l, e)
			t := 0.0
			for j := 0; j < d; j++ {
				v := src.shift[j] + src.scale[j]*z.AtVec(j)
				x.Set(i, j, v)
				t += v * src.w[j]
			}
			if cfg.Likelihood == Logistic {
				if rng.Float64() < sigmoid(t) {
					y[i] = 1
				}
				continue
			}
			y[i] = t + math.Sqrt(cfg.NoiseVar)*norm.Rand()
		}
		return Data{X: x, Y: y}
	}
	if cfg.Split == TargetSkew {
		total := 0
		for _, n := range sizes {
			total += n
		}
		pool := draw(in[0], total)
		p.Clients = dealSorted(pool, sizes, h, rng)
	} else {
		p.Clients = make([]Data, K)
		for k := range sizes {
			p.Clients[k] = draw(in[k], sizes[k])
		}
	}
	// Held-out examples from the pooled input distribution: each from a client chosen by size.
	total := 0
	for _, n := range sizes {
		total += n
	}
	pooled := func(n int) Data {
		out := Data{X: mat.NewDense(n, d, nil), Y: make([]float64, n)}
		for i := 0; i < n; i++ {
			r := rng.IntN(total)
			k := 0
			for r >= sizes[k] {
				r -= sizes[k]
				k++
			}
			one := draw(in[k], 1)
			out.X.SetRow(i, one.X.RawRowView(0))
			out.Y[i] = one.Y[0]
		}
		return out
	}
	p.Test = pooled(cfg.Test)
	// The server's labelled set, drawn after the held-out one (so that it leaves those draws as
	// they were): beta-PredBayes fits its beta on it (Hasan (2023), Eq. 4.11).
	p.Server = pooled(ServerExamples)
	return p, nil
}

// clientSizes returns the clients' numbers of examples for cfg (see the Split constants).
func clientSizes(cfg Config) []int {
	K, n := cfg.Clients, cfg.PerClient
	total := K * n
	switch cfg.Split {
	case ManySmall:
		K *= 1 + int(math.Round(9*cfg.Heterogeneity))
		return shares(total, equalShares(K))
	case UnequalSizes:
		w := make([]float64, K)
		for k := range w {
			w[k] = math.Pow(float64(k+1), -2*cfg.Heterogeneity)
		}
		return shares(total, w)
	}
	s := make([]int, K)
	for k := range s {
		s[k] = n
	}
	return s
}

func equalShares(K int) []float64 {
	w := make([]float64, K)
	for k := range w {
		w[k] = 1
	}
	return w
}

// shares splits total into len(w) parts proportional to w, each at least 1 (when total allows),
// by largest remainders.
func shares(total int, w []float64) []int {
	K := len(w)
	sum := 0.0
	for _, v := range w {
		sum += v
	}
	out := make([]int, K)
	rest := total
	if total >= K { // one each first
		for k := range out {
			out[k] = 1
		}
		rest = total - K
	}
	type rem struct {
		k int
		f float64
	}
	rems := make([]rem, K)
	given := 0
	for k, v := range w {
		x := float64(rest) * v / sum
		out[k] += int(math.Floor(x))
		given += int(math.Floor(x))
		rems[k] = rem{k, x - math.Floor(x)}
	}
	sort.SliceStable(rems, func(i, j int) bool { return rems[i].f > rems[j].f })
	for i := 0; given < rest; i++ {
		out[rems[i%K].k]++
		given++
	}
	return out
}

// dealSorted deals the pool out in consecutive chunks of the given sizes, ordered by the key
// h rank(y)/N + (1-h) u.
func dealSorted(pool Data, sizes []int, h float64, rng *rand.Rand) []Data {
	N := pool.N()
	byY := make([]int, N)
	for i := range byY {
		byY[i] = i
	}
	sort.SliceStable(byY, func(a, b int) bool { return pool.Y[byY[a]] < pool.Y[byY[b]] })
	key := make([]float64, N)
	for r, i := range byY {
		key[i] = h*float64(r)/float64(N) + (1-h)*rng.Float64()
	}
	order := make([]int, N)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return key[order[a]] < key[order[b]] })
	_, d := pool.X.Dims()
	out := make([]Data, len(sizes))
	at := 0
	for k, n := range sizes {
		x := mat.NewDense(n, d, nil)
		y := make([]float64, n)
		for i := 0; i < n; i++ {
			x.SetRow(i, pool.X.RawRowView(order[at]))
			y[i] = pool.Y[order[at]]
			at++
		}
		out[k] = Data{X: x, Y: y}
	}
	return out
}

// Misspecified reports whether the clients' model (one shared w) is wrong for the data: the
// concept shift at h > 0, where each client's targets come from its own weights. Its exact
// posterior p is then the posterior of that wrong model, not the best predictive.
func (c Config) Misspecified() bool { return c.Split == ConceptShift && c.Heterogeneity > 0 }
