package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"

	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// localCacheBudget bounds the bytes of client models a localCache keeps (the values of the outcomes'
// posteriors). Past it, new outcomes are computed but not kept: the runs still give the same numbers,
// only more slowly.
const localCacheBudget = 512 << 20

// localCache keeps the clients' first-round outcomes for the runs of one Run call, so that the
// settings of a sweep that differ only in the server strategy (the variants of Hasan's one-round
// presets, FedAvg beside FedBE) train or sample the same clients once, as Hasan's former one-round
// runner did, rather than once per strategy.
//
// A round's local outcome is a function of what the key holds: the data, partition, model and
// local-training fields of the spec, the seed, the active clients and the global model they start
// from (every other state of the clients' network is in the global model, batch-norm statistics
// included, or reset each round; resuming from a checkpoint relies on the same). Only round 1 is
// kept: later rounds start from global models that differ between strategies, so keeping them would
// cost memory for nothing; for the same reason a run whose first round no other run of the Run call
// can share (sharedFirstRounds) has no cache. A kept outcome is shared by the runs that read it: strategies must not
// change a Round's client models (strategy.Round says so).
type localCache struct {
	mu    sync.Mutex
	items map[string]localOutcome
	bytes int64
	// hits counts the outcomes given out again.
	hits int
}

// firstRoundPart is what a run's first round depends on in its spec and seed: the data, partition,
// model and local-training fields, and the seed. Runs that differ in it never share a first round.
func firstRoundPart(s *Spec, seed int64) (string, error) {
	training := s.Training
	training.Rounds = 0 // how many rounds follow does not change the first
	b, err := json.Marshal(struct {
		Dataset   DatasetSpec
		Partition PartitionSpec
		Model     ModelSpec
		Training  TrainingSpec
		Seed      int64
	}{s.Dataset, s.Partition, s.Model, training, seed})
	if err != nil {
		return "", fmt.Errorf("the local-training cache key: %w", err)
	}
	return string(b), nil
}

// sharedFirstRounds says, for each of runs, whether another of them has the same firstRoundPart, so
// that Run gives a localCache only to the runs that may share a first round: the others would hash
// their global model and keep their outcome for nothing.
func sharedFirstRounds(runs []runRef) ([]bool, error) {
	parts := make([]string, len(runs))
	count := map[string]int{}
	for i, r := range runs {
		part, err := firstRoundPart(r.st.Spec, r.seed)
		if err != nil {
			return nil, err
		}
		parts[i] = part
		count[part]++
	}
	shared := make([]bool, len(runs))
	for i, part := range parts {
		shared[i] = count[part] > 1
	}
	return shared, nil
}

// localKey is the cache key of a round, or "" when the round's outcome is not kept: firstRoundPart,
// the active clients and the digest of the global model they start from.
func localKey(in roundInput, ids []int) (string, error) {
	if in.round != 1 {
		return "", nil
	}
	part, err := firstRoundPart(in.spec, in.seed)
	if err != nil {
		return "", err
	}
	d, err := digest(in.global)
	if err != nil {
		return "", fmt.Errorf("the local-training cache key: %w", err)
	}
	return part + "\x00" + fmt.Sprint(ids) + "\x00" + d, nil
}

// get returns the outcome kept under key.
func (c *localCache) get(key string) (localOutcome, bool) {
	if c == nil || key == "" {
		return localOutcome{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out, ok := c.items[key]
	if ok {
		c.hits++
	}
	return out, ok
}

// put keeps out under key while the cache's budget allows; a diverged outcome is not kept.
func (c *localCache) put(key string, out localOutcome) {
	if c == nil || key == "" || out.diverged != "" {
		return
	}
	n := outcomeBytes(out)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bytes+n > localCacheBudget {
		return
	}
	if c.items == nil {
		c.items = map[string]localOutcome{}
	}
	c.items[key] = out
	c.bytes += n
}

// outcomeBytes is the size of the values an outcome's posteriors hold.
func outcomeBytes(out localOutcome) int64 {
	list := append([]*posterior.Posterior{out.stacked}, out.clients...)
	list = append(list, out.draws...)
	var n int64
	for _, p := range list {
		if p == nil {
			continue
		}
		g, d := p.NumValues()
		n += 4 * int64(2*g+d)
	}
	return n
}

// digest is a SHA-256 of every value of p (names, shapes, means, log-variances) bit for bit: each
// dimension as a little-endian uint64 and each value as its little-endian float32 bits.
func digest(p *posterior.Posterior) (string, error) {
	h := sha256.New()
	for _, q := range p.Params {
		h.Write([]byte(q.Name))
		h.Write([]byte{0})
		for _, x := range []*tensors.Tensor{q.Mean, q.LogVar} {
			if x == nil {
				h.Write([]byte{0})
				continue
			}
			h.Write([]byte{1})
			dims := make([]uint64, x.Rank())
			for i, d := range x.Shape().Dimensions {
				dims[i] = uint64(d)
			}
			_ = binary.Write(h, binary.LittleEndian, dims) // a hash.Hash never fails to write
			if err := tensors.ConstFlatData(x, func(flat []float32) { _ = binary.Write(h, binary.LittleEndian, flat) }); err != nil {
				return "", fmt.Errorf("parameter %q: %w", q.Name, err)
			}
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}
