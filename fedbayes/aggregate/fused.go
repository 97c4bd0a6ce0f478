package aggregate

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// This file runs the closed-form rules (all but PPA) as fused CPU kernels on the tensors' float32
// data, instead of a GoMLX graph: one pass over the K clients per block of parameter elements, with
// the block's K rows small enough to stay in the core's L2 cache while every step of the rule reads
// them, and blocks spread over GOMAXPROCS goroutines. Each element's result depends only on that
// element's inputs (never on the block it falls in or the goroutine that computes it), so results
// are the same whatever GOMAXPROCS is. fused_kernels.go has the arithmetic.

// fusedTileBytes is the client data (mean and log-variance rows, float32) one block holds: with
// the float32 scratch rows of the weighted mean it fits a 1 MiB L2 cache, and each client's rows
// are long enough (2.5 KiB at K = 100) for the hardware prefetcher. Measured at K = 100 on the
// 2-core machine, 256 KiB to 4 MiB tiles gave the same speed within the noise of its load.
const fusedTileBytes = 512 << 10

// Block sizes in elements: a multiple of blockAlign, between minBlock and maxBlock.
const (
	minBlock   = 64
	maxBlock   = 4096
	blockAlign = 64
)

// blockSize returns the number of elements per block for K clients: fusedTileBytes over the 8 bytes
// per client and element, rounded down to blockAlign and kept within [minBlock, maxBlock].
func blockSize(K int) int {
	b := fusedTileBytes / (8 * K)
	b -= b % blockAlign
	return min(max(b, minBlock), maxBlock)
}

// fusedParam is one parameter's data for the kernels: per client, the flat means and (Gaussian
// parameters) log-variances; DWC's previous global; the outputs.
type fusedParam struct {
	name           string
	gaussian       bool        // the rule's Gaussian form applies (not FedAvg, not a deterministic parameter)
	mu, lv         [][]float32 // lv is read by FedAvg only to check that it is finite
	prevMu, prevLv []float32
	outMu, outLv   []float32
	// blockFallbacks and blockFirst are DWC's per-block fallback counts and first flat index (-1: none).
	blockFallbacks []int
	blockFirst     []int
}

// fusedTensors is aggregateTensors for every rule but PPA, on the fused kernels. Its arguments have
// been checked by aggregateTensors.
func fusedTensors(rule Rule, clients []*posterior.Posterior, stacked bool, w []float64, opt Options) (
	*posterior.Posterior, Report, error) {
	report := Report{Weights: w}
	ref := clients[0]
	K := len(w)
	prev := opt.PreviousGlobal
	k := newKernel(rule, w, opt)

	// The tensors to open: inputs (each once, though a caller may pass the same tensor twice) and
	// fresh outputs.
	var ins, outs []*tensors.Tensor
	inIndex := map[*tensors.Tensor]int{}
	in := func(t *tensors.Tensor) int {
		if i, ok := inIndex[t]; ok {
			return i
		}
		inIndex[t] = len(ins)
		ins = append(ins, t)
		return len(ins) - 1
	}
	type paramRefs struct {
		mu, lv         []int
		prevMu, prevLv int
		outMu, outLv   int
		n              int
	}
	refs := make([]paramRefs, len(ref.Params))
	out := &posterior.Posterior{Params: make([]posterior.Param, len(ref.Params))}
	for i, p := range ref.Params {
		r := paramRefs{prevMu: -1, prevLv: -1, outLv: -1}
		gaussian := p.IsGaussian() && rule != FedAvg
		for _, c := range clients {
			r.mu = append(r.mu, in(c.Params[i].Mean))
			if p.IsGaussian() {
				r.lv = append(r.lv, in(c.Params[i].LogVar))
			}
		}
		shape := p.Mean.Shape().Clone()
		if stacked {
			shape.Dimensions = shape.Dimensions[1:]
		}
		r.n = shape.Size()
		if gaussian && rule == DWC {
			r.prevMu, r.prevLv = in(prev.Params[i].Mean), in(prev.Params[i].LogVar)
		}
		out.Params[i] = posterior.Param{Name: p.Name, Mean: tensors.FromShape(shape)}
		r.outMu = len(outs)
		outs = append(outs, out.Params[i].Mean)
		if gaussian {
			out.Params[i].LogVar = tensors.FromShape(shape.Clone())
			r.outLv = len(outs)
			outs = append(outs, out.Params[i].LogVar)
		}
		refs[i] = r
	}

	params := make([]*fusedParam, len(refs))
	finite := false
	err := withFlats(ins, outs, func(inF, outF [][]float32) {
		// rows returns client k's rows of input tensor indices idx: the tensor itself, or its k-th
		// slice along the client axis when stacked.
		rows := func(idx []int, n int) [][]float32 {
			if idx == nil {
				return nil
			}
			rs := make([][]float32, K)
			for c := range rs {
				if stacked {
					rs[c] = inF[idx[0]][c*n : (c+1)*n]
				} else {
					rs[c] = inF[idx[c]][:n]
				}
			}
			return rs
		}
		for i, r := range refs {
			fp := &fusedParam{name: ref.Params[i].Name, gaussian: r.outLv >= 0, mu: rows(r.mu, r.n), lv: rows(r.lv, r.n),
				outMu: outF[r.outMu]}
			if r.outLv >= 0 {
				fp.outLv = outF[r.outLv]
			}
			if r.prevMu >= 0 {
				fp.prevMu, fp.prevLv = inF[r.prevMu], inF[r.prevLv]
			}
			params[i] = fp
		}
		size := 1 // the block size, no larger than the largest parameter (small models, small scratch)
		for _, fp := range params {
			size = max(size, min(len(fp.outMu), blockSize(K)))
		}
		finite = runBlocks(k, params, size)
	})
	if err != nil {
		return nil, report, fmt.Errorf("aggregate: rule %s: %w", rule, err)
	}
	if !finite {
		// Name the first non-finite input as the graph path does.
		if err := checkFiniteClients(clients, stacked); err != nil {
			return nil, report, err
		}
		return nil, report, fmt.Errorf("aggregate: rule %s: a client holds a NaN or Inf", rule)
	}
	if rule == DWC {
		for _, fp := range params {
			n, first := 0, -1
			for b, c := range fp.blockFallbacks {
				n += c
				if first < 0 && fp.blockFirst[b] >= 0 {
					first = fp.blockFirst[b]
				}
			}
			report.DWCFallbacks += n
			if n > 0 && opt.DWCPolicy == DWCFail {
				return nil, report, dwcFailError(fp.name, n, first)
			}
		}
	}
	if err := out.Validate(); err != nil {
		return nil, report, fmt.Errorf("aggregate: rule %s produced a non-finite global: %w", rule, err)
	}
	return out, report, nil
}

// dwcFailError is the error of Options.DWCPolicy DWCFail: n elements of parameter name, the first at
// flat index first, have a combined precision that is not positive.
func dwcFailError(name string, n, first int) error {
	return fmt.Errorf("aggregate: DWC: parameter %q: combined precision is not positive at "+
		"%d elements (first at flat index %d): the clients are less certain than the previous global; "+
		"choose another DWCPolicy", name, n, first)
}

// withFlats calls fn with the float32 data of every tensor of ins (to read) and outs (to write),
// holding each tensor's lock until fn returns. Each tensor must appear once in ins and outs together.
func withFlats(ins, outs []*tensors.Tensor, fn func(in, out [][]float32)) error {
	inF, outF := make([][]float32, len(ins)), make([][]float32, len(outs))
	var open func(i int) error
	open = func(i int) error {
		switch {
		case i < len(ins):
			var inner error
			if err := tensors.ConstFlatData(ins[i], func(f []float32) { inF[i] = f; inner = open(i + 1) }); err != nil {
				return err
			}
			return inner
		case i < len(ins)+len(outs):
			j := i - len(ins)
			var inner error
			if err := tensors.MutableFlatData(outs[j], func(f []float32) { outF[j] = f; inner = open(i + 1) }); err != nil {
				return err
			}
			return inner
		}
		fn(inF, outF)
		return nil
	}
	return open(0)
}

// runBlocks runs kernel k over every parameter in blocks of size elements, on up to GOMAXPROCS
// goroutines that take blocks in turn from a shared counter. Block boundaries depend only on the
// shapes; which goroutine runs a block does not change its result. It returns false, after
// stopping early, if some block's inputs are not all finite.
func runBlocks(k *kernel, params []*fusedParam, size int) (finite bool) {
	type block struct{ p, lo, hi, idx int }
	var blocks []block
	for pi, fp := range params {
		n := len(fp.outMu)
		nb := (n + size - 1) / size
		if k.rule == DWC && fp.gaussian {
			fp.blockFallbacks = make([]int, nb)
			fp.blockFirst = make([]int, nb)
		}
		for b := range nb {
			blocks = append(blocks, block{pi, b * size, min(n, (b+1)*size), b})
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(blocks))
	var next atomic.Int64
	var bad atomic.Bool
	work := func() {
		sc := newScratch(len(k.w), size)
		for !bad.Load() {
			i := int(next.Add(1) - 1)
			if i >= len(blocks) {
				return
			}
			b := blocks[i]
			fp := params[b.p]
			n, first, ok := k.block(fp, b.lo, b.hi, sc)
			if !ok {
				bad.Store(true)
				return
			}
			if fp.blockFallbacks != nil {
				fp.blockFallbacks[b.idx], fp.blockFirst[b.idx] = n, first
			}
		}
	}
	if workers <= 1 {
		work()
	} else {
		var wg sync.WaitGroup
		for range workers {
			wg.Go(work)
		}
		wg.Wait()
	}
	return !bad.Load()
}
