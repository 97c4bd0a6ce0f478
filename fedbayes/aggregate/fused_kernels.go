package aggregate

import (
	"math"
	"slices"

	"fedbayes.dev/fedbayes/internal/fastmath"
)

// The fused kernels compute one block [lo, hi) of one parameter. Formulas are those of graph.go
// (and docs/aggregation.md), with these numerics:
//   - the weighted means of EAA, GAA, AALV, WB, LP, FedAvg and of every deterministic parameter, and
//     AALV's log-variance, are the graph's float32 balanced tree of float32 products, bit for bit
//     (treeSum32);
//   - everything else is computed per element in float64 from the float32 inputs and rounded once
//     at the end: each exponential of a log-variance (fastmath.ExpCore, relative error below 1e-11)
//     is taken once per client and element and reused by every step of the rule; sums are shifted
//     by the first client's log-variance, and where an exponent leaves ±fastmath.ExpSafe the block
//     is computed again with sums of variances shifted by the largest log-variance of the element,
//     sums of precisions by the smallest, so that no exponential overflows;
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
	ref              int // the client with the largest weight (the first of them)
	// Client lists for kernel.unread: w = 0, c = 0, the mean rows the Gaussian form does not read,
	// and every client.
	zeroW, zeroC, zeroMu, all []int
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
	muCoef := w // the coefficients of the mean rows in the Gaussian form
	if slices.Contains([]Rule{Conflation, CF, RKLB, DWC}, rule) {
		muCoef = k.c
	}
	for i := range w {
		if w[i] > w[k.ref] {
			k.ref = i
		}
		if w[i] == 0 {
			k.zeroW = append(k.zeroW, i)
		}
		if k.c[i] == 0 {
			k.zeroC = append(k.zeroC, i)
		}
		if muCoef[i] == 0 {
			k.zeroMu = append(k.zeroMu, i)
		}
		k.all = append(k.all, i)
	}
	return k
}

// scratch is one goroutine's working memory for blocks of up to size elements.
type scratch struct {
	m, s, t, e, q []float64 // shift, sums, exponentials, LP's second moments
	rows          [][]float32
	tree          [][]float32
	terms         []term
}

func newScratch(K, size int) *scratch {
	sc := &scratch{m: make([]float64, size), s: make([]float64, size), t: make([]float64, size),
		e: make([]float64, size), q: make([]float64, size),
		rows: make([][]float32, K), tree: make([][]float32, 0, K), terms: make([]term, 0, K)}
	for k := range sc.rows {
		sc.rows[k] = make([]float32, size)
	}
	return sc
}

// block computes elements [lo, hi) of parameter p into its outputs. It returns ok = false if an
// input of the block (any client's mean or log-variance, zero weights included) is not finite. For
// DWC it returns the number of fallback elements and the first one's flat index (-1 when none).
//
// Inputs are checked without a pass of their own where the rule reads them: a NaN or Inf in a row
// that a weighted sum reads makes that sum non-finite (IEEE arithmetic: x*c, Inf+x, Inf-Inf, NaN),
// and in a log-variance row that an exponential sum reads, it puts the exponent outside
// ±fastmath.ExpSafe. When either shows, the whole block is checked; when an exponent was outside,
// it is computed again with the exact shift. Rows no sum reads (zero weights, FedAvg's
// log-variances, log-variances clamped under BFL-P) are checked first (kernel.unread).
func (k *kernel) block(p *fusedParam, lo, hi int, sc *scratch) (fallbacks, first int, ok bool) {
	unreadMu, unreadLv := k.unread(p)
	if !allFiniteRows(p.mu, unreadMu, lo, hi) || !allFiniteRows(p.lv, unreadLv, lo, hi) {
		return 0, -1, false
	}
	fallbacks, first, outside, suspect := k.compute(p, lo, hi, sc, false)
	if outside > 0 || suspect {
		if !allFiniteRows(p.mu, k.all, lo, hi) || !allFiniteRows(p.lv, k.all, lo, hi) {
			return 0, -1, false
		}
		if outside > 0 {
			fallbacks, first, _, _ = k.compute(p, lo, hi, sc, true)
		}
		// Otherwise the inputs are finite and a sum overflowed float32: the global is not finite,
		// which the caller reports.
	}
	return fallbacks, first, true
}

// unread returns the clients whose mean and log-variance rows of parameter p the rule's sums do not
// read, or read only clamped: block checks them on their own.
func (k *kernel) unread(p *fusedParam) (mu, lv []int) {
	if !p.gaussian {
		return k.zeroW, k.all // deterministic parameters have no log-variance rows
	}
	switch {
	case k.rule == AALV:
		return k.zeroW, k.zeroW
	case k.bflp:
		return k.zeroMu, k.all
	}
	return k.zeroMu, k.zeroC
}

// compute is block's arithmetic, with shifts by the first client (exact: by the largest or smallest
// log-variance). outside counts the exponents outside ±fastmath.ExpSafe; suspect reports a weighted
// sum that is not finite.
func (k *kernel) compute(p *fusedParam, lo, hi int, sc *scratch, exact bool) (fallbacks, first, outside int, suspect bool) {
	first = -1
	if !p.gaussian {
		suspect = !treeSum32(p.outMu[lo:hi], p.mu, k.w, lo, hi, sc)
		return
	}
	outMu, outLv := p.outMu[lo:hi], p.outLv[lo:hi]
	switch k.rule {
	case AALV: // Ozer et al. (2022), Eq. 6.
		suspect = !treeSum32(outMu, p.mu, k.w, lo, hi, sc)
		suspect = !treeSum32(outLv, p.lv, k.w, lo, hi, sc) || suspect
	case EAA, GAA, WB: // Ozer et al. (2022), Eqs. 4-5; Jamoussi et al., Eq. 9.
		suspect = !treeSum32(outMu, p.mu, k.w, lo, hi, sc)
		if k.bflp && k.rule != WB {
			k.bflpPartialSums(outLv, p.lv, lo, hi, sc)
			break
		}
		scale := 1.0
		if k.rule == WB { // log (sum w s)^2 = 2 log sum w exp(alpha/2)
			scale = 0.5
		}
		outside = k.varianceSum(p.lv, k.c, scale, lo, hi, sc, exact)
		for i := range outLv {
			outLv[i] = float32(sc.m[i] + math.Log(sc.s[i])/scale)
		}
	case LP: // Fischer et al. (2024), Eqs. 12-14.
		suspect = !treeSum32(outMu, p.mu, k.w, lo, hi, sc)
		outside = k.lpSums(p, lo, hi, sc, exact)
		for i := range outLv {
			d := max(sc.q[i]-sc.t[i]*sc.t[i], 0) // sum_c w_c (mu_c - mean)^2
			outLv[i] = float32(logAddExp64(sc.m[i]+math.Log(sc.s[i]), math.Log(d)))
		}
	case Conflation, CF, RKLB: // Fischer et al. (2024), Eqs. 15-16; Ozer et al. (2022), Eq. 8; Jamoussi et al., Eq. 8.
		outside, suspect = k.precisionSums(p, nil, lo, hi, sc, exact)
		for i := range outLv {
			outMu[i] = float32(sc.t[i] / sc.s[i])
			outLv[i] = float32(sc.m[i] - math.Log(sc.s[i]))
		}
	case DWC: // Fischer et al. (2024), Eq. 17.
		prevLv, prevMu := p.prevLv[lo:hi], p.prevMu[lo:hi]
		outside, suspect = k.precisionSums(p, prevLv, lo, hi, sc, exact)
		km1 := float64(len(p.mu) - 1)
		for i := range outLv {
			m0, total, totalMu := sc.m[i], sc.s[i], sc.t[i]
			rPrev := km1 * sc.e[i]
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

// allFiniteRows reports whether rows[c][lo:hi] holds only finite values for every c in which (rows
// may be nil: no log-variances). It tests the float32 exponent bits (all ones for NaN and Inf) without
// branches inside a row, as firstNonFinite.
func allFiniteRows(rows [][]float32, which []int, lo, hi int) bool {
	acc := uint32(0)
	for _, c := range which {
		if c < len(rows) {
			acc |= nonFiniteBits(rows[c][lo:hi])
		}
	}
	return acc == 0
}

// nonFiniteBits returns 0 when every value of x is finite, else a non-zero value: per value, the
// carry of exponent+1 reaches bit 31 only when all exponent bits are set (NaN, ±Inf). Two
// accumulators, kept in registers, halve the dependency chain.
func nonFiniteBits(x []float32) uint32 {
	const exp = 0x7f800000
	var a, b uint32
	i := 0
	for ; i+2 <= len(x); i += 2 {
		a |= (math.Float32bits(x[i])&exp + 0x00800000) & 0x80000000
		b |= (math.Float32bits(x[i+1])&exp + 0x00800000) & 0x80000000
	}
	for ; i < len(x); i++ {
		a |= (math.Float32bits(x[i])&exp + 0x00800000) & 0x80000000
	}
	return a | b
}

// allFinite reports whether x holds only finite values.
func allFinite(x []float64) bool {
	acc := 0.0
	for _, v := range x {
		acc += v * 0 // 0 for finite v, NaN for NaN and ±Inf
	}
	return acc == 0
}

// treeSum32 sets dst to sum_c coef_c x_c over elements [lo, hi), bit for bit as weightedSum builds
// it on a graph: terms x_c (coef 1) or float32(x_c * float32(coef_c)) (zero coefficients left out;
// x_c * 1 is x_c exactly, so every term is a product here), added in float32 pairwise, level by
// level, an odd last term carried to the next level. The first level is computed with the products,
// in one pass over the client rows. It reports whether dst is all finite.
func treeSum32(dst []float32, xs [][]float32, coef []float64, lo, hi int, sc *scratch) (finite bool) {
	n := hi - lo
	terms := sc.terms[:0]
	for c, x := range xs {
		if coef[c] != 0 {
			terms = append(terms, term{x[lo:hi], float32(coef[c])})
		}
	}
	sc.terms = terms[:0]
	if len(terms) == 1 {
		scaleRow(dst, terms[0].x, terms[0].f)
		return allFinite32(dst)
	}
	// Row r of a level keeps its values in sc.rows[r'] with r' >= r; a level writes pair (2q, 2q+1)
	// into sc.rows[q], which no row still to be read uses.
	rows := sc.tree[:0]
	for q := 0; q+1 < len(terms); q += 2 {
		out := sc.rows[q/2][:n]
		addScaledRows(out, terms[q].x, terms[q+1].x, terms[q].f, terms[q+1].f)
		rows = append(rows, out)
	}
	if last := terms[len(terms)-1]; len(terms)%2 == 1 {
		out := sc.rows[len(rows)][:n]
		scaleRow(out, last.x, last.f)
		rows = append(rows, out)
	}
	for len(rows) > 1 {
		half := len(rows) / 2
		for q := range half {
			a, b, out := rows[2*q], rows[2*q+1], sc.rows[q][:n]
			b, out = b[:len(a)], out[:len(a)]
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
	return allFinite32(dst)
}

// term is one client row of a weighted sum and its float32 coefficient.
type term struct {
	x []float32
	f float32
}

// scaleRow sets dst[i] = x[i] * f (x itself when f is 1: the product is exact).
func scaleRow(dst, x []float32, f float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = v * f
	}
}

// addScaledRows sets out[i] = float32(a[i] fa) + float32(b[i] fb), each product rounded to float32
// before the sum (the conversions forbid a fused multiply-add).
func addScaledRows(out, a, b []float32, fa, fb float32) {
	out, b = out[:len(a)], b[:len(a)]
	for i, v := range a {
		out[i] = float32(v*fa) + float32(b[i]*fb)
	}
}

// allFinite32 reports whether x holds only finite values.
func allFinite32(x []float32) bool {
	acc := float32(0)
	for _, v := range x {
		acc += v * 0 // 0 for finite v, NaN for NaN and ±Inf
	}
	return acc == 0
}

// varianceSum sets sc.m to a shift m of each element and sc.s to sum_c coef_c exp(scale (a_c - m))
// over the clients with coef_c != 0, a_c the clamped log-variances: the element's log-sum is
// scale m + log s. The shift is the first such client's a_c, or with exact the largest a_c of the
// element. It returns how many exponents lay outside ±fastmath.ExpSafe: when not 0, s may have
// overflowed or lost terms, and the caller computes again with exact, whose exponents are all <= 0.
func (k *kernel) varianceSum(lv [][]float32, coef []float64, scale float64, lo, hi int, sc *scratch, exact bool) (outside int) {
	n := hi - lo
	m, s, e := sc.m[:n], sc.s[:n], sc.e[:n]
	k.shift(m, lv, coef, lo, hi, exact, false)
	clear(s)
	for c, row := range lv {
		cc := coef[c]
		if cc == 0 {
			continue
		}
		row = row[lo:hi]
		switch {
		case exact || k.bflp:
			for i, v := range row {
				e[i] = scale * (min(max(float64(v), k.clampLo), k.clampHi) - m[i])
			}
			outside += fastmath.ExpTo(e, e)
			for i, v := range e {
				s[i] += cc * v
			}
		case scale == 1:
			outside += addExpRow(s, m, row, cc)
		default:
			outside += addExpRowScaled(s, m, row, cc, scale)
		}
	}
	return outside
}

// lpSums is varianceSum for LP (coefficients w, scale 1) that also sets sc.t to
// sum_c w_c (mu_c - ref) and sc.q to sum_c w_c (mu_c - ref)^2, ref the mean of the client with the
// largest weight, in the same loop over the clients. The weighted squared deviation from the mean is
// q - t^2, computed in float64 from float32 inputs: since it is at least w_ref t^2, the cancellation
// costs at most a factor 1 + 1/w_ref <= 1 + K of float64 precision.
func (k *kernel) lpSums(p *fusedParam, lo, hi int, sc *scratch, exact bool) (outside int) {
	n := hi - lo
	ref, t, q := p.mu[k.ref][lo:hi], sc.t[:n], sc.q[:n]
	clear(t)
	clear(q)
	if exact || k.bflp {
		outside = k.varianceSum(p.lv, k.w, 1, lo, hi, sc, exact)
		for c, row := range p.mu {
			if wc := k.w[c]; wc != 0 {
				for i, v := range row[lo:hi] {
					d := float64(v) - float64(ref[i])
					t[i] += wc * d
					q[i] += wc * d * d
				}
			}
		}
		return outside
	}
	m, s := sc.m[:n], sc.s[:n]
	k.shift(m, p.lv, k.w, lo, hi, false, false)
	clear(s)
	for c, row := range p.lv {
		wc := k.w[c]
		if wc == 0 {
			continue
		}
		outside += addLPRow(s, t, q, m, row[lo:hi], p.mu[c][lo:hi], ref, wc)
	}
	return outside
}

// The row kernels below are the inner loops of the fast path: one client row of a block, the
// exponential inlined. Each is a function of its own so that the compiler keeps its few variables
// in registers. They return 1 if some exponent lay outside ±fastmath.ExpSafe (or was NaN), else 0:
// the largest |x| is tracked by its bits, which order non-negative floats as their values do, with
// +Inf and NaN above every finite value.

// expSafeBits holds the bits of fastmath.ExpSafe.
var expSafeBits = math.Float64bits(fastmath.ExpSafe)

// outsideSafe returns 1 if the bits of the largest |x| exceed expSafeBits, else 0.
func outsideSafe(absMax uint64) int {
	if absMax > expSafeBits {
		return 1
	}
	return 0
}

// addExpRow adds c exp(row[i] - m[i]) to s[i].
func addExpRow(s, m []float64, row []float32, c float64) int {
	var absMax uint64
	s, m = s[:len(row)], m[:len(row)]
	for i, v := range row {
		x := float64(v) - m[i]
		absMax = max(absMax, math.Float64bits(x)&^(1<<63))
		s[i] += c * fastmath.ExpCore(x)
	}
	return outsideSafe(absMax)
}

// addExpRowScaled adds c exp(scale (row[i] - m[i])) to s[i].
func addExpRowScaled(s, m []float64, row []float32, c, scale float64) int {
	var absMax uint64
	s, m = s[:len(row)], m[:len(row)]
	for i, v := range row {
		x := scale * (float64(v) - m[i])
		absMax = max(absMax, math.Float64bits(x)&^(1<<63))
		s[i] += c * fastmath.ExpCore(x)
	}
	return outsideSafe(absMax)
}

// addPrecisionRow adds r = c exp(m[i] - row[i]) to s[i] and r mu[i] to t[i].
func addPrecisionRow(s, t, m []float64, row, mu []float32, c float64) int {
	var absMax uint64
	s, t, m, mu = s[:len(row)], t[:len(row)], m[:len(row)], mu[:len(row)]
	for i, v := range row {
		x := m[i] - float64(v)
		absMax = max(absMax, math.Float64bits(x)&^(1<<63))
		r := c * fastmath.ExpCore(x)
		s[i] += r
		t[i] += r * float64(mu[i])
	}
	return outsideSafe(absMax)
}

// addLPRow adds w exp(row[i] - m[i]) to s[i], w d to t[i] and w d^2 to q[i], d = mu[i] - ref[i].
func addLPRow(s, t, q, m []float64, row, mu, ref []float32, w float64) int {
	var absMax uint64
	s, t, q, m, ref, mu = s[:len(row)], t[:len(row)], q[:len(row)], m[:len(row)], ref[:len(row)], mu[:len(row)]
	for i, v := range row {
		x := float64(v) - m[i]
		absMax = max(absMax, math.Float64bits(x)&^(1<<63))
		s[i] += w * fastmath.ExpCore(x)
		d := float64(mu[i]) - float64(ref[i])
		wd := w * d
		t[i] += wd
		q[i] += wd * d
	}
	return outsideSafe(absMax)
}

// shift sets m to each element's shift over the rows with coef != 0, clamped to
// [k.clampLo, k.clampHi]: the first such row's value, or with exact the largest (smallest with
// smallest) of them.
func (k *kernel) shift(m []float64, rows [][]float32, coef []float64, lo, hi int, exact, smallest bool) {
	firstRow := true
	for c, row := range rows {
		if coef[c] == 0 {
			continue
		}
		row = row[lo:hi]
		switch {
		case firstRow:
			for i, v := range row {
				m[i] = float64(v)
			}
			firstRow = false
		case smallest:
			for i, v := range row {
				m[i] = min(m[i], float64(v))
			}
		default:
			for i, v := range row {
				m[i] = max(m[i], float64(v))
			}
		}
		if !exact {
			break
		}
	}
	if k.bflp {
		for i := range m {
			m[i] = min(max(m[i], k.clampLo), k.clampHi) // monotone: the max of clamped values is the clamped max
		}
	}
}

// precisionSums sets, for each element, sc.m to a shift m0, sc.s to sum_c c_c r_c and sc.t to
// sum_c c_c r_c mu_c over the clients with k.c != 0, with r_c = exp(m0 - a_c) the client's precision
// times exp(m0) (a_c the clamped log-variance), and, when extra (the previous global's log-variance,
// unclamped) is not nil, sc.e to exp(m0 - extra). The shift is the first such client's a_c, or with
// exact the smallest a_c and extra of the element. It returns how many exponents lay outside
// ±fastmath.ExpSafe (see varianceSum) and whether some sum is not finite.
func (k *kernel) precisionSums(p *fusedParam, extra []float32, lo, hi int, sc *scratch, exact bool) (outside int, suspect bool) {
	n := hi - lo
	m, s, t, e := sc.m[:n], sc.s[:n], sc.t[:n], sc.e[:n]
	k.shift(m, p.lv, k.c, lo, hi, exact, true)
	if exact {
		for i, v := range extra {
			m[i] = min(m[i], float64(v))
		}
	}
	clear(s)
	clear(t)
	for c, row := range p.lv {
		cc := k.c[c]
		if cc == 0 {
			continue
		}
		row, mu := row[lo:hi], p.mu[c][lo:hi]
		switch {
		case exact || k.bflp:
			for i, v := range row {
				e[i] = m[i] - min(max(float64(v), k.clampLo), k.clampHi)
			}
			outside += fastmath.ExpTo(e, e)
			mu = mu[:len(e)]
			for i, r := range e {
				r *= cc
				s[i] += r
				t[i] += r * float64(mu[i])
			}
		default:
			outside += addPrecisionRow(s, t, m, row, mu, cc)
		}
	}
	if extra != nil {
		for i, v := range extra {
			e[i] = m[i] - float64(v)
		}
		outside += fastmath.ExpTo(e, e)
	}
	return outside, !allFinite(s) || !allFinite(t)
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
