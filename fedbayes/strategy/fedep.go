package strategy

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
)

// FedEPName is the registry name of federated expectation propagation (FedEP, and FedSEP with
// FedEPOptions.SharedSite).
const FedEPName = "fedep"

// FedEPOptions are FedEP's aggregation.options.
type FedEPOptions struct {
	// Damping delta in (0, 1] of the site update (0: DefaultPVIDamping of the clients per round
	// for FedEP, of the clients in all for FedSEP, whose one site stands for every client).
	Damping float64 `json:"damping,omitempty"`
	// SharedSite runs FedSEP: one site shared by every client instead of one per client.
	SharedSite bool `json:"shared_site,omitempty"`
}

// newFedEP builds FedEP: with per-client sites, the engine's local inference being variational,
// it is PVI with the parallel schedule (the same cavities, the same local ELBO against them, the same
// damped site update in natural parameters: Guo et al. (2023), Alg. 1, with variational local
// inference), so it returns a PVI; with SharedSite, FedSEP.
func newFedEP(s Settings) (Strategy, error) {
	var o FedEPOptions
	if err := DecodeOptions(s, &o); err != nil {
		return nil, err
	}
	if o.Damping != 0 && !(o.Damping > 0 && o.Damping <= 1) {
		return nil, &FieldError{Field: OptionsField + ".damping", Problem: fmt.Sprintf("%v: want a damping in (0, 1]", o.Damping)}
	}
	if !o.SharedSite {
		return pviFrom(s, PVIOptions{Damping: o.Damping})
	}
	// The refusals are PVI's (model.kind, training.sampler, model.compat).
	core, err := pviFrom(s, PVIOptions{Damping: 1})
	if err != nil {
		return nil, err
	}
	if s.Clients < 1 {
		return nil, fmt.Errorf("FedSEP: %d clients: its shared site stands for every client, so it needs their number", s.Clients)
	}
	if o.Damping == 0 {
		o.Damping = defaultSEPDamping(s.Active, s.Clients)
	}
	return &FedSEP{Damping: o.Damping, Clients: s.Clients, core: core}, nil
}

func init() {
	registerBuiltin(FedEPName, newFedEP)
}

// defaultSEPDamping is FedSEP's default damping for m clients a round (0: unknown, taken as at least
// 2) of n: the global moves by n δ times the returned sites' mean change, so δ = min(m, 2) / n gives it
// PVI's step of 2 / m per client when m ≥ 2, and with one client a round moves the global no further
// than that client's own posterior (δ = 1/n, SEP's undamped step for one client); 1 for n ≤ 2.
func defaultSEPDamping(m, n int) float64 {
	k := 2
	if m == 1 {
		k = 1
	}
	return math.Min(1, float64(k)/float64(n))
}

// FedSEP is federated stochastic expectation propagation (Guo et al. (2023), Sec. 3; stochastic EP,
// Li, Hernández-Lobato and Turner (2015)) with mean-field Gaussian factors: every client's site is
// one shared factor t, so the global is q = p t^N over the N clients of the partition. A sampled
// client trains by the engine's own local VI against the cavity q / t = p t^(N-1) (the same for every
// client) and its new site is its posterior over that cavity, t_k = q_k / (q / t); the server
// averages the new sites of the clients that returned (unweighted: each is one client's factor, and
// N times their mean estimates the sum of all N) and damps, t ← t^(1-delta) (mean_k t_k)^delta, in
// natural parameters (1 - delta) t + delta mean_k t_k. Its state is the one site (the Gaussian values
// × 2 float64s, whatever the number of clients), starting at 1. A deterministic parameter is the
// size-weighted mean of the clients' values, as PVI's.
type FedSEP struct {
	Damping float64
	// Clients is N, the number of clients of the partition.
	Clients int
	// core holds the layout, the conversions of the Gaussian values and the shared site, kept as
	// the site of client sharedSite.
	core *PVI
}

// sharedSite is the key of FedSEP's one site among its core's sites.
const sharedSite = 0

// shared returns the prior p, the shared site t, the global q = p t^N and the clients' cavity
// q / t = p t^(N-1) over the Gaussian values of global. A cavity without positive precision is a
// DivergedError naming the parameter.
func (f *FedSEP) shared(global *posterior.Posterior, model models.Config) (prior, site, q, cavity aggregate.Natural, err error) {
	if err = f.core.layout(global); err != nil {
		return
	}
	prior = f.core.priorOf(model)
	site = f.core.site(sharedSite, prior.Len())
	q, cavity = prior.Clone(), prior.Clone()
	n := float64(f.Clients)
	for i := range q.Prec {
		q.Prec[i] += n * site.Prec[i]
		q.Shift[i] += n * site.Shift[i]
		cavity.Prec[i] += (n - 1) * site.Prec[i]
		cavity.Shift[i] += (n - 1) * site.Shift[i]
		if !(cavity.Prec[i] > 0) {
			err = &DivergedError{fmt.Errorf("FedSEP: parameter %d: the clients' cavity precision %g (prior %g, shared site %g, %d clients) is not positive (%s)",
				i, cavity.Prec[i], prior.Prec[i], site.Prec[i], f.Clients, f.core.layoutText())}
			return
		}
	}
	return
}

// Priors returns the cavity q / t for every client.
func (f *FedSEP) Priors(number int, ids []int, global *posterior.Posterior, model models.Config) ([]*posterior.Posterior, error) {
	_, _, _, cav, err := f.shared(global, model)
	if err != nil {
		return nil, fmt.Errorf("FedSEP round %d: %w", number, err)
	}
	out := make([]*posterior.Posterior, len(ids))
	for j := range ids {
		if out[j], err = f.core.toPosterior(cav, global); err != nil {
			return nil, fmt.Errorf("FedSEP round %d: the clients' cavity: %w", number, f.core.named(err))
		}
	}
	return out, nil
}

// Aggregate averages the new sites of the clients of r against their cavity, damps the shared site
// and returns q = p t^N.
func (f *FedSEP) Aggregate(r *Round) (*Global, error) {
	clients, err := r.Clients()
	if err != nil {
		return nil, err
	}
	if r.Previous == nil {
		return nil, fmt.Errorf("FedSEP needs the global model the clients started from")
	}
	prior, site, _, cav, err := f.shared(r.Previous, r.Model)
	if err != nil {
		return nil, fmt.Errorf("FedSEP round %d: %w", r.Number, err)
	}
	mean := aggregate.NewNatural(site.Len())
	for j, id := range r.IDs {
		local, err := f.core.natural(clients[j])
		if err != nil {
			return nil, fmt.Errorf("FedSEP round %d: client %d: %w", r.Number, id, err)
		}
		t, err := aggregate.SiteFrom(local, cav)
		if err != nil {
			return nil, fmt.Errorf("FedSEP round %d: client %d: %w", r.Number, id, err)
		}
		for i := range t.Prec {
			mean.Prec[i] += t.Prec[i] / float64(len(r.IDs))
			mean.Shift[i] += t.Shift[i] / float64(len(r.IDs))
		}
	}
	next, err := aggregate.Damp(site, mean, f.Damping)
	if err != nil {
		return nil, fmt.Errorf("FedSEP round %d: %w", r.Number, err)
	}
	f.core.sites[sharedSite] = next
	q := prior.Clone() // p t^N; a cavity that is no Gaussian shows in the next round's Priors
	for i := range q.Prec {
		q.Prec[i] += float64(f.Clients) * next.Prec[i]
		q.Shift[i] += float64(f.Clients) * next.Shift[i]
	}
	w, err := r.NormalizedSizeWeights()
	if err != nil {
		return nil, err
	}
	g, err := f.core.toPosterior(q, r.Previous)
	if err != nil {
		return nil, &DivergedError{fmt.Errorf("FedSEP round %d: the global: %w", r.Number, f.core.named(err))}
	}
	if err := averageDeterministic(g, clients, r.IDs, w); err != nil {
		return nil, err
	}
	return &Global{Posterior: g, Weights: w}, nil
}

// State encodes the shared site (gob, in PVI's encoding with the site as client 0's).
func (f *FedSEP) State() ([]byte, error) { return f.core.State() }

// Restore reads the shared site State encoded, refusing a state of more than one site (PVI's).
func (f *FedSEP) Restore(state []byte) error {
	if err := f.core.Restore(state); err != nil {
		return fmt.Errorf("FedSEP's shared site (stored as client 0's): %w", err)
	}
	if _, ok := f.core.sites[sharedSite]; len(f.core.sites) > 1 || (len(f.core.sites) == 1 && !ok) {
		return fmt.Errorf("FedSEP: the state holds %d sites, not one shared site: it is not FedSEP's", len(f.core.sites))
	}
	return nil
}
