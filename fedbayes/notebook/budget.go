package notebook

import (
	"fmt"
	"os"
	"strings"
)

// Budget is a notebook's budget knob, with the same meaning in every notebook.
type Budget string

const (
	// Quick (the default) runs in minutes on 2 CPU cores: small data, few rounds, few seeds. It
	// shows the pipeline and the shape of the results, not the papers' numbers.
	Quick Budget = "quick"
	// Reduced runs the papers' presets at their reduced budgets (each under about 30 minutes on 2
	// cores, stated in the preset's budget).
	Reduced Budget = "reduced"
	// Paper runs the papers' own budgets: hours to weeks on 2 cores, resumable.
	Paper Budget = "paper"
)

// Budgets lists the budgets, cheapest first.
var Budgets = []Budget{Quick, Reduced, Paper}

// FastEnv is the environment variable of headless runs (`make test` sets FEDBAYES_FAST=1): set to
// anything but "" or "0", it overrides a notebook's knob with Quick.
const FastEnv = "FEDBAYES_FAST"

// Resolve returns the budget a notebook runs for its knob: the knob itself, or Quick when
// FEDBAYES_FAST is set (headless tests), with a sentence saying which and why. An unknown knob is
// an error listing the budgets.
func Resolve(knob string) (Budget, string, error) {
	b := Budget(strings.ToLower(strings.TrimSpace(knob)))
	known := false
	for _, k := range Budgets {
		known = known || k == b
	}
	if !known {
		return "", "", fmt.Errorf("notebook: budget %q: use %q (minutes), %q (the presets' reduced budgets) or %q (the papers' budgets)",
			knob, Quick, Reduced, Paper)
	}
	if v := os.Getenv(FastEnv); v != "" && v != "0" {
		return Quick, fmt.Sprintf("budget: %s (%s=%s overrides the knob %q, for headless tests)", Quick, FastEnv, v, b), nil
	}
	return b, fmt.Sprintf("budget: %s", b), nil
}

// Expected holds a notebook's expected wall time per budget on this kind of machine, as measured
// (for example "about 2 minutes"); empty for a budget the notebook does not offer.
type Expected map[Budget]string

// Line states the expected time of b and the other budgets, to print before a run starts.
func (e Expected) Line(b Budget, machine string) string {
	var others []string
	for _, k := range Budgets {
		if k != b && e[k] != "" {
			others = append(others, fmt.Sprintf("%s %s", k, e[k]))
		}
	}
	t := e[b]
	if t == "" {
		t = "not measured"
	}
	line := fmt.Sprintf("expected time (%s): %s", machine, t)
	if len(others) > 0 {
		line += "; other budgets: " + strings.Join(others, ", ")
	}
	return line
}

// Knob returns the budget a notebook runs for its knob (Resolve); a typo ends the cell with an
// error naming the budgets (Check).
func Knob(knob string) Budget {
	b, _, err := Resolve(knob)
	Check(err)
	return b
}

// PerBudget returns the value of a setting at budget b: quick, reduced or paper.
func PerBudget[T any](b Budget, quick, reduced, paper T) T {
	switch b {
	case Quick:
		return quick
	case Paper:
		return paper
	}
	return reduced
}

// ReferenceMachine is the machine the expected times of Times were measured on.
const ReferenceMachine = "measured headless on 2 CPU cores shared with other jobs, pure-Go backend, compile included"

// Times holds every notebook's expected wall time of Run All per budget, by the notebook's file name
// without ".ipynb". The quick times were measured on 2026-11-27 by running each notebook headless
// (FEDBAYES_FAST=1 kernels/run-notebooks, an empty results folder, compile included) on the 2-core
// reference machine under a load of about 11 from other jobs; an idle machine takes less. The
// earlier estimates ran 2 to 8 times long. The reduced and paper times come from the presets'
// measured run times.
var Times = map[string]Expected{
	"01-aggregation-geometry": {Quick: "about 40 s"},
	"02-federated-vi": {Quick: "about 1.5 minutes (91 s measured)", Reduced: "about 10 minutes (24 runs of about 20 s)",
		Paper: "weeks (60 runs of T = 50 rounds of 10 epochs on 60,000 images; resumable)"},
	"03-calibration-and-uncertainty": {Quick: "about 1.5 minutes (89 s measured)", Reduced: "about 15 minutes", Paper: "as reduced"},
	"04-predictive-space":            {Quick: "about 50 s (47 s measured)", Reduced: "about 5 minutes", Paper: "hours"},
	"05-fedbe":                       {Quick: "about 1 minute (53 s measured)", Reduced: "about 20 minutes", Paper: "as reduced"},
	"06-paper-figures": {Quick: "about 1.5 minutes (96 s measured)", Reduced: "about 8 minutes (22 runs of about 20 s, as measured for the preset)",
		Paper: "weeks (T = 50 rounds of 10 epochs on 60,000 images, 5 seeds; resumable)"},
	"07-your-own-strategy": {Quick: "about 1 minute (54 s measured)"},
	"08-ground-truth":      {Quick: "about 1 minute (66 s measured)"},
}

// Header returns the lines a notebook prints before anything runs: the budget its knob gives
// (Resolve) and its expected time at that budget and the others (Times). An unknown notebook name
// or knob is an error.
func Header(name, knob string) (Budget, string, error) {
	b, line, err := Resolve(knob)
	if err != nil {
		return "", "", err
	}
	e, ok := Times[name]
	if !ok {
		return "", "", fmt.Errorf("notebook: no expected times for notebook %q (add it to notebook.Times)", name)
	}
	return b, line + "\n" + e.Line(b, ReferenceMachine), nil
}

// Start prints Header for the notebook name (its file name without ".ipynb") and returns the budget;
// an error ends the cell (Check). Every notebook's first cell calls it, so that each states its
// budget and expected time in the same words.
func Start(name, knob string) Budget {
	b, text, err := Header(name, knob)
	Check(err)
	fmt.Println(text)
	return b
}
