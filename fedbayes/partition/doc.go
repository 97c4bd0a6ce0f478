// Package partition splits a dataset among federated clients the ways the fedbayes papers do:
// IID, Dirichlet label skew, class shards / k classes per client, the heterogeneity parameter h of
// Hasan (2023), sorting by an input feature for regression, and partial participation per round;
// beside them, client sizes from a distribution dealt within a label partition (quantity skew:
// ClientSizes, WithSizes) and a round's sampling beyond uniform, with availability, dropouts and
// stragglers (Sampler).
//
// Every function works on plain slices (labels []int32 with a class count, or a []float32 key per
// example), is deterministic given its seed (same seed, same partition, on every platform: the
// generator is math/rand/v2's PCG), and returns a *Partition holding the per-client example indices,
// the client-by-class count matrix (for a heatmap like Jamoussi et al., Fig. 2) and the client sizes
// (for size weighting). Impossible requests (more clients than examples, a minimum size that cannot
// be met, a shard size of zero) return an error that says what and why; randomised searches are
// bounded and fail with an error rather than loop.
package partition
