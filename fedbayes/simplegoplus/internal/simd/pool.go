package simd

// MaxRow is the vector loop of tiled max pooling over one row of n windows: window w reads the taps
// x[taps[k]+w*inStep : ...+run] (k in order) and writes out[w*run : w*run+run] = their first maximum
// per lane (the first tap's value, then each later one that is greater, as a scalar loop with `v >
// d` does: same bits, NaN and ±0 included). The pooled run of channels is contiguous, the windows'
// outputs follow each other (outputs of window w at w*run), and the last pooled axis has stride run
// in x, so that taps[k]+run is the next tap along it or the next window's.
//
// The vector loop works in blocks of 8 lanes: a run that is not a multiple of 8 reads and writes a
// few lanes past it, which belong to the next tap or the next window and are written again later.
// So it does every window but the last (and none when the lanes past the run could reach further:
// run%8 > 0 with run < 4), and returns how many windows it did; the caller does the rest.
func MaxRow(x []float32, taps []int, n, inStep, run int, out []float32) int {
	done := rowWindows(len(x), taps, n, inStep, run)
	if done == 0 || len(out) < (done-1)*run+roundUp8(run) {
		return 0
	}
	maxRow32(&x[0], &out[0], &taps[0], len(taps), done, inStep, run)
	return done
}

// ArgmaxRow is the gradient of MaxRow: for each window it finds the first maximum as MaxRow does,
// and writes src[w*srcStep+c] at that tap's position in out and +0 at the other taps' positions (out
// has x's layout; windows tile it). Like MaxRow it does every window but the last and returns how
// many it did; the lanes it writes past a run of the last window it did belong to the window after
// it, which the caller must write whole (zeros included). Within a window it goes through the blocks
// of 8 lanes from the last to the first, so that lanes written past a tap's run are written again
// by the next tap's first block.
func ArgmaxRow(x, src []float32, taps []int, n, inStep, run, srcStep int, out []float32) int {
	done := rowWindows(len(x), taps, n, inStep, run)
	if done == 0 || len(out) < len(x) || len(src) < (done-1)*srcStep+roundUp8(run) {
		return 0
	}
	argmaxRow32(&x[0], &src[0], &out[0], &taps[0], len(taps), done, inStep, run, srcStep)
	return done
}

func roundUp8(n int) int { return (n + 7) &^ 7 }

// rowWindows returns how many of the row's n windows the vector loops may do: all but the last,
// when every lane they touch lies inside x (length lenX), and 0 when the kernels are unavailable or
// the lanes past a run could reach beyond the next tap.
func rowWindows(lenX int, taps []int, n, inStep, run int) int {
	if !Available || n < 2 || len(taps) == 0 || run <= 0 || (run%8 != 0 && run < 4) {
		return 0
	}
	done := n - 1
	hi, ok := maxOffset(taps)
	if !ok {
		return 0
	}
	if hi+(done-1)*inStep+roundUp8(run) > lenX {
		return 0
	}
	return done
}
