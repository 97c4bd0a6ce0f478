package notebook

import (
	"encoding/json"
	"fmt"
	"slices"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/presets"
)

// PresetSpec returns the engine preset name, or its reduced version (name + presets.ReducedSuffix)
// when reduced is set, without the preset's variants (its own table rows), so that a notebook
// sweeps the rules and settings it shows itself (Sweep).
func PresetSpec(name string, reduced bool) (*engine.Spec, error) {
	if reduced {
		name += presets.ReducedSuffix
	}
	s, err := presets.Preset(name)
	if err != nil {
		return nil, fmt.Errorf("notebook: %w", err)
	}
	s.Variants = nil
	return s, nil
}

// Sweep makes s sweep each field path (a JSON path such as "aggregation.rule") over its values
// (engine.SweepValues), replacing any earlier sweep of that path. A path with no values is an error.
func Sweep(s *engine.Spec, sweeps map[string][]string) error {
	paths := make([]string, 0, len(sweeps))
	for p := range sweeps {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if err := engine.SweepValues(s, p, sweeps[p]); err != nil {
			return fmt.Errorf("notebook: %w", err)
		}
	}
	return nil
}

// FedAvgBaseline returns the deterministic FedAvg baseline of spec s, named name: a copy of s with
// the same data, partition, training and seeds, the deterministic network of s's architecture and
// hidden widths, aggregated by FedAvg (s's weighting kept) and evaluated with one sample, sweeping
// only the fields of s's sweep listed in keep (the Bayesian rules are not swept). It has no
// variants.
func FedAvgBaseline(s *engine.Spec, name string, keep ...string) *engine.Spec {
	b := s.Clone()
	b.Name = name
	b.Variants, b.Sweep = nil, nil
	for _, p := range keep {
		if v, ok := s.Sweep[p]; ok {
			if b.Sweep == nil {
				b.Sweep = map[string][]json.RawMessage{}
			}
			b.Sweep[p] = v
		}
	}
	b.Model = engine.ModelSpec{Arch: s.Model.Arch, Kind: models.Deterministic, Hidden: s.Model.Hidden}
	b.Aggregation.Rule = "FedAvg"
	b.Evaluation.Samples = 1
	return b
}
