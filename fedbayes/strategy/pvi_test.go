package strategy

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// pviPost is a posterior of one Gaussian parameter "/w" of two values (means m, variances v) and one
// deterministic parameter "/b" of one value.
func pviPost(m, v [2]float64, b float32) *posterior.Posterior {
	lv := []float32{float32(math.Log(v[0])), float32(math.Log(v[1]))}
	return &posterior.Posterior{Params: []posterior.Param{
		{Name: "/b", Mean: tensors.FromFlatDataAndDimensions([]float32{b}, 1)},
		{Name: "/w", Mean: tensors.FromFlatDataAndDimensions([]float32{float32(m[0]), float32(m[1])}, 2), LogVar: tensors.FromFlatDataAndDimensions(lv, 2)},
	}}
}

// moments returns "/w"'s means and variances.
func moments(t *testing.T, p *posterior.Posterior) (m, v [2]float64) {
	t.Helper()
	q := p.Find("/w")
	mean := tensors.MustCopyFlatData[float32](q.Mean)
	lv := tensors.MustCopyFlatData[float32](q.LogVar)
	for i := range 2 {
		m[i], v[i] = float64(mean[i]), math.Exp(float64(lv[i]))
	}
	return m, v
}

func newTestPVI(t *testing.T, damping float64) *PVI {
	t.Helper()
	opts, _ := json.Marshal(PVIOptions{Damping: damping})
	st, err := New(PVIName, Settings{Kind: models.Bayesian, Clients: 3, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	return st.(*PVI)
}

// TestPVIByHand checks two rounds of PVI against values worked out by hand, with the prior N(0, 1)
// (precision 1, shift 0) and damping 1/2.
//
// Round 1, clients 0 and 1 from the prior (cavity = prior): client 0 sends N((1, 0), (1/2, 1/4))
// (precision (2, 4), shift (2, 0)), client 1 N((2, 1), (1/3, 1/2)) (precision (3, 2), shift (6, 2)).
// Their fresh sites are local − prior: (1, 3)/(2, 0) and (2, 1)/(6, 2); damped by 1/2 from 1:
// (0.5, 1.5)/(1, 0) and (1, 0.5)/(3, 1). The global is 1 + both: precision (2.5, 3), shift (4, 1),
// so N((1.6, 1/3), (0.4, 1/3)); "/b" is the size-weighted mean (sizes 1 and 3) of 1 and 5: 4.
//
// Round 2, client 1 alone: its cavity is the global without its site, precision (1.5, 2.5), shift
// (1, 0); it sends N((2, 0), (0.25, 0.25)) (precision (4, 4), shift (8, 0)): fresh site (2.5, 1.5)/
// (7, 0), damped with its old one: (1.75, 1)/(5, 0.5). Client 0 keeps its site: the global is
// precision 1 + 0.5 + 1.75 = 3.25 and 1 + 1.5 + 1 = 3.5, shift (6, 0.5).
func TestPVIByHand(t *testing.T) {
	p := newTestPVI(t, 0.5)
	model := models.Config{}
	start := pviPost([2]float64{0.3, -0.2}, [2]float64{0.01, 0.01}, 0)
	priors, err := p.Priors(1, []int{0, 1}, start, model)
	if err != nil {
		t.Fatal(err)
	}
	for j, pr := range priors {
		if m, v := moments(t, pr); m != [2]float64{0, 0} || v != [2]float64{1, 1} {
			t.Errorf("round 1, client %d's cavity N(%v, %v), want the prior", j, m, v)
		}
		if pr.Find("/b") == nil {
			t.Errorf("round 1, client %d's cavity lacks the deterministic parameter", j)
		}
	}
	r1 := &Round{Number: 1, IDs: []int{0, 1}, Sizes: []int{1, 3}, Previous: start, Model: model,
		List: []*posterior.Posterior{pviPost([2]float64{1, 0}, [2]float64{0.5, 0.25}, 1), pviPost([2]float64{2, 1}, [2]float64{1.0 / 3, 0.5}, 5)}}
	g, err := p.Aggregate(r1)
	if err != nil {
		t.Fatal(err)
	}
	near := func(what string, got, want [2]float64) {
		t.Helper()
		for i := range 2 {
			if math.Abs(got[i]-want[i]) > 1e-6*math.Max(1, math.Abs(want[i])) {
				t.Errorf("%s = %v, want %v", what, got, want)
				return
			}
		}
	}
	m, v := moments(t, g.Posterior)
	near("round 1 mean", m, [2]float64{1.6, 1.0 / 3})
	near("round 1 variance", v, [2]float64{0.4, 1.0 / 3})
	if b := tensors.MustCopyFlatData[float32](g.Posterior.Find("/b").Mean)[0]; math.Abs(float64(b)-4) > 1e-6 {
		t.Errorf("round 1 deterministic parameter %v, want 4", b)
	}
	state, err := p.State()
	if err != nil {
		t.Fatal(err)
	}
	priors, err = p.Priors(2, []int{1}, g.Posterior, model)
	if err != nil {
		t.Fatal(err)
	}
	m, v = moments(t, priors[0])
	near("round 2 cavity mean", m, [2]float64{1.0 / 1.5, 0})
	near("round 2 cavity variance", v, [2]float64{1 / 1.5, 1 / 2.5})
	r2 := &Round{Number: 2, IDs: []int{1}, Sizes: []int{3}, Previous: g.Posterior, Model: model,
		List: []*posterior.Posterior{pviPost([2]float64{2, 0}, [2]float64{0.25, 0.25}, 7)}}
	g2, err := p.Aggregate(r2)
	if err != nil {
		t.Fatal(err)
	}
	m, v = moments(t, g2.Posterior)
	near("round 2 mean", m, [2]float64{6 / 3.25, 0.5 / 3.5})
	near("round 2 variance", v, [2]float64{1 / 3.25, 1 / 3.5})

	// Restored from round 1's state, a fresh PVI gives round 2's global bit for bit.
	q := newTestPVI(t, 0.5)
	if err := q.Restore(state); err != nil {
		t.Fatal(err)
	}
	r2.List = []*posterior.Posterior{pviPost([2]float64{2, 0}, [2]float64{0.25, 0.25}, 7)}
	g3, err := q.Aggregate(r2)
	if err != nil {
		t.Fatal(err)
	}
	m3, v3 := moments(t, g3.Posterior)
	m2, v2 := moments(t, g2.Posterior)
	if m3 != m2 || v3 != v2 {
		t.Errorf("restored: N(%v, %v), uninterrupted N(%v, %v)", m3, v3, m2, v2)
	}
}

// TestPVIRefuses checks the options, a cavity without positive precision (a DivergedError naming
// the client and the parameter) and corrupt states.
func TestPVIRefuses(t *testing.T) {
	for _, tc := range []struct {
		s    Settings
		want string
	}{
		{Settings{Kind: models.Bayesian, Options: json.RawMessage(`{"damping": 1.5}`)}, "damping: 1.5"},
		{Settings{Kind: models.Bayesian, Options: json.RawMessage(`{"damping": -1}`)}, "damping: -1"},
		{Settings{Kind: models.Bayesian, Options: json.RawMessage(`{"rho": 1}`)}, "rho"},
		{Settings{Kind: models.Deterministic}, "model.kind"},
		{Settings{Kind: models.Bayesian, Sampling: true}, "training.sampler"},
		{Settings{Kind: models.Bayesian, Compat: models.CompatBFLP}, "model.compat"},
	} {
		if _, err := New(PVIName, tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error naming %q", tc.s, err, tc.want)
		}
	}
	for active, want := range map[int]float64{1: 1, 2: 1, 10: 0.2, 100: 0.02} {
		st, err := New(PVIName, Settings{Kind: models.Bayesian, Clients: 1000, Active: active})
		if err != nil || st.(*PVI).Damping != want {
			t.Errorf("%d active clients: damping %v (%v), want %v", active, st, err, want)
		}
	}
	// Client 1's site is negative (a client that sent a wider posterior than its cavity): the global's
	// precision is 1 + 5 − 5.5 = 0.5, below client 0's site of 5, so client 0's cavity (−4.5) is no
	// Gaussian: a divergence naming the client and the parameter.
	start := pviPost([2]float64{0, 0}, [2]float64{1, 1}, 0)
	q := newTestPVI(t, 1)
	if err := q.Restore(mustState(t, map[int][2][]float64{0: {{5, 5}, {0, 0}}, 1: {{-5.5, 0}, {0, 0}}})); err != nil {
		t.Fatal(err)
	}
	var de *DivergedError
	_, err := q.Priors(3, []int{0}, start, models.Config{})
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "client 0: parameter 0") || !strings.Contains(err.Error(), "/w 0-1") {
		t.Errorf("a cavity of precision 0.5 − 5 < 0: %v, want a DivergedError naming client 0, parameter 0 of /w", err)
	}
	for _, bad := range [][]byte{[]byte("not gob"), mustState(t, map[int][2][]float64{0: {{1}, {0, 0}}})[:10]} {
		if err := newTestPVI(t, 1).Restore(bad); err == nil || !strings.Contains(err.Error(), "PVI: the sites") {
			t.Errorf("a corrupt state: %v", err)
		}
	}
	if err := newTestPVI(t, 1).Restore(mustState(t, map[int][2][]float64{0: {{1}, {0, 0}}})); err == nil || !strings.Contains(err.Error(), "client 0's site") {
		t.Errorf("a site of the wrong length: %v", err)
	}
	if err := newTestPVI(t, 1).Restore(mustState(t, map[int][2][]float64{0: {{math.NaN(), 1}, {0, 0}}})); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("a NaN site: %v", err)
	}
}

// mustState encodes sites (client -> precisions, shifts) over the layout "/w" of 2 values.
func mustState(t *testing.T, sites map[int][2][]float64) []byte {
	t.Helper()
	p := &PVI{names: []string{"/w"}, sizes: []int{2}, sites: map[int]aggregate.Natural{}}
	for id, s := range sites {
		p.sites[id] = aggregate.Natural{Prec: s[0], Shift: s[1]}
	}
	b, err := p.State()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPVISequentialByHand checks one round of PVI's sequential schedule over two clients against
// values worked out by hand, with the prior N(0, 1) and damping 1/2, the clients' models those of
// TestPVIByHand's round 1.
//
// Client 0 first, against the prior: it sends N((1, 0), (1/2, 1/4)) (precision (2, 4), shift (2, 0));
// its fresh site (1, 3)/(2, 0), damped by 1/2 from 1: (0.5, 1.5)/(1, 0). The global is precision
// (1.5, 2.5), shift (1, 0), so client 1's cavity (it has no site yet) is N((2/3, 0), (2/3, 0.4)).
// Client 1 sends N((2, 1), (1/3, 1/2)) (precision (3, 2), shift (6, 2)): its fresh site is that minus
// the cavity, (1.5, −0.5)/(5, 2), damped: (0.75, −0.25)/(2.5, 1). The global is precision
// 1.5 + 0.75 = 2.25 and 2.5 − 0.25 = 2.25, shift (3.5, 1): N((14/9, 4/9), (4/9, 4/9)), where the
// parallel schedule gives N((1.6, 1/3), (0.4, 1/3)) (TestPVIByHand); "/b" is the size-weighted mean
// of 1 and 5 (sizes 1 and 3), 4.
func TestPVISequentialByHand(t *testing.T) {
	opts, _ := json.Marshal(PVIOptions{Damping: 0.5, Schedule: Sequential})
	st, err := New(PVIName, Settings{Kind: models.Bayesian, Clients: 2, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	p := st.(*PVI)
	if !p.Sequential() {
		t.Fatal("schedule sequential: Sequential() is false")
	}
	model := models.Config{}
	start := pviPost([2]float64{0.3, -0.2}, [2]float64{0.01, 0.01}, 0)
	near := func(what string, got, want [2]float64) {
		t.Helper()
		for i := range 2 {
			if math.Abs(got[i]-want[i]) > 1e-6*math.Max(1, math.Abs(want[i])) {
				t.Errorf("%s = %v, want %v", what, got, want)
				return
			}
		}
	}
	c0 := pviPost([2]float64{1, 0}, [2]float64{0.5, 0.25}, 1)
	c1 := pviPost([2]float64{2, 1}, [2]float64{1.0 / 3, 0.5}, 5)
	priors, err := p.Priors(1, []int{0}, start, model)
	if err != nil {
		t.Fatal(err)
	}
	m, v := moments(t, priors[0])
	near("client 0's cavity mean", m, [2]float64{0, 0})
	near("client 0's cavity variance", v, [2]float64{1, 1})
	g0, err := p.Absorb(&Round{Number: 1, IDs: []int{0}, Sizes: []int{1}, Previous: start, Model: model, List: []*posterior.Posterior{c0}})
	if err != nil {
		t.Fatal(err)
	}
	m, v = moments(t, g0)
	near("the global after client 0, mean", m, [2]float64{1 / 1.5, 0})
	near("the global after client 0, variance", v, [2]float64{1 / 1.5, 1 / 2.5})
	if b := tensors.MustCopyFlatData[float32](g0.Find("/b").Mean)[0]; b != 0 {
		t.Errorf("the global after client 0 has /b = %v, want the round's starting 0", b)
	}
	priors, err = p.Priors(1, []int{1}, g0, model)
	if err != nil {
		t.Fatal(err)
	}
	m, v = moments(t, priors[0])
	near("client 1's cavity mean", m, [2]float64{2.0 / 3, 0})
	near("client 1's cavity variance", v, [2]float64{2.0 / 3, 0.4})
	if _, err := p.Absorb(&Round{Number: 1, IDs: []int{1}, Sizes: []int{3}, Previous: g0, Model: model, List: []*posterior.Posterior{c1}}); err != nil {
		t.Fatal(err)
	}
	g, err := p.Aggregate(&Round{Number: 1, IDs: []int{0, 1}, Sizes: []int{1, 3}, Previous: start, Model: model, List: []*posterior.Posterior{c0, c1}})
	if err != nil {
		t.Fatal(err)
	}
	m, v = moments(t, g.Posterior)
	near("round 1 mean", m, [2]float64{14.0 / 9, 4.0 / 9})
	near("round 1 variance", v, [2]float64{4.0 / 9, 4.0 / 9})
	if b := tensors.MustCopyFlatData[float32](g.Posterior.Find("/b").Mean)[0]; math.Abs(float64(b)-4) > 1e-6 {
		t.Errorf("round 1 deterministic parameter %v, want 4", b)
	}

	// A round whose clients were trained together, not absorbed one by one, is refused; so are
	// Absorb under the parallel schedule, a client absorbed twice and an unknown schedule. The
	// sequential schedule's default damping is 1.
	r2 := &Round{Number: 2, IDs: []int{0}, Sizes: []int{1}, Previous: g.Posterior, Model: model, List: []*posterior.Posterior{c0}}
	if _, err := p.Aggregate(r2); err == nil || !strings.Contains(err.Error(), "client 0 was not absorbed") {
		t.Errorf("aggregating clients not absorbed: %v", err)
	}
	if _, err := p.Absorb(r2); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Absorb(r2); err == nil || !strings.Contains(err.Error(), "absorbed twice") {
		t.Errorf("a client absorbed twice: %v", err)
	}
	if _, err := newTestPVI(t, 0.5).Absorb(r2); err == nil || !strings.Contains(err.Error(), "parallel") {
		t.Errorf("Absorb under the parallel schedule: %v", err)
	}
	if _, err := New(PVIName, Settings{Kind: models.Bayesian, Options: json.RawMessage(`{"schedule": "random"}`)}); err == nil || !strings.Contains(err.Error(), "schedule") {
		t.Errorf("an unknown schedule: %v", err)
	}
	if st, err := New(PVIName, Settings{Kind: models.Bayesian, Clients: 10, Options: json.RawMessage(`{"schedule": "sequential"}`)}); err != nil || st.(*PVI).Damping != 1 {
		t.Errorf("the sequential schedule's default damping: %v (%v), want 1", st, err)
	}
}
