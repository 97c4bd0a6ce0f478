package data

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"
)

// Tensors returns the whole dataset as GoMLX tensors: x float32 [N, Shape...] and y, the labels
// int32 [N] for classification or the targets float32 [N] for regression.
func (d *Dataset) Tensors() (x, y *tensors.Tensor, err error) {
	if err := d.Validate(); err != nil {
		return nil, nil, err
	}
	all := make([]int, d.Len())
	for i := range all {
		all[i] = i
	}
	return d.gatherTensors(all)
}

// gatherTensors builds x [len(indices), Shape...] and y [len(indices)] from the given examples,
// writing straight into the tensors' memory.
func (d *Dataset) gatherTensors(indices []int) (x, y *tensors.Tensor, err error) {
	size := d.ExampleSize()
	dims := append([]int{len(indices)}, d.Shape...)
	x = tensors.FromShape(shapes.Make(dtypes.Float32, dims...))
	err = tensors.MutableFlatData(x, func(flat []float32) {
		for i, idx := range indices {
			copy(flat[i*size:(i+1)*size], d.X[idx*size:(idx+1)*size])
		}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("dataset %s: filling the input tensor: %w", d.Name, err)
	}
	if d.Labels != nil {
		y = tensors.FromShape(shapes.Make(dtypes.Int32, len(indices)))
		err = tensors.MutableFlatData(y, func(flat []int32) {
			for i, idx := range indices {
				flat[i] = d.Labels[idx]
			}
		})
	} else {
		y = tensors.FromShape(shapes.Make(dtypes.Float32, len(indices)))
		err = tensors.MutableFlatData(y, func(flat []float32) {
			for i, idx := range indices {
				flat[i] = d.Targets[idx]
			}
		})
	}
	if err != nil {
		return nil, nil, fmt.Errorf("dataset %s: filling the label tensor: %w", d.Name, err)
	}
	return x, y, nil
}

// Batcher yields a dataset in mini-batches as GoMLX tensors. It implements GoMLX's train.Dataset
// (Name, Reset, Yield), so it feeds train.Loop directly. Each Yield returns inputs {x [B, Shape...]} and labels {y [B]}.
// With shuffling, every epoch visits the examples in a new order drawn from the seed: the same seed
// gives the same sequence of batches. (GoMLX's InMemoryDataset.Shuffle draws from the global
// generator in v0.26.0, so it cannot be made repeatable; Batcher can.)
type Batcher struct {
	d              *Dataset
	batchSize      int
	shuffle        bool
	dropIncomplete bool
	rng            *rand.Rand
	order          []int
	pos            int
	epoch          int
}

var _ train.Dataset = (*Batcher)(nil)

// BatchOptions configures NewBatcher.
type BatchOptions struct {
	// Shuffle draws a new order of the examples at every epoch (from Seed).
	Shuffle bool
	// Seed seeds the shuffling.
	Seed uint64
	// DropIncomplete drops the last batch of an epoch when it has fewer than batchSize examples
	// (keeps every batch the same shape, so that the graph is compiled once).
	DropIncomplete bool
}

// NewBatcher returns a Batcher over d with the given batch size.
func NewBatcher(d *Dataset, batchSize int, opts BatchOptions) (*Batcher, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if batchSize <= 0 {
		return nil, fmt.Errorf("batcher for %s: batch size %d must be positive", d.Name, batchSize)
	}
	if d.Len() == 0 || (opts.DropIncomplete && d.Len() < batchSize) {
		return nil, fmt.Errorf("batcher for %s: %d examples make no batch of %d", d.Name, d.Len(), batchSize)
	}
	b := &Batcher{d: d, batchSize: batchSize, shuffle: opts.Shuffle, dropIncomplete: opts.DropIncomplete,
		rng: newRand(opts.Seed), order: make([]int, d.Len()), epoch: -1}
	b.Reset()
	return b, nil
}

// Name implements train.Dataset.
func (b *Batcher) Name() string { return b.d.Name }

// Reset implements train.Dataset: it starts the next epoch (a new order when shuffling).
func (b *Batcher) Reset() {
	for i := range b.order {
		b.order[i] = i
	}
	if b.shuffle {
		shuffle(b.rng, b.order)
	}
	b.pos = 0
	b.epoch++
}

// Epoch is the current epoch, counted from 0; each Reset starts the next one.
func (b *Batcher) Epoch() int { return b.epoch }

// NumBatches is the number of batches in one epoch.
func (b *Batcher) NumBatches() int {
	if b.dropIncomplete {
		return b.d.Len() / b.batchSize
	}
	return (b.d.Len() + b.batchSize - 1) / b.batchSize
}

// Yield implements train.Dataset: the next batch, or io.EOF at the end of the epoch (call Reset).
func (b *Batcher) Yield() (spec any, inputs, labels []*tensors.Tensor, err error) {
	n := len(b.order)
	end := min(b.pos+b.batchSize, n)
	if b.pos >= n || (b.dropIncomplete && end-b.pos < b.batchSize) {
		return nil, nil, nil, io.EOF
	}
	x, y, err := b.d.gatherTensors(b.order[b.pos:end])
	if err != nil {
		return nil, nil, nil, err
	}
	b.pos = end
	return nil, []*tensors.Tensor{x}, []*tensors.Tensor{y}, nil
}

// NextIndices is Yield without tensors: the example indices of the next batch, or nil at the end
// of the epoch. It advances the same cursor as Yield.
func (b *Batcher) NextIndices() []int {
	n := len(b.order)
	end := min(b.pos+b.batchSize, n)
	if b.pos >= n || (b.dropIncomplete && end-b.pos < b.batchSize) {
		return nil
	}
	out := append([]int(nil), b.order[b.pos:end]...)
	b.pos = end
	return out
}
