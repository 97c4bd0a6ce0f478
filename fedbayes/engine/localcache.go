package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sync"

	"fedbayes.dev/fedbayes/internal/catch"
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
// cost memory for nothing. A kept outcome is shared by the runs that read it: strategies must not
// change a Round's client models (strategy.Round says so).
type localCache struct {
	mu    sync.Mutex
	items map[string]localOutcome
	bytes int64
	// hits counts the outcomes given out again.
	hits int
}

// newLocalCache makes the cache of a Run call (a test replaces it to count the reuses).
var newLocalCache = func() *localCache { return &localCache{} }

// localKey is the cache key of a round, or "" when the round's outcome is not kept.
func localKey(in roundInput, ids []int) (string, error) {
	if in.round != 1 {
		return "", nil
	}
	s := in.spec
	training := s.Training
	training.Rounds = 0 // how many rounds follow does not change the first
	part := struct {
		Dataset   DatasetSpec
		Partition PartitionSpec
		Model     ModelSpec
		Training  TrainingSpec
		Seed      int64
		IDs       []int
	}{s.Dataset, s.Partition, s.Model, training, in.seed, ids}
	b, err := json.Marshal(part)
	if err != nil {
		return "", fmt.Errorf("the local-training cache key: %w", err)
	}
	d, err := digest(in.global)
	if err != nil {
		return "", fmt.Errorf("the local-training cache key: %w", err)
	}
	return string(b) + "\x00" + d, nil
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

// digest is a SHA-256 of every value of p (names, shapes, means, log-variances) bit for bit.
func digest(p *posterior.Posterior) (string, error) {
	h := sha256.New()
	var b [8]byte
	for _, q := range p.Params {
		h.Write([]byte(q.Name))
		h.Write([]byte{0})
		for _, x := range []*tensors.Tensor{q.Mean, q.LogVar} {
			if x == nil {
				h.Write([]byte{0})
				continue
			}
			h.Write([]byte{1})
			for _, d := range x.Shape().Dimensions {
				binary.LittleEndian.PutUint64(b[:], uint64(d))
				h.Write(b[:])
			}
			var flat []float32
			if err := catch.Do(func() { flat = tensors.MustCopyFlatData[float32](x) }); err != nil {
				return "", fmt.Errorf("parameter %q: %w", q.Name, err)
			}
			for _, v := range flat {
				binary.LittleEndian.PutUint32(b[:4], math.Float32bits(v))
				h.Write(b[:4])
			}
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}
