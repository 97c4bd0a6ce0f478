package predictive

import (
	"fmt"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
)

// feed yields training batches for K clients at once, each client cycling through its own data in
// a seeded shuffled order (a new order every pass). Labels and targets are read from the datasets
// when a batch is assembled, so a caller may replace them between batches (sampled pseudo-labels).
type feed struct {
	sets     []*data.Dataset
	batchers []*data.Batcher
	batch    int
	sizes    []int
	exSize   int
}

// newFeed prepares batches of size batch (reduced to the smallest client's size) for the clients.
func newFeed(sets []*data.Dataset, batch int, seed uint64) (*feed, error) {
	if len(sets) == 0 {
		return nil, fmt.Errorf("predictive: no client datasets")
	}
	if batch < 1 {
		return nil, fmt.Errorf("predictive: batch size %d, want at least 1", batch)
	}
	f := &feed{sets: sets, batch: batch, exSize: sets[0].ExampleSize()}
	for k, d := range sets {
		if d.Len() == 0 {
			return nil, fmt.Errorf("predictive: client %d has no examples", k)
		}
		if d.ExampleSize() != f.exSize {
			return nil, fmt.Errorf("predictive: client %d has examples of size %d, client 0 of size %d", k, d.ExampleSize(), f.exSize)
		}
		f.batch = min(f.batch, d.Len())
		f.sizes = append(f.sizes, d.Len())
	}
	for k, d := range sets {
		b, err := data.NewBatcher(d, f.batch, data.BatchOptions{Shuffle: true, Seed: seed + uint64(k)*7919, DropIncomplete: true})
		if err != nil {
			return nil, fmt.Errorf("predictive: client %d: %w", k, err)
		}
		f.batchers = append(f.batchers, b)
	}
	return f, nil
}

// stepsPerEpoch is the number of batches that shows the largest client all its data once.
func (f *feed) stepsPerEpoch() int {
	m := 0
	for _, n := range f.sizes {
		m = max(m, (n+f.batch-1)/f.batch)
	}
	return m
}

// next assembles the next batch of every client.
func (f *feed) next() models.Batch {
	K := len(f.sets)
	b := models.Batch{X: make([]float32, 0, K*f.batch*f.exSize), DatasetSizes: f.sizes}
	regression := f.sets[0].IsRegression()
	for k, d := range f.sets {
		idx := f.batchers[k].NextIndices()
		if idx == nil {
			f.batchers[k].Reset()
			idx = f.batchers[k].NextIndices()
		}
		for _, i := range idx {
			b.X = append(b.X, d.X[i*f.exSize:(i+1)*f.exSize]...)
			if regression {
				b.Targets = append(b.Targets, d.Targets[i])
			} else {
				b.Labels = append(b.Labels, d.Labels[i])
			}
		}
	}
	return b
}
