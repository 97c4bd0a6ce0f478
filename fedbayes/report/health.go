package report

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/results"
)

// Thresholds of RunHealth's verdict.
const (
	// HealthThreshold is the |Delta log sigma^2| beyond which a variance counts as moved (the value
	// of metrics.DefaultMovedThreshold, with which the engine computes results.VarMoved and results.VarLocalMoved).
	HealthThreshold = 0.1
	// MinMovedShare is the share of the variances that must have moved beyond HealthThreshold for
	// them to count as learned: in one round of local training (results.VarLocalMoved), or from their initial
	// value in the global model (results.VarMoved) when local training moves them too (MinLocalShift).
	MinMovedShare = 0.05
	// MinLocalShift is the mean |Delta log sigma^2| a round of local training must reach in some
	// recorded row (results.VarLocalShift) for a global model that moved from its initial value to count as
	// learned: a tenth of HealthThreshold a round, which adds up beyond it within a medium budget's
	// rounds. Below it the global model moved by the aggregation rule's arithmetic (PPA's mixture
	// variance, BFL-P's clamped sums), not by what the clients learned: the default before issue 33
	// moved 0.0016 a round.
	MinLocalShift = 0.01
	// MinClampedShare is the share of the global model's variances at a clamp bound beyond which a
	// run that did not learn is said to be held by the clamp.
	MinClampedShare = 0.5
	// MinDisagreement is the mean across-client standard deviation of log sigma^2 (results.VarDisagreement)
	// that some recorded round must reach for rules that combine variances to differ: at 0.1, EAA's
	// and AALV's log-variances differ by about 0.1^2/2 = 0.005 (docs/metrics.md). Below it the
	// clients' variances moved together (the KL's pull towards the prior, the same for every client).
	MinDisagreement = 0.1
)

// HealthState is RunHealth's verdict on a run's variances.
type HealthState string

// The verdicts of RunHealth.
const (
	// HealthLearned: local training moved the variances (see RowHealth).
	HealthLearned HealthState = "learned"
	// HealthFrozen: local training did not move the variances.
	HealthFrozen HealthState = "frozen"
	// HealthClamped: the variances did not learn and most of them sit at a clamp bound, where they get
	// no gradient (BFL-P's log sigma^2 = -9 below its clamp at -8).
	HealthClamped HealthState = "clamped"
	// HealthUniform: local training moved the variances, but every client moved them alike
	// (results.VarDisagreement below MinDisagreement in every row): rules that combine variances still give
	// the same model.
	HealthUniform HealthState = "uniform"
	// HealthNotVariational: the run has no variances (deterministic, MC-dropout or predictive-space
	// global model): the question does not arise.
	HealthNotVariational HealthState = "not-variational"
	// HealthUnmeasured: the run records a spread but no health metrics (recorded before they
	// existed, or its clients' models carry no variances): whether its variances learned is unknown.
	HealthUnmeasured HealthState = "unmeasured"
)

// Health is RunHealth's verdict on whether a run's variances learned, with the figures it rests on
// and a message a researcher can read.
type Health struct {
	// State is the verdict.
	State HealthState
	// Message says in plain words what State means for the run, with its figures, e.g. "the
	// variances stayed at their initial value: rules differ here only by their own arithmetic on that
	// shared value, not by how they weigh what the clients learned (...)".
	Message string
	// SpreadStart and SpreadEnd are the spread of the initial model and of the last row's global
	// model (NaN when not recorded).
	SpreadStart, SpreadEnd float64
	// Moved, Clamped and Shift are the last row's results.VarMoved, results.VarClamped and results.VarShift.
	Moved, Clamped, Shift float64
	// LocalMovedMax, LocalShiftMax and DisagreementMax are the largest results.VarLocalMoved, results.VarLocalShift
	// and results.VarDisagreement over the rows.
	LocalMovedMax, LocalShiftMax, DisagreementMax float64
	// Rows is the number of rows that record the health metrics.
	Rows int
}

// Frozen reports whether the run's variances did not learn (HealthFrozen or HealthClamped).
func (h Health) Frozen() bool { return h.State == HealthFrozen || h.State == HealthClamped }

// Flagged reports whether the clients' variances were equal in this run, so that rules differ only by
// their own arithmetic on a shared variance (GAA and CF divide it by the number of clients; EAA, AALV
// and PPA keep it), not by how they weigh the clients' different variances (HealthFrozen,
// HealthClamped or HealthUniform): a table, figure or report comparing such rules should flag it,
// with Message.
func (h Health) Flagged() bool { return h.Frozen() || h.State == HealthUniform }

// Short is a one-word tag for tables and listings: "learned", "FROZEN", "CLAMPED", "UNIFORM",
// "unmeasured", or "" for a run without variances.
func (h Health) Short() string {
	switch h.State {
	case HealthFrozen:
		return "FROZEN"
	case HealthClamped:
		return "CLAMPED"
	case HealthUniform:
		return "UNIFORM"
	case HealthNotVariational:
		return ""
	}
	return string(h.State)
}

// RunHealth says whether the variances of a run learned, from its rows (RowHealth).
func RunHealth(r results.Run) Health { return RowHealth(r.Rows) }

// frozenHint ends a frozen run's message with what would move its variances, and at what price.
const frozenHint = "; training.variance_optimizer \"adam\" moves them by the optimiser's own step rather than by the data, and this check counts them as moved once the local steps a round × variance_lr reach 0.01 and the global variances have moved 0.1; on Fashion-MNIST it cost accuracy, NLL and ECE (docs/models.md, Default variance training)"

// RowHealth gives the verdict on a run's rows:
//
//   - no row records results.Spread: HealthNotVariational;
//   - the last row records results.Spread but not the health metrics: HealthUnmeasured;
//   - the variances moved when, in some row, local training moved at least MinMovedShare of the
//     clients' variances by more than HealthThreshold (results.VarLocalMoved), or when at least MinMovedShare
//     of the last row's global variances lie beyond HealthThreshold from their initial value
//     (results.VarMoved) and local training moved them by at least MinLocalShift on average in some row
//     (results.VarLocalShift); then HealthLearned if the clients disagreed on them by at least
//     MinDisagreement in some row (results.VarDisagreement), else HealthUniform;
//   - otherwise HealthClamped when at least MinClampedShare of the last row's global variances sit at
//     a clamp bound (results.VarClamped), else HealthFrozen.
//
// Only rows that record the health metrics are read; results.Row.CheckValues guarantees a row has all or none.
func RowHealth(rows []results.Row) Health {
	h := Health{SpreadStart: math.NaN(), SpreadEnd: math.NaN(), Moved: math.NaN(), Clamped: math.NaN(), Shift: math.NaN()}
	var last *results.Row
	for i := range rows {
		if _, ok := rows[i].Metrics[results.Spread]; ok {
			last = &rows[i]
		}
	}
	if last == nil {
		h.State, h.Message = HealthNotVariational, "no variances: the run's global model is not variational"
		return h
	}
	h.SpreadEnd = last.Metrics[results.Spread]
	if _, ok := last.Metrics[results.VarMoved]; !ok {
		h.State = HealthUnmeasured
		h.Message = "posterior health was not recorded (a run from before fedbayes measured it, or whose clients carry no variances): whether the variances learned is unknown"
		return h
	}
	for _, r := range rows {
		if v, ok := r.Metrics[results.VarLocalMoved]; ok {
			h.Rows++
			h.LocalMovedMax = math.Max(h.LocalMovedMax, v)
			h.LocalShiftMax = math.Max(h.LocalShiftMax, r.Metrics[results.VarLocalShift])
			h.DisagreementMax = math.Max(h.DisagreementMax, r.Metrics[results.VarDisagreement])
		}
	}
	h.SpreadStart, h.Moved, h.Clamped, h.Shift = last.Metrics[results.SpreadStart], last.Metrics[results.VarMoved], last.Metrics[results.VarClamped], last.Metrics[results.VarShift]
	local := fmt.Sprintf("local training moved %s of them by more than %g in log σ² in a recorded round, %.2g on average", AtMost(h.LocalMovedMax), HealthThreshold, h.LocalShiftMax)
	spread := fmt.Sprintf("the spread went from %.4g to %.4g", h.SpreadStart, h.SpreadEnd)
	learned := h.LocalMovedMax >= MinMovedShare || h.Moved >= MinMovedShare && h.LocalShiftMax >= MinLocalShift
	switch {
	case learned && h.DisagreementMax >= MinDisagreement:
		h.State = HealthLearned
		h.Message = fmt.Sprintf("the variances learned: %s of the global model's variances moved by more than %g in log σ² from their initial value, and the clients' differ by up to %.2g in log σ² (standard deviation across clients) (%s; %s)",
			pct(h.Moved), HealthThreshold, h.DisagreementMax, local, spread)
	case learned:
		h.State = HealthUniform
		h.Message = fmt.Sprintf("the variances moved together: %s of the global model's variances moved by more than %g in log σ² from their initial value, but the clients' differ by at most %.2g in log σ² (standard deviation across clients, %g needed): rules differ here only by their own arithmetic on a shared variance (GAA and CF divide it by the number of clients; EAA, AALV and PPA keep it), not by how they weigh the clients' different variances (%s; %s)",
			pct(h.Moved), HealthThreshold, h.DisagreementMax, MinDisagreement, local, spread)
	case h.Clamped >= MinClampedShare:
		h.State = HealthClamped
		h.Message = fmt.Sprintf("%s of the variances sit at the clamp bound of log σ², where training passes no gradient: the variances cannot learn, so rules differ here only by their own arithmetic on the clamped values (%s; %s)",
			pct(h.Clamped), local, spread)
	case h.Moved >= MinMovedShare:
		h.State = HealthFrozen
		h.Message = fmt.Sprintf("local training did not move the variances (%s): %s through the aggregation rule's arithmetic alone, so rules that combine variances differ here only by that arithmetic, not by what the clients learned%s",
			local, spread, frozenHint)
	default:
		h.State = HealthFrozen
		h.Message = fmt.Sprintf("the variances stayed at their initial value: rules differ here only by their own arithmetic on that shared value, not by how they weigh what the clients learned (%s; %s)%s", local, spread, frozenHint)
	}
	return h
}

// pct formats a share as a percentage.
func pct(share float64) string { return fmt.Sprintf("%.3g %%", 100*share) }

// AtMost is "at most P %" for a largest share (P its percentage), and "none" when it is 0.
func AtMost(share float64) string {
	if share == 0 {
		return "none"
	}
	return "at most " + pct(share)
}
