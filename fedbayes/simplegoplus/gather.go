package simplegoplus

// gatherInto fills dst, row-major with dimensions dims, from src: dst's element at (i_0, ...,
// i_{r-1}) is src[base + i_0*strides[0] + ... + i_{r-1}*strides[r-1]]. It serves the transposes
// (transposeInto: strides permuted, base 0), the strided slices (sliceRuns: strides scaled by the
// slice's steps, base at its start) and the broadcasts (broadcastRuns: stride 0 along a broadcast
// axis). dst is filled a run at a time (gatherRuns): a copy() where the run is contiguous in src,
// one value repeated where its stride is 0, else a gather with its stride; blocks of runs go to
// both cores. Copies move bits, so the result is the same whatever the number of cores.
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

// gatherRange fills runs [r0, r1) of gatherInto's dst, each run elements of src step apart (a copy
// for a unit step, one value repeated for 0); dims and strides are those of the outer axes, walked
// by a counter.
func gatherRange[T any](dst, src []T, base int, dims, strides []int, run, step, r0, r1 int) {
	outer := len(dims)
	var buf [8]int
	idx := buf[:]
	if outer > len(buf) {
		idx = make([]int, outer)
	}
	idx = idx[:outer]
	// The counter at run r0, and its source offset.
	unravel(r0, dims, idx)
	srcPos := base
	for a, i := range idx {
		srcPos += i * strides[a]
	}
	switch step { // one loop per kind of run, the counter advanced by advanceOffset
	case 1:
		for r := r0; r < r1; r++ {
			copy(dst[r*run:(r+1)*run], src[srcPos:srcPos+run])
			srcPos = advanceOffset(idx, dims, strides, srcPos)
		}
	case 0:
		for r := r0; r < r1; r++ {
			out, v := dst[r*run:(r+1)*run], src[srcPos]
			for j := range out {
				out[j] = v
			}
			srcPos = advanceOffset(idx, dims, strides, srcPos)
		}
	default:
		for r := r0; r < r1; r++ {
			out, pos := dst[r*run:(r+1)*run], srcPos
			for j := range out {
				out[j] = src[pos]
				pos += step
			}
			srcPos = advanceOffset(idx, dims, strides, srcPos)
		}
	}
}

// advanceOffset is advance that also returns the source offset pos moved
// with it (strides[a] per step along axis a).
func advanceOffset(idx, dims, strides []int, pos int) int {
	for a := len(idx) - 1; a >= 0; a-- {
		idx[a]++
		pos += strides[a]
		if idx[a] < dims[a] {
			return pos
		}
		pos -= strides[a] * dims[a]
		idx[a] = 0
	}
	return pos
}

// gatherRuns splits gatherInto's axes into outer ones, [0, inner), walked by a counter, and inner
// ones, [inner, rank), whose elements form runs of length run, step apart in src: the last axis
// (trailing axes of size 1 add nothing), and the axes before it that continue its progression, a
// stride of run*step (or have size 1, whose stride is never used). A unit step makes a run one
// copy, and a step of 0 (a broadcast) one value repeated.
func gatherRuns(dims, strides []int) (inner, run, step int) {
	inner = len(dims) - 1
	for inner > 0 && dims[inner] == 1 {
		inner--
	}
	run, step = dims[inner], strides[inner]
	if run == 1 {
		step = 1 // one element: its stride is never used
	}
	for inner > 0 && (dims[inner-1] == 1 || strides[inner-1] == run*step) {
		inner--
		run *= dims[inner]
	}
	return inner, run, step
}

// unravel writes the row-major coordinates of flat index idx within dims into coords.
func unravel(idx int, dims, coords []int) {
	for i := len(dims) - 1; i >= 0; i-- {
		coords[i], idx = idx%dims[i], idx/dims[i]
	}
}

// advance moves the row-major counter idx over the first len(idx) axes of dims to its next
// position (after the last, back to zeros).
func advance(idx, dims []int) {
	for a := len(idx) - 1; a >= 0; a-- {
		if idx[a]++; idx[a] < dims[a] {
			return
		}
		idx[a] = 0
	}
}
