package data

import (
	"io"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

func TestTensors(t *testing.T) {
	d := &Dataset{Name: "img", Shape: []int{1, 2, 1}, X: []float32{1, 2, 3, 4, 5, 6}, Labels: []int32{2, 0, 1}, NumClasses: 3}
	x, y, err := d.Tensors()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.Shape().Dimensions, []int{3, 1, 2, 1}) || x.DType() != dtypes.Float32 ||
		!slices.Equal(y.Shape().Dimensions, []int{3}) || y.DType() != dtypes.Int32 {
		t.Fatalf("shapes %s %s", x.Shape(), y.Shape())
	}
	xs, _ := tensors.CopyFlatData[float32](x)
	ys, _ := tensors.CopyFlatData[int32](y)
	if !slices.Equal(xs, d.X) || !slices.Equal(ys, d.Labels) {
		t.Fatalf("values %v %v", xs, ys)
	}
	r := &Dataset{Name: "r", Shape: []int{2}, X: []float32{1, 2, 3, 4}, Targets: []float32{0.5, -1}}
	_, yr, err := r.Tensors()
	if err != nil || yr.DType() != dtypes.Float32 {
		t.Fatalf("regression targets: %v %v", yr, err)
	}
	if _, _, err := (&Dataset{Name: "bad", Shape: []int{2}, X: []float32{1}, Targets: []float32{1}}).Tensors(); err == nil {
		t.Fatal("inconsistent dataset: no error")
	}
}

// epochOrder runs one epoch of b and returns the examples in the order yielded (X holds the index).
func epochOrder(t *testing.T, b *Batcher) (order []int, sizes []int) {
	t.Helper()
	for {
		_, inputs, labels, err := b.Yield()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		xs, _ := tensors.CopyFlatData[float32](inputs[0])
		ls, _ := tensors.CopyFlatData[int32](labels[0])
		for i, v := range xs {
			order = append(order, int(v))
			if want := int32(int(v) / 10); ls[i] != want { // classificationSet(10, 10, 3): label = index / 10
				t.Fatalf("example %d yielded with label %d, want %d", int(v), ls[i], want)
			}
		}
		sizes = append(sizes, len(xs))
	}
}

func TestBatcher(t *testing.T) {
	d := classificationSet(10, 10, 3)
	tests := []struct {
		name      string
		opts      BatchOptions
		wantSizes []int
	}{
		{"sequential", BatchOptions{}, []int{8, 8, 7}},
		{"shuffled", BatchOptions{Shuffle: true, Seed: 5}, []int{8, 8, 7}},
		{"drop incomplete", BatchOptions{Shuffle: true, Seed: 5, DropIncomplete: true}, []int{8, 8}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := NewBatcher(d, 8, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			order, sizes := epochOrder(t, b)
			if !slices.Equal(sizes, tc.wantSizes) || b.NumBatches() != len(tc.wantSizes) {
				t.Fatalf("batch sizes %v (NumBatches %d), want %v", sizes, b.NumBatches(), tc.wantSizes)
			}
			sorted := slices.Sorted(slices.Values(order))
			if !tc.opts.DropIncomplete {
				for i, v := range sorted {
					if v != i {
						t.Fatalf("epoch does not visit every example once: %v", order)
					}
				}
			}
			if isSorted := slices.IsSorted(order); isSorted == tc.opts.Shuffle {
				t.Fatalf("shuffle=%v but order %v", tc.opts.Shuffle, order)
			}
			b.Reset()
			second, _ := epochOrder(t, b)
			if tc.opts.Shuffle && slices.Equal(order, second) {
				t.Fatal("two shuffled epochs in the same order")
			}
			// Same seed, same sequence of epochs.
			b2, _ := NewBatcher(d, 8, tc.opts)
			o1, _ := epochOrder(t, b2)
			b2.Reset()
			o2, _ := epochOrder(t, b2)
			if !slices.Equal(o1, order) || !slices.Equal(o2, second) || b2.Epoch() != 1 {
				t.Fatal("same seed, different batches")
			}
		})
	}
	if _, err := NewBatcher(d, 0, BatchOptions{}); err == nil {
		t.Fatal("batch size 0: no error")
	}
	if _, err := NewBatcher(d, 100, BatchOptions{DropIncomplete: true}); err == nil {
		t.Fatal("no complete batch: no error")
	}
	b, _ := NewBatcher(d, 10, BatchOptions{})
	if got := b.NextIndices(); len(got) != 10 || got[9] != 9 {
		t.Fatalf("NextIndices %v", got)
	}
}
