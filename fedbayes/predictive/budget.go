package predictive

import (
	"fmt"
	"strconv"
	"strings"
)

// examplesText states how many examples a subsample asks for: "all", or "≤N" (the dataset may
// hold fewer; the run then uses them all).
func examplesText(subsample int) string {
	if subsample <= 0 {
		return "all"
	}
	return "≤" + thousands(subsample)
}

// thousands formats n with commas ("60,000").
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// floats joins values as the shortest decimals ("0, 0.3, 0.6").
func floats(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(parts, ", ")
}

// plural is "1 seed", "3 seeds".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// DescribeBudget states what the spec (with defaults) runs, for run.json and tables: data, clients,
// heterogeneity values, seeds and the training epochs. It is computed from the spec, never copied
// from a preset's label, so an overridden preset is recorded as it ran.
func (s Spec) DescribeBudget() string {
	d := s.WithDefaults()
	out := fmt.Sprintf("%s: %s training / %s test examples, %d clients, h = %s, %s, sampler %d epochs x %d cycles x %d samples, %s, %s",
		d.Dataset, examplesText(d.Subsample), examplesText(d.TestSubsample), d.Clients, floats(d.H),
		plural(len(d.Seeds), "seed"), d.Sampler.Epochs, d.Sampler.Cycles, d.Sampler.SamplesPerCycle,
		plural(d.Local.Epochs, "local epoch"), plural(d.Distill.Epochs, "distillation epoch"))
	if contains(d.Methods, MethodFedKT) {
		out += fmt.Sprintf(", FedKT %s x %s per client", plural(d.FedKT.Students, "student"), plural(d.FedKT.Teachers, "teacher"))
	}
	return out
}
