package notebook

import (
	"context"
	"fmt"
	"math"
	"strings"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/strategy"
)

// Federation is one seed's data of an engine spec exactly as engine.Run splits it
// (engine.Federation), with what notebook 05 does with it.
type Federation struct {
	*engine.Federation
}

// NewFederation splits the data of spec for seed as engine.Run does (engine.NewFederation).
func NewFederation(spec *engine.Spec, seed int64) (*Federation, error) {
	f, err := engine.NewFederation(spec, seed)
	if err != nil {
		return nil, fmt.Errorf("notebook: %w", err)
	}
	return &Federation{f}, nil
}

// FirstRound trains every client for round 1 from the runs' initial global model, exactly as round 1
// of engine.Run (engine.Federation.FirstRound), and returns their means stacked [K, ...] (FedBE
// combines point estimates). A spec whose round 1 leaves clients out is refused: the anatomy needs
// them all.
func (f *Federation) FirstRound() (*posterior.Posterior, error) {
	trained, ids, err := f.Federation.FirstRound(context.Background())
	if err != nil {
		return nil, err
	}
	if len(ids) != len(f.Clients) {
		return nil, fmt.Errorf("notebook: round 1 trains %d of %d clients; the anatomy of a FedBE step needs them all (partition.participation 1)", len(ids), len(f.Clients))
	}
	return strategy.Means(trained), nil
}

// Evaluate returns the test metrics of one global model (an unstacked deterministic posterior).
func (f *Federation) Evaluate(global *posterior.Posterior) (metrics.ClassificationResult, error) {
	one, err := posterior.Stack([]*posterior.Posterior{global})
	if err != nil {
		return metrics.ClassificationResult{}, err
	}
	probs, _, _, err := predictive.EnsembleMean(f.Config, one, f.Test.X)
	if err != nil {
		return metrics.ClassificationResult{}, err
	}
	return metrics.EvaluateClassification(probs, f.Test.Labels, f.Test.NumClasses, 0)
}

// Piece is one piece of a FedBE server step scored on the test set: one model, or several (then
// Results holds each).
type Piece struct {
	What    string
	Results []metrics.ClassificationResult
}

// Cells formats a piece's accuracy and NLL: the value of one model, or "mean [min, max]" of several.
func (p Piece) Cells() []string {
	var out []string
	for _, get := range []func(metrics.ClassificationResult) float64{
		func(r metrics.ClassificationResult) float64 { return r.Accuracy },
		func(r metrics.ClassificationResult) float64 { return r.NLL },
	} {
		if len(p.Results) == 1 {
			out = append(out, fmt.Sprintf("%.3f", get(p.Results[0])))
			continue
		}
		lo, mean, hi := math.Inf(1), 0.0, math.Inf(-1)
		for _, r := range p.Results {
			v := get(r)
			lo, hi, mean = math.Min(lo, v), math.Max(hi, v), mean+v/float64(len(p.Results))
		}
		out = append(out, fmt.Sprintf("%.3f [%.3f, %.3f]", mean, lo, hi))
	}
	return out
}

// FedBEAnatomy takes one FedBE server step (Chen and Chao 2021, Alg. 1) apart on trained clients
// (stacked [K, ...], FirstRound) and scores every piece on the test set (with fc.Seed =
// AggregateSeed(1) and the spec's FedBE options, the student is round 1's global model of the
// engine's run): the K clients, their
// weighted mean w̄ (FedAvg's global model), the M models sampled from the global model distribution
// (steps 1-2, predictive.FedBETeachers), the ensemble of all M+K+1 teachers whose averaged
// predictive gives the pseudo-labels (step 3), and the distilled student (step 4,
// predictive.FedBEServer, SWA included), which is the next global model.
func (f *Federation) FedBEAnatomy(trained *posterior.Posterior, fc predictive.FedBEConfig) ([]Piece, error) {
	fc = fc.WithDefaults()
	if f.Server == nil {
		return nil, fmt.Errorf("notebook: the spec has no server set (dataset.server_fraction); FedBE distils on it")
	}
	M, K := fc.Samples, len(f.Clients)
	teachers, _, err := predictive.FedBETeachers(trained, f.Sizes, fc, fc.Seed)
	if err != nil {
		return nil, err
	}
	// Every teacher's own test predictive: a model with one client per teacher.
	tcfg := f.Config
	tcfg.Clients = M + K + 1
	tm, err := models.New(tcfg)
	if err != nil {
		return nil, err
	}
	each, err := predictive.PredictSamples(tm, []*posterior.Posterior{teachers}, f.Test.X)
	if err != nil {
		return nil, err
	}
	score := func(from, to int) ([]metrics.ClassificationResult, error) {
		var out []metrics.ClassificationResult
		for t := from; t < to; t++ {
			r, err := metrics.EvaluateClassification(each.Probs[t], f.Test.Labels, f.Test.NumClasses, 0)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	}
	// Teachers are stacked: the M samples, the K clients, then their mean.
	sampled, err := score(0, M)
	if err != nil {
		return nil, err
	}
	clients, err := score(M, M+K)
	if err != nil {
		return nil, err
	}
	mean, err := score(M+K, M+K+1)
	if err != nil {
		return nil, err
	}
	// Step 3 on the test set (FedBE labels the server set with it).
	probs, _, _, err := predictive.EnsembleMean(f.Config, teachers, f.Test.X)
	if err != nil {
		return nil, err
	}
	ensemble, err := metrics.EvaluateClassification(probs, f.Test.Labels, f.Test.NumClasses, 0)
	if err != nil {
		return nil, err
	}
	student, err := predictive.FedBEServer(f.Config, trained, f.Sizes, f.Server.X, fc, 1)
	if err != nil {
		return nil, err
	}
	distilled, err := f.Evaluate(student)
	if err != nil {
		return nil, err
	}
	return []Piece{
		{fmt.Sprintf("the %d clients: mean [min, max]", K), clients},
		{"their weighted mean w̄ (= FedAvg)", mean},
		{fmt.Sprintf("%d sampled global models: mean [min, max]", M), sampled},
		{"ensemble of all teachers (its predictive, before any sharpening, gives the pseudo-labels)", []metrics.ClassificationResult{ensemble}},
		{"FedBE's distilled student (next global model)", []metrics.ClassificationResult{distilled}},
	}, nil
}

// AnatomyMarkdown lays the anatomies of several global model distributions side by side in one
// Markdown table: a row per piece, an accuracy and an NLL column per distribution. Every anatomy
// must list the same pieces.
func AnatomyMarkdown(names []string, anatomies ...[]Piece) (string, error) {
	if len(names) != len(anatomies) || len(anatomies) == 0 {
		return "", fmt.Errorf("notebook: %d names for %d anatomies", len(names), len(anatomies))
	}
	var b strings.Builder
	b.WriteString("| test set |")
	for _, n := range names {
		fmt.Fprintf(&b, " %s: accuracy | NLL |", n)
	}
	b.WriteString("\n| --- |" + strings.Repeat(" ---: | ---: |", len(names)) + "\n")
	for i, p := range anatomies[0] {
		b.WriteString("| " + p.What + " |")
		for j, a := range anatomies {
			if len(a) != len(anatomies[0]) || a[i].What != p.What {
				return "", fmt.Errorf("notebook: anatomy %q lists other pieces than %q", names[j], names[0])
			}
			b.WriteString(" " + strings.Join(a[i].Cells(), " | ") + " |")
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}
