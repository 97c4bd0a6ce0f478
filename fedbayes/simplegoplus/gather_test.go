package simplegoplus

import (
	"fmt"
	"slices"
	"testing"
)

// TestGatherInto compares gatherInto with the definition, element by element (dst at (i_0, ...)
// is src[base + sum i_a*strides[a]]): contiguous inner axes merged into one run (whole, partial,
// across a unit axis), a strided last axis, a last axis of size 1 with a stride, transposes, steps
// on every axis, rank 0, an empty result, broadcasts (stride 0: one value repeated, a row copied
// again), a stride that continues across axes, and a gather of more than elemChunk elements
// (several blocks of runs, on both cores).
func TestGatherInto(t *testing.T) {
	for _, tc := range []struct {
		name          string
		base          int
		dims, strides []int
	}{
		{"rank 0", 7, nil, nil},
		{"one contiguous axis", 3, []int{5}, []int{1}},
		{"whole rows merged", 0, []int{3, 4, 5}, []int{20, 5, 1}},
		{"partial rows", 2, []int{3, 4, 3}, []int{20, 5, 1}},
		{"unit axis inside a run", 1, []int{2, 1, 4, 5}, []int{40, 99, 5, 1}},
		{"strided last axis", 1, []int{3, 4}, []int{10, 2}},
		{"last axis of size 1 with a stride", 0, []int{4, 6, 1}, []int{6, 1, 24}},
		{"transpose of a matrix", 0, []int{5, 3}, []int{1, 5}},
		{"transpose keeping the last two axes", 0, []int{4, 3, 2, 5}, []int{10, 40, 5, 1}},
		{"strides and steps on every axis", 5, []int{2, 3, 2}, []int{60, 12, 3}},
		{"empty", 0, []int{3, 0, 4}, []int{0, 4, 1}},
		{"broadcast: a value repeated along the last axes", 0, []int{4, 3, 5}, []int{1, 0, 0}},
		{"broadcast: a row copied along a leading axis", 0, []int{6, 5}, []int{0, 1}},
		{"broadcast after trailing unit axes", 2, []int{4, 5, 1, 1}, []int{1, 0, 7, 0}},
		{"a strided progression across two axes", 1, []int{4, 3}, []int{6, 2}},
		{"more than elemChunk, in blocks", 0, []int{7, 3000}, []int{1, 7}},
		{"more than elemChunk, runs", 9, []int{40, 700}, []int{701, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size := sizeOf(tc.dims)
			srcLen := tc.base + 1
			for a, d := range tc.dims {
				if d > 0 {
					srcLen += (d - 1) * tc.strides[a]
				}
			}
			src := make([]int, srcLen)
			for i := range src {
				src[i] = 1000 + i
			}
			want := make([]int, size)
			idx := make([]int, len(tc.dims))
			for i := range want {
				unravel(i, tc.dims, idx)
				pos := tc.base
				for a, c := range idx {
					pos += c * tc.strides[a]
				}
				want[i] = src[pos]
			}
			got := make([]int, size)
			gatherInto(got, src, tc.base, tc.dims, tc.strides)
			if !slices.Equal(got, want) {
				t.Errorf("gathered %v,\nwant %v", head(got), head(want))
			}
		})
	}
}

// head formats the first values of v, for messages.
func head(v []int) string {
	if len(v) > 24 {
		return fmt.Sprint(v[:24]) + "..."
	}
	return fmt.Sprint(v)
}
