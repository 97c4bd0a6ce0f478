package explore

import (
	"fmt"
	"math"
)

// Scale maps the integer positions of a GoNB slider (widgets.Slider holds integers) to real values:
// value = pos / PerUnit on a linear scale, value = 2^(pos / PerUnit) on a log scale.
type Scale struct {
	// Name is used in error messages ("mean", "variance", "weight").
	Name string
	// Min and Max bound the slider positions.
	Min, Max int
	// PerUnit is the number of positions per unit of value (linear) or per doubling (log).
	PerUnit int
	// Log selects the base-2 log scale.
	Log bool
}

// The scales of the explorer's sliders.
var (
	// MeanScale: means in [-5, 5] in steps of 0.05.
	MeanScale = Scale{Name: "mean", Min: -100, Max: 100, PerUnit: 20}
	// VarScale: variances in [2^-7, 2^7] = [0.0078125, 128] on a log scale, 20 steps per doubling
	// (each step multiplies the variance by 2^(1/20), about 3.5%); powers of two such as 0.25, 1
	// and 4 are exact.
	VarScale = Scale{Name: "variance", Min: -140, Max: 140, PerUnit: 20, Log: true}
	// WeightScale: relative client weights in [0, 1] in steps of 0.01, normalised over the active
	// clients before aggregating (all at the same position: equal weights).
	WeightScale = Scale{Name: "weight", Min: 0, Max: 100, PerUnit: 100}
)

// Value returns the real value at slider position pos, or an error if pos is outside [Min, Max].
func (s Scale) Value(pos int) (float64, error) {
	if pos < s.Min || pos > s.Max {
		return 0, fmt.Errorf("explore: %s slider position %d outside [%d, %d]", s.Name, pos, s.Min, s.Max)
	}
	x := float64(pos) / float64(s.PerUnit)
	if s.Log {
		return math.Exp2(x), nil
	}
	return x, nil
}

// Position returns the slider position whose value is nearest to v (on the log scale: nearest in
// log v), or an error if v is not finite, not positive on a log scale, or out of the slider's range
// by more than half a step.
func (s Scale) Position(v float64) (int, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("explore: %s %v is not finite", s.Name, v)
	}
	x := v
	if s.Log {
		if v <= 0 {
			return 0, fmt.Errorf("explore: %s %g is not positive", s.Name, v)
		}
		x = math.Log2(v)
	}
	p := math.Round(x * float64(s.PerUnit))
	if p < float64(s.Min) || p > float64(s.Max) {
		lo, _ := s.Value(s.Min)
		hi, _ := s.Value(s.Max)
		return 0, fmt.Errorf("explore: %s %g outside the slider's range [%g, %g]", s.Name, v, lo, hi)
	}
	return int(p), nil
}
