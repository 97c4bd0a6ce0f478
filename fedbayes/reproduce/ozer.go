package reproduce

import (
	"fmt"
	"math"
	"strings"

	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/stats"
)

// ozerRows are the rows of Ozer et al. (2022), Tables 1 and 3, as preset variant labels.
var ozerRows = []string{"FED", "FEDAVG", "FVBA-EAA", "FVBA-GAA", "FVBA-AALV", "FVBA-PPA", "FVBA-CF",
	"FVBWA-EAA", "FVBWA-GAA", "FVBWA-AALV", "FVBWA-PPA", "FVBWA-CF"}

// aen is a reference row of accuracy (%), ECE (%) and NLL.
func aen(acc, accPM, ece, ecePM, nll, nllPM float64) map[string]ref {
	return map[string]ref{results.Accuracy: {acc, accPM}, results.ECE: {ece, ecePM}, results.NLL: {nll, nllPM}}
}

// ozerFMNIST holds the Fashion-MNIST columns of Ozer et al. (2022), Table 1 (10 clients) and Table 3
// (100 clients), by "cC-partition" and row, as printed (mean ± standard error over 5 seeds).
var ozerFMNIST = map[string]map[string]map[string]ref{
	"c10-iid": {
		"FED": aen(89.62, 0.15, 7.99, 0.12, 0.64, 0.01), "FEDAVG": aen(89.58, 0.15, 7.97, 0.15, 0.63, 0.01),
		"FVBA-EAA": aen(90.10, 0.11, 3.04, 0.09, 0.30, 0.00), "FVBA-GAA": aen(89.82, 0.11, 6.38, 0.10, 0.46, 0.01),
		"FVBA-AALV": aen(89.85, 0.08, 6.44, 0.07, 0.47, 0.00), "FVBA-PPA": aen(89.78, 0.08, 2.16, 0.07, 0.29, 0.00),
		"FVBA-CF": aen(89.90, 0.15, 6.35, 0.10, 0.47, 0.00), "FVBWA-EAA": aen(90.09, 0.05, 3.07, 0.11, 0.30, 0.00),
		"FVBWA-GAA": aen(89.85, 0.07, 6.37, 0.06, 0.47, 0.00), "FVBWA-AALV": aen(89.85, 0.11, 6.37, 0.06, 0.46, 0.01),
		"FVBWA-PPA": aen(89.68, 0.08, 2.17, 0.09, 0.29, 0.00), "FVBWA-CF": aen(89.84, 0.12, 6.37, 0.14, 0.46, 0.01),
	},
	"c10-dirichlet": {
		"FED": aen(88.11, 0.24, 8.73, 0.17, 0.65, 0.01), "FEDAVG": aen(87.99, 0.35, 8.90, 0.24, 0.66, 0.02),
		"FVBA-EAA": aen(88.57, 0.21, 3.45, 0.15, 0.34, 0.01), "FVBA-GAA": aen(88.62, 0.27, 6.47, 0.20, 0.47, 0.01),
		"FVBA-AALV": aen(88.47, 0.20, 6.64, 0.13, 0.47, 0.01), "FVBA-PPA": aen(88.14, 0.29, 2.41, 0.14, 0.34, 0.01),
		"FVBA-CF": aen(88.75, 0.25, 6.44, 0.11, 0.47, 0.01), "FVBWA-EAA": aen(88.30, 0.32, 3.47, 0.35, 0.35, 0.01),
		"FVBWA-GAA": aen(88.39, 0.26, 6.73, 0.22, 0.48, 0.01), "FVBWA-AALV": aen(88.46, 0.26, 6.78, 0.14, 0.49, 0.01),
		"FVBWA-PPA": aen(87.72, 0.30, 2.47, 0.18, 0.35, 0.01), "FVBWA-CF": aen(88.33, 0.28, 6.90, 0.23, 0.49, 0.01),
	},
	"c100-iid": {
		"FED": aen(88.55, 0.15, 8.30, 0.08, 0.63, 0.01), "FEDAVG": aen(88.38, 0.12, 8.48, 0.08, 0.64, 0.02),
		"FVBA-EAA": aen(85.77, 0.11, 3.02, 0.29, 0.42, 0.00), "FVBA-GAA": aen(89.49, 0.17, 4.97, 0.11, 0.35, 0.00),
		"FVBA-AALV": aen(89.31, 0.17, 5.03, 0.12, 0.35, 0.00), "FVBA-PPA": aen(85.05, 0.09, 3.24, 0.14, 0.45, 0.00),
		"FVBA-CF": aen(89.40, 0.11, 4.96, 0.06, 0.35, 0.00), "FVBWA-EAA": aen(85.88, 0.14, 2.58, 0.15, 0.42, 0.00),
		"FVBWA-GAA": aen(89.56, 0.13, 4.81, 0.11, 0.35, 0.00), "FVBWA-AALV": aen(89.48, 0.12, 4.92, 0.12, 0.35, 0.00),
		"FVBWA-PPA": aen(85.00, 0.13, 3.14, 0.30, 0.45, 0.00), "FVBWA-CF": aen(89.53, 0.11, 4.87, 0.05, 0.35, 0.00),
	},
	"c100-dirichlet": {
		"FED": aen(87.16, 0.13, 8.39, 0.15, 0.58, 0.01), "FEDAVG": aen(86.77, 0.23, 8.56, 0.34, 0.59, 0.02),
		"FVBA-EAA": aen(82.18, 0.78, 4.32, 0.60, 0.54, 0.02), "FVBA-GAA": aen(87.73, 0.14, 4.72, 0.21, 0.38, 0.01),
		"FVBA-AALV": aen(87.49, 0.29, 4.94, 0.25, 0.38, 0.01), "FVBA-PPA": aen(72.87, 4.12, 7.97, 1.05, 0.83, 0.13),
		"FVBA-CF": aen(87.63, 0.22, 4.75, 0.17, 0.38, 0.01), "FVBWA-EAA": aen(79.61, 1.06, 4.74, 0.80, 0.61, 0.03),
		"FVBWA-GAA": aen(87.40, 0.26, 4.92, 0.24, 0.39, 0.01), "FVBWA-AALV": aen(87.42, 0.40, 5.07, 0.30, 0.39, 0.01),
		"FVBWA-PPA": aen(76.38, 0.79, 5.59, 0.69, 0.70, 0.02), "FVBWA-CF": aen(87.16, 0.41, 5.12, 0.36, 0.40, 0.02),
	},
}

// ozerSpread is Ozer et al. (2022), Table 4, Fashion-MNIST: the learned spread (Euclidean norm of the
// dense layers' standard deviations) of the final FVBWA models on non-IID data, by clients and rule.
var ozerSpread = map[string]map[string]ref{
	"c10":  {"EAA": {15.48, 0.41}, "GAA": {3.93, 0.01}, "AALV": {2.81, 0.01}, "PPA": {18.40, 0.11}, "CF": {1.40, 0.02}},
	"c100": {"EAA": {79.19, 0.66}, "GAA": {3.94, 0.01}, "AALV": {2.80, 0.00}, "PPA": {64.70, 0.26}, "CF": {1.42, 0.03}},
}

// ozerSettings are the four Fashion-MNIST presets, by "cC-partition".
var ozerSettings = []string{"c10-iid", "c10-dirichlet", "c100-iid", "c100-dirichlet"}

func ozerPreset(setting string) Preset { return ozerPresetMode(setting, false) }

// ozerPresetMode is the preset of a setting, in BFL-P mode (presets.BFLPSuffix) when bflp is set.
func ozerPresetMode(setting string, bflp bool) Preset {
	if bflp {
		return Preset{Full: "ozer2022-fmnist-" + setting + presets.BFLPSuffix}
	}
	return Preset{Full: "ozer2022-fmnist-" + setting}
}

func ozerPaper() *Paper {
	p := &Paper{ID: "000", Title: "Ozer, Buldu, Akgül, Unal (2022), How to Combine Variational Bayesian Networks in Federated Learning"}
	for _, s := range ozerSettings {
		p.Presets = append(p.Presets, ozerPreset(s))
	}
	// The 100-client non-IID preset holds the headline finding: run it first.
	p.Presets[0], p.Presets[3] = p.Presets[3], p.Presets[0]
	// Then the same settings in BFL-P mode, Table 4's (non-IID) first.
	for _, s := range []string{"c10-dirichlet", "c100-dirichlet", "c10-iid", "c100-iid"} {
		p.Presets = append(p.Presets, ozerPresetMode(s, true))
	}
	// Then the claim presets of the 10-client calibration and 100-client collapse findings, at the
	// report's budget only.
	p.Presets = append(p.Presets, ozerCalibrationPreset, ozerCollapsePreset)
	p.section = ozerSection
	return p
}

// ozerCalibrationPreset is the claim preset of Table 1's 10-client calibration finding (package
// presets, claims.go): BFL-P mode, 10 IID clients, the paper's E = 10 for 12 rounds, FED against
// FVBWA-GAA and FVBWA-EAA. It belongs to the medium report only.
var ozerCalibrationPreset = Preset{Full: ozerCalibrationName, Medium: ozerCalibrationName, Reduced: ozerCalibrationName, Only: Medium}

// ozerCalibrationName is the engine preset of ozerCalibrationPreset.
const ozerCalibrationName = "ozer2022-fmnist-c10-iid" + presets.BFLPSuffix + presets.CalibrationSuffix

// ozerCollapsePreset is the claim preset of Table 3's 100-client non-IID accuracy finding (package
// presets, claims.go): BFL-P mode, T = 400, E = 10, FVBWA-GAA, EAA and PPA. Medium report only.
var ozerCollapsePreset = Preset{Full: ozerCollapseName, Medium: ozerCollapseName, Reduced: ozerCollapseName, Only: Medium}

// ozerCollapseName is the engine preset of ozerCollapsePreset.
const ozerCollapseName = "ozer2022-fmnist-c100-dirichlet" + presets.BFLPSuffix + presets.CollapseSuffix

// ozerCollapseFinding checks Table 3's 100-client non-IID claim on the collapse preset's runs: EAA's
// and PPA's accuracy below GAA's, each run summarised by its mean over its last presets.CollapseTail
// evaluations, paired by seed, Holm over the two. Its evidence adds each rule's course over the rounds
// (collapseCourse), since the claim says when they fall behind.
func ozerCollapseFinding(rs runSet) Finding {
	f := Finding{Claim: "With 100 clients (non-IID), EAA and PPA fall behind GAA in accuracy late in training (BFL-P mode, T = 400)",
		Source:  "Sec. 4 and Table 3 (FMNIST non-IID, FVBWA: EAA 79.61 %, PPA 76.38 % against GAA 87.40 % after 500 rounds)",
		Presets: []string{ozerCollapseName}}
	acc := func(v string) stats.Sample {
		return rs.where("variant", v).tailSample(results.Accuracy, presets.CollapseTail)
	}
	var c claims
	var ev []string
	ref, fall := "FVBWA-GAA", []string{"FVBWA-EAA", "FVBWA-PPA"}
	gaa := acc(ref)
	for _, r := range append([]string{ref}, fall...) {
		a := acc(r)
		if sum, err := stats.Summarize(a.Values); err == nil {
			ev = append(ev, fmt.Sprintf("%s %s%%", r, stat{sum}.format(100, 2)))
			if r != ref && len(gaa.Values) > 0 {
				c.below(r+" < "+ref, a, gaa, colAcc)
			}
		}
	}
	evidence := fmt.Sprintf("accuracy averaged over each run's last %d evaluations: %s", presets.CollapseTail, strings.Join(ev, ", "))
	if course := collapseCourse(rs, ref, fall, presets.CollapseTail); course != "" {
		evidence += "; " + course
	}
	f.decide(c.checks(), evidence)
	var pairs [][2]string
	for _, r := range fall {
		pairs = append(pairs, [2]string{r, ref})
	}
	if text, caveat := finalRoundText(rs, pairs, colAcc, fmt.Sprintf("the mean of each run's last %d evaluations", presets.CollapseTail), f.Verdict); text != "" {
		f.Evidence += ". " + text
		if caveat != "" {
			f.Caveat = caveat
		}
	}
	return f
}

// ozerCalibrationFinding checks Table 1's calibration claim on the claim preset's runs: GAA's and
// EAA's ECE and NLL below FED's, paired by seed, Holm over the four.
func ozerCalibrationFinding(rs runSet) Finding {
	f := Finding{Claim: "With 10 IID clients at the paper's E = 10, GAA and EAA have a lower ECE and NLL than FED (BFL-P mode)",
		Source:  "Sec. 4, Table 1 (FMNIST IID: ECE 7.99 % for FED, 6.37 % for FVBWA-GAA, 3.07 % for FVBWA-EAA; NLL 0.64, 0.47, 0.30)",
		Presets: []string{ozerCalibrationName}}
	row := func(v string) runSet { return rs.where("variant", v) }
	var c claims
	var ev []string
	for _, m := range []metricCol{colECE, colNLL} {
		fed := row("FED")
		if !fed.summary(m.name).ok() {
			continue
		}
		for _, r := range []string{"FVBWA-GAA", "FVBWA-EAA"} {
			if row(r).summary(m.name).ok() {
				c.below(fmt.Sprintf("%s %s < FED", m.header, r), row(r).sample(m.name), fed.sample(m.name), m)
			}
		}
		var vals []string
		for _, v := range []string{"FED", "FVBWA-GAA", "FVBWA-EAA"} {
			vals = append(vals, fmt.Sprintf("%s %s", v, row(v).summary(m.name).format(m.scale, m.digits)))
		}
		ev = append(ev, m.header+" "+strings.Join(vals, ", "))
	}
	f.decide(c.checks(), strings.Join(ev, "; "))
	f.explain("BFL-P's variances are held at the clamp (log σ² = −8) apart from EAA's, so GAA's net is close to FED's; " +
		"the checks that are not decisive list the gaps within the seeds' noise.")
	return f
}

func ozerSection(b Budget, runs paperRuns) (*Section, error) {
	s := &Section{Heading: "000 · Ozer et al. (2022): how to combine variational Bayesian networks"}
	var lines []string
	for _, bflp := range []bool{false, true} {
		for _, set := range ozerSettings {
			pr := ozerPresetMode(set, bflp)
			lines = append(lines, budgetLine(pr, b, runs)+ozerReach(set, runSet(runs.complete[pr.Name(b)])))
		}
	}
	if b == Medium {
		lines = append(lines, budgetLine(ozerCalibrationPreset, b, runs), budgetLine(ozerCollapsePreset, b, runs))
	}
	init, err := ozerInit(b)
	if err != nil {
		return nil, err
	}
	s.Setting = "LeNet with variational dense layers (local reparameterisation, log-variance, N(0, 1) prior), SGD " +
		"(lr 0.01, momentum 0.9, weight decay 1e-5), batch 64, Fashion-MNIST; 10 clients all active, or 100 clients with 10 " +
		"drawn each round; IID or Dirichlet(0.5). Rows: FED/FEDAVG (deterministic LeNet, equal/size weights), FVBA/FVBWA " +
		"(equal/size weights) with each rule. Paper numbers: Table 1 (10 clients) and Table 3 (100 clients), FMNIST columns.\n\n" +
		strings.Join(lines, "\n") + "\n\nDifferences from the paper: on 28×28 inputs NIID-Bench's LeNet flattens 16×4×4 = 256 " +
		"features (the paper's \"400\" is the 32×32 case), so our spread norm runs over 41,854 variational weights and biases; " +
		init + ", the paper does not give its initialisation.\n\n" +
		"**Two modes.** The presets without a suffix follow the paper's text. The `-bflp` presets (`model.compat: \"bfl-p\"`) " +
		"follow the authors' public code, BFL-P, where it differs from the text: log σ² starts at N(−9, 0.001²) and is clamped to " +
		"[−8, 8] in the forward pass, the KL and the aggregation (so it gets no gradient below −8); biases are deterministic " +
		"(41,640 variational weights); means start at N(0, 1/fan_in), and deterministic layers (the convolutions, and all of FED's and FEDAVG's net) " +
		"at PyTorch's default U(±1/√fan_in) weights and biases instead of He-normal weights and zero biases; EAA and GAA clamp every partial sum, AALV averages raw " +
		"values, PPA draws ⌊β_k N⌋ samples and uses the unbiased variance. Both modes evaluate as BFL-P's scores.py does, " +
		"so the tables are like-for-like with the paper's: ECE over 100 bins in percent, NLL −log(p + 10⁻⁸), accuracy in percent."
	get := func(set string) runSet { return runSet(runs.complete[ozerPreset(set).Name(b)]) }
	for _, set := range ozerSettings {
		rs := get(set)
		s.Blocks = append(s.Blocks, fmt.Sprintf("**%s** (%s), final round, ours beside the paper:\n\n%s",
			ozerPreset(set).Name(b), setTitle(set), compareTable(rs, "variant", presetRows(ozerPreset(set), b, ozerRows), []metricCol{colAcc, colECE, colNLL}, ozerFMNIST[set])))
	}
	getB := func(set string) runSet { return runSet(runs.complete[ozerPresetMode(set, true).Name(b)]) }
	for _, set := range ozerSettings {
		if rs := getB(set); len(rs) > 0 {
			s.Blocks = append(s.Blocks, fmt.Sprintf("**%s** (%s, BFL-P mode), final round, ours beside the paper:\n\n%s",
				ozerPresetMode(set, true).Name(b), setTitle(set), compareTable(rs, "variant", presetRows(ozerPresetMode(set, true), b, ozerRows),
					[]metricCol{colAcc, colECE, colNLL}, ozerFMNIST[set])))
		}
	}
	for _, set := range ozerSettings {
		if cmp := modeComparison(get(set), getB(set), ozerRows, "BFL-P"); cmp != "" {
			how := ozerModeMechanisms
			if init := ozerInitShift(get(set), getB(set)); init != "" {
				how += " " + init
			}
			s.Blocks = append(s.Blocks, fmt.Sprintf("**What BFL-P's code changes** (%s): the same rows, seeds and budget in both modes.\n\n%s\n\n%s",
				setTitle(set), cmp, how))
		}
	}
	// Table 4: learned spread, FVBWA, non-IID.
	var spread strings.Builder
	spread.WriteString("Learned spread ‖σ‖₂ of the final FVBWA models on non-IID data (Table 4):\n\n" +
		tableHeader("rule", "10 clients (ours)", "10 clients (paper)", "100 clients (ours)", "100 clients (paper)"))
	rules := []string{"EAA", "GAA", "AALV", "PPA", "CF"}
	for _, r := range rules {
		fmt.Fprintf(&spread, "| %s | %s | %s | %s | %s |\n", r,
			get("c10-dirichlet").where("variant", "FVBWA-"+r).summary(results.Spread).format(1, 3), ozerSpread["c10"][r],
			get("c100-dirichlet").where("variant", "FVBWA-"+r).summary(results.Spread).format(1, 3), ozerSpread["c100"][r])
	}
	if len(getB("c10-dirichlet"))+len(getB("c100-dirichlet")) > 0 {
		spread.WriteString("\nIn BFL-P mode:\n\n" +
			tableHeader("rule", "10 clients (ours, BFL-P)", "10 clients (paper)", "100 clients (ours, BFL-P)", "100 clients (paper)"))
		for _, r := range []string{"EAA", "GAA", "AALV", "PPA", "CF"} {
			fmt.Fprintf(&spread, "| %s | %s | %s | %s | %s |\n", r,
				getB("c10-dirichlet").where("variant", "FVBWA-"+r).summary(results.Spread).format(1, 3), ozerSpread["c10"][r],
				getB("c100-dirichlet").where("variant", "FVBWA-"+r).summary(results.Spread).format(1, 3), ozerSpread["c100"][r])
		}
	}
	s.Blocks = append(s.Blocks, spread.String())
	table4, table4Finding := ozerTable4Block()
	s.Blocks = append(s.Blocks, table4)
	// Figures: learning curves of the 100-client non-IID setting and the spread bars.
	c100 := get("c100-dirichlet")
	curveRows := []string{"FEDAVG", "FVBWA-EAA", "FVBWA-GAA", "FVBWA-AALV", "FVBWA-PPA", "FVBWA-CF"}
	if series := learningSeries(c100, "variant", curveRows, results.Accuracy, 100); len(series) > 0 {
		c, err := plots.LearningCurves("ozer2022-c100-dirichlet-accuracy", plots.Curves{Title: "100 clients, non-IID: test accuracy",
			YLabel: "accuracy (%)", Series: series})
		s.addChart(c, err, "Test accuracy per round, 100 clients (10 active), Dirichlet(0.5), FVBWA rules and FEDAVG; mean ± SE over seeds ("+string(b)+" budget).")
	}
	if sp := spreadChart(c100, rules); sp != nil {
		c, err := plots.LearnedSpread("ozer2022-c100-dirichlet-spread", *sp)
		s.addChart(c, err, "Learned spread ‖σ‖₂ per rule, 100 clients non-IID, FVBWA: ours and Ozer et al. (2022), Table 4 (log scale).")
	}
	// The findings name the settings they read; the report names their presets in the mode.
	named := func(f Finding, bflp bool) Finding {
		sets := f.Presets
		f.Presets = make([]string, len(sets))
		for i, set := range sets {
			f.Presets[i] = ozerPresetMode(set, bflp).Name(b)
		}
		return f
	}
	for _, f := range ozerFindings(get, getB) {
		s.Findings = append(s.Findings, named(f, false))
	}
	table4Finding.Presets = []string{} // computed from BFL-P's code, no run
	s.Findings = append(s.Findings, table4Finding)
	// The same accuracy findings in BFL-P mode, where its runs exist: the paper's numbers come from its code.
	for _, f := range ozerAccuracyFindings(getB, true) {
		if f.Verdict != NotRun {
			f.Claim += " (BFL-P mode)"
			if f.Formerly != "" {
				f.Formerly += " (BFL-P mode)"
			}
			s.Findings = append(s.Findings, named(f, true))
		}
	}
	if b == Medium {
		s.Findings = append(s.Findings, ozerCalibrationFinding(runSet(runs.complete[ozerCalibrationName])),
			ozerCollapseFinding(runSet(runs.complete[ozerCollapseName])))
	}
	for _, set := range []string{"c10-dirichlet", "c100-dirichlet"} {
		for _, find := range []func(Budget, string, runSet) (Finding, bool){ozerBFLPSpread, ozerBFLPTable4} {
			if f, ok := find(b, set, getB(set)); ok {
				f.Presets = []string{ozerPresetMode(set, true).Name(b)}
				s.Findings = append(s.Findings, f)
			}
		}
	}
	return s, nil
}

// setTitle describes an Ozer setting key.
func setTitle(set string) string {
	clients, part, _ := strings.Cut(set, "-")
	t := map[string]string{"c10": "10 clients, all active", "c100": "100 clients, 10 active"}[clients]
	return t + ", " + map[string]string{"iid": "IID", "dirichlet": "non-IID Dirichlet(0.5)"}[part]
}

// spreadChart is our FVBWA spread per rule beside the paper's (nil without runs).
func spreadChart(rs runSet, rules []string) *plots.Spread {
	ours := plots.SpreadGroup{Name: "fedbayes"}
	paper := plots.SpreadGroup{Name: "Ozer et al. (2022)"}
	for _, r := range rules {
		st := rs.where("variant", "FVBWA-"+r).summary(results.Spread)
		if !st.ok() || st.Mean <= 0 {
			return nil
		}
		ours.Mean, ours.SE = append(ours.Mean, st.Mean), append(ours.SE, st.se())
		paper.Mean, paper.SE = append(paper.Mean, ozerSpread["c100"][r].mean), append(paper.SE, ozerSpread["c100"][r].pm)
	}
	return &plots.Spread{Title: "learned spread, 100 clients, non-IID, FVBWA", Rules: rules, Groups: []plots.SpreadGroup{ours, paper}, LogY: true}
}

// firstN returns at most n elements, with a count of the rest.
func firstN(list []string, n int) []string {
	if len(list) <= n {
		return list
	}
	return append(list[:n:n], fmt.Sprintf("and %d more", len(list)-n))
}

// presetRows keeps the rows that are variants of the preset at budget b (a reduced budget may drop
// some), in the order of rows.
func presetRows(p Preset, b Budget, rows []string) []string {
	spec, err := presets.Preset(p.Name(b))
	if err != nil || len(spec.Variants) == 0 {
		return rows
	}
	have := map[string]bool{}
	for _, v := range spec.Variants {
		have[v.Label] = true
	}
	var out []string
	for _, r := range rows {
		if have[r] {
			out = append(out, r)
		}
	}
	return out
}

// ozerReachTarget is the accuracy the medium budget's rounds were chosen to reach with 10 clients
// (docs/reproduction/budgets.md: the first T at which the text mode's FVBWA-GAA row passed 85 % with
// 10 IID clients).
const ozerReachTarget = 0.85

// ozerReach says where a 10-client preset's rows end in accuracy (the range of their means over
// seeds), and whether that reaches the accuracy the budget was chosen for; "" for the 100-client
// presets and a preset without runs.
func ozerReach(set string, rs runSet) string {
	if !strings.HasPrefix(set, "c10-") || len(rs) == 0 {
		return ""
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range rs.values("variant") {
		st := rs.where("variant", v).summary(results.Accuracy)
		if st.ok() {
			lo, hi = min(lo, st.Mean), max(hi, st.Mean)
		}
	}
	if math.IsInf(lo, 0) {
		return ""
	}
	reach := "every row reaches"
	switch {
	case hi < ozerReachTarget:
		reach = "no row reaches"
	case lo < ozerReachTarget:
		reach = "not every row reaches"
	}
	return fmt.Sprintf("; the rows end at %.1f–%.1f %% accuracy (means over seeds): %s the %.0f %% this budget's rounds were chosen for",
		100*lo, 100*hi, reach, 100*ozerReachTarget)
}

// ozerInit describes the text mode's initial variances and how they train, read from the 10-client
// IID preset at budget b (every text-mode preset shares them).
func ozerInit(b Budget) (string, error) {
	spec, err := presets.Preset(ozerPreset("c10-iid").Name(b))
	if err != nil {
		return "", err
	}
	settings, err := spec.Expand()
	if err != nil {
		return "", err
	}
	for _, st := range settings {
		m, t := st.Spec.Model, st.Spec.Training
		if m.Kind == "deterministic" {
			continue
		}
		text := fmt.Sprintf("in the text mode the initial log-variance (%g) is ours", m.InitLogVar)
		if t.VarianceOptimizer != "" {
			text += fmt.Sprintf(", and the variances train with %s at learning rate %g while the means keep the paper's SGD",
				t.VarianceOptimizer, t.VarianceLR)
		}
		return text, nil
	}
	return "", fmt.Errorf("reproduce: %s has no variational row", spec.Name)
}
