package reproduce

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"fedbayes.dev/fedbayes/report"
	"fedbayes.dev/fedbayes/results"
)

// variancePeak is one variant's course over its runs' evaluated rounds, averaged over its seeds:
// the accuracy at the round where the mean accuracy peaked and at the last round, and the spread
// ‖σ‖₂ at the first and the last evaluated round.
type variancePeak struct {
	variant                 string
	peakRound, lastRound    int
	peakAcc, lastAcc        float64
	firstSpread, lastSpread float64
	firstRound              int
	seeds                   int
	// disagreement is the largest VarDisagreement any run recorded (NaN when none did).
	disagreement float64
}

// peakOf averages the variant's runs round by round (the rounds every run evaluated) and returns its
// peak and last accuracy and its first and last spread; ok is false without such rounds or spreads.
func peakOf(rs runSet, variant string) (variancePeak, bool) {
	runs := rs.where("variant", variant)
	p := variancePeak{variant: variant, seeds: len(runs), peakAcc: math.Inf(-1), disagreement: math.NaN()}
	if len(runs) == 0 {
		return p, false
	}
	acc, spread, count := map[int]float64{}, map[int]float64{}, map[int]int{}
	for _, r := range runs {
		for _, row := range r.Rows {
			if d, ok := row.Metrics[results.VarDisagreement]; ok && !(d <= p.disagreement) {
				p.disagreement = d
			}
			a, okA := row.Metrics[results.Accuracy]
			s, okS := row.Metrics[results.Spread]
			if okA && okS {
				acc[row.Round] += a
				spread[row.Round] += s
				count[row.Round]++
			}
		}
	}
	first := true
	for _, round := range slices.Sorted(maps.Keys(count)) {
		if count[round] != len(runs) {
			continue
		}
		a, s := acc[round]/float64(len(runs)), spread[round]/float64(len(runs))
		if first {
			p.firstRound, p.firstSpread, first = round, s, false
		}
		if a > p.peakAcc {
			p.peakRound, p.peakAcc = round, a
		}
		p.lastRound, p.lastAcc, p.lastSpread = round, a, s
	}
	return p, !first
}

// course says where the variant's mean accuracy peaked and where it ended, and how its spread moved
// from the first evaluated round to the last.
func (p variancePeak) course() string {
	return fmt.Sprintf("%s peaks at round %d (%.1f%%) and ends at %.1f%% in round %d, its spread from %.3g (round %d) to %.3g",
		p.variant, p.peakRound, 100*p.peakAcc, 100*p.lastAcc, p.lastRound, p.firstSpread, p.firstRound, p.lastSpread)
}

// keptVarianceGrowth explains, from the runs' rounds, a fall of the rules that keep the clients'
// shared variance (keep: e.g. FVBWA-EAA, -AALV, -PPA) against the rules that divide it by the active
// clients (shrink: GAA, CF): when each kept rule's mean accuracy ends at least two points below its
// peak while its spread grows at least threefold and its clients' variances moved alike (recorded
// VarDisagreement below report.MinDisagreement in every round), it says so with the numbers;
// otherwise it returns "".
func keptVarianceGrowth(rs runSet, keep, shrink []string) string {
	var fell []string
	agree := 0.0
	for _, v := range keep {
		p, ok := peakOf(rs, v)
		if !ok || p.peakAcc-p.lastAcc < 0.02 || p.firstSpread <= 0 || p.lastSpread < 3*p.firstSpread || !(p.disagreement < report.MinDisagreement) {
			return ""
		}
		agree = max(agree, p.disagreement)
		fell = append(fell, p.course())
	}
	var held []string
	for _, v := range shrink {
		p, ok := peakOf(rs, v)
		if !ok {
			return ""
		}
		held = append(held, fmt.Sprintf("%s ends at %.1f%% with spread %.3g", v, 100*p.lastAcc, p.lastSpread))
	}
	if len(fell) == 0 {
		return ""
	}
	return "the rules that keep the clients' variance lose accuracy as it grows (mean over seeds of the evaluated rounds): " +
		strings.Join(fell, "; ") + fmt.Sprintf(". Local training moves every client's log σ² alike each round (the clients' differ by at most %.2g, %g needed to tell them apart; "+
		"the KL term's pull towards the prior), ", agree, report.MinDisagreement) +
		"and these rules keep that shared variance round after round, so the sampled weights get noisier; " + strings.Join(held, ", ") +
		": they divide the shared variance by the active clients each round, so their nets stay nearly deterministic"
}

// collapseCourse describes, from the runs' rounds, how each variant of rows fared against ref: each
// one's course averaged over its seeds (variancePeak.course) and, seed by seed, ref's accuracy
// averaged over its last tail evaluations against the variant's (seedGains). It returns "" without
// runs of ref that evaluated accuracy and spread.
func collapseCourse(rs runSet, ref string, rows []string, tail int) string {
	r, ok := peakOf(rs, ref)
	if !ok {
		return ""
	}
	refTail := rs.where("variant", ref).tailSample(results.Accuracy, tail)
	parts := []string{r.course()}
	for _, v := range rows {
		if p, ok := peakOf(rs, v); ok {
			parts = append(parts, p.course()+fmt.Sprintf("; over the last %d evaluations, ", tail)+
				seedGains(refTail, rs.where("variant", v).tailSample(results.Accuracy, tail), ref, v))
		}
	}
	return "the rules' courses (mean over seeds of the evaluated rounds): " + strings.Join(parts, "; ")
}
