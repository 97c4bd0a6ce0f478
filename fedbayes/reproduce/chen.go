package reproduce

import (
	"fmt"

	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/stats"
)

// chenPreset is the multi-round FedBE against FedAvg comparison: engine presets with
// one variant per method, labelled by the method (presets.ChenMethods) (fedbayes run fedbe-fmnist-fast).
var chenPreset = Preset{Full: "fedbe-fmnist-full", Medium: "fedbe-fmnist-medium", Reduced: "fedbe-fmnist-fast"}

// chenCIFAR10 is Chen & Chao's non-IID CIFAR-10 accuracy (%) with the ConvNet and Dirichlet clients
// (poster, "Non-i.i.d CIFAR-10" table): FedAvg, FedBE (w/o SWA) and FedBE; the poster gives no
// Fashion-MNIST numbers and no Dirichlet-distribution row.
var chenCIFAR10 = map[string]map[string]ref{
	"fedavg":                {results.Accuracy: {72.3, 0.12}},
	"fedbe-gaussian-no-swa": {results.Accuracy: {70.1, 0.42}},
	"fedbe-gaussian":        {results.Accuracy: {73.9, 0.45}},
}

// chenPaper is Chen & Chao's FedBE against FedAvg over several rounds.
func chenPaper() *Paper {
	return &Paper{ID: "004", Title: "Chen & Chao, FedBE: Making Bayesian Model Ensemble Applicable to Federated Learning (poster)",
		Presets: []Preset{chenPreset}, section: chenSection}
}

func chenSection(b Budget, runs paperRuns) (*Section, error) {
	s := &Section{Heading: "004 · Chen & Chao: FedBE against FedAvg over rounds"}
	s.Setting = "FedBE (Alg. 1): every round the clients train from the global model as in FedAvg; the server fits a " +
		"global model distribution to the client models (a diagonal Gaussian, or a Dirichlet over their convex combinations), " +
		"takes M sampled models, the clients and their mean as teachers, pseudo-labels its unlabeled set with their averaged " +
		"predictive and distils it, with SWA, into the next global model. The server step is the authors' code's " +
		"(presets.ChenServer, docs/engine.md): pseudo labels sharpened with temperature 0.5, 20 epochs of momentum SGD at " +
		"their small step, batch 128, the student starting at FedAvg's mean. FedAvg runs the same rounds with the same clients, " +
		"initial model and batch order, through the engine (one variant per method). 10 clients, all active, Dirichlet(0.1) label skew, 20% of the training set kept " +
		"unlabeled for the server, an MLP with 100 hidden units. The poster's table is non-IID CIFAR-10 (10 clients, 40 " +
		"rounds of 20 local epochs, 10K unlabeled server images); its ConvNet column is set beside ours for the direction " +
		"of the effects only, as the poster has no Fashion-MNIST numbers. Section 003 compares FedBE with one-round " +
		"FedAvg in Hasan's setting.\n\n" + budgetLine(chenPreset, b, runs) +
		fmt.Sprintf("; both findings judge each run by its mean accuracy over its last %d rounds, paired by seed, since the "+
			"final round of a non-IID run moves by points from round to round", chenTail)
	rs := runSet(runs.complete[chenPreset.Name(b)])
	methods := presets.ChenMethods
	s.Blocks = append(s.Blocks, "Final round, ours (Fashion-MNIST) beside the poster's ConvNet on Dirichlet non-IID CIFAR-10:\n\n"+
		compareTable(rs, "variant", methods, []metricCol{colAcc, colNLL, colECE}, chenCIFAR10))
	for _, m := range []metricCol{colAcc, colNLL} {
		series := learningSeries(rs, "variant", methods, m.name, m.scale)
		if len(series) == 0 {
			continue
		}
		c, err := plots.LearningCurves("chen-"+m.name+"-per-round", plots.Curves{Title: m.header + " of the global model per round", YLabel: m.header, Series: series})
		s.addChart(c, err, fmt.Sprintf("%s of the global model after every round, FedAvg and FedBE on the same clients; mean ± SE over seeds (%s budget).", m.header, b))
	}
	s.Findings = chenFindings(rs)
	return s, nil
}

// chenTail is the number of last rounds the 004 findings average over: the final round of a
// non-IID FedAvg or FedBE run moves by points from round to round (re-running one of these runs
// gave 74.97 % against a recorded 77.99 % at the last round), so each run is summarised by its mean
// accuracy over its last chenTail rounds before the seeds are compared (paired by seed).
const chenTail = 5

// chenFindings checks the poster's non-IID table: FedBE above FedAvg, and SWA adding to it. Each
// run counts with its mean accuracy over its last chenTail rounds.
func chenFindings(rs runSet) []Finding {
	acc := func(method string) stats.Sample {
		return rs.where("variant", method).tailSample(results.Accuracy, chenTail)
	}
	compare := func(f Finding, lo, hi string) Finding {
		a, b := acc(lo), acc(hi)
		sa, errA := stats.Summarize(a.Values)
		sb, errB := stats.Summarize(b.Values)
		if errA != nil || errB != nil {
			f.Verdict, f.Evidence = NotRun, fmt.Sprintf("no complete runs of %s and %s with %d evaluated rounds", lo, hi, chenTail)
			return f
		}
		var c claims
		c.below(lo+" < "+hi, a, b, colAcc)
		f.decide(c.checks(), fmt.Sprintf("accuracy averaged over each run's last %d rounds: %s %s%% against %s %s%% (%d and %d seeds)",
			chenTail, hi, stat{sb}.format(100, 2), lo, stat{sa}.format(100, 2), sb.N, sa.N))
		if text, caveat := finalRoundText(rs, [][2]string{{lo, hi}}, colAcc, fmt.Sprintf("each run's last %d rounds", chenTail), f.Verdict); text != "" {
			f.Evidence += ". " + text
			if caveat != "" {
				f.Caveat = caveat
			}
		}
		return f
	}
	beats := compare(Finding{Claim: "FedBE (Gaussian, SWA) ends above FedAvg in accuracy on non-IID clients",
		Source: "poster, non-IID CIFAR-10 table (every network, Step and Dirichlet: +1.6 to +9.3 points)"},
		"fedavg", "fedbe-gaussian")
	beats.explain(seedGains(acc("fedbe-gaussian"), acc("fedavg"), "FedBE", "FedAvg") + ". The server step is the authors' " +
		"code's; the former one, without sharpening and at a 100 times larger step, gave an underconfident student below " +
		"FedAvg (docs/engine.md, FedBE over rounds).")
	swa := compare(Finding{Claim: "SWA adds to FedBE: FedBE ends above FedBE (w/o SWA)",
		Source: "poster, non-IID CIFAR-10 table (+1.6 to +4.5 points)"},
		"fedbe-gaussian-no-swa", "fedbe-gaussian")
	swa.explain(seedGains(acc("fedbe-gaussian"), acc("fedbe-gaussian-no-swa"), "FedBE", "FedBE (w/o SWA)") + ". Here SWA " +
		"averages the student at the end of each of the 20 epochs of one distillation at the authors' code's constant step " +
		"(the code averages every 25 steps from step 500), where the poster describes averaging over a cyclical schedule.")
	return []Finding{beats, swa}
}
