package predictive

import (
	"fmt"
	"time"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
)

// serverStep is the server side of one round of a multi-round method: it turns the trained
// clients (stacked [K, ...]) and their sizes into the next global model (unstacked).
type serverStep func(round int, trained *posterior.Posterior, sizes []float64) (*posterior.Posterior, error)

// roundHook sees each round's global model with the time the clients and the server took.
type roundHook func(round int, global *posterior.Posterior, local, server time.Duration) error

// withoutTiming adapts a public per-round callback (nil allowed) to a roundHook.
func withoutTiming(onRound func(round int, global *posterior.Posterior) error) roundHook {
	return func(r int, g *posterior.Posterior, _, _ time.Duration) error {
		if onRound == nil {
			return nil
		}
		return onRound(r, g)
	}
}

// federate runs the rounds shared by FedAvg and FedBE (Chen & Chao, Alg. 1): every round the K
// clients start from the global model, train locally (lc, with a batch order that changes with the
// round), and server makes the next global model. The initial global model is client 0's
// initialisation of cfg, so methods run with the same cfg start from the same weights.
func federate(name string, cfg models.Config, clients []*data.Dataset, lc LocalConfig, rounds int,
	server serverStep, hook roundHook) (*posterior.Posterior, error) {
	if rounds < 1 {
		return nil, fmt.Errorf("predictive: %s: %d rounds; want at least 1", name, rounds)
	}
	cfg.Clients = len(clients)
	cfg = cfg.AsDeterministic()
	m, err := models.New(cfg)
	if err != nil {
		return nil, err
	}
	global, err := m.ClientPosterior(0)
	if err != nil {
		return nil, err
	}
	sizes := make([]float64, len(clients))
	for k, d := range clients {
		sizes[k] = float64(d.Len())
	}
	for r := 1; r <= rounds; r++ {
		if err := m.SetPosterior(global); err != nil {
			return nil, err
		}
		start := time.Now()
		l := lc
		l.Seed = lc.Seed + int64(r)*131
		if _, err := TrainClients(m, clients, l); err != nil {
			return nil, fmt.Errorf("predictive: %s round %d: %w", name, r, err)
		}
		trained, err := m.Posterior()
		if err != nil {
			return nil, err
		}
		local := time.Since(start)
		start = time.Now()
		if global, err = server(r, trained, sizes); err != nil {
			return nil, fmt.Errorf("predictive: %s round %d: %w", name, r, err)
		}
		if err := hook(r, global, local, time.Since(start)); err != nil {
			return nil, err
		}
	}
	return global, nil
}

// FedAvg runs rounds rounds of FedAvg (McMahan et al. 2017) with exactly FedBE's client side: the
// same initial global model (client 0's initialisation of cfg), the same local training and batch
// order, and the size-weighted mean of the clients (FedAvgModel) as the next global model. onRound,
// if not nil, sees each round's global model. It is the baseline of Chen & Chao's comparison.
func FedAvg(cfg models.Config, clients []*data.Dataset, lc LocalConfig, rounds int,
	onRound func(round int, global *posterior.Posterior) error) (*posterior.Posterior, error) {
	return federate("FedAvg", cfg, clients, lc, rounds, fedAvgServer, withoutTiming(onRound))
}

// fedAvgServer is FedAvg's server step: the size-weighted mean of the clients.
func fedAvgServer(_ int, trained *posterior.Posterior, sizes []float64) (*posterior.Posterior, error) {
	return FedAvgModel(trained, sizes)
}
