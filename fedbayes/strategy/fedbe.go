package strategy

import (
	"fmt"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/predictive"
)

// The FedBE strategies (Chen & Chao, Alg. 1 and their non-IID table).
const (
	// FedBEGaussian is FedBE with a diagonal Gaussian global model distribution and SWA distillation.
	FedBEGaussian = "fedbe-gaussian"
	// FedBEDirichlet is FedBE with a Dirichlet distribution over convex combinations of the clients.
	FedBEDirichlet = "fedbe-dirichlet"
	// FedBENoSWA is FedBE (Gaussian) keeping the last weights of one decaying cycle: "FedBE (w/o SWA)".
	FedBENoSWA = "fedbe-gaussian-no-swa"
)

// FedBEOptions are FedBE's options, the spec's aggregation.options of the FedBE strategies.
type FedBEOptions struct {
	// Samples is M, the global models sampled each round (0: 10, Chen & Chao).
	Samples int `json:"samples,omitempty"`
	// Alpha is the Dirichlet concentration of fedbe-dirichlet (0: 1).
	Alpha float64 `json:"alpha,omitempty"`
	// Temperature sharpens the pseudo labels (predictive.Sharpen; Chen & Chao's code: 0.5); 0 or 1:
	// none.
	Temperature float64 `json:"temperature,omitempty"`
	// Distill is the distillation on the server set (zero fields: predictive.FedBEConfig's
	// defaults, SGD with momentum 0.9 where the optimizer is left out, learning rate 0.01, 20
	// epochs, batch 100, SWA over 4 cycles; fedbe-gaussian-no-swa uses one cycle). A named
	// optimizer takes the momentum given: 0 means none.
	Distill predictive.DistillConfig `json:"distill,omitzero"`
}

// FedBE is Chen & Chao's server step: the teachers (M global models sampled from a distribution fitted
// to the clients, the clients and their mean) label the server set with their averaged predictive, and
// a student that starts at the clients' size-weighted mean is distilled on it (predictive.FedBEServer).
//
// FedBE combines point estimates. With Bayesian clients it combines their means the same way and the
// global log-variances are the clients' size-weighted average (AALV, Ozer et al. (2022), Eq. 6): the
// distillation moves the means only. This is fedbayes's reading; Chen & Chao's clients are
// deterministic.
type FedBE struct {
	// Config is predictive's FedBE configuration (Distribution, Samples, Alpha, Distill).
	Config predictive.FedBEConfig
	// Kind is the clients' model kind.
	Kind models.Kind
	// Clients is the number of clients of the partition (teachers beside the samples).
	Clients int
}

// newFedBE builds a FedBE strategy of the given distribution from its options (FedBEOptions).
func newFedBE(distribution string, swa bool, s Settings) (*FedBE, error) {
	var o FedBEOptions
	if err := DecodeOptions(s, &o); err != nil {
		return nil, err
	}
	if err := checkCount(OptionsField+".samples", o.Samples, MaxFedBESamples); err != nil {
		return nil, err
	}
	if o.Alpha < 0 {
		return nil, &FieldError{Field: OptionsField + ".alpha", Problem: fmt.Sprintf("%v; must be >= 0 (0 means 1)", o.Alpha)}
	}
	if err := predictive.CheckTemperature(o.Temperature); err != nil {
		return nil, &FieldError{Field: OptionsField + ".temperature", Problem: err.Error()}
	}
	if err := firstError(
		checkDistill(OptionsField+".distill", o.Distill),
		requireServer(s, "FedBE distils on the server's set", "Chen & Chao keep 20% of the training set, 0.2"),
		requireClassification(s, "FedBE distils the teachers' class probabilities")); err != nil {
		return nil, err
	}
	fc := predictive.FedBEConfig{Distribution: distribution, Samples: o.Samples, Alpha: o.Alpha, Temperature: o.Temperature, Distill: o.Distill}
	if !swa {
		fc.Distill.SWACycles = 1
	}
	fc = fc.WithDefaults()
	if fc.Samples < 1 || !(fc.Alpha > 0) {
		return nil, &FieldError{Field: OptionsField, Problem: fmt.Sprintf("FedBE needs samples >= 1 and alpha > 0, got %d and %v", fc.Samples, fc.Alpha)}
	}
	if err := checkDistilled(OptionsField+".distill", fc.Distill, false); err != nil {
		return nil, err
	}
	return &FedBE{Config: fc, Kind: s.Kind, Clients: s.Clients}, nil
}

// ServerNetworks implements ServerNetworker: the M sampled models, the K clients and their mean
// are the teachers, stacked and run over the server set at once (predictive.FedBETeachers).
func (f *FedBE) ServerNetworks() int { return f.Config.Samples + f.Clients + 1 }

// Aggregate runs one FedBE server step on the round's clients.
func (f *FedBE) Aggregate(r *Round) (*Global, error) {
	if r.Server == nil {
		return nil, fmt.Errorf("FedBE: the experiment has no server set")
	}
	stacked, err := r.StackedClients()
	if err != nil {
		return nil, err
	}
	fc := f.Config
	fc.Seed = r.Seed
	g, err := predictive.FedBEServer(r.Model, Means(stacked), r.SizeWeights(), r.Server.X, fc, r.Number)
	if err != nil {
		return nil, err
	}
	if f.Kind == models.Bayesian {
		lv, err := aggregate.Stacked(aggregate.AALV, stacked, r.SizeWeights(), aggregate.Options{Normalize: true})
		if err != nil {
			return nil, err
		}
		if g, err = WithLogVars(g, lv); err != nil {
			return nil, err
		}
	}
	w, err := r.NormalizedSizeWeights()
	return &Global{Posterior: g, Weights: w}, err
}

// Means returns p's means as a deterministic posterior (log-variances dropped; tensors shared).
func Means(p *posterior.Posterior) *posterior.Posterior {
	out := &posterior.Posterior{Params: make([]posterior.Param, len(p.Params))}
	for i, q := range p.Params {
		out.Params[i] = posterior.Param{Name: q.Name, Mean: q.Mean}
	}
	return out
}

// WithLogVars returns the means of m with the log-variances of v, parameter by parameter by name
// (v's deterministic parameters stay deterministic).
func WithLogVars(m, v *posterior.Posterior) (*posterior.Posterior, error) {
	out := &posterior.Posterior{Params: make([]posterior.Param, len(m.Params))}
	for i, q := range m.Params {
		src := v.Find(q.Name)
		if src == nil {
			return nil, fmt.Errorf("strategy: parameter %q has no log-variance source", q.Name)
		}
		out.Params[i] = posterior.Param{Name: q.Name, Mean: q.Mean, LogVar: src.LogVar}
	}
	return out, nil
}

func init() {
	registerBuiltin(FedBEGaussian, func(s Settings) (Strategy, error) { return newFedBE("gaussian", true, s) })
	registerBuiltin(FedBEDirichlet, func(s Settings) (Strategy, error) { return newFedBE("dirichlet", true, s) })
	registerBuiltin(FedBENoSWA, func(s Settings) (Strategy, error) { return newFedBE("gaussian", false, s) })
}
