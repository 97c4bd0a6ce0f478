package simplegoplus

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// gemm is one batched matrix product, row-major: for i < Batch, C_i = op(A_i) op(B_i), where op(A_i)
// is [M, K], op(B_i) is [K, N] and C_i is [M, N]; Ld* are leading dimensions and Stride* the
// distances (in elements) between consecutive batch entries; Off* are where A, B and C start.
type gemm struct {
	Batch, M, N, K            int
	TransA, TransB            bool
	LdA, LdB, LdC             int
	StrideA, StrideB, StrideC int
	OffA, OffB, OffC          int
}

// minChunkFLOP is the least work (2 M N K per batch entry) worth handing to another core.
const minChunkFLOP = 1 << 19

// maxChunks bounds how many pieces one product is split into.
const maxChunks = 16

// split cuts g into independent pieces, over the batch when it has several entries and over the
// rows of C otherwise. The pieces depend only on the shapes, never on the number of cores, so the
// result is bit-identical whatever GOMAXPROCS is (each element of C is computed by one BLAS call).
func (g gemm) split() []gemm {
	flop := 2 * g.Batch * g.M * g.N * g.K
	n := min(maxChunks, max(1, flop/minChunkFLOP))
	if g.Batch >= 2 {
		n = min(n, g.Batch)
		pieces := make([]gemm, 0, n)
		for i := range n {
			lo, hi := i*g.Batch/n, (i+1)*g.Batch/n
			p := g
			p.Batch = hi - lo
			p.OffA += lo * g.StrideA
			p.OffB += lo * g.StrideB
			p.OffC += lo * g.StrideC
			pieces = append(pieces, p)
		}
		return pieces
	}
	n = min(n, max(1, g.M/8))
	pieces := make([]gemm, 0, n)
	for i := range n {
		lo, hi := i*g.M/n, (i+1)*g.M/n
		p := g
		p.M = hi - lo
		if g.TransA {
			p.OffA += lo // A is stored [K, M]: a column block.
		} else {
			p.OffA += lo * g.LdA
		}
		p.OffC += lo * g.LdC
		pieces = append(pieces, p)
	}
	return pieces
}

// parallelDo runs fn(i) for i < n on up to GOMAXPROCS goroutines (the caller's included).
func parallelDo(n int, fn func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			fn(i)
		}
	}
	wg.Add(workers - 1)
	for range workers - 1 {
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}

// runGemm computes g on both cores, through cblas_sgemm or cblas_dgemm.
func runGemm[T float32 | float64](g gemm, a, b, c []T) {
	pieces := g.split()
	parallelDo(len(pieces), func(i int) {
		switch a := any(a).(type) {
		case []float32:
			gemm32(pieces[i], a, any(b).([]float32), any(c).([]float32))
		case []float64:
			gemm64(pieces[i], a, any(b).([]float64), any(c).([]float64))
		}
	})
}
