package notebook

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
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

// Measurement is one timed Run All of a notebook at the quick budget: headless, as `FEDBAYES_FAST=1
// kernels/run-notebooks NOTEBOOK` runs it (an empty results folder, the pure-Go backend, compile
// included), which prints the time, the cores and the load beside its result.
type Measurement struct {
	// Seconds is the wall time of Run All.
	Seconds int
	// Cores is the machine's number of CPU cores; Load its 1-minute load average over the run (the
	// mean of the values at its start and end, this notebook's own work included): the time grows
	// with the load from other jobs.
	Cores int
	Load  float64
	// Date is the day it was measured, YYYY-MM-DD.
	Date string
}

// String states the measurement with the load and cores it was taken at, after a rounded figure:
// "about 50 s (47 s measured on 2 cores at a load average of 9.7, 2026-12-02)".
func (m Measurement) String() string {
	if m.Seconds <= 0 {
		return "not measured"
	}
	return fmt.Sprintf("%s (%d s measured on %d cores at a load average of %.1f, %s)", about(m.Seconds), m.Seconds, m.Cores, m.Load, m.Date)
}

// about rounds a time in seconds for a reader: to 10 s below two minutes, else to half minutes.
func about(sec int) string {
	if tens := (sec + 5) / 10 * 10; tens < 120 {
		return fmt.Sprintf("about %d s", max(10, tens))
	}
	half := (sec + 15) / 30
	if half%2 == 0 {
		return fmt.Sprintf("about %d minutes", half/2)
	}
	return fmt.Sprintf("about %d.5 minutes", half/2)
}

// Expected is a notebook's expected wall time per budget.
type Expected struct {
	// Quick is the measured Run All at the quick budget.
	Quick Measurement
	// Reduced and Paper are the times of the other budgets, from the presets' measured run times
	// ("as reduced" where the paper budget runs as reduced); "" for a budget the notebook does not
	// offer.
	Reduced, Paper string
}

// of returns the expected time of budget b as text ("" when not offered or not measured).
func (e Expected) of(b Budget) string {
	switch b {
	case Quick:
		if e.Quick.Seconds <= 0 {
			return ""
		}
		return e.Quick.String()
	case Reduced:
		return e.Reduced
	}
	return e.Paper
}

// Line states the expected time of b and the other budgets, to print before a run starts.
func (e Expected) Line(b Budget, machine string) string {
	var others []string
	for _, k := range Budgets {
		if t := e.of(k); k != b && t != "" {
			others = append(others, fmt.Sprintf("%s %s", k, t))
		}
	}
	t := e.of(b)
	if t == "" {
		t = "not measured"
	}
	line := fmt.Sprintf("expected time (%s): %s", machine, t)
	if len(others) > 0 {
		line += "; other budgets: " + strings.Join(others, ", ")
	}
	return line
}

// MachineNow describes this machine's load as the expected times state theirs ("this machine now:
// 2 cores at a load average of 3.1"), from /proc/loadavg; "" where that cannot be read (not Linux).
func MachineNow() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return machineNow(string(raw), runtime.NumCPU())
}

// machineNow is MachineNow for the text of /proc/loadavg and a number of cores.
func machineNow(loadavg string, cores int) string {
	f := strings.Fields(loadavg)
	if len(f) == 0 {
		return ""
	}
	load, err := strconv.ParseFloat(f[0], 64)
	if err != nil || load < 0 || math.IsNaN(load) || math.IsInf(load, 0) {
		return ""
	}
	return fmt.Sprintf("this machine now: %d cores at a load average of %.1f", cores, load)
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

// ReferenceMachine says how the expected times of Times were taken.
const ReferenceMachine = "headless Run All, pure-Go backend, compile included"

// measured is the day of the quick times in Times.
const measured = "2026-12-02"

// Times holds every notebook's expected wall time of Run All per budget, by the notebook's file name
// without ".ipynb". The quick times are Measurements, each with its cores and load: one pass of
// `FEDBAYES_FAST=1 kernels/run-notebooks notebooks/0[1-8]-*.ipynb` (one notebook after the other)
// on the 2-core reference machine while other jobs kept its load between 8 and 18; an idle machine
// takes less. The reduced and paper times come from the presets' measured run times.
var Times = map[string]Expected{
	"01-aggregation-geometry": {Quick: Measurement{Seconds: 84, Cores: 2, Load: 15.1, Date: measured}},
	"02-federated-vi": {Quick: Measurement{Seconds: 213, Cores: 2, Load: 17.3, Date: measured}, Reduced: "about 10 minutes (24 runs of about 20 s)",
		Paper: "weeks (60 runs of T = 50 rounds of 10 epochs on 60,000 images; resumable)"},
	"03-calibration-and-uncertainty": {Quick: Measurement{Seconds: 112, Cores: 2, Load: 15.8, Date: measured}, Reduced: "about 15 minutes", Paper: "as reduced"},
	"04-predictive-space":            {Quick: Measurement{Seconds: 78, Cores: 2, Load: 14.7, Date: measured}, Reduced: "about 5 minutes", Paper: "hours"},
	"05-fedbe":                       {Quick: Measurement{Seconds: 57, Cores: 2, Load: 14.8, Date: measured}, Reduced: "about 20 minutes", Paper: "as reduced"},
	"06-paper-figures": {Quick: Measurement{Seconds: 146, Cores: 2, Load: 15.5, Date: measured}, Reduced: "about 8 minutes (22 runs of about 20 s, as measured for the preset)",
		Paper: "weeks (T = 50 rounds of 10 epochs on 60,000 images, 5 seeds; resumable)"},
	"07-your-own-strategy": {Quick: Measurement{Seconds: 57, Cores: 2, Load: 10.1, Date: measured}},
	"08-ground-truth":      {Quick: Measurement{Seconds: 64, Cores: 2, Load: 8.5, Date: measured}},
}

// Header returns the lines a notebook prints before anything runs: the budget its knob gives
// (Resolve), its expected time at that budget and the others (Times), and this machine's cores and
// load (MachineNow), to compare with the load the time was measured at. An unknown notebook name
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
	text := line + "\n" + e.Line(b, ReferenceMachine)
	if now := MachineNow(); now != "" {
		text += "\n" + now
	}
	return b, text, nil
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
