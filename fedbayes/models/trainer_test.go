package models

import (
	"testing"

	"fedbayes.dev/fedbayes/posterior"
)

// TestTrainerControls: SetLearningRate acts like creating the trainer with that rate; ResetOptimizer
// acts like a fresh trainer; SetClientPosterior writes one client only.
func TestTrainerControls(t *testing.T) {
	cfg := Config{Options: Options{Arch: ArchMLP, Hidden: []int{5}}, InputShape: []int{4}, NumClasses: 3, Clients: 2, Seed: 4}
	x, y := synthetic(8, 2, 6, 4, 3)
	batch := Batch{X: x, Labels: y, DatasetSizes: []int{6, 6}}
	step := func(tr *Trainer) {
		t.Helper()
		if _, err := tr.Step(batch); err != nil {
			t.Fatal(err)
		}
	}
	opt := OptimizerConfig{Kind: SGD, LearningRate: 0.1, Momentum: 0.9}

	// a: lr 0.5 changed to 0.1, two steps, reset, one step. b: a's state before the third step, fresh
	// trainer, one step.
	a, b := newModel(t, cfg), newModel(t, cfg)
	fast := opt
	fast.LearningRate = 0.5
	ta, err := a.NewTrainer(fast)
	if err != nil {
		t.Fatal(err)
	}
	if err := ta.SetLearningRate(0.1); err != nil {
		t.Fatal(err)
	}
	tb, err := b.NewTrainer(opt)
	if err != nil {
		t.Fatal(err)
	}
	step(ta)
	step(ta)
	step(tb)
	step(tb)
	pa, _ := a.Posterior()
	pb, _ := b.Posterior()
	samePosterior(t, pa, pb) // same rate

	if err := ta.ResetOptimizer(); err != nil {
		t.Fatal(err)
	}
	c := newModel(t, cfg)
	if err := c.SetPosterior(pa); err != nil {
		t.Fatal(err)
	}
	tc, err := c.NewTrainer(opt)
	if err != nil {
		t.Fatal(err)
	}
	step(ta)
	step(tc)
	step(tb) // b keeps its momentum: must differ from a
	pa, _ = a.Posterior()
	pc, _ := c.Posterior()
	samePosterior(t, pa, pc)
	pb, _ = b.Posterior()
	if w1, w2 := flat32(t, pa.Params[1].Mean), flat32(t, pb.Params[1].Mean); w1[0] == w2[0] {
		t.Error("momentum had no effect: reset and kept-momentum trainers agree")
	}

	// SetClientPosterior: client 1 of c gets a's client 0; c's client 0 is unchanged.
	a0, _ := a.ClientPosterior(0)
	c0, _ := c.ClientPosterior(0)
	if err := c.SetClientPosterior(1, b.mustClient(t, 1)); err != nil {
		t.Fatal(err)
	}
	if err := c.SetClientPosterior(1, a0); err != nil {
		t.Fatal(err)
	}
	c1, _ := c.ClientPosterior(1)
	samePosterior(t, a0, c1)
	c0after, _ := c.ClientPosterior(0)
	samePosterior(t, c0, c0after)
	if err := c.SetClientPosterior(2, a0); err == nil {
		t.Error("SetClientPosterior(2) on 2 clients: no error")
	}
	if err := ta.SetLearningRate(-1); err == nil {
		t.Error("SetLearningRate(-1): no error")
	}
}

func (m *Model) mustClient(t *testing.T, k int) *posterior.Posterior {
	t.Helper()
	p, err := m.ClientPosterior(k)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
