package reproduce

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/report"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/stats"
)

// equalVariances is the precondition of the comparisons whose rules differ only through how they
// weigh the clients' variances: not met when the clients' variances are near-equal in one of the sets
// (clientVariancesAlike on rows a and b, two averages of the same clients' variances).
func equalVariances(sets []runSet, a, b string) precondition {
	var differ []string
	for _, rs := range sets {
		alike, why := clientVariancesAlike(rs, a, b)
		if alike {
			return precondition{needs: varianceWeighting, why: why}
		}
		differ = append(differ, why)
	}
	return precondition{needs: varianceWeighting, met: true, why: strings.Join(differ, "; ")}
}

// variancesLearned is the precondition of the comparisons of variational nets with other nets: not
// met when posteriorsDidNotLearn says so for rows a and b in one of the sets.
func variancesLearned(sets []runSet, a, b string) precondition {
	for _, rs := range sets {
		if ok, why := posteriorsDidNotLearn(rs, a, b); ok {
			return precondition{needs: learnedVariances, why: why}
		}
	}
	return precondition{needs: learnedVariances, met: true, why: "the recorded posterior health shows the variances learned, or the rules end apart"}
}

// byPartition splits a run set by its partition label.
func byPartition(rs runSet) []runSet {
	var out []runSet
	for _, p := range rs.values("partition") {
		out = append(out, rs.where("partition", p))
	}
	return out
}

// sameRuns says whether two samples share their seeds and differ by at most tol in every one (two
// rules whose runs give one comparison), with the largest difference.
func sameRuns(a, b stats.Sample, tol float64) (bool, float64) {
	x, y, ok := stats.Pair(a, b)
	if !ok || len(x) == 0 {
		return false, 0
	}
	worst := 0.0
	for i := range x {
		worst = math.Max(worst, math.Abs(x[i]-y[i]))
	}
	return worst <= tol*(1+1e-9), worst
}

// runSpec is the part of a recorded spec the divergence and fallback figures read.
type runSpec struct {
	Dataset struct {
		Subsample      int     `json:"subsample"`
		ServerFraction float64 `json:"server_fraction"`
	} `json:"dataset"`
	Partition struct {
		Clients       int     `json:"clients"`
		Participation float64 `json:"participation"`
	} `json:"partition"`
	Model struct {
		InitLogVar *float64 `json:"init_logvar"`
	} `json:"model"`
	Training struct {
		LR                float64 `json:"lr"`
		VarianceOptimizer string  `json:"variance_optimizer"`
		VarianceLR        float64 `json:"variance_lr"`
	} `json:"training"`
}

// varianceOptimizerCaveat is the caveat of a finding that rests on NWA's deficit against the rules
// that divide the variance by K, where the runs of rs record a separate optimiser on the variances
// (training.variance_optimizer): the deficit grows with the shared variance that optimiser moves on
// every client alike, the paper trains with a variant of SGD, and the set-up ablation that would say
// whether the verdict holds under SGD has not run. "" when no run records one.
func varianceOptimizerCaveat(rs runSet) string {
	opt, ok := varianceOptimizer(rs)
	if !ok {
		return ""
	}
	return fmt.Sprintf("set-up dependent, ablation pending: NWA's deficit grows with the variance that the presets' %s moves alike on "+
		"every client, where the paper trains with a variant of SGD (the set-up ablation, costed and not run: docs/reproduction/budgets.md)", opt)
}

// varianceOptimizer names the separate optimiser the runs of rs record on the variances
// (training.variance_optimizer, with its learning rate: "adam at lr 0.001"); ok is false when no run
// records one.
func varianceOptimizer(rs runSet) (string, bool) {
	for _, r := range rs {
		s, err := specOf(r)
		if err != nil || s.Training.VarianceOptimizer == "" {
			continue
		}
		lr := ""
		if s.Training.VarianceLR > 0 {
			lr = fmt.Sprintf(" at lr %g", s.Training.VarianceLR)
		}
		return s.Training.VarianceOptimizer + lr, true
	}
	return "", false
}

// specOf reads a run's recorded spec.
func specOf(r results.Run) (runSpec, error) {
	var s runSpec
	if err := json.Unmarshal(r.Meta.Spec, &s); err != nil {
		return s, fmt.Errorf("run %s: spec: %w", r.Meta.Setting, err)
	}
	return s, nil
}

// stabilityBound is where plain SGD on the means stops being stable against a prior that narrows
// K-fold a round: the KL term of the per-example ELBO, KL / |D_k|, has curvature 1 / (|D_k| σ²) in a
// mean whose prior variance is σ², and gradient descent at step lr on a quadratic of curvature c is
// stable only while lr c < 2. With the previous global model as the prior, a rule that divides the
// clients' shared variance by K (WS, WC and Conflation on equal client variances) gives round t the
// prior variance σ₀² / K^(t-1) (σ₀² from the spec's init_logvar; local training moves it little), so
// the bound is crossed in the first round t with lr K^(t-1) / (|D_k| σ₀²) >= 2.
type stabilityBound struct {
	LR, Var0  float64
	Examples  int // |D_k|: the spec's examples (less the server's share) over its clients
	K         int // active clients a round
	Round     int // the first round past the bound
	At, Prior float64
}

// boundOf computes the stability bound from a recorded spec; ok is false when the spec lacks a
// figure it needs (a full dataset, whose size the spec does not record, or no init_logvar).
func boundOf(s runSpec) (stabilityBound, bool) {
	if s.Model.InitLogVar == nil || s.Dataset.Subsample <= 0 || s.Partition.Clients <= 0 || !(s.Training.LR > 0) {
		return stabilityBound{}, false
	}
	b := stabilityBound{LR: s.Training.LR, Var0: math.Exp(*s.Model.InitLogVar)}
	b.Examples = int(float64(s.Dataset.Subsample)*(1-s.Dataset.ServerFraction)) / s.Partition.Clients
	b.K = int(math.Round(s.Partition.Participation * float64(s.Partition.Clients)))
	if b.K < 2 || b.Examples < 1 {
		return stabilityBound{}, false
	}
	return b.cross()
}

// cross finds the first round past the bound for b's LR, Var0, Examples and K (within 100 rounds),
// and the bound's value there and the round before.
func (b stabilityBound) cross() (stabilityBound, bool) {
	for t := 1; t <= 100; t++ {
		v := b.Var0 / math.Pow(float64(b.K), float64(t-1))
		if at := b.LR / (float64(b.Examples) * v); at >= 2 {
			b.Round, b.At, b.Prior = t, at, b.LR/(float64(b.Examples)*v*float64(b.K))
			return b, true
		}
	}
	return stabilityBound{}, false
}

// fischerPaperExamples is |D_k| in Fischer et al.'s set-up: CIFAR-10's 50,000 training images over
// their 10 clients (Sec. 3.3).
const fischerPaperExamples = 50000 / 10

// divergenceText says which rows of the updated-prior runs diverged, in which rounds, of how many
// seeds run (the diverged runs and the completed ones in prior), and where plain SGD's stability
// bound is crossed, here and on the paper's set-up (fischerPaperExamples a client, the same σ₀², lr
// and K), where the paper's runs did not diverge.
func divergenceText(diverged, prior runSet, rows []string) string {
	var parts, kept []string
	paperLo, paperHi := math.Inf(1), math.Inf(-1)
	var bound stabilityBound
	have := false
	for _, r := range rows {
		rs := diverged.where("variant", r)
		if len(rs) == 0 {
			if len(prior.where("variant", r)) > 0 {
				kept = append(kept, r)
			}
			continue
		}
		var rounds []int
		for _, run := range rs {
			rounds = append(rounds, run.Status.Round)
			if s, err := specOf(run); err == nil && !have {
				bound, have = boundOf(s)
			}
		}
		slices.Sort(rounds)
		if ref, ok := fischerPriorRef["iid"][r][results.Accuracy]; ok {
			paperLo, paperHi = math.Min(paperLo, ref.mean), math.Max(paperHi, ref.mean)
		}
		parts = append(parts, fmt.Sprintf("%s in round %s (%d of %d seeds)", r, intRange(rounds), len(rs), len(rs)+len(prior.where("variant", r))))
	}
	if len(parts) == 0 {
		return ""
	}
	out := "Diverged (each such row scored as below its fixed prior, above): " + strings.Join(parts, ", ") + "."
	if !have {
		return out
	}
	out += fmt.Sprintf(" These rules divide the clients' shared variance by K = %d a round, so with the previous global model as the prior "+
		"round t's prior variance is σ₀²/K^(t−1) (σ₀² = %.3g from the spec's init_logvar), and the KL term's curvature 1/(|D_k| σ²) against "+
		"SGD's step lr = %g (|D_k| = %d examples a client) passes the stability bound lr/(|D_k| σ²) < 2 in round %d (%.2f there, %.2f the "+
		"round before): the divergence is consistent with the narrowing prior, the mechanism the paper names for the harm, taking plain SGD on the "+
		"means past that bound",
		bound.K, bound.Var0, bound.LR, bound.Examples, bound.Round, bound.At, bound.Prior)
	if len(kept) > 0 {
		out += fmt.Sprintf(" (%s, which %s σ², %s not)", strings.Join(kept, " and "), map[bool]string{true: "keeps", false: "keep"}[len(kept) == 1],
			map[bool]string{true: "does", false: "do"}[len(kept) == 1])
	}
	paper := bound
	paper.Examples = fischerPaperExamples
	if p, ok := paper.cross(); ok && paperLo <= paperHi {
		out += fmt.Sprintf(". The same bound on the paper's set-up (|D_k| = %d CIFAR-10 images a client, the same σ₀², lr and K) is crossed in "+
			"round %d (%.2f there, %.2f the round before), yet Table 5 shows these rules at %.1f-%.1f %% after 400 rounds, not diverged: "+
			"fedbayes's updated prior differs from the paper's in a way the records do not show", p.Examples, p.Round, p.At, p.Prior, paperLo, paperHi)
	}
	return out
}

// intRange prints sorted rounds as "6" or "5-6".
func intRange(v []int) string {
	if len(v) == 0 {
		return ""
	}
	if v[0] == v[len(v)-1] {
		return fmt.Sprint(v[0])
	}
	return fmt.Sprintf("%d–%d", v[0], v[len(v)-1])
}

// dwcShare is the share of the parameters a DWC run fell back to the previous global model in: its
// last recorded dwc_fallbacks over its Gaussian weights, counted as spread_start² / e^init_logvar
// (every weight starts at the spec's variance); ok is false when the run records neither.
func dwcShare(r results.Run) (float64, bool) {
	s, err := specOf(r)
	if err != nil || s.Model.InitLogVar == nil {
		return 0, false
	}
	fall, ok := final(r, engine.MetricDWCFallbacks)
	start, ok2 := final(r, results.SpreadStart)
	if !ok || !ok2 || !(start > 0) {
		return 0, false
	}
	n := math.Round(start * start / math.Exp(*s.Model.InitLogVar))
	if !(n > 0) {
		return 0, false
	}
	return fall / n, true
}

// dwcShares is the least and largest fallback share over a row's runs; n counts the runs that record it.
func dwcShares(rs runSet) (lo, hi float64, n int) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, r := range rs {
		if v, ok := dwcShare(r); ok {
			lo, hi, n = math.Min(lo, v), math.Max(hi, v), n+1
		}
	}
	return lo, hi, n
}

// dwcFallbackText says, for each DWC row of a run set, the share of the parameters it fell back in:
// "DWC 99.99-100.00 % (3 runs)".
func dwcFallbackText(rs runSet, rows []string) string {
	var parts []string
	for _, row := range rows {
		if lo, hi, n := dwcShares(rs.where("variant", row)); n > 0 {
			parts = append(parts, fmt.Sprintf("%s %.2f–%.2f %% (%d runs)", row, 100*lo, 100*hi, n))
		}
	}
	return strings.Join(parts, ", ")
}

// dwcActing is the precondition of the checks that read DWC's rows in one setting: not met when some
// DWC row fell back to the previous global model in more than half of the parameters in one of its
// runs, or, where it did not, when no client variance moved (dwcVariancesUnmoved), since Eq. 17
// then combines no learned precisions.
func dwcActing(rs runSet, rows []string) precondition {
	text := dwcFallbackText(rs, rows)
	for _, row := range rows {
		if _, hi, n := dwcShares(rs.where("variant", row)); n > 0 && hi > 0.5 {
			return precondition{needs: dwcActs, why: "DWC fell back to the previous global model (its combined precision was not above " +
				fmt.Sprintf("%g", aggregate.DWCRelativeFloor) + " of the clients' summed precision) in more than half of the parameters: " + text +
				" (`dwc_fallbacks` in the records over the Gaussian weights), so in most parameters its rows keep the previous global model, not DWC's combination"}
		}
	}
	if why, unmoved := dwcVariancesUnmoved(rs, rows); unmoved {
		return precondition{needs: dwcActs, why: why}
	}
	if text == "" {
		return precondition{needs: dwcActs, met: true, why: "no DWC run records its fallbacks"}
	}
	return precondition{needs: dwcActs, met: true, why: "DWC fell back in at most half of the parameters (" + text + ") and the clients' variances moved"}
}

// dwcVariancesUnmoved says whether no client variance moved in the DWC rows' runs: every run with
// recorded posterior health has its variances unmoved (report.RunHealth: frozen or clamped, read from
// the rows' var_local_moved, var_moved and var_local_shift; the criterion docs/statistics.md gives
// for findings resting on the variances). Then every client's precision is the global model's, so
// Eq. 17's precision ratios are all about 1 and DWC reduces to μ₀ + Σ_k(μ_k − μ₀) with σ² about the
// global model's: the sum of the clients' updates, not a consolidation of learned posteriors. why
// gives the figures; false when some run's variances moved or no run records its health.
func dwcVariancesUnmoved(rs runSet, rows []string) (string, bool) {
	u, ok := dwcUnmovedOf(rs, rows)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("no client variance moved: in all %d runs of %s with recorded posterior health, local training moved %s of "+
		"the clients' log σ² by more than %g in a round (`var_local_moved`), %.2g on average (`var_local_shift`), and the global spread "+
		"ended at %.4f–%.4f times its start; so every client's precision is the global model's, Eq. 17's precision ratios are all about 1, "+
		"and DWC reduces to μ₀ + Σ_k(μ_k − μ₀) with σ² about the global model's: the sum of the clients' updates, not a consolidation of "+
		"learned posteriors (docs/statistics.md: variances unmoved, not testable here)",
		u.n, strings.Join(rows, " and "), report.AtMost(u.moved), report.HealthThreshold, u.shift, u.lo, u.hi), true
}

// unmoved is what dwcUnmovedOf reads off the runs whose variances did not move: their number, the
// largest var_local_moved and var_local_shift, and the least and largest ratio of the final spread to
// the initial one.
type unmoved struct {
	n            int
	moved, shift float64
	lo, hi       float64
}

// dwcUnmovedOf reads the posterior health (report.RunHealth) of the runs of rows in rs: ok when every
// run that records it has its variances unmoved (frozen or clamped) and at least one records it.
func dwcUnmovedOf(rs runSet, rows []string) (unmoved, bool) {
	u := unmoved{lo: math.Inf(1), hi: math.Inf(-1)}
	for _, row := range rows {
		for _, r := range rs.where("variant", row) {
			h := report.RunHealth(r)
			if h.State == report.HealthUnmeasured || h.State == report.HealthNotVariational {
				continue
			}
			if !h.Frozen() {
				return unmoved{}, false
			}
			u.n++
			u.moved, u.shift = math.Max(u.moved, h.LocalMovedMax), math.Max(u.shift, h.LocalShiftMax)
			u.lo, u.hi = math.Min(u.lo, h.SpreadEnd/h.SpreadStart), math.Max(u.hi, h.SpreadEnd/h.SpreadStart)
		}
	}
	return u, u.n > 0
}

// weightingExceptions lists, for the client-weighting finding, the weightings whose mean accuracy
// lies more than dwcMargin (5 points, the report's "about as good") from the same rule's train-size
// weighting in a setting and partition, worst first: the exceptions a verdict label alone would hide.
func weightingExceptions(sets map[string]runSet, weights []string) string {
	type gap struct {
		text string
		d    float64
	}
	var gaps []gap
	for _, name := range slices.Sorted(maps.Keys(sets)) {
		for _, part := range sets[name].values("partition") {
			rs := sets[name].where("partition", part)
			for _, r := range []string{"NWA", "WS", "LP", "WC"} {
				ref := accOf(rs, r+"-"+weights[0])
				for _, w := range weights[1:] {
					st := accOf(rs, r+"-"+w)
					if !ref.ok() || !st.ok() || math.Abs(st.Mean-ref.Mean) <= dwcMargin {
						continue
					}
					gaps = append(gaps, gap{fmt.Sprintf("%s-%s %+.1f points against %s-%s (%s, %s)", r, w, 100*(st.Mean-ref.Mean), r, weights[0], name, part), st.Mean - ref.Mean})
				}
			}
		}
	}
	if len(gaps) == 0 {
		return ""
	}
	slices.SortStableFunc(gaps, func(a, b gap) int { return cmpFloat(math.Abs(b.d), math.Abs(a.d)) })
	var parts []string
	for _, g := range gaps {
		parts = append(parts, g.text)
	}
	return fmt.Sprintf("except: %s (weightings more than %.0f points from train size, by their means)", strings.Join(parts, "; "), 100*dwcMargin)
}
