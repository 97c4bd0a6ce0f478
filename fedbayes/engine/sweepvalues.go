package engine

import (
	"encoding/json"
	"fmt"
)

// SweepValues makes s sweep the field at path (a JSON path such as "aggregation.rule") over values,
// marshalled as JSON, replacing any earlier sweep of that path. The path and values are checked when
// the spec is expanded or run.
func SweepValues[T any](s *Spec, path string, values []T) error {
	if len(values) == 0 {
		return fmt.Errorf("engine: sweep of %s: no values", path)
	}
	list := make([]json.RawMessage, len(values))
	for i, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("engine: sweep of %s: value %d: %w", path, i, err)
		}
		list[i] = b
	}
	if s.Sweep == nil {
		s.Sweep = map[string][]json.RawMessage{}
	}
	s.Sweep[path] = list
	return nil
}

// NewVariant builds a Variant labelled label that sets each JSON path to its value, given as
// alternating paths and values ("aggregation.rule", "EAA", "training.lr", 0.01), each value
// marshalled as JSON. The paths are checked when the spec is expanded or run.
func NewVariant(label string, pathValues ...any) (Variant, error) {
	if len(pathValues)%2 != 0 {
		return Variant{}, fmt.Errorf("engine: variant %q: %d arguments; give paths and values in pairs", label, len(pathValues))
	}
	v := Variant{Label: label, Set: make(map[string]json.RawMessage, len(pathValues)/2)}
	for i := 0; i < len(pathValues); i += 2 {
		path, ok := pathValues[i].(string)
		if !ok {
			return Variant{}, fmt.Errorf("engine: variant %q: argument %d is %T, not a path", label, i, pathValues[i])
		}
		if _, dup := v.Set[path]; dup {
			return Variant{}, fmt.Errorf("engine: variant %q sets %s twice", label, path)
		}
		b, err := json.Marshal(pathValues[i+1])
		if err != nil {
			return Variant{}, fmt.Errorf("engine: variant %q: %s: %w", label, path, err)
		}
		v.Set[path] = b
	}
	return v, nil
}
