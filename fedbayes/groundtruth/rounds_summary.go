package groundtruth

import (
	"fmt"
	"math"
)

// RoundsSummary is one scenario's trajectories under one prior policy, averaged over its seeds.
type RoundsSummary struct {
	Prior  PriorPolicy `json:"prior"`
	Rounds int         `json:"rounds"`
	// FloorKLToTruth and FloorKLFromTruth are the seeds' mean floors (RoundsResult).
	FloorKLToTruth   float64 `json:"floor_kl_q_p"`
	FloorKLFromTruth float64 `json:"floor_kl_p_q"`
	// FloorVarRatio is the geometric mean over seeds of mean-field VI's variance ratio (RoundsResult).
	FloorVarRatio float64 `json:"floor_var_ratio"`
	// FrontierExcess holds each seed's frontier excess (RoundsResult.FrontierExcess), in the order of
	// the runs.
	FrontierExcess []float64   `json:"frontier_excess"`
	Rows           []RoundsRow `json:"rows"`
}

// RoundsRow is one rule's trajectory averaged over seeds: per round, the means of KL both ways, W2
// and the mean error, the geometric mean of the variance ratio, the largest Change and the smallest
// Held. The rounds stop at the first round some seed did not reach.
type RoundsRow struct {
	Label     string    `json:"label"`
	Rule      string    `json:"rule"`
	Weighting Weighting `json:"weighting,omitempty"`
	Seeds     int       `json:"seeds"`
	// Stopped counts the seeds that stopped early, with the first one's reason; Note is the
	// trajectory's note (FedAvg under the updated prior).
	Stopped       int    `json:"stopped,omitempty"`
	StoppedReason string `json:"stopped_reason,omitempty"`
	Note          string `json:"note,omitempty"`

	KLToTruth   []Value   `json:"kl_q_p"`
	KLFromTruth []Value   `json:"kl_p_q"`
	W2          []float64 `json:"w2"`
	MeanErrorSD []float64 `json:"mean_error_sd"`
	VarRatio    []float64 `json:"var_ratio"`
	Change      []float64 `json:"change"`
	Held        []int     `json:"held"`
	// SeedExcess is each seed's excess over its own floors (ExcessOver; +Inf for a point mass), per
	// round: seed by round, the rounds as far as every seed reached.
	SeedExcess [][]Value `json:"seed_excess"`
}

// SummariseRounds averages one scenario's RoundsResults (one per seed, same policy and rules).
func SummariseRounds(runs []*RoundsResult) (RoundsSummary, error) {
	if len(runs) == 0 {
		return RoundsSummary{}, fmt.Errorf("groundtruth: no rounds to summarise")
	}
	first := runs[0]
	out := RoundsSummary{Prior: first.Prior, Rounds: first.Rounds}
	n := float64(len(runs))
	for _, r := range runs {
		if r.Prior != first.Prior || len(r.Trajectories) != len(first.Trajectories) {
			return RoundsSummary{}, fmt.Errorf("groundtruth: rounds of different policies or rules")
		}
		out.FloorKLToTruth += r.FloorKLToTruth / n
		out.FloorKLFromTruth += r.FloorKLFromTruth / n
		out.FloorVarRatio += math.Log(r.FloorVarRatio) / n
		out.FrontierExcess = append(out.FrontierExcess, r.FrontierExcess)
	}
	out.FloorVarRatio = math.Exp(out.FloorVarRatio)
	for i, t0 := range first.Trajectories {
		row := RoundsRow{Label: t0.Label, Rule: t0.Rule, Weighting: t0.Weighting, Seeds: len(runs), Note: t0.Note}
		T := math.MaxInt
		for _, r := range runs {
			tr := r.Trajectories[i]
			if tr.Label != t0.Label {
				return RoundsSummary{}, fmt.Errorf("groundtruth: rounds of different rules (%s, %s)", tr.Label, t0.Label)
			}
			if tr.Stopped != "" {
				if row.Stopped == 0 {
					row.StoppedReason = tr.Stopped
				}
				row.Stopped++
			}
			T = min(T, len(tr.Points))
		}
		row.SeedExcess = make([][]Value, len(runs))
		for t := 0; t < T; t++ {
			var klqp, klpq Value
			var w2, merr, logVR, ch float64
			held := math.MaxInt
			for j, r := range runs {
				pt := r.Trajectories[i].Points[t]
				row.SeedExcess[j] = append(row.SeedExcess[j],
					Value(ExcessOver(float64(pt.KLToTruth), float64(pt.KLFromTruth), r.FloorKLToTruth, r.FloorKLFromTruth)))
				klqp += pt.KLToTruth / Value(n)
				klpq += pt.KLFromTruth / Value(n)
				w2 += pt.W2 / n
				merr += pt.MeanErrorSD / n
				logVR += math.Log(pt.VarRatio) / n
				ch = math.Max(ch, pt.Change)
				held = min(held, pt.Held)
			}
			row.KLToTruth = append(row.KLToTruth, klqp)
			row.KLFromTruth = append(row.KLFromTruth, klpq)
			row.W2 = append(row.W2, w2)
			row.MeanErrorSD = append(row.MeanErrorSD, merr)
			row.VarRatio = append(row.VarRatio, math.Exp(logVR))
			row.Change = append(row.Change, ch)
			row.Held = append(row.Held, held)
		}
		out.Rows = append(out.Rows, row)
	}
	return out, nil
}

// Excess returns row's excess over the mean-field floors after round t (1-based), as
// Summary.Excess: the mean over the seeds of each seed's ExcessOver its own floors (SeedExcess; +Inf
// for a point mass), or ExcessOver the seed-averaged numbers for a summary without them.
func (s RoundsSummary) Excess(row RoundsRow, t int) float64 {
	if len(row.SeedExcess) > 0 && len(row.SeedExcess[0]) >= t {
		m := 0.0
		for _, e := range row.SeedExcess {
			m += float64(e[t-1]) / float64(len(row.SeedExcess))
		}
		return m
	}
	return ExcessOver(float64(row.KLToTruth[t-1]), float64(row.KLFromTruth[t-1]), s.FloorKLToTruth, s.FloorKLFromTruth)
}

// FrontierReach is how soon a trajectory comes within Within nats of the frontier (RoundsSummary.ToFrontier):
// per seed, the first round from which its excess stays at most Within above that seed's frontier
// excess to the last round (0 when the last round is farther); Reached counts the seeds with one,
// and Gap is the mean over the seeds of the last round's excess minus the frontier's.
type FrontierReach struct {
	Within  float64
	Rounds  []int
	Reached int
	Gap     float64
}

// ToFrontier measures row against the frontier (see FrontierReach); ok is false for a summary without
// per-seed excesses or frontiers.
func (s RoundsSummary) ToFrontier(row RoundsRow, within float64) (FrontierReach, bool) {
	out := FrontierReach{Within: within}
	if len(row.SeedExcess) == 0 || len(row.SeedExcess) != len(s.FrontierExcess) || len(row.SeedExcess[0]) == 0 {
		return out, false
	}
	for j, e := range row.SeedExcess {
		f := s.FrontierExcess[j]
		at := 0
		for t := len(e); t >= 1 && float64(e[t-1])-f <= within; t-- {
			at = t
		}
		out.Rounds = append(out.Rounds, at)
		if at > 0 {
			out.Reached++
		}
		out.Gap += (float64(e[len(e)-1]) - f) / float64(len(row.SeedExcess))
	}
	return out, true
}

// The kinds of RoundsVerdict.
const (
	// TrendStops: some seed's rule gave no global before the last round.
	TrendStops = "stops"
	// TrendPointMass: the global is a point mass (FedAvg).
	TrendPointMass = "point mass"
	// TrendFixed: the global did not move in the last round (Change 0 in every seed).
	TrendFixed = "fixed"
	// TrendAtMeanFieldVI: the global still moves, and KL(q || p) is within ConvergedNats of its
	// floor, the KL of the global mean-field VI, in each of the last TrendWindow rounds: the
	// trajectory is at mean-field VI, the best diagonal Gaussian in KL(q || p) (partitioned VI's
	// fixed point on the linear model; a rule whose KL only crosses that floor does not qualify).
	TrendAtMeanFieldVI = "at mean-field VI"
	// TrendConverging: the global still moves, but each of the last TrendWindow rounds moved it by at
	// most ConvergingRate times the round before (Change, in posterior sds and log-variance): a
	// geometric contraction towards a limit of its own, at most Change·r/(1 − r) away
	// (RoundsVerdict.Remaining).
	TrendConverging = "converging"
	// TrendCollapses: the variance ratio fell in each of the last TrendWindow rounds and is below
	// CollapseFactor times mean-field VI's (FloorVarRatio) at the last round: more confident than the
	// best diagonal Gaussian in KL(q || p), not only than the exact marginals.
	TrendCollapses = "collapses"
	// TrendShrinking: the variance ratio fell in each of the last TrendWindow rounds but is still at
	// least CollapseFactor times mean-field VI's (it may go on falling: RoundsVerdict.Exponent).
	TrendShrinking = "shrinking"
	// TrendGrowing: the variance ratio rose in each of the last TrendWindow rounds.
	TrendGrowing = "growing"
	// TrendMoving: none of the above.
	TrendMoving = "moving"
)

// ConvergedNats is how close to its floor KL(q || p) must stay for TrendAtMeanFieldVI.
const ConvergedNats = 1e-3

// ConvergingRate is the largest ratio of one round's Change to the round before's for
// TrendConverging: a rule whose variance falls as 1/t moves by about t/(t + 1) of the round before
// (0.95 at round 20), and does not qualify.
const ConvergingRate = 0.9

// CollapseFactor is the fraction of mean-field VI's variance ratio below which a falling variance
// collapses (the rounds' counterpart of OverConfident, which the one-round tables read against the
// exact marginals).
const CollapseFactor = 0.8

// TrendWindow is the number of last rounds RoundsVerdict reads a trend from.
const TrendWindow = 5

// RoundsVerdict describes a rule's trajectory from the numbers alone.
type RoundsVerdict struct {
	// Kind is one of the Trend constants.
	Kind string
	// Last is the last round reached; FixedFrom the first round from which the global did not move
	// (TrendFixed).
	Last, FixedFrom int
	// First, Best and Final are the excesses over the floors at round 1, at the best round BestRound
	// (the smallest excess; the first such round) and at the last round.
	First, Best, Final float64
	BestRound          int
	// ConvergedRound is the first round of the final run of rounds whose KL(q || p) is within
	// ConvergedNats of its floor (0: the last round is not).
	ConvergedRound int
	// Rate is the largest ratio of a round's Change to the round before's over the last TrendWindow
	// rounds, and Remaining the bound Change·Rate/(1 − Rate) on the distance to the limit
	// (TrendConverging).
	Rate, Remaining float64
	// VarRatio is the variance ratio at the last round; Factor its mean factor per round over the
	// last TrendWindow rounds and Exponent the slope of log VarRatio against log t over them
	// (-1: variance ∝ 1/t); both 0 when fewer rounds ran.
	VarRatio, Factor, Exponent float64
}

// floorVarRatio is FloorVarRatio, or 1 (the exact marginals) for a summary written without it.
func (s RoundsSummary) floorVarRatio() float64 {
	if s.FloorVarRatio > 0 {
		return s.FloorVarRatio
	}
	return 1
}

// Verdict reads row's trajectory (see RoundsVerdict).
func (s RoundsSummary) Verdict(row RoundsRow) RoundsVerdict {
	T := len(row.VarRatio)
	v := RoundsVerdict{Last: T}
	if T == 0 {
		v.Kind = TrendStops
		return v
	}
	v.First, v.Final, v.VarRatio = s.Excess(row, 1), s.Excess(row, T), row.VarRatio[T-1]
	v.Best, v.BestRound = v.First, 1
	atVI := func(t int) bool { return float64(row.KLToTruth[t-1])-s.FloorKLToTruth <= ConvergedNats }
	for t := 1; t <= T; t++ {
		if e := s.Excess(row, t); e < v.Best {
			v.Best, v.BestRound = e, t
		}
	}
	for t := T; t >= 1 && atVI(t); t-- {
		v.ConvergedRound = t
	}
	w := TrendWindow
	falling, rising, stayedAtVI := T > w, T > w, T > w
	if T > w {
		a, b := row.VarRatio[T-1-w], row.VarRatio[T-1]
		v.Factor = math.Pow(b/a, 1/float64(w))
		v.Exponent = math.Log(b/a) / math.Log(float64(T)/float64(T-w))
		for t := T - w; t < T; t++ {
			falling = falling && row.VarRatio[t] < row.VarRatio[t-1]
			rising = rising && row.VarRatio[t] > row.VarRatio[t-1]
			if row.Change[t-1] > 0 {
				v.Rate = math.Max(v.Rate, row.Change[t]/row.Change[t-1])
			} else {
				v.Rate = math.Inf(1)
			}
		}
		stayedAtVI = v.ConvergedRound > 0 && v.ConvergedRound <= T-w
		if v.Rate < 1 {
			v.Remaining = row.Change[T-1] * v.Rate / (1 - v.Rate)
		}
	}
	switch {
	case row.Stopped > 0:
		v.Kind = TrendStops
	case v.VarRatio == 0:
		v.Kind = TrendPointMass
	case row.Change[T-1] == 0:
		v.Kind = TrendFixed
		v.FixedFrom = T
		for v.FixedFrom > 1 && row.Change[v.FixedFrom-1] == 0 {
			v.FixedFrom--
		}
	case stayedAtVI:
		v.Kind = TrendAtMeanFieldVI
	case T > w && v.Rate <= ConvergingRate:
		v.Kind = TrendConverging
	case falling && v.VarRatio < CollapseFactor*s.floorVarRatio():
		v.Kind = TrendCollapses
	case falling:
		v.Kind = TrendShrinking
	case rising:
		v.Kind = TrendGrowing
	default:
		v.Kind = TrendMoving
	}
	return v
}
