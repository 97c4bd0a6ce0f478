package groundtruth

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGroundTruthHMCMatchesExact checks the HMC reference against the exact posterior of the linear
// problem: every mean within 4 Monte Carlo standard errors, every variance within 4 of its
// standard errors (about var sqrt(2/ESS) for a Gaussian), R-hat below 1.01, and same seed, same draws.
func TestGroundTruthHMCMatchesExact(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Dims, cfg.PerClient, cfg.Test = 3, 3, 10, 10
	p, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := p.Model.Centralised(p.Clients)
	if err != nil {
		t.Fatal(err)
	}
	logp, err := p.Model.LogDensity(p.Clients)
	if err != nil {
		t.Fatal(err)
	}
	init := func(c int, rng *rand.Rand) []float64 {
		w := make([]float64, cfg.Dims)
		for i := range w {
			w[i] = 2 * rng.NormFloat64()
		}
		return w
	}
	hc := HMCConfig{Chains: 4, Warmup: 1000, Samples: 1000, Leapfrog: 8, TargetAccept: 0.8, Seed: 5}
	res, err := HMC(logp, cfg.Dims, init, hc)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < cfg.Dims; i++ {
		m, v := exact.Mean.AtVec(i), exact.Cov.At(i, i)
		if math.Abs(res.Mean[i]-m) > 4*res.MCSE[i] {
			t.Errorf("weight %d: HMC mean %v, exact %v, MCSE %v", i, res.Mean[i], m, res.MCSE[i])
		}
		if se := v * math.Sqrt(2/res.ESS[i]); math.Abs(res.Cov[i][i]-v) > 4*se {
			t.Errorf("weight %d: HMC variance %v, exact %v (se %v)", i, res.Cov[i][i], v, se)
		}
		if res.RHat[i] > 1.01 || res.ESS[i] < 500 {
			t.Errorf("weight %d: R-hat %v, ESS %v", i, res.RHat[i], res.ESS[i])
		}
	}
	if res.Accept < 0.5 {
		t.Errorf("acceptance %v", res.Accept)
	}
	again, err := HMC(logp, cfg.Dims, init, hc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Mean {
		if again.Mean[i] != res.Mean[i] {
			t.Fatal("same seed, different draws")
		}
	}
	if _, err := HMC(logp, cfg.Dims, init, HMCConfig{Chains: 1, Warmup: 100, Samples: 100, Leapfrog: 4, TargetAccept: 0.8}); err == nil {
		t.Error("one chain: no error")
	}
}

// TestGroundTruthESSRHat checks the diagnostics on independent draws (ESS near the number of draws,
// R-hat near 1) and on chains stuck at different values (R-hat far above 1).
func TestGroundTruthESSRHat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	iid := make([][]float64, 4)
	stuck := make([][]float64, 4)
	for c := range iid {
		for s := 0; s < 1000; s++ {
			iid[c] = append(iid[c], rng.NormFloat64())
			stuck[c] = append(stuck[c], float64(c)+0.1*rng.NormFloat64())
		}
	}
	ess, rhat := essRHat(iid)
	if ess < 3000 || ess > 5000 || rhat > 1.01 {
		t.Errorf("independent draws: ESS %v (of 4000), R-hat %v", ess, rhat)
	}
	if _, rhat := essRHat(stuck); rhat < 2 {
		t.Errorf("stuck chains: R-hat %v", rhat)
	}
}
