package models

import (
	"fmt"

	"fedbayes.dev/fedbayes/internal/catch"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// sharedTrunk reports whether Predict may compute the convolutional trunk once per chunk and only the
// dense head once per Monte Carlo sample: a Bayesian LeNet or CNN3 classifier whose convolutions are
// deterministic (Config.BayesianLayers covers the dense layers only, as in Ozer et al. (2022)'s LeNet
// with variational dense layers). The trunk then draws no noise, so its M recomputations in the
// one-pass-per-sample path compute the same values M times.
func (m *Model) sharedTrunk() bool {
	if m.cfg.Kind != Bayesian || m.cfg.Task != Classification || m.firstBayesian < 0 {
		return false
	}
	switch m.cfg.Arch {
	case ArchLeNet, ArchCNN3:
		return m.firstBayesian >= len(m.cfg.ConvChannels)
	}
	return false
}

// trunkAndHead returns the builder's two halves of the network (sharedTrunk architectures only).
func (b *builder) trunkAndHead() (trunk, head func(*Node) *Node) {
	if b.m.cfg.Arch == ArchCNN3 {
		return b.cnn3Trunk, b.cnn3Head
	}
	return b.lenetTrunk, b.lenetHead
}

// predictSamplesGraph returns the graph of samples Monte Carlo predictions of a batch x [N,
// InputShape...] in one call: the trunk once, then the head samples times, each with fresh weight
// noise drawn in turn from the clients' RNG streams; class probabilities [samples, K, N, C].
func (m *Model) predictSamplesGraph(samples int) func(*context.Context, *Node) []*Node {
	return func(_ *context.Context, x *Node) []*Node {
		b := m.newBuilder(x.Graph(), false)
		trunk, head := b.trunkAndHead()
		h := trunk(m.inputs(ExpandAxes(x, 0)))
		layer, weightLayer := b.layer, b.weightLayer
		outs := make([]*Node, samples)
		for s := range outs {
			b.layer, b.weightLayer = layer, weightLayer // the head's parameters, again
			outs[s] = ExpandAxes(ConvertDType(Softmax(head(h), -1), m.cfg.DType), 0)
		}
		if b.weightLayer != numWeightLayers(m.cfg) {
			panicf("models: internal error: %s built %d weight layers, expected %d", m.cfg.Arch, b.weightLayer, numWeightLayers(m.cfg))
		}
		b.finish()
		return []*Node{Concatenate(outs, 0)}
	}
}

// predictShared is Predict's path for sharedTrunk models: per chunk of examples, one call computes
// the trunk once and the M heads (the head's noise is drawn chunk by chunk, sample by sample, so the
// values differ from the one-pass-per-sample path's, with the same distribution; same seed, same
// result).
func (m *Model) predictShared(x []float32, samples int, p *Prediction) error {
	exec := m.samplesExec[samples]
	if exec == nil {
		var err error
		if exec, err = context.NewExec(m.backend, m.ctx, m.predictSamplesGraph(samples)); err != nil {
			return fmt.Errorf("models: Predict: creating the %d-sample executor: %w", samples, err)
		}
		if m.samplesExec == nil {
			m.samplesExec = map[int]*context.Exec{}
		}
		m.samplesExec[samples] = exec
	}
	n, c := p.Examples, p.Outputs
	batch := min(n, m.cfg.PredictBatch)
	chunk := make([]float32, batch*m.exampleSize)
	dims := append([]int{batch}, m.cfg.InputShape...)
	for start := 0; start < n; start += batch {
		count := min(batch, n-start)
		clear(chunk)
		copy(chunk, x[start*m.exampleSize:(start+count)*m.exampleSize])
		var outs []*tensors.Tensor
		if err := catch.Do(func() { outs = exec.MustExec(tensors.FromFlatDataAndDimensions(chunk, dims...)) }); err != nil {
			return fmt.Errorf("models: Predict: %w", err)
		}
		vals, err := flatFloat32(outs[0])
		for _, t := range outs {
			t.FinalizeAll()
		}
		if err != nil {
			return fmt.Errorf("models: Predict: %w", err)
		}
		for s := 0; s < samples; s++ {
			for k := 0; k < m.k; k++ {
				src := vals[((s*m.k+k)*batch)*c : ((s*m.k+k)*batch+count)*c]
				copy(p.Probs[((k*samples+s)*n+start)*c:], src)
				mean := p.Mean[(k*n+start)*c:]
				for i, v := range src {
					mean[i] += v / float32(samples)
				}
			}
		}
	}
	return nil
}
