package groundtruth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"

	"fedbayes.dev/fedbayes/internal/strictjson"
	"fedbayes.dev/fedbayes/results"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

func sigmoid(t float64) float64 {
	if t >= 0 {
		return 1 / (1 + math.Exp(-t))
	}
	e := math.Exp(t)
	return e / (1 + e)
}

// logSigmoid is log sigmoid(t) without overflow.
func logSigmoid(t float64) float64 {
	if t >= 0 {
		return -math.Log1p(math.Exp(-t))
	}
	return t - math.Log1p(math.Exp(t))
}

// LogisticModel is Bayesian logistic regression, p(y = 1 | x, w) = sigmoid(x^T w), with the
// Gaussian prior w ~ Prior. Its posterior has no closed form: clients use the Laplace approximation
// and the reference is HMC on all the data.
type LogisticModel struct {
	Prior *Gaussian
}

func (m LogisticModel) check(data Data, who string) error {
	if m.Prior == nil {
		return fmt.Errorf("groundtruth: logistic model without a prior")
	}
	if err := (LinearModel{Prior: m.Prior, NoiseVar: 1}).check(data, who); err != nil {
		return err
	}
	for i, y := range data.Y {
		if y != 0 && y != 1 {
			return fmt.Errorf("groundtruth: %s: label y[%d] = %v, want 0 or 1", who, i, y)
		}
	}
	return nil
}

// logLik is one example's log likelihood y t - log(1 + e^t) and its derivative y - sigmoid(t).
func logLik(t, y float64) (float64, float64) {
	if y == 1 {
		return logSigmoid(t), 1 - sigmoid(t)
	}
	return logSigmoid(-t), -sigmoid(t)
}

// LogDensity returns the log posterior density given the clients' data (up to a constant) and its
// gradient, for HMC.
func (m LogisticModel) LogDensity(clients []Data) (LogDensity, error) {
	return stackedLogDensity(m.Prior, clients, m.check, logLik)
}

// Laplace returns the Laplace approximation of the posterior given data: the mode w^ (Newton's
// method) and the inverse of the Hessian of the negative log posterior there,
// S0^-1 + X^T diag(s (1 - s)) X with s = sigmoid(X w^) (Bishop (2006), Eqs. 4.142-4.144; MacKay 1992).
func (m LogisticModel) Laplace(data Data) (*Gaussian, error) {
	if err := m.check(data, "data"); err != nil {
		return nil, err
	}
	p0, _, err := m.Prior.natural()
	if err != nil {
		return nil, err
	}
	d := m.Prior.Dim()
	w := mat.NewVecDense(d, nil)
	w.CopyVec(m.Prior.Mean)
	hess := mat.NewSymDense(d, nil)
	grad := mat.NewVecDense(d, nil)
	step := mat.NewVecDense(d, nil)
	n := data.N()
	for it := 0; it < 100; it++ {
		// grad = -S0^-1 (w - m0) + X^T (y - s); hess = S0^-1 + X^T diag(s (1 - s)) X.
		var diff mat.VecDense
		diff.SubVec(w, m.Prior.Mean)
		grad.MulVec(p0, &diff)
		grad.ScaleVec(-1, grad)
		hess.CopySym(p0)
		if n > 0 {
			t := mat.NewVecDense(n, nil)
			t.MulVec(data.X, w)
			r := mat.NewVecDense(n, nil)
			xw := mat.NewDense(n, d, nil)
			for i := 0; i < n; i++ {
				s := sigmoid(t.AtVec(i))
				r.SetVec(i, data.Y[i]-s)
				sw := math.Sqrt(s * (1 - s))
				for j := 0; j < d; j++ {
					xw.Set(i, j, sw*data.X.At(i, j))
				}
			}
			var g mat.VecDense
			g.MulVec(data.X.T(), r)
			grad.AddVec(grad, &g)
			var h mat.SymDense
			h.SymOuterK(1, xw.T())
			hess.AddSym(hess, &h)
		}
		var ch mat.Cholesky
		if !ch.Factorize(hess) {
			return nil, fmt.Errorf("groundtruth: Laplace: Hessian not positive definite")
		}
		if err := ch.SolveVecTo(step, grad); err != nil {
			return nil, fmt.Errorf("groundtruth: Laplace: %w", err)
		}
		if mat.Norm(step, math.Inf(1)) < 1e-10*math.Max(1, mat.Norm(w, math.Inf(1))) {
			// Converged: the covariance is the inverse Hessian at w.
			cov := mat.NewSymDense(d, nil)
			if err := ch.InverseTo(cov); err != nil {
				return nil, fmt.Errorf("groundtruth: Laplace: %w", err)
			}
			return &Gaussian{Mean: w, Cov: cov}, nil
		}
		w.AddVec(w, step)
	}
	return nil, fmt.Errorf("groundtruth: Laplace: Newton's method did not converge in 100 steps (separable data?)")
}

// hermite holds the nodes and weights of 32-point Gauss-Hermite quadrature (gonum's quad.Hermite).
var hermiteX, hermiteW = func() ([]float64, []float64) {
	x, w := make([]float64, 32), make([]float64, 32)
	quad.Hermite{}.FixedLocations(x, w, math.Inf(-1), math.Inf(1))
	return x, w
}()

// probOne returns E[sigmoid(t)] for t ~ N(mu, v) by Gauss-Hermite quadrature (v = 0: sigmoid(mu)).
func probOne(mu, v float64) float64 {
	if v == 0 {
		return sigmoid(mu)
	}
	s := math.Sqrt(2 * v)
	p := 0.0
	for j, x := range hermiteX {
		p += hermiteW[j] * sigmoid(mu+s*x)
	}
	return p / math.Sqrt(math.Pi)
}

// ScoreLogistic returns the predictive scores of the Gaussian posterior N(mean, cov) (cov positive
// semi-definite) on test under the logistic model: NLL is -log p(y | x) with p(y = 1 | x) =
// E[sigmoid(x^T w)] (Gauss-Hermite quadrature), and Coverage90 the fraction of inputs whose true
// logit x^T wTrue lies in the central 90 % interval of x^T w.
func ScoreLogistic(mean []float64, cov mat.Symmetric, wTrue []float64, test Data) (Predictive, error) {
	if test.N() == 0 {
		return Predictive{}, fmt.Errorf("groundtruth: no held-out data")
	}
	_, c := test.X.Dims()
	if c != len(mean) || cov.SymmetricDim() != len(mean) || len(wTrue) != len(mean) {
		return Predictive{}, fmt.Errorf("groundtruth: score: %d features, posterior of dimension %d", c, len(mean))
	}
	z := distuv.UnitNormal.Quantile(0.95)
	m := mat.NewVecDense(len(mean), mean)
	wt := mat.NewVecDense(len(wTrue), wTrue)
	var out Predictive
	for i := 0; i < test.N(); i++ {
		x := test.X.RowView(i)
		mu := mat.Dot(x, m)
		v := math.Max(mat.Inner(x, cov, x), 0)
		p1 := probOne(mu, v)
		py := p1
		if test.Y[i] == 0 {
			py = 1 - p1
		}
		out.NLL -= math.Log(math.Max(py, 1e-300))
		if math.Abs(mat.Dot(x, wt)-mu) <= z*math.Sqrt(v) {
			out.Coverage90++
		}
	}
	out.NLL /= float64(test.N())
	out.Coverage90 /= float64(test.N())
	return out, nil
}

// scoreDraws is ScoreLogistic for a posterior given by draws: p(y = 1 | x) is the draws' mean of
// sigmoid(x^T w) and the interval their 5 % and 95 % quantiles of x^T w.
func scoreDraws(draws [][]float64, wTrue []float64, test Data) Predictive {
	d := len(wTrue)
	var out Predictive
	t := make([]float64, len(draws))
	for i := 0; i < test.N(); i++ {
		x := test.X.RawRowView(i)
		p1 := 0.0
		for s, w := range draws {
			v := 0.0
			for j := 0; j < d; j++ {
				v += x[j] * w[j]
			}
			t[s] = v
			p1 += sigmoid(v) / float64(len(draws))
		}
		py := p1
		if test.Y[i] == 0 {
			py = 1 - p1
		}
		out.NLL -= math.Log(math.Max(py, 1e-300))
		sort.Float64s(t)
		lo, hi := stat.Quantile(0.05, stat.Empirical, t, nil), stat.Quantile(0.95, stat.Empirical, t, nil)
		truth := 0.0
		for j := 0; j < d; j++ {
			truth += x[j] * wTrue[j]
		}
		if truth >= lo && truth <= hi {
			out.Coverage90++
		}
	}
	out.NLL /= float64(test.N())
	out.Coverage90 /= float64(test.N())
	return out
}

// Reference is the HMC reference posterior of a logistic problem, as cached: the draws' moments,
// their diagnostics and the predictive scores of the draws.
type Reference struct {
	HMC        HMCResult  `json:"hmc"`
	Predictive Predictive `json:"predictive"`
	// Cached reports whether it was read from the cache rather than computed (not written).
	Cached bool `json:"-"`
}

// matches checks a cached reference against what was asked: the sampler's configuration, and a
// mean, covariance and diagnostics of d weights, finite, with a symmetric covariance of positive
// diagonal.
func (r *Reference) matches(d int, hc HMCConfig) error {
	h := r.HMC
	if h.Config != hc {
		return fmt.Errorf("it holds a reference sampled with %+v, not %+v", h.Config, hc)
	}
	if len(h.Mean) != d || len(h.Cov) != d || len(h.ESS) != d || len(h.RHat) != d || len(h.MCSE) != d {
		return fmt.Errorf("it holds %d means, %d covariance rows and %d/%d/%d diagnostics for %d weights",
			len(h.Mean), len(h.Cov), len(h.ESS), len(h.RHat), len(h.MCSE), d)
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	for i := range d {
		if len(h.Cov[i]) != d {
			return fmt.Errorf("covariance row %d has %d entries, want %d", i, len(h.Cov[i]), d)
		}
		if !finite(h.Mean[i]) || !(h.Cov[i][i] > 0) || !finite(h.Cov[i][i]) {
			return fmt.Errorf("weight %d: mean %v, variance %v", i, h.Mean[i], h.Cov[i][i])
		}
		for j := range d {
			if !finite(h.Cov[i][j]) || h.Cov[i][j] != h.Cov[j][i] {
				return fmt.Errorf("covariance entry [%d][%d] %v is not finite or not symmetric", i, j, h.Cov[i][j])
			}
		}
	}
	return nil
}

// cacheKey identifies a reference by everything it depends on.
func cacheKey(cfg Config, hc HMCConfig) string {
	raw, _ := json.Marshal(struct {
		Version int
		Config  Config
		HMC     HMCConfig
	}{2, cfg, hc}) // bump the version when the sampler changes
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// HMCReference returns the HMC reference posterior of problem p (logistic) given all its clients'
// data, from cacheDir when it holds one for the same configuration and HMC settings, and computed
// and cached there (atomically) otherwise. cacheDir "" disables the cache.
func HMCReference(p *Problem, hc HMCConfig, cacheDir string) (*Reference, error) {
	var path string
	if cacheDir != "" {
		path = filepath.Join(cacheDir, "hmc-"+cacheKey(p.Config, hc)+".json")
		raw, err := os.ReadFile(path)
		switch {
		case err == nil:
			var ref Reference
			if err := strictjson.DecodeFile(path, raw, &ref); err != nil {
				return nil, fmt.Errorf("groundtruth: HMC cache: %w (delete it to recompute)", err)
			}
			if err := ref.matches(p.Model.Prior.Dim(), hc); err != nil {
				return nil, fmt.Errorf("groundtruth: HMC cache %s: %w (delete it to recompute)", path, err)
			}
			ref.Cached = true
			return &ref, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("groundtruth: HMC cache: %w", err)
		}
	}
	lm := LogisticModel{Prior: p.Model.Prior}
	logp, err := lm.LogDensity(p.Clients)
	if err != nil {
		return nil, err
	}
	d := p.Model.Prior.Dim()
	sd := make([]float64, d)
	for i := range sd {
		sd[i] = math.Sqrt(p.Model.Prior.Cov.At(i, i))
	}
	init := func(c int, rng *rand.Rand) []float64 { // overdispersed: twice the prior's spread
		w := make([]float64, d)
		for i := range w {
			w[i] = p.Model.Prior.Mean.AtVec(i) + 2*sd[i]*rng.NormFloat64()
		}
		return w
	}
	res, err := HMC(logp, d, init, hc)
	if err != nil {
		return nil, err
	}
	ref := &Reference{HMC: *res, Predictive: scoreDraws(res.Draws, p.WTrue, p.Test)}
	ref.HMC.Draws = nil
	if path != "" {
		raw, err := json.MarshalIndent(ref, "", " ")
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(cacheDir, 0o755); err != nil {
			return nil, fmt.Errorf("groundtruth: HMC cache: %w", err)
		}
		if err := results.WriteFileAtomic(path, append(raw, '\n'), 0o644); err != nil {
			return nil, err
		}
	}
	return ref, nil
}

// hmcTruth is the HMC reference of a logistic problem (HMCReference, cached in cacheDir) and its mean
// and covariance as a Gaussian, the truth the rules are measured against.
func hmcTruth(p *Problem, hc HMCConfig, cacheDir string) (*Reference, *Gaussian, error) {
	ref, err := HMCReference(p, hc, cacheDir)
	if err != nil {
		return nil, nil, err
	}
	d := p.Model.Prior.Dim()
	cov := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			cov.SetSym(i, j, ref.HMC.Cov[i][j])
		}
	}
	truth, err := NewGaussian(ref.HMC.Mean, cov)
	if err != nil {
		return nil, nil, fmt.Errorf("groundtruth: HMC reference: %w", err)
	}
	return ref, truth, nil
}

// RunLogistic is Run for a logistic problem: the clients send the mean-field version of their Laplace
// approximations, and the rules are measured against the HMC reference (its mean and covariance as
// a Gaussian, its draws for the predictive scores).
func RunLogistic(p *Problem, opt RuleOptions, hc HMCConfig, cacheDir string) (*Result, error) {
	if p.Config.Likelihood != Logistic {
		return nil, fmt.Errorf("groundtruth: RunLogistic on a %q problem", p.Config.Likelihood)
	}
	lm := LogisticModel{Prior: p.Model.Prior}
	K := len(p.Clients)
	mf, marginals, laplace := make([]Diagonal, K), make([]Diagonal, K), make([]*Gaussian, K)
	for k, c := range p.Clients {
		g, err := lm.Laplace(c)
		if err != nil {
			return nil, fmt.Errorf("groundtruth: client %d: %w", k, err)
		}
		laplace[k], marginals[k] = g, MeanFieldMoment(g)
		if mf[k], err = MeanFieldVI(g); err != nil {
			return nil, fmt.Errorf("groundtruth: client %d: %w", k, err)
		}
	}
	ref, truth, err := hmcTruth(p, hc, cacheDir)
	if err != nil {
		return nil, err
	}
	hmc := ref.HMC
	res := &Result{Config: p.Config, Sizes: p.Sizes(), WTrue: p.WTrue, Exact: toJSON(truth), ExactPredictive: ref.Predictive,
		Clients: mf, Reference: &hmc}
	score := func(q Diagonal) (Distances, error) {
		dist, err := compareMoments(q, truth)
		if err != nil {
			return Distances{}, err
		}
		dist.Predictive, err = ScoreLogistic(q.Mean, mat.NewSymDense(len(q.Var), diagData(q.Var)), p.WTrue, p.Test)
		return dist, err
	}
	if err := scoreRules(res, truth, p.Model.Prior, marginals, RefDWCLaplaceMarginals, opt, score); err != nil {
		return nil, err
	}
	// The floor of the clients' own error: their full Laplace fits combined exactly.
	product, err := GlobalFromClients(p.Model.Prior, laplace)
	if err != nil {
		return nil, fmt.Errorf("groundtruth: %s: %w", RefLaplaceProduct, err)
	}
	dist, err := compareGaussian(product, false, truth)
	if err != nil {
		return nil, fmt.Errorf("groundtruth: %s: %w", RefLaplaceProduct, err)
	}
	if dist.Predictive, err = ScoreLogistic(product.Mean.RawVector().Data, product.Cov, p.WTrue, p.Test); err != nil {
		return nil, fmt.Errorf("groundtruth: %s: %w", RefLaplaceProduct, err)
	}
	res.References = append(res.References, Scored{Label: RefLaplaceProduct, Q: MeanFieldMoment(product), Distances: dist})
	return res, nil
}
