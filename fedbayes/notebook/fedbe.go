package notebook

import (
	"fmt"
	"math"
	"strings"

	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/predictive"
)

// Federation is one seed's data for a multi-round spec, as predictive.RunRounds splits it
// (predictive.Federation), with what notebook 05 does with it.
type Federation struct {
	*predictive.Federation
}

// NewFederation validates the spec and splits its data for seed as predictive.RunRounds does
// (predictive.NewFederation).
func NewFederation(spec predictive.RoundsSpec, seed int64) (*Federation, error) {
	spec = spec.WithDefaults()
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	f, err := predictive.NewFederation(spec, seed)
	if err != nil {
		return nil, fmt.Errorf("notebook: %w", err)
	}
	return &Federation{f}, nil
}

// FirstRound trains the clients for one round from a common initial model (client 0's), with the
// local training lc and the batch order of round 1 of predictive.FedBE and predictive.FedAvg, and
// returns the trained clients stacked [K, ...].
func (f *Federation) FirstRound(lc predictive.LocalConfig) (*posterior.Posterior, error) {
	m, err := models.New(f.Config)
	if err != nil {
		return nil, err
	}
	first, err := m.ClientPosterior(0)
	if err != nil {
		return nil, err
	}
	if err := m.SetPosterior(first); err != nil {
		return nil, err
	}
	lc.Seed += 131 // round 1
	if _, err := predictive.TrainClients(m, f.Clients, lc); err != nil {
		return nil, err
	}
	return m.Posterior()
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
// (stacked [K, ...], FirstRound) and scores every piece on the test set: the K clients, their
// weighted mean w̄ (FedAvg's global model), the M models sampled from the global model distribution
// (steps 1-2, predictive.FedBETeachers), the ensemble of all M+K+1 teachers whose averaged
// predictive gives the pseudo-labels (step 3), and the distilled student (step 4,
// predictive.FedBEServer, SWA included), which is the next global model.
func (f *Federation) FedBEAnatomy(trained *posterior.Posterior, fc predictive.FedBEConfig) ([]Piece, error) {
	fc = fc.WithDefaults()
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
		{"ensemble of all teachers (gives the pseudo-labels)", []metrics.ClassificationResult{ensemble}},
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
