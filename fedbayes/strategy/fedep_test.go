package strategy

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestFedEPIsPVI checks that FedEP with per-client sites is PVI's parallel schedule: the same type,
// damping and round-1 global as TestPVIByHand's.
func TestFedEPIsPVI(t *testing.T) {
	st, err := New(FedEPName, Settings{Kind: models.Bayesian, Clients: 3, Options: json.RawMessage(`{"damping": 0.5}`)})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := st.(*PVI)
	if !ok || p.Damping != 0.5 || p.Sequential() {
		t.Fatalf("fedep: %#v, want PVI's parallel schedule at damping 0.5", st)
	}
	start := pviPost([2]float64{0.3, -0.2}, [2]float64{0.01, 0.01}, 0)
	g, err := p.Aggregate(&Round{Number: 1, IDs: []int{0, 1}, Sizes: []int{1, 3}, Previous: start,
		List: []*posterior.Posterior{pviPost([2]float64{1, 0}, [2]float64{0.5, 0.25}, 1), pviPost([2]float64{2, 1}, [2]float64{1.0 / 3, 0.5}, 5)}})
	if err != nil {
		t.Fatal(err)
	}
	if m, v := moments(t, g.Posterior); math.Abs(m[0]-1.6) > 1e-6 || math.Abs(v[1]-1.0/3) > 1e-6 {
		t.Errorf("fedep's round 1: N(%v, %v), want PVI's N((1.6, 1/3), (0.4, 1/3))", m, v)
	}
}

// TestFedSEPByHand checks two rounds of FedSEP over N = 2 clients against values worked out by hand,
// with the prior N(0, 1) (precision 1, shift 0) and damping 1/2.
//
// Round 1, clients 0 and 1: the shared site is 1, so the cavity is the prior. Client 0 sends
// precision (2, 4), shift (2, 0), client 1 precision (3, 2), shift (6, 2); their new sites are
// (1, 3)/(2, 0) and (2, 1)/(6, 2), of mean (1.5, 2)/(4, 1), damped from 0: (0.75, 1)/(2, 0.5). The
// global is the prior times the site squared: precision (2.5, 3), shift (4, 1), N((1.6, 1/3),
// (0.4, 1/3)); "/b" is the size-weighted mean (sizes 1 and 3) of 1 and 5, 4.
//
// Round 2, client 1 alone: the cavity is the prior times the site once, precision (1.75, 2), shift
// (2, 0.5), N((8/7, 1/4), (4/7, 1/2)). Client 1 sends N((2, 0), (1/4, 1/4)) (precision (4, 4), shift
// (8, 0)): new site (2.25, 2)/(6, −0.5), damped with the old: (1.5, 1.5)/(4, 0). The global is
// precision 1 + 2 × 1.5 = 4, shift (8, 0): N((2, 0), (1/4, 1/4)).
func TestFedSEPByHand(t *testing.T) {
	st, err := New(FedEPName, Settings{Kind: models.Bayesian, Clients: 2, Options: json.RawMessage(`{"damping": 0.5, "shared_site": true}`)})
	if err != nil {
		t.Fatal(err)
	}
	f := st.(*FedSEP)
	near := func(what string, got, want [2]float64) {
		t.Helper()
		for i := range 2 {
			if math.Abs(got[i]-want[i]) > 1e-6*math.Max(1, math.Abs(want[i])) {
				t.Errorf("%s = %v, want %v", what, got, want)
				return
			}
		}
	}
	model := models.Config{}
	start := pviPost([2]float64{0.3, -0.2}, [2]float64{0.01, 0.01}, 0)
	priors, err := f.Priors(1, []int{0, 1}, start, model)
	if err != nil {
		t.Fatal(err)
	}
	for j, pr := range priors {
		m, v := moments(t, pr)
		near("round 1 cavity mean", m, [2]float64{0, 0})
		near("round 1 cavity variance", v, [2]float64{1, 1})
		if pr.Find("/b") == nil {
			t.Errorf("round 1, client %d's cavity lacks the deterministic parameter", j)
		}
	}
	g, err := f.Aggregate(&Round{Number: 1, IDs: []int{0, 1}, Sizes: []int{1, 3}, Previous: start, Model: model,
		List: []*posterior.Posterior{pviPost([2]float64{1, 0}, [2]float64{0.5, 0.25}, 1), pviPost([2]float64{2, 1}, [2]float64{1.0 / 3, 0.5}, 5)}})
	if err != nil {
		t.Fatal(err)
	}
	m, v := moments(t, g.Posterior)
	near("round 1 mean", m, [2]float64{1.6, 1.0 / 3})
	near("round 1 variance", v, [2]float64{0.4, 1.0 / 3})
	if b := tensors.MustCopyFlatData[float32](g.Posterior.Find("/b").Mean)[0]; math.Abs(float64(b)-4) > 1e-6 {
		t.Errorf("round 1 deterministic parameter %v, want 4", b)
	}
	state, err := f.State()
	if err != nil {
		t.Fatal(err)
	}
	priors, err = f.Priors(2, []int{1}, g.Posterior, model)
	if err != nil {
		t.Fatal(err)
	}
	m, v = moments(t, priors[0])
	near("round 2 cavity mean", m, [2]float64{8.0 / 7, 0.25})
	near("round 2 cavity variance", v, [2]float64{4.0 / 7, 0.5})
	r2 := &Round{Number: 2, IDs: []int{1}, Sizes: []int{3}, Previous: g.Posterior, Model: model,
		List: []*posterior.Posterior{pviPost([2]float64{2, 0}, [2]float64{0.25, 0.25}, 7)}}
	g2, err := f.Aggregate(r2)
	if err != nil {
		t.Fatal(err)
	}
	m, v = moments(t, g2.Posterior)
	near("round 2 mean", m, [2]float64{2, 0})
	near("round 2 variance", v, [2]float64{0.25, 0.25})

	// Restored from round 1's state, a fresh FedSEP gives round 2's global bit for bit.
	st, _ = New(FedEPName, Settings{Kind: models.Bayesian, Clients: 2, Options: json.RawMessage(`{"damping": 0.5, "shared_site": true}`)})
	if err := st.(*FedSEP).Restore(state); err != nil {
		t.Fatal(err)
	}
	g3, err := st.Aggregate(r2)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxParamDiff(t, g3.Posterior, g2.Posterior); d != 0 {
		t.Errorf("restored: %v from the uninterrupted round 2", d)
	}
}

// maxParamDiff is the largest absolute difference between two posteriors' values.
func maxParamDiff(t *testing.T, a, b *posterior.Posterior) float64 {
	t.Helper()
	worst := 0.0
	for i, p := range a.Params {
		for _, pair := range [][2]*tensors.Tensor{{p.Mean, b.Params[i].Mean}, {p.LogVar, b.Params[i].LogVar}} {
			if pair[0] == nil {
				continue
			}
			x, y := tensors.MustCopyFlatData[float32](pair[0]), tensors.MustCopyFlatData[float32](pair[1])
			for j := range x {
				worst = math.Max(worst, math.Abs(float64(x[j]-y[j])))
			}
		}
	}
	return worst
}

// TestFedEPRefuses checks FedEP's options and settings, FedSEP's default damping, a shared cavity
// without positive precision and a state of another strategy.
func TestFedEPRefuses(t *testing.T) {
	for _, tc := range []struct {
		s    Settings
		want string
	}{
		{Settings{Kind: models.Bayesian, Clients: 2, Options: json.RawMessage(`{"damping": 2}`)}, "damping: 2"},
		{Settings{Kind: models.Bayesian, Clients: 2, Options: json.RawMessage(`{"schedule": "sequential"}`)}, "schedule"},
		{Settings{Kind: models.Deterministic, Clients: 2, Options: json.RawMessage(`{"shared_site": true}`)}, "model.kind"},
		{Settings{Kind: models.Bayesian, Clients: 2, Sampling: true}, "training.sampler"},
		{Settings{Kind: models.Bayesian, Clients: 2, Compat: models.CompatBFLP, Options: json.RawMessage(`{"shared_site": true}`)}, "model.compat"},
		{Settings{Kind: models.Bayesian, Options: json.RawMessage(`{"shared_site": true}`)}, "clients"},
	} {
		if _, err := New(FedEPName, tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error naming %q", tc.s, err, tc.want)
		}
	}
	// The default damping min(M, 2) / N, 1 at most: M clients a round of N (M = 0: not known).
	for _, tc := range []struct {
		n, m int
		want float64
	}{{2, 2, 1}, {2, 1, 0.5}, {10, 1, 0.1}, {10, 5, 0.2}, {100, 10, 0.02}, {10, 0, 0.2}} {
		st, err := New(FedEPName, Settings{Kind: models.Bayesian, Clients: tc.n, Active: tc.m, Options: json.RawMessage(`{"shared_site": true}`)})
		if err != nil || st.(*FedSEP).Damping != tc.want {
			t.Errorf("FedSEP, %d of %d clients a round: damping %v (%v), want %v", tc.m, tc.n, st, err, tc.want)
		}
	}
	// A shared site of precision -1 over 3 clients leaves the cavity 1 + 2 × (-1) < 0.
	st, _ := New(FedEPName, Settings{Kind: models.Bayesian, Clients: 3, Options: json.RawMessage(`{"shared_site": true}`)})
	f := st.(*FedSEP)
	if err := f.Restore(mustState(t, map[int][2][]float64{0: {{-1, 0}, {0, 0}}})); err != nil {
		t.Fatal(err)
	}
	var de *DivergedError
	if _, err := f.Priors(4, []int{0}, pviPost([2]float64{0, 0}, [2]float64{1, 1}, 0), models.Config{}); !errors.As(err, &de) || !strings.Contains(err.Error(), "parameter 0") {
		t.Errorf("a cavity of precision -1: %v, want a DivergedError naming parameter 0", err)
	}
	if err := f.Restore(mustState(t, map[int][2][]float64{0: {{1, 1}, {0, 0}}, 1: {{1, 1}, {0, 0}}})); err == nil || !strings.Contains(err.Error(), "not one shared site") {
		t.Errorf("PVI's state of two sites: %v", err)
	}
}
