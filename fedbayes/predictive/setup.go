package predictive

import (
	"fmt"
	"strings"
)

// Setup is what the one-round Spec and the multi-round RoundsSpec share: the data, the server's share
// of it, the clients, their MLP, the seeds, the methods and the stated budget. Embedded in both, its
// fields are top-level fields of either spec's JSON.
type Setup struct {
	// Name prefixes the settings (results directories NAME-...-METHOD-seedS); default "predictive"
	// (Spec) or "fedbe" (RoundsSpec).
	Name string `json:"name,omitempty"`
	// Dataset is a data.Load name: fashion-mnist, digits, ... (classification) or, for a one-round
	// Spec, diabetes, boston (regression).
	Dataset string `json:"dataset"`
	// DataDir is the data folder; empty means data.Dir().
	DataDir string `json:"data_dir,omitempty"`
	// Subsample keeps this many training examples (seeded, class-stratified); 0 keeps all.
	Subsample int `json:"subsample,omitempty"`
	// TestSubsample keeps this many test examples; 0 keeps all.
	TestSubsample int `json:"test_subsample,omitempty"`
	// ServerFraction is the share of the training set kept as the server set (default 0.2,
	// Hasan (2023), Sec. 3.3; Chen & Chao keep it unlabeled).
	ServerFraction float64 `json:"server_fraction,omitempty"`
	// Clients is K (default 5 for a Spec, Hasan (2023); 10 for a RoundsSpec, Chen & Chao; all
	// active every round).
	Clients int `json:"clients,omitempty"`
	// Hidden are the MLP's hidden widths (default [100], Hasan (2023), Sec. 3.3.3).
	Hidden []int `json:"hidden,omitempty"`
	// Seeds lists the seeds (default [1, 2, 3]).
	Seeds []int64 `json:"seeds,omitempty"`
	// Methods lists the methods (default: all of the spec's kind and task).
	Methods []string `json:"methods,omitempty"`
	// Budget says whether the spec runs the paper's budget ("full") or how it was reduced; it is
	// recorded with every run. Empty means unstated.
	Budget string `json:"budget,omitempty"`
}

// withDefaults fills the shared zero fields: name and clients are the spec kind's defaults, methods
// its method list.
func (s Setup) withDefaults(name string, clients int, methods []string) Setup {
	if s.Name == "" {
		s.Name = name
	}
	if s.ServerFraction == 0 {
		s.ServerFraction = 0.2
	}
	if s.Clients == 0 {
		s.Clients = clients
	}
	if s.Hidden == nil {
		s.Hidden = []int{100}
	}
	if s.Seeds == nil {
		s.Seeds = []int64{1, 2, 3}
	}
	if s.Methods == nil {
		s.Methods = append([]string(nil), methods...)
	}
	return s
}

// validate checks the shared fields; bad formats an error naming a field; allowed lists the methods.
func (s Setup) validate(bad func(field string, v any, want string) error, allowed []string) error {
	switch {
	case s.Dataset == "":
		return bad("dataset", `""`, "name a dataset (fashion-mnist, digits, diabetes, boston, ...)")
	case !(s.ServerFraction > 0 && s.ServerFraction < 1):
		return bad("server_fraction", s.ServerFraction, "want in (0, 1)")
	case s.Clients < 2:
		return bad("clients", s.Clients, "want at least 2")
	case len(s.Seeds) == 0:
		return bad("seeds", s.Seeds, "want at least one seed")
	case s.Subsample < 0:
		return bad("subsample", s.Subsample, "want a non-negative size")
	case s.TestSubsample < 0:
		return bad("test_subsample", s.TestSubsample, "want a non-negative size")
	case len(s.Methods) == 0:
		return bad("methods", s.Methods, "want at least one method")
	}
	for i, h := range s.Hidden {
		if h < 1 {
			return bad(fmt.Sprintf("hidden[%d]", i), h, "want a positive width")
		}
	}
	seen := map[string]bool{}
	for _, m := range s.Methods {
		if !contains(allowed, m) {
			return bad("methods", m, "want one of "+strings.Join(allowed, ", "))
		}
		if seen[m] {
			return bad("methods", m, "listed twice")
		}
		seen[m] = true
	}
	return nil
}

// badField returns the error constructor of a spec kind's Validate ("spec", "rounds spec").
func badField(kind string) func(field string, v any, want string) error {
	return func(field string, v any, want string) error {
		return fmt.Errorf("predictive: %s field %s = %v: %s", kind, field, v, want)
	}
}
