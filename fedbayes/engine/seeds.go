package engine

import (
	"hash/fnv"
	"math/rand/v2"
)

// Stream tags: every random quantity of a run is drawn from its own stream, derived from the run's seed,
// a tag and the round, client and epoch it belongs to. The vectorised and the one-client-at-a-time
// paths derive the same streams, so they draw the same numbers, and a resumed run draws what an
// uninterrupted one would.
const (
	tagSubsample     = "subsample"
	tagTestSubsample = "test-subsample"
	tagServer        = "server"
	tagPretrainVal   = "pretrain-validation"
	tagPartition     = "partition"
	tagParticipation = "participation"
	tagInit          = "init"
	tagBatchOrder    = "batch-order"
	tagClientNoise   = "client-noise"
	tagPretrain      = "pretrain"
	tagAggregate     = "aggregate"
	tagEval          = "eval"
	tagFairness      = "fairness"
	tagSampler       = "sampler"
)

// derive mixes a run seed, a tag and integers (round, client, epoch) into a 64-bit seed: FNV-1a of the
// tag, then splitmix64 finalisation of each part.
func derive(seed int64, tag string, parts ...int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(tag))
	x := h.Sum64() ^ mix64(uint64(seed))
	for _, p := range parts {
		x = mix64(x ^ mix64(uint64(int64(p))+0x9E3779B97F4A7C15))
	}
	return x
}

// deriveInt63 is derive as a non-negative int64 (for models.Config.Seed and noise seeds).
func deriveInt63(seed int64, tag string, parts ...int) int64 {
	return int64(derive(seed, tag, parts...) >> 1)
}

// mix64 is the splitmix64 finaliser (Steele, Lea and Flood 2014).
func mix64(z uint64) uint64 {
	z += 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// newRand returns a PCG generator for a derived seed.
func newRand(s uint64) *rand.Rand {
	return rand.New(rand.NewPCG(s, mix64(s)))
}

// permutation returns a seeded random permutation of 0..n-1.
func permutation(s uint64, n int) []int {
	return newRand(s).Perm(n)
}
