package engine

import (
	"encoding/json"
	"fmt"
	"strings"

	"fedbayes.dev/fedbayes/strategy"
)

// MethodAliases is the table of former method names, each with the strategy registry's name that
// replaces it (docs/predictive.md, "Method names"). A method has one name, its strategy's (strategy.Names:
// "oneshotfl", "fedbe-gaussian", "bcm", ...), in specs (aggregation.rule), in the -methods flags of
// `fedbayes predictive` and `fedbayes fedbe` and in the notebooks. The former names are those the
// one-round predictive runner took before it ran through the engine; they live on as the variant labels
// of Hasan (2023)'s presets (runs NAME-oneshot-H-seedS, NAME-fedbe-H-seedS), which name their run
// folders and the committed records, so a label is read through this table (Method) wherever it is
// compared with a method. Every other former name was already the registry's.
var MethodAliases = map[string]string{
	"oneshot": strategy.OneshotFLName,
	"fedbe":   strategy.FedBEGaussian,
}

// Method returns the registry name of a method name: its MethodAliases entry for a former name, else
// the name itself as the registry reads names (lower case, without surrounding spaces), so "FedAvg"
// and "fedavg" are one method.
func Method(name string) string {
	k := strings.ToLower(strings.TrimSpace(name))
	if m, ok := MethodAliases[k]; ok {
		return m
	}
	return k
}

// ParseMethods reads a comma-separated method list (a -methods flag): each name through Method,
// refusing an empty list, a name that no strategy is registered under and a method named twice (by
// either of its names).
func ParseMethods(list string) ([]string, error) {
	var out []string
	seen := map[string]string{}
	for _, f := range strings.Split(list, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		m := Method(f)
		if !strategy.Known(m) {
			return nil, fmt.Errorf("method %q: no strategy of that name (strategies: %s)", strings.TrimSpace(f), strings.Join(strategy.Names(), ", "))
		}
		if first, ok := seen[m]; ok {
			return nil, fmt.Errorf("method %q: the same method as %q", strings.TrimSpace(f), first)
		}
		seen[m] = strings.TrimSpace(f)
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no method in %q", list)
	}
	return out, nil
}

// SelectMethods keeps the variants of s whose strategy (the aggregation.rule they set, else the spec's)
// is one of methods (registry names or former ones, MethodAliases), in the spec's order, and returns
// an error naming a method that no variant runs, with those that do. The variants' labels, and so the
// run folders, are kept.
func SelectMethods(s *Spec, methods []string) error {
	if len(s.Variants) == 0 {
		return fmt.Errorf("spec %q has no variants to choose methods among", s.Name)
	}
	rules := make([]string, len(s.Variants))
	for i, v := range s.Variants {
		rules[i] = s.Aggregation.Rule
		if r, ok := v.Set["aggregation.rule"]; ok {
			var rule string
			if err := json.Unmarshal(r, &rule); err != nil {
				return fmt.Errorf("variant %q: aggregation.rule: %v", v.Label, err)
			}
			rules[i] = rule
		}
	}
	want := map[string]bool{}
	for _, m := range methods {
		m = Method(m)
		found := false
		for _, r := range rules {
			found = found || Method(r) == m
		}
		if !found {
			var have []string
			for _, r := range rules {
				have = append(have, Method(r))
			}
			return fmt.Errorf("spec %q runs no method %q (its methods: %s)", s.Name, m, strings.Join(have, ", "))
		}
		want[m] = true
	}
	var kept []Variant
	for i, v := range s.Variants {
		if want[Method(rules[i])] {
			kept = append(kept, v)
		}
	}
	s.Variants = kept
	return nil
}
