package aggregate

import (
	"math"

	"fedbayes.dev/fedbayes/internal/fastmath"
)

// The fused kernels compute one block [lo, hi) of one parameter. Formulas are those of graph.go
// (and docs/aggregation.md), with these numerics:
//   - the weighted means of EAA, GAA, AALV, WB, LP, FedAvg and of every deterministic parameter, and
//     AALV's log-variance, are the graph's float32 balanced tree of float32 products, bit for bit
//     (treeSum32);
//   - everything else is computed per element in float64 from the float32 inputs and rounded once
//     at the end: each exponential of a log-variance (fastmath.Exp, relative error below 5e-15) is
//     taken once per client and element and reused by every step of the rule; sums of variances are
//     shifted by the largest log-variance of the element, sums of precisions by the smallest, so no
//     exponential overflows;
//   - zero-weight clients are left out of weighted sums.

// kernel holds a rule and its per-client coefficients.
type kernel struct {
	rule   Rule
	w      []float64 // normalised weights
	c      []float64 // the rule's coefficients of its exponential sum (see newKernel)
	policy DWCPolicy
	bflp   bool // Options.BFLP: clamp the log-variances (all rules but AALV), partial sums in EAA and GAA
	// clampLo and clampHi bound the log-variances the rule reads: BFL-P's clamp, or ±Inf.
	clampLo, clampHi float64
}

// newKernel prepares rule's coefficients: w (EAA, WB, LP, RKLB), w^2 (GAA; divided by their sum under
// Options.BABFL), precisionCoefficients (Conflation, CF), ones (DWC).
func newKernel(rule Rule, w []float64, opt Options) *kernel {
	k := &kernel{rule: rule, w: w, c: w, policy: opt.DWCPolicy, clampLo: math.Inf(-1), clampHi: math.Inf(1)}
	if opt.BFLP && rule != AALV {
		k.bflp, k.clampLo, k.clampHi = true, BFLPLogVarMin, BFLPLogVarMax
	}
	switch rule {
	case GAA:
		k.c = make([]float64, len(w))
		sum := 0.0
		for i, v := range w {
			k.c[i] = v * v
			sum += k.c[i]
		}
		if opt.BABFL && !opt.BFLP {
			for i := range k.c {
				k.c[i] /= sum
			}
		}
	case Conflation, CF:
		k.c = precisionCoefficients(rule, w)
	case DWC:
		k.c = make([]float64, len(w))
		for i := range k.c {
			k.c[i] = 1
		}
	}
	return k
}

// scratch is one goroutine's working memory for blocks of up to size elements.
type scratch struct {
	m, s, t, e []float64 // shift, sums, exponentials
	rows       [][]float32
	tree       [][]float32
}

func newScratch(K, size int) *scratch {
	sc := &scratch{m: make([]float64, size), s: make([]float64, size), t: make([]float64, size),
		e: make([]float64, size), rows: make([][]float32, K), tree: make([][]float32, 0, K)}
	for k := range sc.rows {
		sc.rows[k] = make([]float32, size)
	}
	return sc
}

// block computes elements [lo, hi) of parameter p into its outputs; for DWC it returns the number
// of fallback elements and the first one's flat index (-1 when none).
func (k *kernel) block(p *fusedParam, lo, hi int, sc *scratch) (fallbacks, first int) {
	first = -1
	if !p.gaussian {
		treeSum32(p.outMu[lo:hi], p.mu, k.w, lo, hi, sc)
		return
	}
	n := hi - lo
	outMu, outLv := p.outMu[lo:hi], p.outLv[lo:hi]
	switch k.rule {
	case AALV: // Ozer et al. (2022), Eq. 6.
		treeSum32(outMu, p.mu, k.w, lo, hi, sc)
		treeSum32(outLv, p.lv, k.w, lo, hi, sc)
	case EAA, GAA, WB: // Ozer et al. (2022), Eqs. 4-5; Jamoussi et al., Eq. 9.
		treeSum32(outMu, p.mu, k.w, lo, hi, sc)
		if k.bflp && k.rule != WB {
			k.bflpPartialSums(outLv, p.lv, lo, hi, sc)
			return
		}
		scale := 1.0
		if k.rule == WB { // log (sum w s)^2 = 2 log sum w exp(alpha/2)
			scale = 0.5
		}
		k.varianceSum(p.lv, k.c, scale, lo, hi, sc)
		for i := range outLv {
			outLv[i] = float32(sc.m[i] + math.Log(sc.s[i])/scale)
		}
	case LP: // Fischer et al. (2024), Eqs. 12-14.
		treeSum32(outMu, p.mu, k.w, lo, hi, sc)
		k.varianceSum(p.lv, k.w, 1, lo, hi, sc)
		g, d := sc.t[:n], sc.e[:n] // the float64 mean and the weighted squared deviations from it
		clear(g)
		for c, row := range p.mu {
			if wc := k.w[c]; wc != 0 {
				for i, v := range row[lo:hi] {
					g[i] += wc * float64(v)
				}
			}
		}
		clear(d)
		for c, row := range p.mu {
			if wc := k.w[c]; wc != 0 {
				for i, v := range row[lo:hi] {
					dv := float64(v) - g[i]
					d[i] += wc * dv * dv
				}
			}
		}
		for i := range outLv {
			outLv[i] = float32(logAddExp64(sc.m[i]+math.Log(sc.s[i]), math.Log(d[i])))
		}
	case Conflation, CF, RKLB: // Fischer et al. (2024), Eqs. 15-16; Ozer et al. (2022), Eq. 8; Jamoussi et al., Eq. 8.
		k.precisionSums(p, nil, lo, hi, sc)
		for i := range outLv {
			outMu[i] = float32(sc.t[i] / sc.s[i])
			outLv[i] = float32(sc.m[i] - math.Log(sc.s[i]))
		}
	case DWC: // Fischer et al. (2024), Eq. 17.
		prevLv, prevMu := p.prevLv[lo:hi], p.prevMu[lo:hi]
		k.precisionSums(p, prevLv, lo, hi, sc)
		km1 := float64(len(p.mu) - 1)
		for i := range outLv {
			m0, total, totalMu := sc.m[i], sc.s[i], sc.t[i]
			rPrev := km1 * fastmath.Exp(m0-float64(prevLv[i]))
			s := total - rPrev
			if s > DWCRelativeFloor*total {
				outMu[i] = float32((totalMu - rPrev*float64(prevMu[i])) / s)
				outLv[i] = float32(m0 - math.Log(s))
				continue
			}
			fallbacks++
			if first < 0 {
				first = lo + i
			}
			if k.policy == DWCUseConflation {
				outMu[i], outLv[i] = float32(totalMu/total), float32(m0-math.Log(total))
			} else { // DWCKeepPrevious; DWCFail reports the count as an error.
				outMu[i], outLv[i] = prevMu[i], prevLv[i]
			}
		}
	}
	return
}

// treeSum32 sets dst to sum_c coef_c x_c over elements [lo, hi), bit for bit as weightedSum builds
// it on a graph: terms x_c (coef 1) or float32(x_c * float32(coef_c)) (zero coefficients left out),
// added in float32 pairwise, level by level, an odd last term carried to the next level.
func treeSum32(dst []float32, xs [][]float32, coef []float64, lo, hi int, sc *scratch) {
	n := hi - lo
	rows := sc.tree[:0]
	for c, x := range xs {
		switch coef[c] {
		case 0:
		case 1:
			rows = append(rows, x[lo:hi])
		default:
			// Row r keeps its product in sc.rows[r]; a level writes pair (2q, 2q+1) into sc.rows[q],
			// which no row still to be read uses (a row r only ever uses sc.rows[r'] with r' >= r).
			buf, f := sc.rows[len(rows)][:n], float32(coef[c])
			for i, v := range x[lo:hi] {
				buf[i] = v * f
			}
			rows = append(rows, buf)
		}
	}
	for len(rows) > 1 {
		half := len(rows) / 2
		for q := range half {
			a, b, out := rows[2*q], rows[2*q+1], sc.rows[q][:n]
			b = b[:len(a)]
			for i := range a {
				out[i] = a[i] + b[i]
			}
			rows[q] = out
		}
		if len(rows)%2 == 1 {
			rows[half] = rows[len(rows)-1]
			rows = rows[:half+1]
		} else {
			rows = rows[:half]
		}
	}
	copy(dst, rows[0])
	sc.tree = rows[:0]
}

// varianceSum sets sc.m to the largest clamped log-variance a_c of each element over the clients
// with coef_c != 0, and sc.s to sum_c coef_c exp(scale (a_c - m)): the element's log-sum is
// scale m + log s.
func (k *kernel) varianceSum(lv [][]float32, coef []float64, scale float64, lo, hi int, sc *scratch) {
	n := hi - lo
	m, s, e := sc.m[:n], sc.s[:n], sc.e[:n]
	firstRow := true
	for c, row := range lv {
		if coef[c] == 0 {
			continue
		}
		if firstRow {
			for i, v := range row[lo:hi] {
				m[i] = float64(v)
			}
			firstRow = false
			continue
		}
		for i, v := range row[lo:hi] {
			m[i] = max(m[i], float64(v))
		}
	}
	for i := range m {
		m[i] = min(max(m[i], k.clampLo), k.clampHi) // the clamp is monotone: max of clamped = clamped max
	}
	clear(s)
	for c, row := range lv {
		cc := coef[c]
		if cc == 0 {
			continue
		}
		for i, v := range row[lo:hi] {
			e[i] = scale * (min(max(float64(v), k.clampLo), k.clampHi) - m[i])
		}
		fastmath.ExpTo(e, e)
		for i := range s {
			s[i] += cc * e[i]
		}
	}
}

// precisionSums sets, for each element, sc.m to m0, the smallest clamped log-variance a_c over the
// clients with k.c != 0 (and extra, the previous global's log-variance, unclamped, when not nil),
// sc.s to sum_c c_c r_c and sc.t to sum_c c_c r_c mu_c, with r_c = exp(m0 - a_c) the client's
// precision relative to 1/exp(m0).
func (k *kernel) precisionSums(p *fusedParam, extra []float32, lo, hi int, sc *scratch) {
	n := hi - lo
	m, s, t, e := sc.m[:n], sc.s[:n], sc.t[:n], sc.e[:n]
	firstRow := true
	for c, row := range p.lv {
		if k.c[c] == 0 {
			continue
		}
		if firstRow {
			for i, v := range row[lo:hi] {
				m[i] = float64(v)
			}
			firstRow = false
			continue
		}
		for i, v := range row[lo:hi] {
			m[i] = min(m[i], float64(v))
		}
	}
	for i := range m {
		m[i] = min(max(m[i], k.clampLo), k.clampHi)
	}
	for i, v := range extra {
		m[i] = min(m[i], float64(v))
	}
	clear(s)
	clear(t)
	for c, row := range p.lv {
		cc := k.c[c]
		if cc == 0 {
			continue
		}
		for i, v := range row[lo:hi] {
			e[i] = m[i] - min(max(float64(v), k.clampLo), k.clampHi)
		}
		fastmath.ExpTo(e, e)
		mu := p.mu[c][lo:hi]
		mu = mu[:len(e)]
		for i, r := range e {
			r *= cc
			s[i] += r
			t[i] += r * float64(mu[i])
		}
	}
}

// bflpPartialSums sets dst to BFL-P's log-variance of EAA and GAA (bflp.go): the clients' clamped
// variances accumulated in the given order as s_1 = c_1 v_1, s_k = clamp(s_{k-1}) + c_k v_k, with
// the clamp to [exp(BFLPLogVarMin), exp(BFLPLogVarMax)], and dst = log s_K. The clamped variances
// lie within that range, so no shift is needed.
func (k *kernel) bflpPartialSums(dst []float32, lv [][]float32, lo, hi int, sc *scratch) {
	n := hi - lo
	s, e := sc.s[:n], sc.e[:n]
	sLo, sHi := math.Exp(BFLPLogVarMin), math.Exp(BFLPLogVarMax)
	clear(s)
	for c, row := range lv {
		cc := k.c[c]
		if c > 0 {
			for i := range s {
				s[i] = min(max(s[i], sLo), sHi)
			}
		}
		if cc == 0 {
			continue
		}
		for i, v := range row[lo:hi] {
			e[i] = min(max(float64(v), BFLPLogVarMin), BFLPLogVarMax)
		}
		fastmath.ExpTo(e, e)
		for i := range s {
			s[i] += cc * e[i]
		}
	}
	for i := range dst {
		dst[i] = float32(math.Log(s[i]))
	}
}

// logAddExp64 is log(exp(a) + exp(b)) in float64 without overflow; b may be -Inf.
func logAddExp64(a, b float64) float64 {
	hi, lo := max(a, b), min(a, b)
	if math.IsInf(lo, -1) {
		return hi
	}
	return hi + math.Log1p(math.Exp(lo-hi))
}
