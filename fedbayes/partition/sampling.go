package partition

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// SamplingMethod is how a round's clients are drawn.
type SamplingMethod string

// The sampling methods.
const (
	// SampleUniform draws the round's clients uniformly without replacement (McMahan et al. 2017;
	// Participation.Round).
	SampleUniform SamplingMethod = "uniform"
	// SampleSize draws them without replacement with probability proportional to their sizes, one
	// after another among those not drawn yet (the size-proportional sampling of Li et al. (2020),
	// "On the convergence of FedAvg on non-IID data", Scheme I, there with replacement).
	SampleSize SamplingMethod = "size"
	// SamplePowerOfChoice draws Candidates clients as SampleSize does and keeps the Active of them
	// with the highest local loss: Cho, Wang and Joshi (2022), "Towards understanding biased client
	// selection in federated learning" (AISTATS; arXiv 2010.01243, "Client Selection in Federated
	// Learning: Convergence Analysis and Power-of-Choice Selection Strategies"), Alg. 1. The loss
	// is what the caller passes (the engine: each client's mean training negative log-likelihood of
	// the last round it returned, as their rpow-d variant, with no extra computation or
	// communication); a client that has not returned yet (+Inf) ranks first.
	SamplePowerOfChoice SamplingMethod = "power-of-choice"
)

// SamplingMethods lists the sampling methods.
var SamplingMethods = []SamplingMethod{SampleUniform, SampleSize, SamplePowerOfChoice}

// MaxAvailabilityDraws bounds the availability draws of one round (see SamplingOptions.Availability).
const MaxAvailabilityDraws = 1000

// SamplingOptions configures a Sampler beyond the Participation's uniform draw.
type SamplingOptions struct {
	// Method is the sampling method ("" is SampleUniform).
	Method SamplingMethod
	// Candidates is d of SamplePowerOfChoice, in [Active, NumClients] (0: min(NumClients, 2 Active)).
	Candidates int
	// Availability holds each client's probability of being available in a round, in [0, 1]
	// (one value: every client's; nil: every client is always available). Each round every client
	// is available independently with its probability; a draw that leaves fewer than Active
	// clients available is drawn again (the server waits for Active clients, as Flower's strategies
	// wait for min_available_clients), at most MaxAvailabilityDraws times.
	Availability []float64
	// Trace, when set, gives the availability as a trace instead: Trace[r-1] lists the clients
	// available in round r (rounds count from 1; ids in [0, NumClients), no client twice, at least
	// Active of them), as the availability traces of FedScale (Lai et al. (2022), "FedScale:
	// Benchmarking model and system performance of federated learning at scale") replay which
	// devices were online. The round's clients are drawn among the listed ones by the
	// method; a round past the trace is an error. Availability must then be nil.
	Trace [][]int
	// DropRate is the share of a round's sampled clients that fail to return, in [0, 1): as
	// PFLlib's client_drop_rate, floor((1 - DropRate) Active) of them, drawn at random, return (at
	// least one).
	DropRate float64
	// StragglerRate is the share of the clients that are slow, in [0, 1]: floor(StragglerRate C)
	// clients drawn once from the seed, as PFLlib's train_slow_rate. A straggler runs fewer local
	// steps (StragglerSteps).
	StragglerRate float64
}

// Sampler draws each round's clients (Round), which of them return, and which are stragglers. Every
// draw depends on (Seed, round) and the losses passed in alone, so a round can be replayed.
type Sampler struct {
	// Participation holds the number of clients, the number drawn per round and the seed.
	Participation
	opt        SamplingOptions
	sizes      []int
	stragglers []bool
}

// Draw is one round's clients: those sampled, and those of them that returned; both increasing.
type Draw struct {
	Sampled, Returned []int
}

// NewSampler returns the sampler of participation p over clients of the given sizes.
func NewSampler(p Participation, sizes []int, opt SamplingOptions) (*Sampler, error) {
	if _, err := p.Round(0); err != nil {
		return nil, err
	}
	if len(sizes) != p.NumClients {
		return nil, fmt.Errorf("partition: sampling: %d sizes for %d clients", len(sizes), p.NumClients)
	}
	if opt.Method == "" {
		opt.Method = SampleUniform
	}
	if err := checkSampling(p, opt); err != nil {
		return nil, err
	}
	if opt.Method == SamplePowerOfChoice && opt.Candidates == 0 {
		opt.Candidates = min(p.NumClients, 2*p.Active)
	}
	if opt.Trace != nil {
		trace := make([][]int, len(opt.Trace))
		for r, ids := range opt.Trace {
			trace[r] = slices.Clone(ids)
		}
		opt.Trace = trace
	}
	s := &Sampler{Participation: p, opt: opt, sizes: slices.Clone(sizes), stragglers: make([]bool, p.NumClients)}
	n := int(math.Floor(opt.StragglerRate*float64(p.NumClients) + 1e-9))
	for _, k := range permutation(newRNG(p.Seed, streamStragglers), p.NumClients)[:n] {
		s.stragglers[k] = true
	}
	return s, nil
}

// SamplingError is an invalid SamplingOptions field: Field names it as the engine's spec does
// (method, candidates, availability, drop_rate, straggler_rate).
type SamplingError struct {
	Field, Problem string
}

// Error implements error.
func (e *SamplingError) Error() string {
	return fmt.Sprintf("partition: sampling: %s: %s", e.Field, e.Problem)
}

// samplingErr returns a *SamplingError.
func samplingErr(field, format string, args ...any) error {
	return &SamplingError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// checkSampling validates the options against p.
func checkSampling(p Participation, opt SamplingOptions) error {
	if !slices.Contains(SamplingMethods, opt.Method) {
		return samplingErr("method", "unknown method %q; want one of %v", opt.Method, SamplingMethods)
	}
	if opt.Candidates != 0 && (opt.Method != SamplePowerOfChoice || opt.Candidates < p.Active || opt.Candidates > p.NumClients) {
		return samplingErr("candidates", "%d candidates; power-of-choice takes between the %d clients of a round and all %d",
			opt.Candidates, p.Active, p.NumClients)
	}
	if err := checkAvailability(p, opt.Availability); err != nil {
		return err
	}
	if err := checkTrace(p, opt); err != nil {
		return err
	}
	if !(opt.DropRate >= 0 && opt.DropRate < 1) {
		return samplingErr("drop_rate", "%v; must be in [0, 1)", opt.DropRate)
	}
	if !(opt.StragglerRate >= 0 && opt.StragglerRate <= 1) {
		return samplingErr("straggler_rate", "%v; must be in [0, 1]", opt.StragglerRate)
	}
	return nil
}

// checkAvailability validates the availabilities: one or one per client, each in [0, 1], and at least
// the clients of a round with a positive one.
func checkAvailability(p Participation, a []float64) error {
	if a == nil {
		return nil
	}
	if len(a) != 1 && len(a) != p.NumClients {
		return samplingErr("availability", "%d values for %d clients; give one per client or one for all", len(a), p.NumClients)
	}
	possible := 0
	for k, q := range a {
		if !(q >= 0 && q <= 1) {
			return samplingErr("availability", "client %d: %v; must be in [0, 1]", k, q)
		}
		if q > 0 {
			possible++
		}
	}
	if len(a) == 1 && possible == 1 {
		possible = p.NumClients
	}
	if possible < p.Active {
		return samplingErr("availability", "only %d clients are ever available, fewer than the %d of a round", possible, p.Active)
	}
	return nil
}

// checkTrace validates an availability trace: no availabilities beside it, at least one round, and
// in each round between Active and NumClients distinct clients, each in [0, NumClients).
func checkTrace(p Participation, opt SamplingOptions) error {
	if opt.Trace == nil {
		return nil
	}
	if opt.Availability != nil {
		return samplingErr("trace", "set together with availability; give the availability as probabilities or as a trace, not both")
	}
	if len(opt.Trace) == 0 {
		return samplingErr("trace", "no rounds; list the clients available in each round, or leave trace out")
	}
	seen := make([]int, p.NumClients) // seen[k] = r+1 when client k is listed in round r
	for r, ids := range opt.Trace {
		if len(ids) == 0 {
			return samplingErr("trace", "round %d lists no clients; a round needs at least the %d clients it draws", r+1, p.Active)
		}
		for _, k := range ids {
			if k < 0 || k >= p.NumClients {
				return samplingErr("trace", "round %d lists client %d, but the clients are 0 to %d", r+1, k, p.NumClients-1)
			}
			if seen[k] == r+1 {
				return samplingErr("trace", "round %d lists client %d twice", r+1, k)
			}
			seen[k] = r + 1
		}
		if len(ids) < p.Active {
			return samplingErr("trace", "round %d lists %d available clients, fewer than the %d of a round", r+1, len(ids), p.Active)
		}
	}
	return nil
}

// Round draws round round's clients (round >= 0). losses[k] is client k's loss for power-of-choice
// (+Inf for a client not seen yet; ignored by the other methods, nil allowed there). Uniform
// sampling with every client available is Participation.Round.
func (s *Sampler) Round(round int, losses []float64) (Draw, error) {
	if round < 0 {
		return Draw{}, fmt.Errorf("partition: sampling: round must be >= 0, got %d", round)
	}
	var sampled []int
	if s.opt.Method == SampleUniform && s.opt.Availability == nil && s.opt.Trace == nil {
		var err error
		if sampled, err = s.Participation.Round(round); err != nil {
			return Draw{}, err
		}
	} else {
		avail, err := s.available(round)
		if err != nil {
			return Draw{}, err
		}
		if sampled, err = s.choose(round, avail, losses); err != nil {
			return Draw{}, err
		}
	}
	return Draw{Sampled: sampled, Returned: s.returned(round, sampled)}, nil
}

// roundRNG is the generator of a round's draw on one stream.
func (s *Sampler) roundRNG(round int, stream uint64) *rand.Rand {
	return newRNG(splitmix(s.Seed^splitmix(uint64(round))), stream)
}

// splitmix is the splitmix64 finaliser.
func splitmix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// available returns the clients available in a round, increasing: the trace's round, all of them
// without availabilities, else the first of at most MaxAvailabilityDraws independent draws that
// leaves at least Active clients.
func (s *Sampler) available(round int) ([]int, error) {
	if t := s.opt.Trace; t != nil {
		if round < 1 || round > len(t) {
			return nil, fmt.Errorf("partition: sampling: round %d is outside the availability trace's rounds 1 to %d", round, len(t))
		}
		ids := slices.Clone(t[round-1])
		slices.Sort(ids)
		return ids, nil
	}
	all := make([]int, 0, s.NumClients)
	a := s.opt.Availability
	if a == nil {
		for k := range s.NumClients {
			all = append(all, k)
		}
		return all, nil
	}
	rng := s.roundRNG(round, streamAvailability)
	for range MaxAvailabilityDraws {
		all = all[:0]
		for k := range s.NumClients {
			q := a[0]
			if len(a) > 1 {
				q = a[k]
			}
			if rng.Float64() < q {
				all = append(all, k)
			}
		}
		if len(all) >= s.Active {
			return all, nil
		}
	}
	return nil, fmt.Errorf("partition: sampling: round %d: fewer than %d clients available in each of %d draws; raise the availabilities",
		round, s.Active, MaxAvailabilityDraws)
}

// choose draws the round's Active clients from avail by the method, increasing.
func (s *Sampler) choose(round int, avail []int, losses []float64) ([]int, error) {
	rng := s.roundRNG(round, streamSampling)
	var out []int
	switch s.opt.Method {
	case SampleUniform:
		ids := slices.Clone(avail)
		for i := range s.Active { // partial Fisher-Yates
			j := i + rng.IntN(len(ids)-i)
			ids[i], ids[j] = ids[j], ids[i]
		}
		out = ids[:s.Active]
	case SampleSize:
		out = s.bySize(rng, avail, s.Active)
	case SamplePowerOfChoice:
		if len(losses) != s.NumClients {
			return nil, fmt.Errorf("partition: sampling: power-of-choice needs one loss per client, got %d for %d", len(losses), s.NumClients)
		}
		cand := s.bySize(rng, avail, min(s.opt.Candidates, len(avail)))
		// Highest loss first; NaN ranks last; equal losses keep the order drawn.
		slices.SortStableFunc(cand, func(a, b int) int {
			la, lb := losses[a], losses[b]
			if math.IsNaN(la) || math.IsNaN(lb) {
				return cmp.Compare(btoi(math.IsNaN(la)), btoi(math.IsNaN(lb)))
			}
			return cmp.Compare(lb, la)
		})
		out = cand[:s.Active]
	}
	out = slices.Clone(out)
	slices.Sort(out)
	return out, nil
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// bySize draws n of the clients in from, without replacement, each draw with probability
// proportional to the sizes of the clients not drawn yet; it returns them in the order drawn. A
// draw takes u uniform in [0, total) and picks the first client, in the order of from, whose sizes
// so far exceed u; a Fenwick tree over from's sizes finds it in O(log len(from)) steps instead of a
// walk, so a round costs O(len(from) + n log len(from)). The sizes are integers, so every sum is
// exact in float64 and the picks are those of the walk.
func (s *Sampler) bySize(rng *rand.Rand, from []int, n int) []int {
	m := len(from)
	tree := make([]float64, m+1) // tree[i] sums the sizes of from[i-(i&-i) : i]
	var total float64
	for i, k := range from {
		tree[i+1] += float64(s.sizes[k])
		if j := i + 1 + (i+1)&-(i+1); j <= m {
			tree[j] += tree[i+1]
		}
		total += float64(s.sizes[k])
	}
	top := 1
	for top*2 <= m {
		top *= 2
	}
	taken := make([]bool, m)
	out := make([]int, 0, n)
	for len(out) < n {
		u := rng.Float64() * total
		pick := -1
		if u < total {
			// The largest pos whose prefix sum is <= u: the pick is the next one.
			pos, rest := 0, u
			for step := top; step > 0; step /= 2 {
				if next := pos + step; next <= m && tree[next] <= rest {
					pos, rest = next, rest-tree[next]
				}
			}
			pick = pos
		}
		if pick < 0 || pick >= m || taken[pick] {
			// u past the end by rounding: the last client not drawn yet.
			for pick = m - 1; taken[pick]; pick-- {
			}
		}
		taken[pick] = true
		out = append(out, from[pick])
		w := float64(s.sizes[from[pick]])
		total -= w
		for i := pick + 1; i <= m; i += i & -i {
			tree[i] -= w
		}
	}
	return out
}

// returned draws which of the sampled clients return: all without a drop rate, else a random
// max(1, floor((1 - DropRate) m)) of the m sampled, increasing.
func (s *Sampler) returned(round int, sampled []int) []int {
	m := len(sampled)
	n := max(1, int(math.Floor((1-s.opt.DropRate)*float64(m)+1e-9)))
	if n >= m {
		return slices.Clone(sampled)
	}
	perm := permutation(s.roundRNG(round, streamDrop), m)[:n]
	out := make([]int, n)
	for i, j := range perm {
		out[i] = sampled[j]
	}
	slices.Sort(out)
	return out
}

// Straggler reports whether client k is one of the slow clients.
func (s *Sampler) Straggler(k int) bool { return k >= 0 && k < len(s.stragglers) && s.stragglers[k] }

// StragglerSteps returns how many of its full local steps per epoch (full >= 1) client k runs in a
// round: all of them, or for a straggler a number drawn uniformly from [1, max(1, floor(full/2))]
// from (Seed, round, k). PFLlib's slow clients instead run a random number of epochs in
// [1, E/2), which needs E >= 4; drawing steps works with one epoch too.
func (s *Sampler) StragglerSteps(round, k, full int) int {
	if !s.Straggler(k) || full <= 1 {
		return full
	}
	rng := newRNG(splitmix(s.Seed^splitmix(uint64(round)))^splitmix(uint64(k)+1), streamStragglers)
	return 1 + rng.IntN(max(1, full/2))
}
