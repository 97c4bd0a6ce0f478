package notebook

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/plots"
)

// PooledReliability merges the reliability bins of several seeds (same edges) into one diagram:
// counts add, mean confidence and accuracy are count-weighted. It also returns the ECE of the
// merged bins, Σ_b |B_b|/N · |acc(B_b) − conf(B_b)| (Hasan 2023, Eq. 2.15).
func PooledReliability(res []metrics.UncertaintyResult) ([]plots.ReliabilityBin, float64) {
	if len(res) == 0 {
		return nil, math.NaN()
	}
	bins := make([]plots.ReliabilityBin, len(res[0].Classification.Reliability))
	total := 0
	for _, r := range res {
		for i, rb := range r.Classification.Reliability {
			bins[i].Count += rb.Count
			bins[i].Confidence += rb.Confidence * float64(rb.Count)
			bins[i].Accuracy += rb.Accuracy * float64(rb.Count)
			total += rb.Count
		}
	}
	ece := 0.0
	for i := range bins {
		if c := float64(bins[i].Count); c > 0 {
			bins[i].Confidence /= c
			bins[i].Accuracy /= c
			ece += c / float64(total) * math.Abs(bins[i].Accuracy-bins[i].Confidence)
		}
	}
	return bins, ece
}

// MeanConfidence is the mean top-class confidence of the mean predictive over the inputs of r, in
// percent (from its reliability bins).
func MeanConfidence(r metrics.UncertaintyResult) float64 {
	sum, n := 0.0, 0
	for _, rb := range r.Classification.Reliability {
		sum += rb.Confidence * float64(rb.Count)
		n += rb.Count
	}
	return 100 * sum / float64(n)
}

// Commonest names the class predicted most often over all the seeds' inputs, with its share in
// percent, e.g. "7 (64%)".
func Commonest(res []metrics.UncertaintyResult, classes []string) string {
	counts := make([]int, len(classes))
	total := 0
	for _, r := range res {
		for _, u := range r.Inputs {
			counts[u.Predicted]++
			total++
		}
	}
	best := 0
	for c, n := range counts {
		if n > counts[best] {
			best = c
		}
	}
	return fmt.Sprintf("%s (%.0f%%)", classes[best], 100*float64(counts[best])/float64(total))
}

// seedPM is a quantity's mean ± SE over the seeds' results, formatted with decimals.
func seedPM(res []metrics.UncertaintyResult, decimals int, f func(metrics.UncertaintyResult) float64) (string, float64, error) {
	m, se, err := MeanSE(Over(res, f))
	return PM(m, se, decimals), m, err
}

// Calibration is the test-set calibration of a study's nets: a table of accuracy, NLL, Brier, ECE
// and mean confidence (mean ± SE over seeds), a verdict line per net (over- or underconfident on
// average) and the reliability diagram of the seeds pooled.
func (st *Study) Calibration() (*TextTable, []string, plots.Reliability, error) {
	tab := NewTextTable("net", "accuracy %", "NLL", "Brier", "ECE %", "mean confidence")
	var verdicts []string
	rel := plots.Reliability{Title: fmt.Sprintf("reliability on %s (%d seeds pooled)", st.Sets[0], st.Spec.Seeds)}
	for _, run := range st.Runs {
		res := run.Results[0]
		var cells []string
		var means []float64
		for _, q := range []struct {
			decimals int
			f        func(metrics.UncertaintyResult) float64
		}{
			{2, func(r metrics.UncertaintyResult) float64 { return r.Classification.AccuracyPercent() }},
			{3, func(r metrics.UncertaintyResult) float64 { return r.Classification.NLL }},
			{3, func(r metrics.UncertaintyResult) float64 { return r.Classification.Brier }},
			{2, func(r metrics.UncertaintyResult) float64 { return r.Classification.ECEPercent() }},
			{2, MeanConfidence},
		} {
			c, m, err := seedPM(res, q.decimals, q.f)
			if err != nil {
				return nil, nil, rel, fmt.Errorf("notebook: %s net: %w", run.Net, err)
			}
			cells, means = append(cells, c), append(means, m)
		}
		cells[4] += " %"
		tab.Row(append([]string{run.Net}, cells...)...)
		acc, conf := means[0], means[4]
		verdict := "overconfident"
		if conf < acc {
			verdict = "underconfident"
		}
		verdicts = append(verdicts, fmt.Sprintf("%s: %s on average (mean confidence %.1f%%, accuracy %.1f%%)", run.Net, verdict, conf, acc))
		bins, ece := PooledReliability(res)
		rel.Series = append(rel.Series, plots.ReliabilitySeries{Name: run.Net, Bins: bins, ECE: &ece})
	}
	return tab, verdicts, rel, nil
}

// Decomposition is the mean uncertainty of every net on every input set (Fischer et al. 2024,
// Eqs. 7-9): a table of accuracy, commonest prediction, normalised entropy, aleatoric and epistemic
// traces and mutual information (mean ± SE over seeds), and the two traces as stacked bars.
func (st *Study) Decomposition() (*TextTable, plots.Decomposition, error) {
	tab := NewTextTable("input set", "net", "accuracy %", "commonest prediction", "entropy", "aleatoric", "epistemic", "mutual inf.")
	dec := plots.Decomposition{Title: "mean aleatoric (light) and epistemic (dark) trace per input set", Sets: st.Sets, YLabel: "trace (Eq. 9)"}
	for _, run := range st.Runs {
		n := plots.DecompositionNet{Name: run.Net, Aleatoric: make([]float64, len(st.Sets)), Epistemic: make([]float64, len(st.Sets))}
		for j, set := range st.Sets {
			res := run.Results[j]
			acc := "—"
			if st.Labelled[j] {
				acc, _, _ = seedPM(res, 1, func(r metrics.UncertaintyResult) float64 { return r.Classification.AccuracyPercent() })
			}
			row := []string{set, run.Net, acc, Commonest(res, st.Classes)}
			for i, f := range []func(metrics.UncertaintyResult) float64{
				func(r metrics.UncertaintyResult) float64 { return r.MeanEntropy },
				func(r metrics.UncertaintyResult) float64 { return r.MeanAleatoric },
				func(r metrics.UncertaintyResult) float64 { return r.MeanEpistemic },
				func(r metrics.UncertaintyResult) float64 { return r.MeanMutualInformation },
			} {
				c, m, err := seedPM(res, 3, f)
				if err != nil {
					return nil, dec, fmt.Errorf("notebook: %s net on %s: %w", run.Net, set, err)
				}
				row = append(row, c)
				switch i {
				case 1:
					n.Aleatoric[j] = m
				case 2:
					n.Epistemic[j] = m
				}
			}
			tab.Row(row...)
		}
		dec.Nets = append(dec.Nets, n)
	}
	return tab, dec, nil
}

// setColors are the colours of the input sets in the scatter plots (grey for the test set),
// distinct from the nets' colours.
var setColors = []string{plots.Palette[8], plots.Palette[3], plots.Palette[4], plots.Palette[7]}

// Scatter is the per-input aleatoric and epistemic traces of net i (first seed), one colour per
// input set, at most limit inputs per set.
func (st *Study) Scatter(i, limit int) plots.Scatter {
	run := st.Runs[i]
	d := plots.Scatter{Title: run.Net + ": per-input decomposition (Eq. 9)", XLabel: "aleatoric", YLabel: "epistemic"}
	for j, set := range st.Sets {
		inputs := run.Results[j][0].Inputs
		g := plots.ScatterGroup{Name: set, Color: setColors[j%len(setColors)]}
		for _, u := range inputs[:min(limit, len(inputs))] {
			g.Points = append(g.Points, [2]float64{u.Aleatoric, u.Epistemic})
		}
		d.Groups = append(d.Groups, g)
	}
	return d
}

// ranksNothing reports whether measure is zero for every input of a deterministic net (its
// epistemic terms vanish by construction; Fischer et al. 2024, Sec. 2.3).
func ranksNothing(kind models.Kind, measure metrics.Measure) bool {
	return kind == models.Deterministic && (measure == metrics.MeasureEpistemic || measure == metrics.MeasureMutualInformation)
}

// RetentionCurves is the test accuracy of every net as the inputs most uncertain by measure are
// set aside (Fischer et al. 2024, Sec. 3.3 and Figs. 2, 4, 6, 7), at each fraction retained, one
// row per seed. A deterministic net is left out of the epistemic measures, which rank nothing.
func (st *Study) RetentionCurves(measure metrics.Measure, fractions []float64) (plots.Curves, error) {
	curves := plots.Curves{Title: "retained by " + measure.String(), YLabel: "test accuracy"}
	for _, run := range st.Runs {
		if ranksNothing(run.Kind, measure) {
			continue
		}
		series := plots.SeedSeries{Name: run.Net, X: fractions}
		for _, r := range run.Results[0] {
			pts, err := r.Retention(measure, fractions)
			if err != nil {
				return curves, fmt.Errorf("notebook: %s net: %w", run.Net, err)
			}
			acc := make([]float64, len(pts))
			for k, p := range pts {
				acc[k] = p.Accuracy
			}
			series.Runs = append(series.Runs, acc)
		}
		curves.Series = append(curves.Series, series)
	}
	return curves, nil
}

// RetentionTable is the test accuracy in percent (mean ± SE over seeds) at the fractions
// fractions[k] for k in keep, one row per measure and net (RetentionCurves).
func (st *Study) RetentionTable(fractions []float64, keep []int) (*TextTable, error) {
	header := []string{"measure", "net"}
	for _, k := range keep {
		if k < 0 || k >= len(fractions) {
			return nil, fmt.Errorf("notebook: retention table: index %d outside the %d fractions", k, len(fractions))
		}
		header = append(header, fmt.Sprintf("%.0f%% kept", 100*fractions[k]))
	}
	tab := NewTextTable(header...)
	for _, measure := range metrics.Measures {
		curves, err := st.RetentionCurves(measure, fractions)
		if err != nil {
			return nil, err
		}
		for _, s := range curves.Series {
			row := []string{measure.String(), s.Name}
			for _, k := range keep {
				m, se, err := MeanSE(Over(s.Runs, func(run []float64) float64 { return 100 * run[k] }))
				if err != nil {
					return nil, err
				}
				row = append(row, PM(m, se, 2))
			}
			tab.Row(row...)
		}
	}
	return tab, nil
}

// Scores returns one measure's per-input scores of a result.
func Scores(r metrics.UncertaintyResult, measure metrics.Measure) ([]float64, error) {
	out := make([]float64, len(r.Inputs))
	for i, u := range r.Inputs {
		v, err := measure.Of(u)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// OOD is how well each measure of each net tells every other input set from the test set: a table
// of AUROC (mean ± SE over seeds; 0.5 cannot tell them apart, 1 separates them), and a line per
// set naming the best net and measure.
func (st *Study) OOD() (*TextTable, []string, error) {
	tab := NewTextTable(append([]string{"net", "measure"}, st.Sets[1:]...)...)
	best := make([]string, len(st.Sets))
	bestAUROC := make([]float64, len(st.Sets))
	for _, run := range st.Runs {
		for _, measure := range metrics.Measures {
			row := []string{run.Net, measure.String()}
			for j := 1; j < len(st.Sets); j++ {
				per := make([]float64, len(run.Results[j]))
				for k := range per {
					pos, err := Scores(run.Results[j][k], measure)
					if err != nil {
						return nil, nil, err
					}
					neg, err := Scores(run.Results[0][k], measure)
					if err != nil {
						return nil, nil, err
					}
					per[k] = metrics.AUROC(pos, neg)
				}
				m, se, err := MeanSE(per)
				if err != nil {
					return nil, nil, err
				}
				row = append(row, PM(m, se, 3))
				if m > bestAUROC[j] {
					bestAUROC[j], best[j] = m, run.Net+", "+measure.String()
				}
			}
			tab.Row(row...)
		}
	}
	var lines []string
	for j := 1; j < len(st.Sets); j++ {
		lines = append(lines, fmt.Sprintf("best at telling %s from test inputs: %s (AUROC %.3f)", st.Sets[j], best[j], bestAUROC[j]))
	}
	return tab, lines, nil
}
