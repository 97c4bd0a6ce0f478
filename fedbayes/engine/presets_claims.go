package engine

import (
	"fmt"
	"strings"
)

// Claim presets: budgets chosen for one finding of the reproduction report (issue 34), the cheapest
// setting that can show the effect the paper reports, where the medium budget's one cut cannot.
// Each states its reason in its Budget sentence.

// CalibrationSuffix ends the name of Ozer et al. (2022)'s 10-client calibration preset.
const CalibrationSuffix = "-calibration"

// Ozer et al. (2022)'s 10-client calibration claim (Table 1: FED's ECE 7.99 % against 6.37 % for
// FVBWA-GAA and 3.07 % for FVBWA-EAA, Fashion-MNIST, IID) at the paper's local training.
const (
	// calibrationRounds is T: 12 rounds of the paper's E = 10 train each client 120 epochs, against
	// the medium budget's 10 x 1 and the paper's 50 x 10.
	calibrationRounds = 12
	// calibrationEpochs is the paper's E = 10: a deterministic client overfits its shard more with
	// more local epochs, which is where FED's ECE in Table 1 comes from; the medium budget's E = 1
	// cannot show it.
	calibrationEpochs = 10
)

// calibrationRows are the rows the calibration claim compares: FED against the rules with Table 1's
// middle (GAA) and lowest (EAA) ECE, under Table 4's size weights.
var calibrationRows = []string{"FED", "FVBWA-GAA", "FVBWA-EAA"}

// ozerCalibration cuts Ozer et al. (2022)'s 10-client IID preset (BFL-P mode, whose clamp and
// initialisation Table 1's numbers come from) to the calibration claim's budget: all examples,
// T = calibrationRounds, E = calibrationEpochs, 3 seeds, evaluated every round, rows calibrationRows.
func ozerCalibration(s *Spec) *Spec {
	c := cutBudget(s, "calibration claim", CalibrationSuffix, 0, 0, calibrationRounds, calibrationEpochs, mediumSeeds, 1, thousands)
	var keep []Variant
	for _, v := range c.Variants {
		for _, r := range calibrationRows {
			if v.Label == r {
				keep = append(keep, v)
			}
		}
	}
	c.Variants = keep
	c.Budget += fmt.Sprintf("; rows %s; the paper's E = %d, since FED's ECE grows with local epochs (Table 1's comes from E = 10) "+
		"and the medium budget's E = 1 cannot show it; T = %d, %d local epochs per client", strings.Join(calibrationRows, ", "),
		calibrationEpochs, calibrationRounds, calibrationRounds*calibrationEpochs)
	return c
}

func init() {
	base := "ozer2022-fmnist-c10-iid" + BFLPSuffix
	presets[base+CalibrationSuffix] = preset{
		about: "Ozer et al. (2022), Table 1's calibration claim (10 IID clients, BFL-P mode) at the paper's E = 10, T = 12: FED, FVBWA-GAA, FVBWA-EAA",
		full: func() *Spec {
			p, ok := presets[base]
			if !ok {
				panic("engine: calibration preset of unknown preset " + base) // a programming error, caught by TestPresets
			}
			return ozerCalibration(p.full())
		},
	}
}
