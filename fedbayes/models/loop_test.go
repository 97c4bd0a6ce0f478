package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestLoop: the hooks run in order (epoch start, before step, batch, after step, epoch end) with the
// right positions; AfterEpoch stops early; errors of the steps, hooks and context come back as
// documented; bad input is refused before any step.
func TestLoop(t *testing.T) {
	cfg := Config{Options: Options{Arch: ArchMLP, Hidden: []int{5}}, InputShape: []int{4}, NumClasses: 3, Clients: 2, Seed: 4}
	x, y := synthetic(8, 2, 6, 4, 3)
	good := Batch{X: x, Labels: y, DatasetSizes: []int{6, 6}}
	hookErr := errors.New("hook failed")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		// change edits the recording loop of 2 epochs x 2 steps.
		change  func(l *Loop, log *[]string)
		want    string // the hook calls, joined by spaces
		wantErr string
	}{
		{"two epochs", func(l *Loop, log *[]string) {}, "E0 B0.0/0 S0 A0 B0.1/1 S1 A1 e0 E1 B1.0/2 S2 A2 B1.1/3 S3 A3 e1", ""},
		{"early stop", func(l *Loop, log *[]string) {
			l.AfterEpoch = func(e int) (bool, error) { *log = append(*log, fmt.Sprintf("e%d", e)); return true, nil }
		}, "E0 B0.0/0 S0 A0 B0.1/1 S1 A1 e0", ""},
		{"no epochs", func(l *Loop, log *[]string) { l.Epochs = 0 }, "", ""},
		{"step error", func(l *Loop, log *[]string) {
			l.Batch = func(at LoopStep) (Batch, error) {
				*log = append(*log, fmt.Sprintf("S%d", at.Index))
				if at.Index == 1 {
					return Batch{X: x, Labels: y, DatasetSizes: []int{6}}, nil
				}
				return good, nil
			}
		}, "E0 B0.0/0 S0 A0 B0.1/1 S1", "epoch 1, step 2: models: Batch.DatasetSizes has 1 entries"},
		{"hook error", func(l *Loop, log *[]string) {
			l.AfterStep = func(at LoopStep, _ StepStats) error {
				*log = append(*log, fmt.Sprintf("A%d", at.Index))
				return hookErr
			}
		}, "E0 B0.0/0 S0 A0", "hook failed"},
		{"cancelled", func(l *Loop, log *[]string) { l.Context = cancelled }, "E0", "context canceled"},
		{"no batch", func(l *Loop, log *[]string) { l.Batch = nil }, "", "no Batch function"},
		{"negative steps", func(l *Loop, log *[]string) { l.Steps = -1 }, "", "want non-negative counts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(t, cfg)
			tr, err := m.NewTrainer(OptimizerConfig{Kind: SGD, LearningRate: 0.1})
			if err != nil {
				t.Fatal(err)
			}
			var log []string
			add := func(s string, a ...any) { log = append(log, fmt.Sprintf(s, a...)) }
			l := Loop{Epochs: 2, Steps: 2,
				BeforeEpoch: func(e int) error { add("E%d", e); return nil },
				BeforeStep:  func(at LoopStep) error { add("B%d.%d/%d", at.Epoch, at.Step, at.Index); return nil },
				Batch:       func(at LoopStep) (Batch, error) { add("S%d", at.Index); return good, nil },
				AfterStep: func(at LoopStep, st StepStats) error {
					if len(st.Loss) != 2 {
						t.Errorf("step %d: %d losses, want 2", at.Index, len(st.Loss))
					}
					add("A%d", at.Index)
					return nil
				},
				AfterEpoch: func(e int) (bool, error) { add("e%d", e); return false, nil },
			}
			tt.change(&l, &log)
			err = l.Run(tr)
			if got := strings.Join(log, " "); got != tt.want {
				t.Errorf("hooks ran %q, want %q", got, tt.want)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Run: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Run: error %v, want one containing %q", err, tt.wantErr)
			}
			var se *StepError
			if isStep := errors.As(err, &se); isStep != (tt.name == "step error") || isStep && (se.Epoch != 1 || se.Step != 2) {
				t.Errorf("Run: error %#v; a *StepError at epoch 1, step 2 only for the failing step", err)
			}
		})
	}
	if err := (Loop{Batch: func(LoopStep) (Batch, error) { return good, nil }}).Run(nil); err == nil || !strings.Contains(err.Error(), "no trainer") {
		t.Errorf("Run(nil): error %v, want one naming the missing trainer", err)
	}
}
