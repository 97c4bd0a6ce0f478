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
