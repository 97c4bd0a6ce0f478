// Package metrics computes every evaluation figure the fedbayes papers report, one way, on plain
// slices, for predictions from any source (a single model, an ensemble, an aggregated predictive).
//
// Scales: accuracy, ECE and the reliability-diagram accuracies are fractions in [0, 1]; Percent
// converts a fraction to percent (Ozer et al. (2022) report Acc and ECE in percent, Jamoussi et al.
// (BA-BFL) report fractions). NLL is in nats per example.
//
// Layouts: class probabilities are a flat row-major []float32 of shape [N, C] (example n, class c at
// n*C+c); Monte Carlo samples are [M, N, C] (sample m, example n, class c at (m*N+n)*C+c); labels
// are []int32 in [0, C).
//
// Streaming: every metric is an accumulator with Add(batch...) and Result(). Running sums are kept
// in float64 and updated one example at a time in input order, so feeding a test set in batches
// gives exactly (bit for bit) the result of feeding it in one call. Only O(N) per-example scores are
// kept where a metric needs them (uncertainty ranking for retention curves); no accumulator holds
// N x C x M values.
//
// Validation: probabilities must be finite, non-negative and sum to one within a tolerance
// (DefaultTolerance unless changed with SetTolerance); labels must be in range; empty input and
// mismatched lengths are errors. Errors name the accumulator, the example (index within the batch
// and in the whole stream) and the value at fault.
package metrics
