package models

import (
	"fmt"

	"fedbayes.dev/fedbayes/internal/catch"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// Prediction holds M Monte Carlo predictions of every client on N examples.
type Prediction struct {
	// Clients (K), Samples (M), Examples (N) and Outputs (C: classes, or 1 for regression).
	Clients, Samples, Examples, Outputs int
	// Probs holds, row-major [K][M][N][C], the class probabilities of each sample (classification) or
	// the predictive mean of each sample (regression).
	Probs []float32
	// Mean is Probs averaged over the M samples, [K][N][C].
	Mean []float32
	// NoiseVar is each client's regression noise variance, [K] (nil for classification).
	NoiseVar []float32
}

// Sample returns the N x C row-major outputs of client k's sample m (a view into Probs).
func (p *Prediction) Sample(k, m int) []float32 {
	n := p.Examples * p.Outputs
	off := (k*p.Samples + m) * n
	return p.Probs[off : off+n]
}

// ClientMean returns client k's N x C row-major mean outputs (a view into Mean).
func (p *Prediction) ClientMean(k int) []float32 {
	n := p.Examples * p.Outputs
	return p.Mean[k*n : (k+1)*n]
}

// Predict runs M = samples stochastic forward passes of every client on the N examples of x (flat,
// row-major [N, InputShape...], the same examples for all clients). Each pass draws fresh weight noise
// (Bayesian layers) or dropout masks (MC dropout); deterministic nets give M identical samples. Examples
// are processed in chunks of Config.PredictBatch (the last chunk padded), and with Reparam each chunk
// draws its own weights, so samples are independent per example. Batch norm uses its running averages.
//
// A Bayesian LeNet or CNN3 whose convolutions are deterministic (Config.BayesianLayers on the dense
// layers, Ozer et al. (2022)'s LeNet) computes the convolutions once per chunk and only the dense head
// once per sample (sharedTrunk): the same predictive, M times less convolution work.
func (m *Model) Predict(x []float32, samples int) (*Prediction, error) {
	if samples < 1 {
		return nil, fmt.Errorf("models: Predict: samples = %d, want at least 1", samples)
	}
	if len(x) == 0 || len(x)%m.exampleSize != 0 {
		return nil, fmt.Errorf("models: Predict: len(x) = %d is not a positive multiple of the example size %d (InputShape %v)",
			len(x), m.exampleSize, m.cfg.InputShape)
	}
	n := len(x) / m.exampleSize
	c := m.cfg.NumClasses
	p := &Prediction{Clients: m.k, Samples: samples, Examples: n, Outputs: c}
	p.Probs = make([]float32, m.k*samples*n*c)
	p.Mean = make([]float32, m.k*n*c)
	if samples > 1 && m.sharedTrunk() && !m.perSample {
		if err := m.predictShared(x, samples, p); err != nil {
			return nil, err
		}
		return p, nil
	}
	batch := min(n, m.cfg.PredictBatch)
	chunk := make([]float32, batch*m.exampleSize)
	dims := append([]int{batch}, m.cfg.InputShape...)
	for s := 0; s < samples; s++ {
		for start := 0; start < n; start += batch {
			count := min(batch, n-start)
			clear(chunk)
			copy(chunk, x[start*m.exampleSize:(start+count)*m.exampleSize])
			var outs []*tensors.Tensor
			err := catch.Do(func() {
				outs = m.predictExec.MustExec(tensors.FromFlatDataAndDimensions(chunk, dims...))
			})
			if err != nil {
				return nil, fmt.Errorf("models: Predict: %w", err)
			}
			vals, err := flatFloat32(outs[0])
			if err == nil && m.cfg.Task == Regression && p.NoiseVar == nil {
				p.NoiseVar, err = flatFloat32(outs[1])
			}
			for _, t := range outs {
				t.FinalizeAll()
			}
			if err != nil {
				return nil, fmt.Errorf("models: Predict: %w", err)
			}
			for k := 0; k < m.k; k++ {
				src := vals[k*batch*c : (k*batch+count)*c]
				copy(p.Probs[((k*samples+s)*n+start)*c:], src)
				mean := p.Mean[(k*n+start)*c:]
				for i, v := range src {
					mean[i] += v / float32(samples)
				}
			}
		}
	}
	return p, nil
}

// flatFloat32 copies a float32 or float64 tensor into a []float32.
func flatFloat32(t *tensors.Tensor) ([]float32, error) {
	if t.DType() == dtypes.Float32 {
		return tensors.CopyFlatData[float32](t)
	}
	f, err := tensors.CopyFlatData[float64](t)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(f))
	for i, v := range f {
		out[i] = float32(v)
	}
	return out, nil
}
