package posterior

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"
)

func TestSoftplusRhoRoundTrip(t *testing.T) {
	// Variances from 1e-30 to 1e12, including 1e-8 and 1e4, survive log-variance -> rho -> log-variance
	// in float32 to within 2 ulps of the log-variance, and the variance itself to 1e-6 relative.
	var lvs []float32
	for _, v := range []float64{1e-30, 1e-12, 1e-8, 2.5e-8, 1e-4, 0.5, 1, 3, 1e4, 4.2e4, 1e12} {
		lvs = append(lvs, float32(math.Log(v)))
	}
	lv := tensors.FromFlatDataAndDimensions(lvs, len(lvs))
	rho, err := SoftplusRhoFromLogVar(lv)
	if err != nil {
		t.Fatal(err)
	}
	back, err := LogVarFromSoftplusRho(rho)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := tensors.CopyFlatData[float32](rho)
	b, _ := tensors.CopyFlatData[float32](back)
	for i, want := range lvs {
		v, got := math.Exp(float64(want)), math.Exp(float64(b[i]))
		if math.Abs(got/v-1) > 1e-6 {
			t.Errorf("variance %g: round trip gives %g (rho %v)", v, got, r[i])
		}
		// softplus(rho)^2 is the variance, in float64.
		x := float64(r[i])
		sp := math.Log1p(math.Exp(x))
		if x > 30 {
			sp = x + math.Log1p(math.Exp(-x))
		}
		if math.Abs(sp*sp/v-1) > 1e-5 {
			t.Errorf("variance %g: softplus(rho)^2 = %g", v, sp*sp)
		}
	}
}

func TestRhoFunctions(t *testing.T) {
	tests := []struct{ rho, logVar float64 }{
		{0, 2 * math.Log(math.Log(2))},
		{1, 2 * math.Log(math.Log1p(math.E))},
		{-40, -80}, // softplus(x) = e^x (1 - e^x/2 + ...)
		{50, 2 * math.Log(50)},
		{-700, -1400},
	}
	for _, tc := range tests {
		if got := LogVarFromRho(tc.rho); math.Abs(got-tc.logVar) > 1e-12*math.Max(1, math.Abs(tc.logVar)) {
			t.Errorf("LogVarFromRho(%v) = %v, want %v", tc.rho, got, tc.logVar)
		}
		if back := RhoFromLogVar(LogVarFromRho(tc.rho)); math.Abs(back-tc.rho) > 1e-9*math.Max(1, math.Abs(tc.rho)) {
			t.Errorf("RhoFromLogVar(LogVarFromRho(%v)) = %v", tc.rho, back)
		}
	}
	for x := -60.0; x <= 60; x += 0.37 {
		if back := RhoFromLogVar(LogVarFromRho(x)); math.Abs(back-x) > 1e-9*math.Max(1, math.Abs(x)) {
			t.Errorf("round trip of rho %v gives %v", x, back)
		}
	}
	if _, err := LogVarFromSoftplusRho(tensors.FromFlatDataAndDimensions([]float32{0, float32(math.NaN())}, 2)); err == nil {
		t.Error("NaN rho: no error")
	}
	if _, err := LogVarFromSoftplusRho(tensors.FromFlatDataAndDimensions([]float64{0}, 1)); err == nil {
		t.Error("float64 tensor: no error")
	}
}

func TestStackUnstack(t *testing.T) {
	mk := func(off float32) *Posterior {
		return &Posterior{Params: []Param{
			{Name: "/a", Mean: tensors.FromFlatDataAndDimensions([]float32{off, off + 1, off + 2, off + 3}, 2, 2),
				LogVar: tensors.FromFlatDataAndDimensions([]float32{-off, -1, -2, -3}, 2, 2)},
			{Name: "/b", Mean: tensors.FromFlatDataAndDimensions([]float32{off * 10}, 1)},
		}}
	}
	clients := []*Posterior{mk(0), mk(5), mk(9)}
	s, err := Stack(clients)
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Params[0].Mean.Shape().Dimensions; len(d) != 3 || d[0] != 3 {
		t.Fatalf("stacked shape %v", d)
	}
	if s.Params[1].LogVar != nil {
		t.Errorf("deterministic parameter gained a log-variance")
	}
	m, _ := tensors.CopyFlatData[float32](s.Params[0].Mean)
	if m[4] != 5 || m[11] != 12 {
		t.Errorf("stacked means %v", m)
	}
	back, err := Unstack(s)
	if err != nil || len(back) != 3 {
		t.Fatal(err)
	}
	for k := range clients {
		for i := range clients[k].Params {
			a, _ := tensors.CopyFlatData[float32](clients[k].Params[i].Mean)
			b, _ := tensors.CopyFlatData[float32](back[k].Params[i].Mean)
			for j := range a {
				if a[j] != b[j] {
					t.Fatalf("client %d param %d: %v != %v", k, i, a, b)
				}
			}
		}
	}
	bad := mk(1)
	bad.Params[1].Mean = tensors.FromFlatDataAndDimensions([]float32{1, 2}, 2)
	if _, err := Stack([]*Posterior{mk(0), bad}); err == nil {
		t.Error("mismatched shapes: no error")
	}
	unsorted := &Posterior{Params: []Param{mk(0).Params[1], mk(0).Params[0]}}
	if err := CheckCompatible([]*Posterior{unsorted}); err == nil {
		t.Error("unsorted: no error")
	}
	mixed := mk(2)
	mixed.Params[0].LogVar = nil
	if err := CheckCompatible([]*Posterior{mk(0), mixed}); err == nil {
		t.Error("Gaussian in one client, deterministic in another: no error")
	}
}
