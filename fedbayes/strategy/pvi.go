package strategy

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"
	"sort"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// PVIName is the registry name of partitioned variational inference.
const PVIName = "pvi"

// DefaultPVIDamping returns PVI's damping when aggregation.options.damping is not set, for active
// clients per round: 2/active, at most 1. With the parallel schedule every client moves the global
// by its own step against its cavity, and the steps add up, so the damping must fall with the
// number of clients that take part; the ground-truth lab's linear regimes converge at 0.33 to 0.94
// (half their stability bounds, docs/ground-truth.md), and on scikit-learn's digits with 10
// Bayesian MLP clients 0.5 broke down (a cavity without positive precision) where 0.2 trained (the
// pvi-digits preset, docs/strategies.md).
func DefaultPVIDamping(active int) float64 {
	if active <= 2 {
		return 1
	}
	return 2 / float64(active)
}

// Stateful is a Strategy that keeps state between rounds. The engine saves State with every round's
// checkpoint and calls Restore (with nil before round 1) when a run starts or resumes, so that a
// resumed run gives the same numbers as an uninterrupted one.
type Stateful interface {
	Strategy
	// State encodes the strategy's state after its last Aggregate.
	State() ([]byte, error)
	// Restore sets the state from what State encoded (nil: the state before round 1). It refuses an
	// encoding it cannot read, or one of another model.
	Restore(state []byte) error
}

// ClientPriors is a Strategy that sets the prior each client trains against (partitioned VI's
// cavity: the global without the client's own site). The engine builds the clients' models with
// prior variables when the strategy is one, and calls Priors before each round's local training.
type ClientPriors interface {
	Strategy
	// Priors returns the priors of the clients ids (their Gaussian parameters, one posterior per
	// client in the order of ids) for round number, whose clients start from global; model is the
	// clients' network (its prior N(0, PriorStd²) is the method's prior).
	Priors(number int, ids []int, global *posterior.Posterior, model models.Config) ([]*posterior.Posterior, error)
}

// SequentialClients is a ClientPriors strategy whose sampled clients may train one after another
// within a round, each against the cavity of the global that the ones before it updated (the
// sequential schedule of partitioned VI, Ashman et al. (2022), Sec. 3.2). When Sequential reports
// true, the engine trains a round's clients one at a time in the order of the round's ids: for each
// it calls Priors with that client alone, trains it from the global the last Absorb returned (the
// round's starting global for the first), and hands its trained model to Absorb; a client that does
// not return is not absorbed. At the end of the round it calls Aggregate with every client that
// returned, which then only assembles the global.
type SequentialClients interface {
	ClientPriors
	// Sequential reports whether the round's clients train one after another.
	Sequential() bool
	// Absorb updates the strategy with the clients of r (one, in the engine's schedule) in the order
	// of r.IDs and returns the global the next client starts from.
	Absorb(r *Round) (*posterior.Posterior, error)
}

// DivergedError is a strategy's report that its method broke down in a round (partitioned VI's
// cavity without positive precision): the engine marks the run diverged with the reason, as it does
// a client whose training loss is not finite, and the sweep goes on.
type DivergedError struct {
	Err error
}

func (e *DivergedError) Error() string { return e.Err.Error() }

func (e *DivergedError) Unwrap() error { return e.Err }

// PVI's schedules (PVIOptions.Schedule; Ashman et al. (2022), Sec. 3.2).
const (
	// Parallel: every sampled client of a round trains against its cavity of the round's starting
	// global, and the server takes all their sites at once.
	Parallel = "parallel"
	// Sequential: the sampled clients train one after another, each against its cavity of the global
	// with the sites of the clients before it in the round already updated.
	Sequential = "sequential"
)

// PVIOptions are PVI's aggregation.options.
type PVIOptions struct {
	// Damping rho in (0, 1] of each client's site update, t ← t_new^rho t_old^(1-rho) (0 means
	// DefaultPVIDamping of the clients per round, or 1 with the sequential schedule).
	Damping float64 `json:"damping,omitempty"`
	// Schedule is Parallel (default) or Sequential.
	Schedule string `json:"schedule,omitempty"`
}

// PVI is partitioned variational inference with mean-field Gaussian sites (Ashman et al. (2022);
// Bui et al. (2018)): the global approximation is the prior times one site per client,
// q = p Π_k t_k (aggregate.Natural). In each round a sampled client trains its mean-field posterior
// q_k by the engine's own local VI with its cavity q / t_k as the KL term's prior (Priors), and its
// site becomes q_k / cavity, damped; the server multiplies the prior by every site, those of the
// clients that did not take part in the round kept as they were. Under the parallel schedule every
// sampled client's cavity is of the round's starting q; under the sequential one (Absorb) of the q
// that the clients before it in the round updated. The global model the clients
// start from and that is evaluated is q; a deterministic parameter (a layer without variances) is
// the size-weighted mean of the clients' values, as FedAvg. Its state is one site per client that
// has taken part (clients × Gaussian values × 2 float64s).
type PVI struct {
	Damping float64
	// Schedule is Parallel or Sequential.
	Schedule string
	// sites are the clients' sites by client id, each the concatenation of the Gaussian parameters
	// in name order; names and sizes fix that layout.
	sites map[int]aggregate.Natural
	names []string
	sizes []int
	// absorbed are the clients of round absorbedRound that the sequential schedule has taken in
	// (Absorb), by id, with the trained model each sent; Aggregate empties it.
	absorbed      map[int]*posterior.Posterior
	absorbedRound int
}

func newPVI(s Settings) (*PVI, error) {
	var o PVIOptions
	if err := DecodeOptions(s, &o); err != nil {
		return nil, err
	}
	return pviFrom(s, o)
}

// pviFrom builds PVI from its decoded options, refusing the settings it cannot run.
func pviFrom(s Settings, o PVIOptions) (*PVI, error) {
	switch o.Schedule {
	case "":
		o.Schedule = Parallel
	case Parallel, Sequential:
	default:
		return nil, &FieldError{Field: OptionsField + ".schedule", Problem: fmt.Sprintf("%q: want %s or %s", o.Schedule, Parallel, Sequential)}
	}
	if o.Damping == 0 && o.Schedule == Sequential {
		// One client at a time moves the global by its own step only: no steps add up.
		o.Damping = 1
	}
	if o.Damping == 0 {
		active := s.Active
		if active == 0 {
			active = s.Clients
		}
		o.Damping = DefaultPVIDamping(active)
	}
	if !(o.Damping > 0 && o.Damping <= 1) {
		return nil, &FieldError{Field: OptionsField + ".damping", Problem: fmt.Sprintf("%v: want a damping in (0, 1]", o.Damping)}
	}
	if s.Kind != "" && s.Kind != models.Bayesian {
		return nil, &FieldError{Field: "model.kind", Problem: fmt.Sprintf("%q; PVI's sites are Gaussian: it needs model.kind bayesian", s.Kind)}
	}
	if s.Sampling {
		return nil, &FieldError{Field: "training.sampler", Problem: "PVI's clients run variational inference against their cavities; unset training.sampler"}
	}
	if s.Compat != "" && s.Compat != models.CompatNone {
		return nil, &FieldError{Field: "model.compat", Problem: fmt.Sprintf("%q; PVI's prior is the model's N(0, prior_std²): use the default compatibility", s.Compat)}
	}
	return &PVI{Damping: o.Damping, Schedule: o.Schedule, sites: map[int]aggregate.Natural{}}, nil
}

// Sequential reports whether PVI runs the sequential schedule.
func (p *PVI) Sequential() bool { return p.Schedule == Sequential }

func init() {
	registerBuiltin(PVIName, func(s Settings) (Strategy, error) { return newPVI(s) })
}

// priorOf is the method's prior in natural parameters over the Gaussian values of global: N(0, s²)
// with s the model's prior standard deviation.
func (p *PVI) priorOf(model models.Config) aggregate.Natural {
	std := model.PriorStd
	if std == 0 {
		std = models.DefaultPriorStd
	}
	n := 0
	for _, sz := range p.sizes {
		n += sz
	}
	prior := aggregate.NewNatural(n)
	for i := range prior.Prec {
		prior.Prec[i] = 1 / (std * std)
	}
	return prior
}

// layout fixes the order of the Gaussian values from global (name order) on first use, and checks it
// afterwards.
func (p *PVI) layout(global *posterior.Posterior) error {
	var names []string
	var sizes []int
	for _, q := range global.Params {
		if q.IsGaussian() {
			names, sizes = append(names, q.Name), append(sizes, q.Mean.Shape().Size())
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("PVI: the model has no Gaussian parameters")
	}
	if p.names == nil {
		p.names, p.sizes = names, sizes
		return nil
	}
	if fmt.Sprint(names, sizes) != fmt.Sprint(p.names, p.sizes) {
		return fmt.Errorf("PVI: the model's Gaussian parameters %v %v are not the sites' %v %v", names, sizes, p.names, p.sizes)
	}
	return nil
}

// site returns client id's site (the factor 1 before it took part).
func (p *PVI) site(id int, n int) aggregate.Natural {
	if t, ok := p.sites[id]; ok {
		return t
	}
	return aggregate.NewNatural(n)
}

// global returns q = prior × Π sites over every client that has a site.
func (p *PVI) global(prior aggregate.Natural) (aggregate.Natural, error) {
	ids := make([]int, 0, len(p.sites))
	for id := range p.sites {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	sites := make([]aggregate.Natural, len(ids))
	for i, id := range ids {
		sites[i] = p.sites[id]
	}
	return aggregate.Product(prior, sites)
}

// Priors returns each client's cavity, q / t_k, as its prior.
func (p *PVI) Priors(number int, ids []int, global *posterior.Posterior, model models.Config) ([]*posterior.Posterior, error) {
	if err := p.layout(global); err != nil {
		return nil, err
	}
	prior := p.priorOf(model)
	q, err := p.global(prior)
	if err != nil {
		return nil, err
	}
	out := make([]*posterior.Posterior, len(ids))
	for j, id := range ids {
		cav, err := aggregate.Cavity(q, p.site(id, prior.Len()), id)
		if err != nil {
			return nil, &DivergedError{fmt.Errorf("PVI round %d: %w", number, p.named(err))}
		}
		if out[j], err = p.toPosterior(cav, global); err != nil {
			return nil, fmt.Errorf("PVI round %d: client %d's cavity: %w", number, id, p.named(err))
		}
	}
	return out, nil
}

// updateSites computes the damped new sites of the clients of r against the global of the current
// sites; with every set, the sites are updated one client after another (the sequential schedule),
// otherwise all at once after every client's site is computed (the parallel schedule).
func (p *PVI) updateSites(r *Round, clients []*posterior.Posterior, each bool) error {
	if r.Previous == nil {
		return fmt.Errorf("PVI needs the global model the clients started from")
	}
	if err := p.layout(r.Previous); err != nil {
		return err
	}
	prior := p.priorOf(r.Model)
	q, err := p.global(prior)
	if err != nil {
		return err
	}
	fresh := make(map[int]aggregate.Natural, len(r.IDs))
	for j, id := range r.IDs {
		old := p.site(id, prior.Len())
		cav, err := aggregate.Cavity(q, old, id)
		if err != nil {
			return &DivergedError{fmt.Errorf("PVI round %d: %w", r.Number, p.named(err))}
		}
		local, err := p.natural(clients[j])
		if err != nil {
			return fmt.Errorf("PVI round %d: client %d: %w", r.Number, id, err)
		}
		t, err := aggregate.SiteFrom(local, cav)
		if err == nil {
			t, err = aggregate.Damp(old, t, p.Damping)
		}
		if err != nil {
			return fmt.Errorf("PVI round %d: client %d: %w", r.Number, id, err)
		}
		if !each {
			fresh[id] = t
			continue
		}
		p.sites[id] = t
		if q, err = p.global(prior); err != nil {
			return err
		}
	}
	for id, t := range fresh {
		p.sites[id] = t
	}
	return nil
}

// Absorb takes in the clients of r under the sequential schedule, one after another, and returns
// the global q the next client starts from (its deterministic parameters those of r.Previous).
func (p *PVI) Absorb(r *Round) (*posterior.Posterior, error) {
	if !p.Sequential() {
		return nil, fmt.Errorf("PVI: Absorb with the %s schedule", p.Schedule)
	}
	clients, err := r.Clients()
	if err != nil {
		return nil, err
	}
	if p.absorbed == nil || p.absorbedRound != r.Number {
		p.absorbed, p.absorbedRound = map[int]*posterior.Posterior{}, r.Number
	}
	for _, id := range r.IDs {
		if _, dup := p.absorbed[id]; dup {
			return nil, fmt.Errorf("PVI round %d: client %d absorbed twice", r.Number, id)
		}
	}
	if err := p.updateSites(r, clients, true); err != nil {
		return nil, err
	}
	for j, id := range r.IDs {
		p.absorbed[id] = clients[j]
	}
	q, err := p.global(p.priorOf(r.Model))
	if err != nil {
		return nil, err
	}
	g, err := p.toPosterior(q, r.Previous)
	if err != nil {
		return nil, &DivergedError{fmt.Errorf("PVI round %d: the global: %w", r.Number, p.named(err))}
	}
	return g, nil
}

// Aggregate updates the sites of the clients that returned and returns q. Under the sequential
// schedule the sites were updated as the clients came in (Absorb), and r must hold exactly the
// clients absorbed in the round.
func (p *PVI) Aggregate(r *Round) (*Global, error) {
	clients, err := r.Clients()
	if err != nil {
		return nil, err
	}
	if p.Sequential() {
		err = p.checkAbsorbed(r)
		p.absorbed = nil
	} else {
		err = p.updateSites(r, clients, false)
	}
	if err != nil {
		return nil, err
	}
	q, err := p.global(p.priorOf(r.Model))
	if err != nil {
		return nil, err
	}
	w, err := r.NormalizedSizeWeights()
	if err != nil {
		return nil, err
	}
	g, err := p.toPosterior(q, r.Previous)
	if err != nil {
		return nil, &DivergedError{fmt.Errorf("PVI round %d: the global: %w", r.Number, p.named(err))}
	}
	if err := averageDeterministic(g, clients, r.IDs, w); err != nil {
		return nil, err
	}
	return &Global{Posterior: g, Weights: w}, nil
}

// checkAbsorbed fails unless the clients of r are those Absorb took in during round r.Number.
func (p *PVI) checkAbsorbed(r *Round) error {
	if r.Previous == nil {
		return fmt.Errorf("PVI needs the global model the clients started from")
	}
	got := 0
	if p.absorbedRound == r.Number {
		got = len(p.absorbed)
	}
	for _, id := range r.IDs {
		if p.absorbedRound != r.Number || p.absorbed[id] == nil {
			return fmt.Errorf("PVI round %d: client %d was not absorbed: the sequential schedule needs clients trained one after another "+
				"(strategy.SequentialClients), not together", r.Number, id)
		}
	}
	if got != len(r.IDs) {
		return fmt.Errorf("PVI round %d: %d clients absorbed, %d aggregated", r.Number, got, len(r.IDs))
	}
	return nil
}

// natural returns the Gaussian values of a client's posterior in natural parameters, in the sites'
// layout.
func (p *PVI) natural(c *posterior.Posterior) (aggregate.Natural, error) {
	var mean, variance []float64
	for _, name := range p.names {
		q := c.Find(name)
		if q == nil || !q.IsGaussian() {
			return aggregate.Natural{}, fmt.Errorf("PVI: Gaussian parameter %q is missing", name)
		}
		m, err := tensors.CopyFlatData[float32](q.Mean)
		if err != nil {
			return aggregate.Natural{}, err
		}
		lv, err := tensors.CopyFlatData[float32](q.LogVar)
		if err != nil {
			return aggregate.Natural{}, err
		}
		for i := range m {
			mean, variance = append(mean, float64(m[i])), append(variance, math.Exp(float64(lv[i])))
		}
	}
	n, err := aggregate.NaturalOf(mean, variance)
	return n, p.named(err)
}

// toPosterior returns the Gaussian f as a posterior shaped like like (its deterministic parameters
// copied), in float32 means and log-variances.
func (p *PVI) toPosterior(f aggregate.Natural, like *posterior.Posterior) (*posterior.Posterior, error) {
	mean, variance, err := f.Moments()
	if err != nil {
		return nil, err
	}
	out := &posterior.Posterior{}
	off := 0
	for _, q := range like.Params {
		if !q.IsGaussian() {
			c, err := q.Mean.Clone()
			if err != nil {
				return nil, err
			}
			out.Params = append(out.Params, posterior.Param{Name: q.Name, Mean: c})
			continue
		}
		n := q.Mean.Shape().Size()
		m, lv := make([]float32, n), make([]float32, n)
		for i := range n {
			m[i], lv[i] = float32(mean[off+i]), float32(math.Log(variance[off+i]))
		}
		off += n
		dims := q.Mean.Shape().Dimensions
		out.Params = append(out.Params, posterior.Param{Name: q.Name, Mean: tensors.FromFlatDataAndDimensions(m, dims...),
			LogVar: tensors.FromFlatDataAndDimensions(lv, dims...)})
	}
	return out, nil
}

// named adds to an aggregate error, whose "parameter i" is a flat index over the sites' values, the
// layout that maps it to a parameter (each parameter's name with the indices it covers).
func (p *PVI) named(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w (the sites' values run over %s)", err, p.layoutText())
}

// layoutText lists the sites' parameters with the range of flat indices each covers.
func (p *PVI) layoutText() string {
	var b bytes.Buffer
	off := 0
	for i, name := range p.names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d-%d", name, off, off+p.sizes[i]-1)
		off += p.sizes[i]
	}
	return b.String()
}

// pviState is PVI's state as State encodes it.
type pviState struct {
	Names []string
	Sizes []int
	IDs   []int
	Prec  [][]float64
	Shift [][]float64
}

// State encodes the sites (gob).
func (p *PVI) State() ([]byte, error) {
	st := pviState{Names: p.names, Sizes: p.sizes}
	for id := range p.sites {
		st.IDs = append(st.IDs, id)
	}
	sort.Ints(st.IDs)
	for _, id := range st.IDs {
		st.Prec, st.Shift = append(st.Prec, p.sites[id].Prec), append(st.Shift, p.sites[id].Shift)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(st); err != nil {
		return nil, fmt.Errorf("PVI: encoding the sites: %w", err)
	}
	return buf.Bytes(), nil
}

// Restore reads the sites State encoded, checking that every site has the layout's length and
// finite values.
func (p *PVI) Restore(state []byte) error {
	p.sites, p.names, p.sizes = map[int]aggregate.Natural{}, nil, nil
	if state == nil {
		return nil
	}
	var st pviState
	if err := gob.NewDecoder(bytes.NewReader(state)).Decode(&st); err != nil {
		return fmt.Errorf("PVI: the sites are unreadable: %w", err)
	}
	n := 0
	for _, sz := range st.Sizes {
		if sz < 1 {
			return fmt.Errorf("PVI: the sites' layout has a parameter of %d values", sz)
		}
		n += sz
	}
	if len(st.Names) != len(st.Sizes) || len(st.IDs) != len(st.Prec) || len(st.IDs) != len(st.Shift) {
		return fmt.Errorf("PVI: the sites are inconsistent: %d names, %d sizes, %d clients, %d precisions, %d shifts",
			len(st.Names), len(st.Sizes), len(st.IDs), len(st.Prec), len(st.Shift))
	}
	for i, id := range st.IDs {
		if id < 0 || (i > 0 && id <= st.IDs[i-1]) || len(st.Prec[i]) != n || len(st.Shift[i]) != n {
			return fmt.Errorf("PVI: client %d's site: %d precisions and %d shifts, want %d of each (clients in increasing order)",
				id, len(st.Prec[i]), len(st.Shift[i]), n)
		}
		for j := range n {
			if math.IsNaN(st.Prec[i][j]) || math.IsInf(st.Prec[i][j], 0) || math.IsNaN(st.Shift[i][j]) || math.IsInf(st.Shift[i][j], 0) {
				return fmt.Errorf("PVI: client %d's site: value %d is not finite", id, j)
			}
		}
		p.sites[id] = aggregate.Natural{Prec: st.Prec[i], Shift: st.Shift[i]}
	}
	if len(st.Names) > 0 {
		p.names, p.sizes = st.Names, st.Sizes
	}
	return nil
}

// averageDeterministic sets every deterministic parameter of g to the w-weighted mean of the clients'
// values (w normalised), as FedAvg combines them; ids name the clients in errors.
func averageDeterministic(g *posterior.Posterior, clients []*posterior.Posterior, ids []int, w []float64) error {
	for i, q := range g.Params {
		if q.IsGaussian() {
			continue
		}
		var sum []float64
		for k, c := range clients {
			cq := c.Find(q.Name)
			if cq == nil {
				return fmt.Errorf("PVI: client %d has no parameter %q", ids[k], q.Name)
			}
			v, err := tensors.CopyFlatData[float32](cq.Mean)
			if err != nil {
				return err
			}
			if sum == nil {
				sum = make([]float64, len(v))
			}
			if len(v) != len(sum) {
				return fmt.Errorf("PVI: client %d's parameter %q has %d values, want %d", ids[k], q.Name, len(v), len(sum))
			}
			for j, x := range v {
				sum[j] += w[k] * float64(x)
			}
		}
		out := make([]float32, len(sum))
		for j, x := range sum {
			out[j] = float32(x)
		}
		g.Params[i].Mean = tensors.FromFlatDataAndDimensions(out, q.Mean.Shape().Dimensions...)
	}
	return nil
}
