package strategy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// benchClients returns K client posteriors of one Gaussian parameter of n values, random means and
// log-variances near -6 (the engine's initial value), and one of them as the starting global.
func benchClients(K, n int) ([]*posterior.Posterior, *posterior.Posterior) {
	rng := rand.New(rand.NewPCG(1, 2))
	post := func() *posterior.Posterior {
		m, lv := make([]float32, n), make([]float32, n)
		for i := range n {
			m[i], lv[i] = float32(rng.NormFloat64()*0.1), float32(-6+rng.NormFloat64()*0.1)
		}
		return &posterior.Posterior{Params: []posterior.Param{{Name: "/w", Mean: tensors.FromFlatDataAndDimensions(m, n),
			LogVar: tensors.FromFlatDataAndDimensions(lv, n)}}}
	}
	clients := make([]*posterior.Posterior, K)
	for k := range clients {
		clients[k] = post()
	}
	return clients, post()
}

// BenchmarkServerStep times one round's server step for 10 clients on a posterior the size of the
// Bayesian LeNet's (41,854 Gaussian values, docs/models.md): GAA's closed form, and PVI's cavities
// (Priors) plus its site update and product (Aggregate), the site-based method's whole server cost.
//
//	go test ./fedbayes/strategy -run '^$' -bench ServerStep -count 5
func BenchmarkServerStep(b *testing.B) {
	const K, n = 10, 41854
	clients, start := benchClients(K, n)
	ids, sizes := make([]int, K), make([]int, K)
	for k := range ids {
		ids[k], sizes[k] = k, 6000
	}
	for _, name := range []string{"GAA", PVIName} {
		b.Run(name, func(b *testing.B) {
			st, err := New(name, Settings{Kind: models.Bayesian, Clients: K, Weighting: "size"})
			if err != nil {
				b.Fatal(err)
			}
			global := start
			b.ResetTimer()
			for r := 1; r <= b.N; r++ {
				list := clients
				if cp, ok := st.(ClientPriors); ok {
					priors, err := cp.Priors(r, ids, global, models.Config{})
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					list = tilted(priors, clients) // what clients that reach their tilted optimum send
					b.StartTimer()
				}
				g, err := st.Aggregate(&Round{Number: r, IDs: ids, Sizes: sizes, List: list, Previous: global})
				if err != nil {
					b.Fatal(fmt.Errorf("round %d: %w", r, err))
				}
				global = g.Posterior
			}
		})
	}
}

// tilted returns each client's posterior under its prior when its likelihood is the Gaussian factor
// whose natural parameters are clients[k]'s: precisions and shifts add.
func tilted(priors, clients []*posterior.Posterior) []*posterior.Posterior {
	out := make([]*posterior.Posterior, len(priors))
	for k := range priors {
		pm := tensors.MustCopyFlatData[float32](priors[k].Params[0].Mean)
		plv := tensors.MustCopyFlatData[float32](priors[k].Params[0].LogVar)
		lm := tensors.MustCopyFlatData[float32](clients[k].Params[0].Mean)
		llv := tensors.MustCopyFlatData[float32](clients[k].Params[0].LogVar)
		m, lv := make([]float32, len(pm)), make([]float32, len(pm))
		for i := range pm {
			pp, lp := math.Exp(-float64(plv[i])), math.Exp(-float64(llv[i]))
			prec := pp + lp
			m[i] = float32((pp*float64(pm[i]) + lp*float64(lm[i])) / prec)
			lv[i] = float32(-math.Log(prec))
		}
		out[k] = &posterior.Posterior{Params: []posterior.Param{{Name: "/w", Mean: tensors.FromFlatDataAndDimensions(m, len(m)),
			LogVar: tensors.FromFlatDataAndDimensions(lv, len(lv))}}}
	}
	return out
}
