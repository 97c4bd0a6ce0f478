package models

import (
	"math"
	"math/rand"
	"strings"
	"sync"
	"testing"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/simplegoplus"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// testBackend returns the backend of the tests: the process-wide one if it is XLA, else SimpleGo+
// in its default configuration (sequential ops, OpenBLAS where it loads; see simplegoplus.New).
func testBackend(t testing.TB) backends.Backend {
	t.Helper()
	testBackendOnce.Do(func() {
		be := backend.MustDefault()
		if strings.HasPrefix(backend.Current().Config, "xla") {
			testBackendValue = be
			return
		}
		testBackendValue, testBackendErr = simplegoplus.New("") // the default configuration users get
	})
	if testBackendErr != nil {
		t.Fatal(testBackendErr)
	}
	return testBackendValue
}

var (
	testBackendOnce  sync.Once
	testBackendValue backends.Backend
	testBackendErr   error
)

// newModel builds a model on the test backend or fails the test.
func newModel(t testing.TB, cfg Config) *Model {
	t.Helper()
	m, err := NewWithBackend(testBackend(t), cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return m
}

// synthetic returns n examples of dim features for k clients, [k, n, dim], with labels from a fixed
// random linear rule over classes, so the classes are learnable.
func synthetic(seed int64, k, n, dim, classes int) ([]float32, []int32) {
	rng := rand.New(rand.NewSource(seed))
	w := make([]float64, dim*classes)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	x := make([]float32, k*n*dim)
	y := make([]int32, k*n)
	for e := 0; e < k*n; e++ {
		best, bestV := 0, math.Inf(-1)
		for c := 0; c < classes; c++ {
			v := 0.0
			for f := 0; f < dim; f++ {
				if c == 0 {
					x[e*dim+f] = float32(rng.NormFloat64())
				}
				v += w[f*classes+c] * float64(x[e*dim+f])
			}
			if v > bestV {
				best, bestV = c, v
			}
		}
		y[e] = int32(best)
	}
	return x, y
}

// flat32 reads a float32 tensor.
func flat32(t testing.TB, x *tensors.Tensor) []float32 {
	t.Helper()
	f, err := tensors.CopyFlatData[float32](x)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// samePosterior fails unless a and b hold bit-identical parameters.
func samePosterior(t testing.TB, a, b *posterior.Posterior) {
	t.Helper()
	if len(a.Params) != len(b.Params) {
		t.Fatalf("posteriors have %d and %d parameters", len(a.Params), len(b.Params))
	}
	for i := range a.Params {
		pa, pb := &a.Params[i], &b.Params[i]
		if pa.Name != pb.Name || pa.IsGaussian() != pb.IsGaussian() {
			t.Fatalf("parameter %d: %q (Gaussian %v) vs %q (Gaussian %v)", i, pa.Name, pa.IsGaussian(), pb.Name, pb.IsGaussian())
		}
		if !pa.Mean.Shape().Equal(pb.Mean.Shape()) {
			t.Fatalf("%s: mean shapes %s vs %s", pa.Name, pa.Mean.Shape(), pb.Mean.Shape())
		}
		pairs := [][2]*tensors.Tensor{{pa.Mean, pb.Mean}}
		if pa.IsGaussian() {
			pairs = append(pairs, [2]*tensors.Tensor{pa.LogVar, pb.LogVar})
		}
		for j, pr := range pairs {
			fa, fb := flat32(t, pr[0]), flat32(t, pr[1])
			for e := range fa {
				if fa[e] != fb[e] {
					t.Fatalf("%s (tensor %d) [%d]: %v vs %v", pa.Name, j, e, fa[e], fb[e])
				}
			}
		}
	}
}
