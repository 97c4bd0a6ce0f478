package simplegoplus

// gatherInto fills dst, row-major with dimensions dims, from src: dst's element at (i_0, ...,
// i_{r-1}) is src[base + i_0*strides[0] + ... + i_{r-1}*strides[r-1]]. It serves the transposes
// (transposeInto: strides permuted, base 0) and the strided slices (sliceRuns: strides scaled by the
// slice's steps, base at its start). dst is filled a run at a time (gatherRuns): a copy() where the
// run is contiguous in src, else a gather with the run's stride; blocks of runs go to both cores.
// Copies move bits, so the result is the same whatever the number of cores.
func gatherInto[T any](dst, src []T, base int, dims, strides []int) {
	if len(dst) == 0 {
		return
	}
	rank := len(dims)
	if rank == 0 {
		dst[0] = src[base]
		return
	}
	inner, run, step := gatherRuns(dims, strides)
	runs := len(dst) / run
	runsPerChunk := max(1, elemChunk/run)
	chunks := (runs + runsPerChunk - 1) / runsPerChunk
	if chunks == 1 {
		gatherRange(dst, src, base, dims[:inner], strides[:inner], run, step, 0, runs)
		return
	}
	parallelDo(chunks, func(c int) {
		gatherRange(dst, src, base, dims[:inner], strides[:inner], run, step, c*runsPerChunk, min(runs, (c+1)*runsPerChunk))
	})
}

// gatherRange fills runs [r0, r1) of gatherInto's dst, each run elements of src step apart; dims and
// strides are those of the outer axes, walked by a counter.
func gatherRange[T any](dst, src []T, base int, dims, strides []int, run, step, r0, r1 int) {
	outer := len(dims)
	var buf [8]int
	idx := buf[:]
	if outer > len(buf) {
		idx = make([]int, outer)
	}
	idx = idx[:outer]
	// The counter at run r0, and its source offset.
	srcPos, rest := base, r0
	for a := outer - 1; a >= 0; a-- {
		idx[a], rest = rest%dims[a], rest/dims[a]
		srcPos += idx[a] * strides[a]
	}
	for r := r0; r < r1; r++ {
		out := dst[r*run : (r+1)*run]
		if step == 1 {
			copy(out, src[srcPos:srcPos+run])
		} else {
			pos := srcPos
			for j := range out {
				out[j] = src[pos]
				pos += step
			}
		}
		for a := outer - 1; a >= 0; a-- {
			idx[a]++
			srcPos += strides[a]
			if idx[a] < dims[a] {
				break
			}
			srcPos -= strides[a] * dims[a]
			idx[a] = 0
		}
	}
}

// gatherRuns splits gatherInto's axes into outer ones, [0, inner), walked by a counter, and inner
// ones, [inner, rank), whose elements form runs of length run, step apart in src: the last axis,
// and, when that has a unit stride, the axes before it that step over exactly the run after them
// (or have size 1, whose stride is never used), so that a run is one copy.
func gatherRuns(dims, strides []int) (inner, run, step int) {
	rank := len(dims)
	inner, run, step = rank-1, dims[rank-1], strides[rank-1]
	if run == 1 {
		step = 1 // one element: its stride is never used
	}
	if step == 1 {
		for inner > 0 && (strides[inner-1] == run || dims[inner-1] == 1) {
			inner--
			run *= dims[inner]
		}
	}
	return inner, run, step
}
