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
