package reproduce

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"fedbayes.dev/fedbayes/internal/words"

	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/stats"
)

// ozerTable4 is Ozer et al. (2022), Table 4 (FVBWA, non-IID), the AALV and GAA columns of every
// dataset, by "cC", rule and dataset.
var ozerTable4 = map[string]map[string]map[string]ref{
	"c10": {
		"AALV": {"fmnist": {2.81, 0.01}, "cifar10": {3.22, 0.00}, "svhn": {3.48, 0.01}},
		"GAA":  {"fmnist": {3.93, 0.01}, "cifar10": {4.68, 0.00}, "svhn": {4.67, 0.01}},
	},
	"c100": {
		"AALV": {"fmnist": {2.80, 0.00}, "cifar10": {3.22, 0.00}, "svhn": {3.49, 0.00}},
		"GAA":  {"fmnist": {3.94, 0.01}, "cifar10": {4.70, 0.01}, "svhn": {4.69, 0.01}},
	},
}

// ozerTable4EAA is Table 4's EAA column (FVBWA, non-IID), by "cC" and dataset.
var ozerTable4EAA = map[string]map[string]float64{
	"c10":  {"fmnist": 15.48, "cifar10": 17.65, "svhn": 17.90},
	"c100": {"fmnist": 79.19, "cifar10": 91.79, "svhn": 94.54},
}

// ozerTable4Data are the datasets of Table 4: training examples and BFL-P's Gaussian weights (its three
// VBLinear layers on 16x4x4 = 256 features for 28x28 inputs, 16x5x5 = 400 for 32x32).
var ozerTable4Data = []struct {
	key, name string
	train     int
	weights   int
}{
	{"fmnist", "FMNIST", 60000, 256*120 + 120*84 + 84*10},
	{"cifar10", "CIFAR-10", 50000, 400*120 + 120*84 + 84*10},
	{"svhn", "SVHN", 73257, 400*120 + 120*84 + 84*10},
}

// spreadTolerance is the relative gap within which a predicted spread counts as reproducing Table 4.
const spreadTolerance = 0.10

// ozerFrozen is the frozen-variance prediction at the paper's budget (ozerPaperSpread).
func ozerFrozen(clients string, train, weights int) (FrozenPrediction, error) {
	return ozerPaperSpread(clients, train, weights).Predict()
}

// ozerPaperSpread is the frozen-variance model at the paper's budget (Sec. 6.1: SGD lr 0.01,
// momentum 0.9, weight decay 1e-5, batch 64 (NIID-Bench's default), E = 10, T = 50 with 10 clients
// and 500 with 100, 10 active), with equal client sizes: the paper does not give its Dirichlet
// partition.
func ozerPaperSpread(clients string, train, weights int) FrozenSpread {
	c, active, rounds := 10, 0, 50
	if clients == "c100" {
		c, active, rounds = 100, 10, 500
	}
	return FrozenSpread{Weights: weights, ClientSizes: equalSizes(train, c), Active: active, SizeWeights: true, Rounds: rounds,
		Epochs: 10, BatchSize: 64, LearningRate: 0.01, Momentum: 0.9, WeightDecay: 1e-5, InitLogVar: -9}
}

// equalSizes is train examples dealt equally to c clients.
func equalSizes(train, c int) []int {
	sizes := make([]int, c)
	for i := range sizes {
		sizes[i] = train / c
	}
	return sizes
}

// ozerTable4Block is the table of the frozen-variance predictions beside Table 4, and the finding that
// checks them (they need no run).
func ozerTable4Block() (string, Finding) {
	var b strings.Builder
	b.WriteString("Table 4 predicted from BFL-P's code alone (no run): with log σ² starting at −9 below the clamp at −8, the " +
		"variances get no gradient and only the weight decay moves them (SGD with momentum, restarted each round); AALV " +
		"averages the raw values, and GAA's clamped partial sums give e⁻⁸(1 + c), c = E[Σ_{k≥2} β_k²] (clients back at the " +
		"floor), or e⁻⁸/(1 − c) (clients return what they received). Equal client sizes (the paper does not give its " +
		"partition):\n\n" + tableHeader("clients", "rule", "dataset", "predicted", "paper", "gap"))
	f := Finding{Claim: "Table 4's AALV and GAA spreads follow from BFL-P's clamp at −8 and its weight decay (frozen variances), within 10 %",
		Source: "Table 4; BFL-P's architectures.py and utils/FL/update.py", Prediction: true}
	var c claims
	passed, all := 0, 0
	for _, clients := range []string{"c10", "c100"} {
		for _, d := range ozerTable4Data {
			p, err := ozerFrozen(clients, d.train, d.weights)
			if err != nil {
				f.Verdict, f.Evidence = NotRun, err.Error()
				return b.String(), f
			}
			for _, rule := range []string{"AALV", "GAA"} {
				paper := ozerTable4[clients][rule][d.key]
				pred, text := p.AALV, fmt.Sprintf("%.2f", p.AALV)
				if rule == "GAA" {
					// The two GAA bounds; the gap is to the nearer.
					pred = p.GAAFloor
					if math.Abs(p.GAAHeld-paper.mean) < math.Abs(pred-paper.mean) {
						pred = p.GAAHeld
					}
					text = fmt.Sprintf("%.2f – %.2f", p.GAAFloor, p.GAAHeld)
				}
				gap := pred/paper.mean - 1
				all++
				if math.Abs(gap) <= spreadTolerance {
					passed++
				}
				c.fixed(fmt.Sprintf("%s %s %s predicted %+.1f %% from Table 4", clients, rule, d.name, 100*gap), math.Abs(gap) <= spreadTolerance)
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %+.1f %% |\n", strings.TrimPrefix(clients, "c"), rule, d.name, text, paper, 100*gap)
			}
		}
	}
	b.WriteString("\n" + ozerEffectiveSpread() + "\n")
	b.WriteString("\nEAA is not frozen: with the clients returning what they received its clamped partial sums would give " +
		"e⁻⁸(1 − q^{T+1})/(1 − q), q = 1 − 1/K for K active clients, at most K e⁻⁸ (")
	var eaa []string
	for _, clients := range []string{"c10", "c100"} {
		for _, d := range ozerTable4Data {
			p, err := ozerFrozen(clients, d.train, d.weights)
			if err == nil {
				eaa = append(eaa, fmt.Sprintf("%s %s clients %.2f against %.2f", d.name, strings.TrimPrefix(clients, "c"), p.EAAHeld, ozerTable4EAA[clients][d.key]))
			}
		}
	}
	b.WriteString(strings.Join(eaa, "; ") + "), far below Table 4: once EAA lifts log σ² above −8 the gradient flows and " +
		"the KL term pulls the variances up, more so with 100 small clients.\n")
	f.decide(c.checks(), fmt.Sprintf("%d of %d predicted spreads lie within %.0f %% of Table 4 (computed, no run: each check is exact)", passed, all, 100*spreadTolerance))
	f.explain("the prediction assumes equal client sizes and clients whose variances do not move within a round; " +
		"size-weighted unequal Dirichlet clients raise c, and variances that leave the floor during local training change GAA.")
	return b.String(), f
}

// ozerBudgetSpread is the frozen-variance model of the BFL-P preset of set at budget b (equal
// client sizes: the preset's training examples over the clients), with the preset's name.
func ozerBudgetSpread(b Budget, set string) (string, FrozenSpread, error) {
	name := ozerPresetMode(set, true).Name(b)
	spec, err := presets.Preset(name)
	if err != nil {
		return name, FrozenSpread{}, err
	}
	full := spec.WithDefaults()
	train := full.Dataset.Subsample
	if train == 0 {
		train = 60000
	}
	c := full.Partition.Clients
	active := int(math.Round(full.Partition.Participation * float64(c)))
	if active >= c {
		active = 0
	}
	return name, FrozenSpread{Weights: ozerTable4Data[0].weights, ClientSizes: equalSizes(train, c), Active: active, SizeWeights: true,
		Rounds: full.Training.Rounds, Epochs: full.Training.LocalEpochs, BatchSize: full.Training.BatchSize,
		LearningRate: full.Training.LearningRate, Momentum: full.Training.Momentum, WeightDecay: full.Training.WeightDecay,
		InitLogVar: -9}, nil
}

// ozerBFLPSpread checks measured BFL-P runs against the frozen-variance prediction for their own budget.
func ozerBFLPSpread(b Budget, set string, rs runSet) (Finding, bool) {
	f := Finding{Claim: fmt.Sprintf("In BFL-P mode the learned AALV and GAA spreads follow the frozen-variance arithmetic (%s)", setTitle(set)),
		Source: "Table 4; BFL-P's code", Prediction: true}
	name, model, err := ozerBudgetSpread(b, set)
	if err != nil {
		return f, false
	}
	p, err := model.Predict()
	if err != nil {
		return f, false
	}
	var c claims
	var ev []string
	for _, rule := range []string{"AALV", "GAA"} {
		sel := rs.where("variant", "FVBWA-"+rule)
		st := sel.summary(results.Spread)
		if !st.ok() {
			continue
		}
		lo, hi := p.AALV, p.AALV
		if rule == "GAA" {
			lo, hi = p.GAAFloor, p.GAAHeld
		}
		c.within(fmt.Sprintf("%s within %.0f %% of the prediction", rule, 100*spreadTolerance), sel.sample(results.Spread), lo*(1-spreadTolerance), hi*(1+spreadTolerance), colSpread)
		ev = append(ev, fmt.Sprintf("%s measured %s, predicted %.3f–%.3f", rule, st.format(1, 3), lo, hi))
	}
	if c.n() == 0 {
		return f, false
	}
	f.decide(c.checks(), fmt.Sprintf("%s (%s)", strings.Join(ev, "; "), name))
	f.explain("a measured spread outside the prediction means the variances left the floor during local training " +
		"(gradient through the clamp) rather than staying frozen.")
	return f, true
}

// ozerBFLPTable4 checks the measured BFL-P spreads of every FVBWA rule against Table 4 itself
// (ozerBFLPTable4With), with the single runs at the paper's budget that docs/reproduction/budgets.md
// records (ozerPaperBudgetSpread).
func ozerBFLPTable4(b Budget, set string, rs runSet) (Finding, bool) {
	clients, _, _ := strings.Cut(set, "-")
	return ozerBFLPTable4With(b, set, rs, ozerPaperBudgetSpread[clients])
}

// ozerBFLPTable4With checks the measured BFL-P spreads of every FVBWA rule against Table 4 itself
// (issue 17's test of the compatibility mode): within spreadTolerance of the paper's mean. GAA's,
// AALV's and CF's checks are set aside when their measured spread is the frozen-variance prediction
// for this budget (variancesFrozen; CF only where its own prediction holds, cfFrozen). Where the
// others miss, it says what the budget explains, and spots, single runs at the paper's budget, may
// make the finding not testable here (spotChecksExplain).
func ozerBFLPTable4With(b Budget, set string, rs runSet, spots paperBudgetRuns) (Finding, bool) {
	clients, _, _ := strings.Cut(set, "-")
	f := Finding{Claim: fmt.Sprintf("In BFL-P mode the measured spreads of the five FVBWA rules are Table 4's within %.0f %% (%s)",
		100*spreadTolerance, setTitle(set)), Source: "Table 4; BFL-P's code"}
	name, model, err := ozerBudgetSpread(b, set)
	if err != nil {
		return f, false
	}
	cf, cfWhy := cfFrozen(model.Weights, rs)
	var c claims
	var ev, rules, missed []string
	for _, rule := range []string{"EAA", "GAA", "AALV", "PPA", "CF"} {
		sel := rs.where("variant", "FVBWA-"+rule)
		st := sel.summary(results.Spread)
		if !st.ok() {
			continue
		}
		paper := ozerSpread[clients][rule]
		gap := st.Mean/paper.mean - 1
		c.within(fmt.Sprintf("%s within %.0f %% of Table 4", rule, 100*spreadTolerance), sel.sample(results.Spread),
			paper.mean*(1-spreadTolerance), paper.mean*(1+spreadTolerance), colSpread)
		if rule == "GAA" || rule == "AALV" || rule == "CF" && cf {
			// Their spread under frozen variances is the frozen-variance arithmetic's, whatever it says.
			c.tag(frozenArithmetic)
		}
		rules = append(rules, rule)
		ev = append(ev, fmt.Sprintf("%s %.3f against %.2f (%+.1f %%)", rule, st.Mean, paper.mean, 100*gap))
	}
	if c.n() == 0 {
		return f, false
	}
	checks := c.checks()
	for i, ch := range checks {
		if ch.outcome != agrees {
			missed = append(missed, rules[i])
		}
	}
	paper := ozerPaperSpread(clients, ozerTable4Data[0].train, ozerTable4Data[0].weights)
	frozen := variancesFrozen(model, paper, rs, cf)
	f.decide(checks, fmt.Sprintf("%s (%s). %s", strings.Join(ev, "; "), name, cfWhy), frozen)
	why := table4Misses(missed, model, paper)
	marked, _ := setAside(checks, []precondition{frozen})
	if late := spotChecksExplain(clients, f.Verdict, marked, rules, model, paper, spots); late != "" {
		f.notTestable(late + "; " + strings.Join(why, "; "))
		f.Caveat = "misses attributed to the budget by 1-seed paper-budget runs (" + spots.cite() + ")"
	} else if by := spotCovered(clients, marked, rules, spots); by != "" && f.Verdict != Holds && f.Verdict != NotRun {
		f.Caveat = "the misses of " + by + " attributed to the budget by 1-seed paper-budget runs (" + spots.cite() +
			"); the other checks that did not agree have no such run, so the verdict stands"
	}
	f.explain(strings.Join(why, "; ") + ".")
	return f, true
}

// table4Misses says what this budget (model) explains of the rules whose Table 4 check did not agree,
// against the paper's budget (paper).
func table4Misses(missed []string, model, paper FrozenSpread) []string {
	var why []string
	if slices.Contains(missed, "AALV") {
		here, err1 := model.Predict()
		atPaper, err2 := paper.Predict()
		if err1 == nil && err2 == nil {
			why = append(why, fmt.Sprintf("AALV's frozen spread grows with the weight-decay steps: %.2f predicted at this budget "+
				"(T = %d, E = %d), %.2f at the paper's (T = %d, E = %d)", here.AALV, model.Rounds, model.Epochs, atPaper.AALV,
				paper.Rounds, paper.Epochs))
		}
	}
	if slices.Contains(missed, "EAA") || slices.Contains(missed, "PPA") {
		why = append(why, fmt.Sprintf("EAA's and PPA's variances are not frozen: they grow round by round with the clients' "+
			"disagreement (EAA's clamped sums lift log σ² above the clamp, where the gradient and the KL move it; PPA adds the "+
			"spread of the client means), and this budget gives them %d rounds of %d local %s against the paper's %d of %d",
			model.Rounds, model.Epochs, words.Plural(model.Epochs, "epoch"), paper.Rounds, paper.Epochs))
	}
	if slices.Contains(missed, "GAA") || slices.Contains(missed, "CF") {
		why = append(why, "GAA's and CF's frozen spreads depend on the partition's client sizes, which the paper does not give")
	}
	return why
}

// paperBudgetRuns are single BFL-P-mode runs at the paper's budget of one Table 4 setting, recorded in
// docs/reproduction/budgets.md ("Paper-budget spot checks") and not in the committed records: the
// final spread by rule, with the binary's commit, the date, the seed and the budget they ran at.
type paperBudgetRuns struct {
	spread         map[string]float64
	commit, date   string
	seed           int
	rounds, epochs int
}

// cite names the runs for the report: "EAA 15.55 and PPA 18.86 at T = 50, E = 10; seed 0, n = 1
// each; binary at f6fd731, 2026-11-24; docs/reproduction/budgets.md, Paper-budget spot checks".
func (p paperBudgetRuns) cite() string {
	var vals []string
	for _, r := range []string{"EAA", "GAA", "AALV", "PPA", "CF"} {
		if v, ok := p.spread[r]; ok {
			vals = append(vals, fmt.Sprintf("%s %.2f", r, v))
		}
	}
	return fmt.Sprintf("%s at T = %d, E = %d; seed %d, n = 1 each; binary at %s, %s; docs/reproduction/budgets.md, Paper-budget spot checks",
		strings.Join(vals, " and "), p.rounds, p.epochs, p.seed, p.commit, p.date)
}

// ozerPaperBudgetSpread are the BFL-P-mode runs at the paper's budget (docs/reproduction/budgets.md,
// "Paper-budget spot checks": FVBWA, Dirichlet(0.5), seed 0), by "cC": the rules whose spreads are
// not frozen, so that no arithmetic predicts them.
var ozerPaperBudgetSpread = map[string]paperBudgetRuns{
	"c10":  {spread: map[string]float64{"EAA": 15.55, "PPA": 18.86}, commit: "f6fd731", date: "2026-11-24", seed: 0, rounds: 50, epochs: 10},
	"c100": {spread: map[string]float64{"EAA": 77.90, "PPA": 64.05}, commit: "5183b20", date: "2026-11-27", seed: 0, rounds: 500, epochs: 10},
}

// paperBudgetCitation says, for the report's header, where single runs at the paper's budget
// (ozerPaperBudgetSpread, not in the committed records) are cited, with their commit, seed and n.
func paperBudgetCitation() string {
	var at []string
	for _, k := range []string{"c10", "c100"} {
		p := ozerPaperBudgetSpread[k]
		at = append(at, fmt.Sprintf("%s clients: %s", strings.TrimPrefix(k, "c"), p.cite()))
	}
	c100 := ozerPaperBudgetSpread["c100"]
	return fmt.Sprintf("single BFL-P-mode runs at the paper's budget, which the committed records do not hold, are cited, not counted, "+
		"in two places of 000: the BFL-P Table 4 findings, whose EAA and PPA misses they attribute to the budget (%s), and the "+
		"100-client BFL-P accuracy finding and the collapse claim's budget, where the 100-client runs (binary at %s, seed %d, n = 1 each) "+
		"show the accuracy falling after about round 300", strings.Join(at, "; "), c100.commit, c100.seed)
}

// spotChecksExplain says why a Table 4 finding short of holding is not testable at this budget, or ""
// when it is: every counted check (checks as the preconditions marked them) that did not agree reads a
// rule whose single run at the paper's budget (spots) lands within spreadTolerance of Table 4, while
// this budget trains fewer local epochs in all (the report's rule: runs at the paper's budget show the
// effect starting beyond this one). rules names the checks' rules in order; model and paper are this
// budget's and the paper's.
func spotChecksExplain(clients string, v Verdict, checks []check, rules []string, model, paper FrozenSpread, spots paperBudgetRuns) string {
	if v == Holds || v == NotTestable || v == NotRun || model.Rounds*model.Epochs >= paper.Rounds*paper.Epochs {
		return ""
	}
	var at []string
	for i, ch := range checks {
		if ch.outcome == agrees || ch.aside != "" {
			continue
		}
		got, ok := spots.spread[rules[i]]
		gap := got/ozerSpread[clients][rules[i]].mean - 1
		if !ok || math.Abs(gap) > spreadTolerance {
			return ""
		}
		at = append(at, fmt.Sprintf("%s %.2f (%+.1f %% from Table 4)", rules[i], got, 100*gap))
	}
	if len(at) == 0 {
		return ""
	}
	return fmt.Sprintf("the effect starts beyond the budget: the rules that miss grow their spread round by round, and single BFL-P-mode "+
		"runs at the paper's budget (T = %d, E = %d; seed %d, n = 1 each, not in the committed records: binary at %s, %s; "+
		"docs/reproduction/budgets.md, Paper-budget spot checks) end at %s, within %.0f %% of Table 4, against this budget's %d rounds of %d local %s",
		spots.rounds, spots.epochs, spots.seed, spots.commit, spots.date, strings.Join(at, " and "),
		100*spreadTolerance, model.Rounds, model.Epochs, words.Plural(model.Epochs, "epoch"))
}

// spotCovered names the rules of the counted checks that contradict Table 4 whose single run at the
// paper's budget (spots) lands within spreadTolerance of it ("EAA and PPA"), "" for none.
func spotCovered(clients string, checks []check, rules []string, spots paperBudgetRuns) string {
	var by []string
	for i, ch := range checks {
		if ch.outcome != contradicts || ch.aside != "" {
			continue
		}
		if got, ok := spots.spread[rules[i]]; ok && math.Abs(got/ozerSpread[clients][rules[i]].mean-1) <= spreadTolerance {
			by = append(by, rules[i])
		}
	}
	return strings.Join(by, " and ")
}

// cfFrozen says whether CF's measured spread is its frozen-variance prediction (cfHeldSpread over
// weights Gaussian weights), each run predicted from its own final round's recorded client weights:
// the 95 % interval of the per-seed ratio measured / predicted within spreadTolerance of 1, the
// tolerance variancesFrozen applies to GAA and AALV; why says what the runs show. A CF that is not
// shown frozen is not set aside.
func cfFrozen(weights int, rs runSet) (bool, string) {
	var ratios []float64
	var seeds []string
	for _, r := range rs.where("variant", "FVBWA-CF") {
		pred, got, err := cfRunPrediction(weights, r)
		if err != nil {
			return false, "CF is counted: no frozen-variance prediction for seed " + fmt.Sprint(r.Meta.Seed) + " (" + err.Error() + ")"
		}
		ratios = append(ratios, got/pred)
		seeds = append(seeds, fmt.Sprintf("seed %d %.4f predicted, %.4f measured", r.Meta.Seed, pred, got))
	}
	lo, hi, err := stats.MeanCI(ratios, Level)
	if err != nil {
		return false, "CF is counted: its measured-to-predicted ratio has no 95 % interval (" + err.Error() + ")"
	}
	in := lo >= 1-spreadTolerance && hi <= 1+spreadTolerance
	verb := map[bool]string{true: "within", false: "not within"}[in]
	how := map[bool]string{true: "so it is set aside with GAA and AALV where they are frozen", false: "so CF is counted, not set aside as frozen"}[in]
	return in, fmt.Sprintf("CF's frozen-variance prediction, √(%d · e⁻⁸ · w_max) with w_max each run's largest normalised "+
		"client weight in its final round (BFL-P's CF reads the clamped variances: w_max e⁻⁸ per weight): %s; the 95 %% "+
		"interval of measured / predicted, %.4f–%.4f, is %s %.0f %% of 1, %s", weights, strings.Join(seeds, "; "),
		lo, hi, verb, 100*spreadTolerance, how)
}

// cfRunPrediction is a CF run's frozen-variance spread (cfHeldSpread of its final round's recorded
// client weights) and its measured final spread.
func cfRunPrediction(weights int, r results.Run) (pred, got float64, err error) {
	if len(r.Rows) == 0 {
		return 0, 0, fmt.Errorf("run %s has no rounds", r.Dir)
	}
	last := r.Rows[len(r.Rows)-1]
	got, ok := last.Metrics[results.Spread]
	if !ok {
		return 0, 0, fmt.Errorf("run %s, round %d: no %s", r.Dir, last.Round, results.Spread)
	}
	pred, err = cfHeldSpread(weights, last.ClientWeights)
	if err != nil {
		return 0, 0, fmt.Errorf("run %s, round %d: %w", r.Dir, last.Round, err)
	}
	return pred, got, nil
}

// variancesFrozen is the precondition of the Table 4 checks of GAA and AALV, and of CF where cf says
// its spread is its own frozen-variance prediction (cfFrozen): not met when the 95 % interval of GAA's
// and AALV's measured spread lies within the frozen-variance prediction for this budget (model; the
// frozen-variance finding's check; paper is the paper's budget). Their spread then follows from the
// frozen-variance arithmetic at this budget's weight-decay steps, so neither an agreement with Table 4
// nor a miss says whether BFL-P mode reproduces what the clients learned: every such check is set
// aside (the Table 4 prediction checks the arithmetic at the paper's budget).
func variancesFrozen(model, paper FrozenSpread, rs runSet, cf bool) precondition {
	p, err := model.Predict()
	if err != nil {
		return precondition{needs: frozenArithmetic, met: true, why: "no frozen-variance prediction: " + err.Error()}
	}
	var in []string
	for _, rule := range []string{"GAA", "AALV"} {
		lo, hi := p.AALV, p.AALV
		if rule == "GAA" {
			lo, hi = p.GAAFloor, p.GAAHeld
		}
		clo, chi, err := stats.MeanCI(rs.where("variant", "FVBWA-"+rule).sample(results.Spread).Values, Level)
		if err != nil || clo < lo*(1-spreadTolerance) || chi > hi*(1+spreadTolerance) {
			return precondition{needs: frozenArithmetic, met: true,
				why: fmt.Sprintf("%s's measured spread is not the frozen-variance prediction: its variances moved", rule)}
		}
		in = append(in, fmt.Sprintf("%s's 95 %% interval %.3f–%.3f within %.0f %% of the predicted %.3f–%.3f", rule, clo, chi, 100*spreadTolerance, lo, hi))
	}
	cfToo := ""
	if cf {
		cfToo = "; CF's frozen spread depends only on the clamp and the client weights, so the same holds for CF's"
	}
	atPaper := ""
	if pp, err := paper.Predict(); err == nil {
		atPaper = fmt.Sprintf(", which gives AALV %.2f at the paper's budget", pp.AALV)
	}
	return precondition{needs: frozenArithmetic,
		why: "GAA's and AALV's spreads are the frozen-variance arithmetic's for this budget (" + strings.Join(in, "; ") +
			"): for GAA's and AALV's an agreement with Table 4 or a miss follows from that arithmetic at this budget's weight-decay steps" +
			atPaper + " (the Table 4 prediction checks it there)" + cfToo + ", and is no evidence about what the clients learned"}
}

// bflpFloorLogVar is BFL-P's clamp: the forward pass, the KL and the aggregation read log σ² as at
// least −8.
const bflpFloorLogVar = -8.0

// effectiveFloor is the least spread a BFL-P net of w Gaussian weights samples with: every log σ²
// below the clamp is read as −8, so each weight's σ is at least e⁻⁴ and ‖σ‖₂ at least √w e⁻⁴.
func effectiveFloor(w int) float64 { return math.Sqrt(float64(w)) * math.Exp(bflpFloorLogVar/2) }

// ozerEffectiveSpread compares Table 4's spreads (raw log-variances, as its AALV and CF columns below
// the clamp's floor show) with the spreads BFL-P's forward pass samples with, on Fashion-MNIST.
// Under frozen variances AALV (an average of values at or below −8) and CF (below its smallest
// client variance) hold every log σ² below the clamp, so the net samples every weight at the floor;
// GAA's clamped partial sums keep every log σ² at or above −8, so its raw and effective spreads agree.
func ozerEffectiveSpread() string {
	w := ozerTable4Data[0].weights
	floor := effectiveFloor(w)
	var rows []string
	for _, clients := range []string{"c10", "c100"} {
		sp := ozerSpread[clients]
		rows = append(rows, fmt.Sprintf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f |", strings.TrimPrefix(clients, "c"),
			sp["CF"].mean, sp["AALV"].mean, sp["GAA"].mean, floor, sp["GAA"].mean))
	}
	return fmt.Sprintf("**Raw against effective spreads.** Table 4 reports the spread of the raw log-variances: its CF and "+
		"AALV columns lie below √%d e⁻⁴ = %.2f, the least spread a net of %d Gaussian weights can sample with when every "+
		"log σ² below the clamp is read as −8. With frozen variances AALV (an average of values at or below −8) and CF "+
		"(below its smallest client variance) keep every log σ² under the clamp, so the net samples each weight at σ = e⁻⁴ and "+
		"both use the spread %.2f; GAA's clamped partial sums keep its log-variances at or above −8, so its raw and effective "+
		"spreads agree. Table 4's order CF < AALV < GAA is an order of raw values; the spreads the forward pass uses are "+
		"CF = AALV < GAA, within %.0f %% of each other (Fashion-MNIST):\n\n%s%s",
		w, floor, w, floor, 100*(ozerSpread["c10"]["GAA"].mean/floor-1),
		tableHeader("clients", "CF raw", "AALV raw", "GAA raw", "CF = AALV effective", "GAA effective"), strings.Join(rows, "\n"))
}
