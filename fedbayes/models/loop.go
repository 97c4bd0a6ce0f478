package models

import (
	"context"
	"fmt"
)

// Loop is the module's one minibatch training loop: Epochs epochs of Steps steps each, every step
// taking its batch from Batch and running Trainer.Step once. What differs between the trainers that
// use it (the engine's clients, vectorised and sequential, pre-training, the predictive package's
// local training, distillation and SG-MCMC sampling, the doctor's speed check) lives in its hooks:
// a new batch order per epoch (BeforeEpoch), a learning rate or fresh pseudo-labels per step
// (BeforeStep), loss sums, progress, SWA averages and sampler updates after each step (AfterStep),
// and early stopping after each epoch (AfterEpoch). The batch order itself belongs to each trainer's
// Batch (docs/models.md, "Training loops"): the loop adds no arithmetic of its own, so a trainer
// moved onto it computes the same numbers bit for bit.
type Loop struct {
	// Epochs is the number of epochs (>= 0).
	Epochs int
	// Steps is the number of steps in each epoch (>= 0).
	Steps int
	// Context, when set, is checked before every step; its error ends the loop and is returned as is.
	Context context.Context
	// BeforeEpoch, when set, runs at the start of each epoch, before its first step.
	BeforeEpoch func(epoch int) error
	// BeforeStep, when set, runs before each step's batch is taken.
	BeforeStep func(at LoopStep) error
	// Batch returns the batch of a step (required).
	Batch func(at LoopStep) (Batch, error)
	// AfterStep, when set, gets the statistics of each step.
	AfterStep func(at LoopStep, stats StepStats) error
	// AfterEpoch, when set, runs at the end of each epoch; stop true ends the loop there.
	AfterEpoch func(epoch int) (stop bool, err error)
}

// LoopStep is where a Loop is: the epoch and the step in it (both from 0) and Index, the steps run
// before this one (epoch*Steps + step).
type LoopStep struct {
	Epoch, Step, Index int
}

// Run runs the loop on t. An error of Trainer.Step comes back as a *StepError; a hook's error or the
// context's comes back as is.
func (l Loop) Run(t *Trainer) error {
	if t == nil {
		return fmt.Errorf("models: Loop.Run: no trainer")
	}
	if l.Batch == nil {
		return fmt.Errorf("models: Loop.Run: no Batch function")
	}
	if l.Epochs < 0 || l.Steps < 0 {
		return fmt.Errorf("models: Loop.Run: %d epochs of %d steps; want non-negative counts", l.Epochs, l.Steps)
	}
	for e := 0; e < l.Epochs; e++ {
		if l.BeforeEpoch != nil {
			if err := l.BeforeEpoch(e); err != nil {
				return err
			}
		}
		for s := 0; s < l.Steps; s++ {
			if l.Context != nil {
				if err := l.Context.Err(); err != nil {
					return err
				}
			}
			at := LoopStep{Epoch: e, Step: s, Index: e*l.Steps + s}
			if l.BeforeStep != nil {
				if err := l.BeforeStep(at); err != nil {
					return err
				}
			}
			b, err := l.Batch(at)
			if err != nil {
				return err
			}
			stats, err := t.Step(b)
			if err != nil {
				return &StepError{Epoch: e + 1, Step: s + 1, Err: err}
			}
			if l.AfterStep != nil {
				if err := l.AfterStep(at, stats); err != nil {
					return err
				}
			}
		}
		if l.AfterEpoch != nil {
			stop, err := l.AfterEpoch(e)
			if err != nil {
				return err
			}
			if stop {
				return nil
			}
		}
	}
	return nil
}

// StepError is a training step's failure inside a Loop: "epoch E, step S: err", counted from 1.
type StepError struct {
	Epoch, Step int
	Err         error
}

// Error implements error.
func (e *StepError) Error() string {
	return fmt.Sprintf("epoch %d, step %d: %v", e.Epoch, e.Step, e.Err)
}

// Unwrap returns the step's error.
func (e *StepError) Unwrap() error { return e.Err }
