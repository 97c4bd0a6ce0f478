package notebook

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"fedbayes.dev/fedbayes/internal/strictjson"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/strategy"
)

// MethodNames are the legend and table names of the predictive-space methods (Hasan 2023) and of the
// multi-round methods (Chen and Chao 2021), by the strategy registry's name (engine.Method). PickMethods
// reads a run's variant label through engine.Method, so the one-round runs labelled oneshot and fedbe
// are named as oneshotfl and fedbe-gaussian are.
var MethodNames = map[string]string{
	strategy.BCM: "BCM", strategy.Mixture: "mixture", strategy.BetaPredBayes: "β-PredBayes",
	strategy.DBCM: "D-BCM", strategy.DBetaPredBayes: "D-β-PredBayes", "fedavg": "FedAvg", "fedpa": "FedPA",
	"ep-mcmc": "EP-MCMC", strategy.OneshotFLName: "OneshotFL", "fedkt": "FedKT",
	strategy.FedBEGaussian: "FedBE (Gaussian)", strategy.FedBEDirichlet: "FedBE (Dirichlet)",
	strategy.FedBENoSWA: "FedBE (Gaussian, no SWA)",
}

// PickMethods returns the series of the methods asked for, in that order, each renamed by
// MethodNames: series are named by a run label (FinalVersus, SeedSeries over "variant") and methods
// by the registry's or a former name, both read through engine.Method, so "oneshotfl" picks the series
// of Hasan's variant "oneshot". A method that no series has is an error listing those there are.
func PickMethods(series []plots.SeedSeries, methods ...string) ([]plots.SeedSeries, error) {
	var out []plots.SeedSeries
	for _, want := range methods {
		m := engine.Method(want)
		i := slices.IndexFunc(series, func(s plots.SeedSeries) bool { return engine.Method(s.Name) == m })
		if i < 0 {
			have := make([]string, len(series))
			for j, s := range series {
				have[j] = engine.Method(s.Name)
			}
			return nil, fmt.Errorf("notebook: no runs of method %q (there are: %s)", m, strings.Join(have, ", "))
		}
		s := series[i]
		if n, ok := MethodNames[m]; ok {
			s.Name = n
		}
		out = append(out, s)
	}
	return out, nil
}

// MethodsVersus is one line per method, in the order given and named by MethodNames: the final
// value of metric against the numeric label x (FinalVersus), one row per seed, over the runs whose
// variant label names the method (registry or former names alike, engine.Method: Hasan's variant
// "oneshot" is the method oneshotfl). A method that no run has is an error listing those there are.
func MethodsVersus(runs []results.Run, x, metric string, methods ...string) ([]plots.SeedSeries, error) {
	labels := make([]string, len(methods))
	for i, want := range methods {
		m := engine.Method(want)
		for _, v := range Values(runs, "variant") {
			if engine.Method(v) == m {
				labels[i] = v
			}
		}
		if labels[i] == "" {
			var have []string
			for _, v := range Values(runs, "variant") {
				have = append(have, engine.Method(v))
			}
			return nil, fmt.Errorf("notebook: no runs of method %q (there are: %s)", m, strings.Join(have, ", "))
		}
	}
	lines, err := FinalVersus(runs, "variant", x, metric, labels...)
	if err != nil {
		return nil, err
	}
	return PickMethods(lines, methods...)
}

// SpecDir returns the folder under root that holds the runs of one spec: NAME-HASH, where HASH is
// the first 12 hexadecimal digits of the SHA-256 of the spec as JSON. Changing any field of the
// spec thus never reuses the runs of another.
func SpecDir(root, name string, spec any) (string, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("notebook: spec of %q: %w", name, err)
	}
	return filepath.Join(root, fmt.Sprintf("%s-%x", name, sha256.Sum256(b))[:len(name)+13]), nil
}

// LoadDir reads the runs in dir, whatever wrote them (use Load when the spec is known: LoadDir cannot count the runs that have not started). When there are none yet, or some are not complete (a run stopped or
// failed), it returns an *Incomplete error, which Check turns into a message that stops the cell
// cleanly.
func LoadDir(dir string) ([]results.Run, error) {
	if entries, err := os.ReadDir(dir); (err == nil && len(entries) == 0) || errors.Is(err, os.ErrNotExist) {
		return nil, &Incomplete{Want: 1, Missing: []string{"any run in " + dir}}
	}
	runs, skipped, err := results.Load(dir)
	if err != nil {
		return nil, err
	}
	if len(skipped) > 0 {
		var missing []string
		for _, s := range skipped[:min(3, len(skipped))] {
			missing = append(missing, filepath.Base(s.Dir)+" ("+s.Reason+")")
		}
		if len(skipped) > 3 {
			missing = append(missing, fmt.Sprintf("%d more", len(skipped)-3))
		}
		return nil, &Incomplete{Done: len(runs), Want: len(runs) + len(skipped), Missing: missing}
	}
	return runs, nil
}

// BetaFits reads the fitted β of every β-PredBayes run (predictive.BetaFile in the run's folder),
// by h and seed: the engine's runs (label variant) and the former one-round runner's (label method),
// whose label names the strategy (engine.Method).
func BetaFits(runs []results.Run) (map[float64]map[int64]predictive.BetaFit, error) {
	out := map[float64]map[int64]predictive.BetaFit{}
	beta := Where(runs, func(r results.Run) bool {
		return engine.Method(Label(r, "variant")) == strategy.BetaPredBayes || engine.Method(Label(r, "method")) == strategy.BetaPredBayes
	})
	for _, r := range beta {
		h, err := strconv.ParseFloat(Label(r, "h"), 64)
		if err != nil {
			return nil, fmt.Errorf("notebook: run %s: label h %q: %w", r.Dir, Label(r, "h"), err)
		}
		raw, err := os.ReadFile(filepath.Join(r.Dir, predictive.BetaFile))
		if err != nil {
			return nil, fmt.Errorf("notebook: run %s: %w", r.Dir, err)
		}
		var fit predictive.BetaFit
		if err := strictjson.DecodeFile(filepath.Join(r.Dir, predictive.BetaFile), raw, &fit); err != nil {
			return nil, fmt.Errorf("notebook: %w", err)
		}
		if out[h] == nil {
			out[h] = map[int64]predictive.BetaFit{}
		}
		out[h][r.Meta.Seed] = fit
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("notebook: no %s run among %d runs", strategy.BetaPredBayes, len(runs))
	}
	return out, nil
}

// NLLVersusBeta turns the β fits (BetaFits) into one line per h, in increasing h, of the server NLL
// against β (Hasan 2023, Eq. 4.11), one row per seed. Every seed must share the grid of β values.
func NLLVersusBeta(fits map[float64]map[int64]predictive.BetaFit) ([]plots.SeedSeries, error) {
	var out []plots.SeedSeries
	for _, h := range slices.Sorted(maps.Keys(fits)) {
		s := plots.SeedSeries{Name: fmt.Sprintf("h = %g", h)}
		for i, seed := range slices.Sorted(maps.Keys(fits[h])) {
			var x, y []float64
			for _, p := range fits[h][seed].Curve {
				x, y = append(x, p.Beta), append(y, p.NLL)
			}
			if i == 0 {
				s.X = x
			} else if !slices.Equal(x, s.X) {
				return nil, fmt.Errorf("notebook: h = %g: seed %d fitted β on another grid than the first seed", h, seed)
			}
			s.Runs = append(s.Runs, y)
		}
		out = append(out, s)
	}
	return out, nil
}

// FittedBetas is one line per h (increasing) listing the fitted β of every seed.
func FittedBetas(fits map[float64]map[int64]predictive.BetaFit) []string {
	var out []string
	for _, h := range slices.Sorted(maps.Keys(fits)) {
		var betas []float64
		for _, seed := range slices.Sorted(maps.Keys(fits[h])) {
			betas = append(betas, fits[h][seed].Beta)
		}
		out = append(out, fmt.Sprintf("h = %-4g fitted β per seed: %.3f", h, betas))
	}
	return out
}
