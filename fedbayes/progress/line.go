package progress

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"fedbayes.dev/fedbayes/results"
)

// keyMetrics are the metrics a progress line shows, in this order, when the run records them
// (results.Metric.Line): the global model's test accuracy (or mse for regression), nll and ece, and
// the clients' training loss. The rows of a run keep every metric; `fedbayes table` and `fedbayes
// status` show the others.
var keyMetrics = results.RankedMetrics(func(m results.Metric) int { return m.Line })

// otherMetrics is how many metrics a line shows, by name, for a run that records none of keyMetrics.
const otherMetrics = 3

// metricLabels are the names a progress line gives metrics whose own name does not say what they
// hold.
var metricLabels = map[string]string{"loss": "train-loss"}

// Legend says what the metrics of a progress line hold. The engine computes "loss" as the mean,
// over the round's clients and local steps, of each step's training objective NLL + kl_weight *
// KL(q || prior) / n_k (models.StepStats.Loss: the negative ELBO per training example; the NLL alone
// for a non-Bayesian net), on the training batch, before the step's update.
const Legend = "progress: accuracy, nll and ece are the global model's, on the test set, after the round; " +
	"train-loss is the clients' local training objective, NLL + KL/n_k per example (the negative ELBO; the NLL alone for a non-Bayesian net), " +
	"which can rise while accuracy rises: its KL term grows as the posterior moves away from the prior"

// metricLabel is the name a progress line gives metric name.
func metricLabel(name string) string {
	if l, ok := metricLabels[name]; ok {
		return l
	}
	return name
}

// lineMetrics returns the names of the metrics of m that a progress line (terminal or notebook) shows:
// those of keyMetrics it holds, in that order, or, when it holds none, the first otherMetrics by name.
// The rows hold every metric.
func lineMetrics(m map[string]float64) []string {
	var names []string
	for _, k := range keyMetrics {
		if _, ok := m[k]; ok {
			names = append(names, k)
		}
	}
	if len(names) > 0 {
		return names
	}
	names = orderedMetrics(m)
	return names[:min(len(names), otherMetrics)]
}

// orderedMetrics returns every metric name of m: keyMetrics first, in their order, then the others
// by name.
func orderedMetrics(m map[string]float64) []string {
	var names, rest []string
	for _, k := range keyMetrics {
		if _, ok := m[k]; ok {
			names = append(names, k)
		}
	}
	for name := range m {
		if !contains(keyMetrics, name) {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// formatValue formats a metric with 4 significant digits.
func formatValue(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// FormatLine renders a snapshot as one line of text: the run's place in a planned sweep and its
// label (lineHead), its rounds or how it ended (lineRounds), and its key metrics (lineMetrics), e.g.
// "run 3 of 12, fmnist-eaa seed 1 round 3/10 [======>             ]  30% 1.2s/round ETA 8.4s
// (sweep ETA 2m10s) accuracy 0.9123 nll 0.3011 ece 0.0213 train-loss 1.234".
func FormatLine(s Snapshot) string {
	parts := []string{lineHead(s), lineRounds(s)}
	for _, name := range lineMetrics(s.Metrics) {
		parts = append(parts, metricLabel(name)+" "+formatValue(s.Metrics[name]))
	}
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, " ")
}

// lineHead is "run 3 of 12, LABEL" in a planned sweep, else the label.
func lineHead(s Snapshot) string {
	if s.Runs == 0 {
		return s.Label
	}
	head := fmt.Sprintf("run %d of %d", s.Run, s.Runs)
	if s.Label != "" {
		head += ", " + s.Label
	}
	return head
}

// lineRounds is how a run ended ("completed: 10 rounds in 12.0s") or where it stands: its round (a
// bar when the number of rounds is known), the step within the round in progress, the time per
// round and the ETAs of the run and of the sweep.
func lineRounds(s Snapshot) string {
	var b strings.Builder
	if s.Finished {
		fmt.Fprintf(&b, "%s: %s in %s", s.Status, rounds(s.Round), FormatDuration(s.Elapsed))
	} else {
		if s.Total > 0 {
			const width = 20
			filled := int(s.Fraction() * width)
			bar := strings.Repeat("=", filled)
			if filled < width {
				bar += ">" + strings.Repeat(" ", width-filled-1)
			}
			fmt.Fprintf(&b, "round %d/%d [%s] %3.0f%%", s.Round, s.Total, bar, 100*s.Fraction())
		} else {
			fmt.Fprintf(&b, "round %d", s.Round)
		}
		if s.InRound > 0 && s.Steps > 0 {
			fmt.Fprintf(&b, " (round %d: step %d/%d, %s)", s.InRound, s.Step, s.Steps, inRound(s))
		}
		if s.PerRound > 0 {
			fmt.Fprintf(&b, " %s/round", FormatDuration(s.PerRound))
		}
		if s.ETA > 0 {
			fmt.Fprintf(&b, " ETA %s", FormatDuration(s.ETA))
		}
	}
	if s.SweepETA > 0 {
		fmt.Fprintf(&b, " (sweep ETA %s)", FormatDuration(s.SweepETA))
	}
	return b.String()
}

// rounds is "1 round" or "n rounds".
func rounds(n int) string {
	if n == 1 {
		return "1 round"
	}
	return fmt.Sprintf("%d rounds", n)
}
