package backend

import (
	"strings"

	"fedbayes.dev/fedbayes/simplegoplus"
)

// Kernels describes, in one line, the CPU kernels behind a backend configuration: for fedbayes's
// pure-Go backend whether matrix products and convolutions run on OpenBLAS or on SimpleGo's own
// loops (and why), for stock SimpleGo and XLA what they use. It goes into `fedbayes backend -v`,
// `fedbayes doctor` and every run's provenance.
func Kernels(config string) string {
	name, _, _ := strings.Cut(config, ":")
	switch {
	case name == simplegoplus.BackendName:
		return simplegoplus.Kernels()
	case name == "go":
		return "stock SimpleGo kernels (no OpenBLAS, no convolution gradients)"
	case isXLA(name):
		return "XLA (the plugin's own kernels)"
	}
	return "unknown"
}

// SlowKernels returns, for a configuration of fedbayes's pure-Go backend whose matrix products and
// convolutions do not run on OpenBLAS, one line saying so and why (SimpleGo's own loops are several
// times slower: the training-step benchmarks measured 8k against 96k samples/s for the MLP); it
// returns "" for every other configuration. `fedbayes run` and the `make bench-*` targets print it,
// so that a slow run or a benchmark of the fallback is never taken for the fast path.
func SlowKernels(config string) string {
	name, _, _ := strings.Cut(config, ":")
	if name != simplegoplus.BackendName || simplegoplus.BLASInUse() {
		return ""
	}
	return "OpenBLAS is not in use, so matrix products and convolutions run on SimpleGo's own loops " +
		"(several times slower; `fedbayes doctor` says how to install it): " + simplegoplus.Kernels()
}
