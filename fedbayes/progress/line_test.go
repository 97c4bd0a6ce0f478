package progress

import (
	"strings"
	"testing"
	"time"
)

// TestFormatLine checks the line builder on each kind of line: the key metrics only (and in their
// order) out of the fifteen a round records, loss shown as train-loss, a planned sweep's "run k of
// n" and ETA, a finished run, a regression run, a run that records none of the key metrics, a step
// within a round, and a bare round.
func TestFormatLine(t *testing.T) {
	round := map[string]float64{ // what the engine records for a classification round (15 metrics)
		"accuracy": 0.9123, "nll": 0.3011, "ece": 0.02134, "brier": 0.13, "spread": 3.46, "loss": 1.2345,
		"lr": 0.01, "var_moved": 0.5, "weighted_accuracy": 0.91, "worst_accuracy": 0.8, "kl": 4, "beta": 0.3,
		"var_ratio": 1.1, "var_shrunk": 0.2, "mean_moved": 0.7,
	}
	tests := []struct {
		name string
		s    Snapshot
		want string
	}{
		{"key metrics of fifteen",
			Snapshot{Label: "fmnist-eaa seed 1", Round: 3, Total: 10, PerRound: 1200 * time.Millisecond, ETA: 8400 * time.Millisecond, Metrics: round},
			"fmnist-eaa seed 1 round 3/10 [======>             ]  30% 1.2s/round ETA 8.4s accuracy 0.9123 nll 0.3011 ece 0.02134 train-loss 1.234"},
		{"run of a planned sweep",
			Snapshot{Label: "digits-bcm seed 2", Round: 5, Total: 10, PerRound: time.Second, ETA: 5 * time.Second,
				Run: 3, Runs: 12, SweepETA: 95 * time.Second, Metrics: map[string]float64{"accuracy": 0.5}},
			"run 3 of 12, digits-bcm seed 2 round 5/10 [==========>         ]  50% 1.0s/round ETA 5.0s (sweep ETA 1m35s) accuracy 0.5"},
		{"finished run of a sweep",
			Snapshot{Label: "a seed 1", Round: 10, Total: 10, Elapsed: 12 * time.Second, Finished: true, Status: "completed",
				Run: 3, Runs: 12, SweepETA: 90 * time.Second, Metrics: map[string]float64{"nll": 0.25, "accuracy": 0.9}},
			"run 3 of 12, a seed 1 completed: 10 rounds in 12.0s (sweep ETA 1m30s) accuracy 0.9 nll 0.25"},
		{"last run of a sweep, finished",
			Snapshot{Round: 2, Total: 2, Elapsed: time.Second, Finished: true, Status: "diverged at round 2: NaN loss", Run: 12, Runs: 12},
			"run 12 of 12 diverged at round 2: NaN loss: 2 rounds in 1.0s"},
		{"finished after one round",
			Snapshot{Label: "x", Round: 1, Total: 1, Elapsed: 54 * time.Millisecond, Finished: true, Status: "completed"},
			"x completed: 1 round in 54ms"},
		{"regression",
			Snapshot{Label: "diabetes", Round: 1, Total: 0, Metrics: map[string]float64{"mse": 0.5, "nll": 1.25, "loss": 2, "spread": 9}},
			"diabetes round 1 mse 0.5 nll 1.25 train-loss 2"},
		{"none of the key metrics",
			Snapshot{Round: 1, Metrics: map[string]float64{"z": 1, "b": 2, "a": 3, "c": 4}},
			"round 1 a 3 b 2 c 4"},
		{"step within a round",
			Snapshot{Label: "r", Round: 0, Total: 2, InRound: 1, Step: 10, Steps: 40, ExamplesPerSec: 64, ETA: 195 * time.Second},
			"r round 0/2 [>                   ]   0% (round 1: step 10/40, 64 examples/s) ETA 3m15s"},
		{"bare round", Snapshot{Round: 3}, "round 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := FormatLine(tc.s); got != tc.want {
				t.Errorf("FormatLine:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestLegendSaysWhatLossHolds checks that the legend the terminal writes names the train-loss label
// the lines use and says what it is computed from.
func TestLegendSaysWhatLossHolds(t *testing.T) {
	for _, want := range []string{metricLabel("loss"), "NLL + KL/n_k", "accuracy", "test set"} {
		if !strings.Contains(Legend, want) {
			t.Errorf("Legend lacks %q: %s", want, Legend)
		}
	}
	if h := FormatHTML(Snapshot{Round: 1, Metrics: map[string]float64{"loss": 1}}); !strings.Contains(h, ">train-loss</span> <b>1</b>") {
		t.Errorf("notebook block does not label loss with the legend: %s", h)
	}
}
