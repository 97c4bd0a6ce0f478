package main

import (
	"reflect"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/simplegoplus"
)

func TestSummarize(t *testing.T) {
	in := `goos: linux
pkg: fedbayes.dev/fedbayes/simplegoplus
BenchmarkMLP/stock-2         	      20	  68532238 ns/op	       933.9 samples/s
BenchmarkMLP/stock-2         	      20	  54652109 ns/op	      1171 samples/s
BenchmarkMLP/stock-2         	      20	  51253855 ns/op	      1249 samples/s
BenchmarkMLP/simplegoplus-2  	      20	   5956737 ns/op	     10744 samples/s
BenchmarkMLP/simplegoplus-2  	      20	   5818885 ns/op	     10999 samples/s
--- SKIP: BenchmarkLeNet28/stock
BenchmarkPlain-16 	 1000	 1500 ns/op	 12 B/op
pkg: fedbayes.dev/fedbayes/engine
BenchmarkRound/lenet/vectorized-2 	1	9000000000 ns/op	60000 examples/s	9.5 s/round	0.2 eval-s/1k
BenchmarkRound/lenet/vectorized-2 	1	8000000000 ns/op	70000 examples/s	8.5 s/round	0.4 eval-s/1k
PASS
`
	got, err := summarize(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []summary{
		{name: "simplegoplus.BenchmarkMLP/stock", runs: 3, samplesPerSec: 1171, hasSamples: true, nsPerOp: 54652109},
		{name: "simplegoplus.BenchmarkMLP/simplegoplus", runs: 2, samplesPerSec: (10744 + 10999) / 2.0, hasSamples: true, nsPerOp: (5956737 + 5818885) / 2.0},
		{name: "simplegoplus.BenchmarkPlain", runs: 1, nsPerOp: 1500},
		{name: "engine.BenchmarkRound/lenet/vectorized", runs: 2, nsPerOp: 8.5e9,
			extra: []metric{{"examples/s", 65000}, {"s/round", 9}, {"eval-s/1k", 0.30000000000000004}}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d summaries: %v", len(got), got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("summary %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := got[2].String(); !strings.Contains(s, "samples/s=-") {
		t.Errorf("no samples/s shown as -: %q", s)
	}
	if _, err := summarize(strings.NewReader("PASS\n")); err == nil {
		t.Error("no results: no error")
	}
}

// TestKernelsReport checks that -kernels warns exactly when OpenBLAS is not in use.
func TestKernelsReport(t *testing.T) {
	got := kernelsReport(simplegoplus.BackendName)
	if !strings.HasPrefix(got, "kernels: ") {
		t.Fatalf("report %q does not start with the kernels line", got)
	}
	if warned := strings.Contains(got, "WARNING: "); warned == simplegoplus.BLASInUse() {
		t.Fatalf("report %q while BLASInUse() = %v", got, simplegoplus.BLASInUse())
	}
	if got := kernelsReport("xla:cuda"); strings.Contains(got, "WARNING") {
		t.Fatalf("XLA report %q warns", got)
	}
}
