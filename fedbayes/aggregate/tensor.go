package aggregate

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/backends"
	G "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// Report tells what an aggregation did, for logging.
type Report struct {
	// Weights are the normalised client weights used.
	Weights []float64
	// DWCFallbacks counts the parameter elements where DWC's combined precision was not positive and
	// Options.DWCPolicy applied (0 for the other rules).
	DWCFallbacks int
}

// Posteriors aggregates K client posteriors of the same model into the global posterior with the
// given rule: the closed-form rules on fused CPU kernels (fused.go), PPA (and every rule with
// Options.Graph) on a GoMLX graph (Options.Backend, or backend.Default()). Every Gaussian parameter
// gets the rule; every deterministic parameter gets the weighted mean (Jamoussi et al. show both
// barycenters reduce to it as the variance goes to 0). weights are normalised client weights (nil:
// equal). Log-variances in and out. Clients must be sorted by name (posterior.Posterior.Sort) and
// finite: a NaN or Inf anywhere is an error naming the client, parameter and element.
func Posteriors(rule Rule, clients []*posterior.Posterior, weights []float64, opt Options) (*posterior.Posterior, error) {
	out, _, err := PosteriorsWithReport(rule, clients, weights, opt)
	return out, err
}

// PosteriorsWithReport is Posteriors that also returns what it did (normalised weights, DWC
// fallbacks).
func PosteriorsWithReport(rule Rule, clients []*posterior.Posterior, weights []float64, opt Options) (
	*posterior.Posterior, Report, error) {
	if err := posterior.CheckCompatible(clients); err != nil {
		return nil, Report{}, fmt.Errorf("aggregate: %w", err)
	}
	return aggregateTensors(rule, clients, false, weights, opt)
}

// Stacked is Posteriors for a stacked posterior: every tensor has a leading client axis of size K
// (see posterior.Stack).
func Stacked(rule Rule, stacked *posterior.Posterior, weights []float64, opt Options) (*posterior.Posterior, error) {
	out, _, err := StackedWithReport(rule, stacked, weights, opt)
	return out, err
}

// StackedWithReport is Stacked that also returns what it did.
func StackedWithReport(rule Rule, stacked *posterior.Posterior, weights []float64, opt Options) (
	*posterior.Posterior, Report, error) {
	if stacked == nil || len(stacked.Params) == 0 {
		return nil, Report{}, fmt.Errorf("aggregate: empty stacked posterior")
	}
	if err := posterior.CheckCompatible([]*posterior.Posterior{stacked}); err != nil {
		return nil, Report{}, fmt.Errorf("aggregate: stacked posterior: %w", err)
	}
	K := -1
	for _, p := range stacked.Params {
		if p.Mean.Rank() == 0 {
			return nil, Report{}, fmt.Errorf("aggregate: stacked posterior: parameter %q has no leading client axis", p.Name)
		}
		d := p.Mean.Shape().Dimensions[0]
		if K == -1 {
			K = d
		} else if d != K {
			return nil, Report{}, fmt.Errorf("aggregate: stacked posterior: parameter %q has %d clients, %q has %d",
				p.Name, d, stacked.Params[0].Name, K)
		}
	}
	return aggregateTensors(rule, []*posterior.Posterior{stacked}, true, weights, opt)
}

// aggregateTensors checks the arguments and runs the fused kernels or the graph; either checks that
// every client mean and log-variance is finite (an error names the first that is not). With stacked, clients holds one posterior with a client axis.
func aggregateTensors(rule Rule, clients []*posterior.Posterior, stacked bool, weights []float64, opt Options) (
	*posterior.Posterior, Report, error) {
	if _, err := ParseRule(string(rule)); err != nil {
		return nil, Report{}, err
	}
	ref := clients[0]
	K := len(clients)
	if stacked {
		K = ref.Params[0].Mean.Shape().Dimensions[0]
	}
	if opt.BFLP && opt.BABFL {
		return nil, Report{}, fmt.Errorf("aggregate: Options.BFLP and Options.BABFL are both set; choose one code base to follow")
	}
	w, err := checkWeights(weights, K, opt.Normalize)
	if err != nil {
		return nil, Report{}, err
	}
	report := Report{Weights: w}
	var counts []int
	if rule == PPA {
		N, err := opt.populationSize()
		if err != nil {
			return nil, report, err
		}
		if N < 2 {
			return nil, report, fmt.Errorf("aggregate: PPA population size %d: need at least 2 samples", N)
		}
		counts = populationCounts(w, N)
		if opt.BFLP {
			if counts, err = floorCounts(w, N); err != nil {
				return nil, report, err
			}
		}
	}
	prev := opt.PreviousGlobal
	if rule == DWC {
		if prev == nil {
			return nil, report, fmt.Errorf("aggregate: DWC needs the previous global posterior (Options.PreviousGlobal)")
		}
		if err := checkPrevious(ref, prev, stacked); err != nil {
			return nil, report, err
		}
	}
	if rule != PPA && !opt.Graph {
		return fusedTensors(rule, clients, stacked, w, opt) // it checks that the clients are finite
	}
	if err := checkFiniteClients(clients, stacked); err != nil {
		return nil, report, err
	}
	be := opt.Backend
	if be == nil {
		if be, err = backend.Default(); err != nil {
			return nil, report, fmt.Errorf("aggregate: %w", err)
		}
	}

	// Inputs, in order: per parameter, its means (K tensors, or 1 stacked), then its log-variances,
	// then for DWC the previous global's mean and log-variance.
	var args []any
	for i, p := range ref.Params {
		for _, c := range clients {
			args = append(args, c.Params[i].Mean)
		}
		if p.IsGaussian() && rule != FedAvg {
			for _, c := range clients {
				args = append(args, c.Params[i].LogVar)
			}
			if rule == DWC {
				args = append(args, prev.Params[i].Mean, prev.Params[i].LogVar)
			}
		}
	}
	graphFn := func(in []*G.Node) []*G.Node {
		var outs []*G.Node
		var rng *G.Node
		if rule == PPA {
			rng = G.RNGStateFromSeedForGraph(in[0].Graph(), opt.Seed)
		}
		pos := 0
		take := func() []*G.Node {
			if !stacked {
				nodes := in[pos : pos+K]
				pos += K
				return nodes
			}
			x := in[pos]
			pos++
			nodes := make([]*G.Node, K)
			inner := x.Shape().Dimensions[1:]
			for k := range nodes {
				nodes[k] = G.Reshape(G.Slice(x, G.AxisElem(k)), inner...)
			}
			return nodes
		}
		for _, p := range ref.Params {
			mu := take()
			if !p.IsGaussian() || rule == FedAvg {
				outs = append(outs, weightedSum(mu, w))
				continue
			}
			lv := take()
			if opt.BFLP && rule != AALV {
				lv = clampLogVars(lv)
			}
			switch rule {
			case DWC:
				pm, plv := in[pos], in[pos+1]
				pos += 2
				m, l, fb := dwcNodes(mu, lv, pm, plv, opt.DWCPolicy)
				outs = append(outs, m, l, fb)
			case PPA:
				var m, l *G.Node
				m, l, rng = ppaNodes(rng, counts, mu, lv, mu[0].Shape())
				if opt.BFLP {
					l = G.AddScalar(l, unbiasedShift(counts))
				}
				outs = append(outs, m, l)
			case EAA, GAA:
				var m, l *G.Node
				switch {
				case opt.BFLP:
					m, l = bflpGaussianNodes(rule, w, mu, lv)
				case opt.BABFL && rule == GAA:
					m, l = babflGAANodes(w, mu, lv)
				default:
					m, l = gaussianNodes(rule, w, mu, lv)
				}
				outs = append(outs, m, l)
			default:
				m, l := gaussianNodes(rule, w, mu, lv)
				outs = append(outs, m, l)
			}
		}
		return outs
	}
	results, err := execGraph(be, graphFn, args)
	if err != nil {
		return nil, report, fmt.Errorf("aggregate: rule %s: %w", rule, err)
	}
	out := &posterior.Posterior{Params: make([]posterior.Param, len(ref.Params))}
	pos := 0
	for i, p := range ref.Params {
		out.Params[i] = posterior.Param{Name: p.Name, Mean: results[pos]}
		pos++
		if !p.IsGaussian() || rule == FedAvg {
			continue
		}
		out.Params[i].LogVar = results[pos]
		pos++
		if rule == DWC {
			n, first, err := countMask(results[pos])
			pos++
			if err != nil {
				return nil, report, fmt.Errorf("aggregate: DWC: parameter %q: %w", p.Name, err)
			}
			report.DWCFallbacks += n
			if n > 0 && opt.DWCPolicy == DWCFail {
				return nil, report, dwcFailError(p.Name, n, first)
			}
		}
	}
	if err := out.Validate(); err != nil {
		return nil, report, fmt.Errorf("aggregate: rule %s produced a non-finite global: %w", rule, err)
	}
	return out, report, nil
}

// execGraph builds and runs graphFn once, turning GoMLX panics into errors.
func execGraph(be backends.Backend, graphFn func([]*G.Node) []*G.Node, args []any) (results []*tensors.Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("graph execution failed: %v", r)
		}
	}()
	exec, err := G.NewExec(be, graphFn)
	if err != nil {
		return nil, err
	}
	defer exec.Finalize()
	return exec.Exec(args...)
}

// countMask counts the non-zero elements of a float32 mask and returns the first one's index.
func countMask(t *tensors.Tensor) (n, first int, err error) {
	first = -1
	err = tensors.ConstFlatData(t, func(flat []float32) {
		for i, v := range flat {
			if v != 0 {
				if first < 0 {
					first = i
				}
				n++
			}
		}
	})
	return
}

// checkPrevious checks that the previous global matches the clients' model (unstacked shapes).
func checkPrevious(ref, prev *posterior.Posterior, stacked bool) error {
	if len(prev.Params) != len(ref.Params) {
		return fmt.Errorf("aggregate: DWC: previous global has %d parameters, the clients %d", len(prev.Params), len(ref.Params))
	}
	for i, p := range ref.Params {
		q := prev.Params[i]
		if q.Name != p.Name {
			return fmt.Errorf("aggregate: DWC: previous global parameter #%d is %q, the clients' is %q", i, q.Name, p.Name)
		}
		want := p.Mean.Shape()
		if stacked {
			want = shapes.Make(want.DType, want.Dimensions[1:]...)
		}
		if q.Mean == nil || !q.Mean.Shape().Equal(want) {
			return fmt.Errorf("aggregate: DWC: previous global parameter %q: shape differs from the clients' %s", p.Name, want)
		}
		if q.IsGaussian() != p.IsGaussian() || (q.LogVar != nil && !q.LogVar.Shape().Equal(want)) {
			return fmt.Errorf("aggregate: DWC: previous global parameter %q: Gaussian-ness or log-variance shape differs "+
				"from the clients'", p.Name)
		}
	}
	if err := prev.Validate(); err != nil {
		return fmt.Errorf("aggregate: DWC: previous global: %w", err)
	}
	return nil
}

// checkFiniteClients checks every mean and log-variance of every client for NaN and Inf, in
// parallel over clients and parameters. The error names client, parameter, field and element (for
// a stacked posterior, the client is the leading index).
func checkFiniteClients(clients []*posterior.Posterior, stacked bool) error {
	type task struct {
		client int
		name   string
		field  string
		t      *tensors.Tensor
	}
	var tasks []task
	for k, c := range clients {
		for _, p := range c.Params {
			tasks = append(tasks, task{k, p.Name, "mean", p.Mean})
			if p.LogVar != nil {
				tasks = append(tasks, task{k, p.Name, "log-variance", p.LogVar})
			}
		}
	}
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				tk := tasks[i]
				bad := -1
				var badV float32
				if err := tensors.ConstFlatData(tk.t, func(flat []float32) {
					bad = firstNonFinite(flat)
					if bad >= 0 {
						badV = flat[bad]
					}
				}); err != nil {
					errs[i] = fmt.Errorf("aggregate: client %d: parameter %q: reading %s: %w", tk.client, tk.name, tk.field, err)
					continue
				}
				if bad < 0 {
					continue
				}
				client, idx := tk.client, bad
				if stacked {
					n := tk.t.Size() / tk.t.Shape().Dimensions[0]
					client, idx = bad/n, bad%n
				}
				errs[i] = fmt.Errorf("aggregate: client %d: parameter %q: %s[%d] (flat index) is %v",
					client, tk.name, tk.field, idx, badV)
			}
		}()
	}
	for i := range tasks {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// firstNonFinite returns the index of the first NaN or Inf in flat, or -1. It tests the float32
// exponent bits (all ones for NaN and Inf) in blocks, without branches inside a block.
func firstNonFinite(flat []float32) int {
	const exp = 0x7f800000
	const block = 1024
	for start := 0; start < len(flat); start += block {
		end := min(start+block, len(flat))
		acc := uint32(0)
		for _, v := range flat[start:end] {
			b := math.Float32bits(v) & exp
			acc |= (b + 0x00800000) & 0x80000000 // the carry reaches bit 31 only when all exponent bits are set
		}
		if acc != 0 {
			for j := start; j < end; j++ {
				if math.Float32bits(flat[j])&exp == exp {
					return j
				}
			}
		}
	}
	return -1
}
