// Package pinned compares numbers that a test pins to the last digit with the pin taken on the CPU
// kernels that computed them.
//
// Kernels of different OpenBLAS cores, and SimpleGo's own kernels, sum in different orders, so a
// computation agrees between them to rounding only. A pin therefore holds one value per kernel path:
// OpenBLAS's AVX-512 kernels (what a DYNAMIC_ARCH OpenBLAS picks on Intel and AMD CPUs with AVX-512:
// SkylakeX and Cooperlake share their sgemm kernels), its Haswell kernels (AVX2: an AVX2-only CPU, or
// OPENBLAS_CORETYPE=Haswell) and SimpleGo's own (no OpenBLAS, or FEDBAYES_BLAS=off). On any other
// OpenBLAS core the digits cannot be compared: the numbers are compared with the AVX-512 pin to the
// pin's stated relative tolerance, and the test log says so. GOMAXPROCS does not change a pinned value.
package pinned

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/simplegoplus"
)

// Pins are the expected values of one pinned computation, one per kernel path, each written as
// space-separated fields: Digests leading fields of digests, then numbers. On a core without a pin
// the digests are skipped and the numbers are compared to Tol relative (DefaultTol when Tol is 0).
type Pins struct {
	AVX512, Haswell, Plain string
	// Digests is how many leading fields are digests rather than numbers.
	Digests int
	// Tol is the relative difference allowed on a core without a pin: a few times the largest
	// difference between the pins of the three kernel paths, so that it separates rounding from a
	// change of the computation.
	Tol float64
}

// DefaultTol is the tolerance of pins that state none: the engine's pinned runs differ between
// kernel paths by at most 1e-7 relative in their metrics.
const DefaultTol = 1e-6

// tol is the tolerance of p.
func (p Pins) tol() float64 {
	if p.Tol > 0 {
		return p.Tol
	}
	return DefaultTol
}

// cores maps the OpenBLAS cores that have pins to the pin they use.
var cores = map[string]func(Pins) string{
	"SkylakeX":   func(p Pins) string { return p.AVX512 },
	"Cooperlake": func(p Pins) string { return p.AVX512 },
	"Haswell":    func(p Pins) string { return p.Haswell },
}

// Kernels names the kernel path in use, as the error of Check does: "OpenBLAS core NAME" or
// "SimpleGo's own kernels".
func Kernels() string {
	if !simplegoplus.BLASInUse() {
		return "SimpleGo's own kernels"
	}
	return "OpenBLAS core " + simplegoplus.BLASCore()
}

// Check compares got with the pin of the kernels in use and fails t, naming the kernels, when they
// differ.
func Check(t testing.TB, name, got string, p Pins) {
	t.Helper()
	want := p.Plain
	if simplegoplus.BLASInUse() {
		pin, ok := cores[simplegoplus.BLASCore()]
		if !ok {
			t.Logf("pinned %q: %s has no pin; comparing its numbers with the AVX-512 pin to %g only", name, Kernels(), p.tol())
			if err := Near(got, p.AVX512, p.Digests, p.tol()); err != "" {
				t.Errorf("pinned %q (%s) gives %q, want the numbers of %q to %g: %s", name, Kernels(), got, p.AVX512, p.tol(), err)
			}
			return
		}
		want = pin(p)
	}
	if got != want {
		t.Errorf("pinned %q (%s) gives\n%q, want\n%q", name, Kernels(), got, want)
	}
}

// Near compares the fields of got and want after the first skip to a relative tol (to a scale of at
// least 1) and returns "" when they agree, else the first difference. The field counts must match, and
// every compared field of want must be a number.
func Near(got, want string, skip int, tol float64) string {
	g, w := strings.Fields(got), strings.Fields(want)
	if len(g) != len(w) {
		return strconv.Itoa(len(g)) + " fields, want " + strconv.Itoa(len(w))
	}
	for i := skip; i < len(g); i++ {
		b, errB := strconv.ParseFloat(w[i], 64)
		if errB != nil {
			return "the pin's field " + strconv.Itoa(i) + " (" + w[i] + ") is not a number"
		}
		a, errA := strconv.ParseFloat(g[i], 64)
		if errA != nil || !(math.Abs(a-b) <= tol*math.Max(math.Abs(b), 1)) {
			return "field " + strconv.Itoa(i) + ": " + g[i] + " against " + w[i]
		}
	}
	return ""
}
