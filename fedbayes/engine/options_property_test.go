package engine

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/strategy"
)

// optionsHere reads the option names out of a strategy's refusal of an unknown option.
var optionsHere = regexp.MustCompile(`options here: ([a-z0-9_, ]+)`)

// optionPaths lists the options of strategy name under prefix (nested objects to two levels), read
// from its refusal of an unknown option: the registry holds factories, not option types.
func optionPaths(t *testing.T, name string, s strategy.Settings, prefix []string) [][]string {
	t.Helper()
	s.Options = optionsDoc(append(append([]string(nil), prefix...), "fedbayes_unknown"), "1")
	_, err := strategy.New(name, s)
	m := optionsHere.FindStringSubmatch(fmt.Sprint(err))
	if m == nil {
		return nil
	}
	var out [][]string
	for _, f := range strings.Split(m[1], ", ") {
		if f == "none" {
			continue // a strategy without options
		}
		p := append(append([]string(nil), prefix...), strings.TrimSpace(f))
		if len(prefix) < 2 {
			if sub := optionPaths(t, name, s, p); sub != nil {
				out = append(out, sub...)
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// optionsDoc is the options object that sets path to the JSON value v.
func optionsDoc(path []string, v string) json.RawMessage {
	for i := len(path) - 1; i >= 0; i-- {
		v = fmt.Sprintf(`{%q: %s}`, path[i], v)
	}
	return json.RawMessage(v)
}

// negativeOptions are the numeric options that may be negative: beta-PredBayes's beta_min bounds
// the range of its search for beta, which the strategy leaves to the user (both 0: [0, 1]).
var negativeOptions = map[string]bool{"beta_min": true}

// TestOptionRanges is the property that every numeric option of every registered strategy refuses
// a value outside its range at spec check, naming the option: -1e300 (no option but
// negativeOptions takes a negative value) and, for an integer option (a count: epochs, samples,
// students), 1e18, past every count's stated bound. The options are read from each strategy's
// refusal of an unknown option, so a new strategy or option is covered without a new test.
func TestOptionRanges(t *testing.T) {
	checked := 0
	for _, name := range strategy.Names() {
		s := strategy.Settings{Kind: models.Deterministic, HasServer: true, Clients: 4, Active: 4, MaxNetworks: 100_000, PriorStd: 1,
			Sampling: name == "ep-mcmc" || name == "fedpa",
			Local:    predictive.LocalConfig{Optimizer: "sgd", LearningRate: 0.1, Epochs: 1, BatchSize: 16}}
		if _, err := strategy.New(name, s); err != nil {
			s.Kind = models.Bayesian
			if _, err := strategy.New(name, s); err != nil {
				t.Errorf("%s: no settings to check its options under: %v", name, err)
				continue
			}
		}
		for _, p := range optionPaths(t, name, s, nil) {
			field := strategy.OptionsField + "." + strings.Join(p, ".")
			try := func(v string) error {
				s2 := s
				s2.Options = optionsDoc(p, v)
				_, err := strategy.New(name, s2)
				return err
			}
			if err := try("0.5"); err != nil && (strings.Contains(err.Error(), "cannot be read as") || strings.Contains(err.Error(), "does not fit")) &&
				!strings.Contains(err.Error(), "int") {
				continue // not a number (a string, a bool, an object)
			}
			bad := []string{}
			if !negativeOptions[p[len(p)-1]] {
				bad = append(bad, "-1e300")
			}
			if err := try("0.5"); err != nil && strings.Contains(err.Error(), "int") {
				bad = append(bad, "1e18") // an integer option: a count with a bound
			}
			for _, v := range bad {
				err := try(v)
				// The option is named by its path, or (FedPA's, refused by predictive) by its name.
				if err == nil || !strings.Contains(err.Error(), field) && !strings.Contains(err.Error(), "."+p[len(p)-1]) {
					t.Errorf("%s: %s = %s: %v; want a refusal naming %s", name, field, v, err, field)
				}
				checked++
			}
		}
	}
	if checked < 30 {
		t.Errorf("%d option values checked; the strategies have more options", checked)
	}
	t.Logf("%d option values checked", checked)
}
