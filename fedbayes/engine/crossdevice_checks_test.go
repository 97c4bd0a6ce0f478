package engine

import (
	"testing"
	"time"

	"fedbayes.dev/fedbayes/progress"
)

// TestMemoryEstimateCountsTrainedClients: the memory estimate's networks and activations are those
// of the clients a round trains together (the client axis K = max(1, round(gamma C)), one in
// sequential training), not of every client, so that a cross-device federation of 10,000 clients
// with 100 per round is estimated as 100 clients and not refused for the 9,900 idle ones. The
// estimate counts the LeNet's dense layers from the input (convolutions are left out): 784 x 120 +
// 120 + 120 x 84 + 84 + 84 x 10 + 10 = 105,214 parameters, 2 values each (mean and log-variance),
// 4 bytes, 841,712 bytes a copy: K clients with 4 copies each (parameters, gradient, two optimizer
// slots) and 2 more (global, previous). The activations are 4 x 10 x 784 values of 4 bytes per
// client (125,440 bytes) and the predictive's M = 10 samples on one batch of 10 at the widest
// layer (784), 313,600 bytes.
func TestMemoryEstimateCountsTrainedClients(t *testing.T) {
	spec := func(clients int, gamma float64, mode string) *Spec {
		return (&Spec{
			Dataset:     DatasetSpec{Name: "fashion-mnist"},
			Partition:   PartitionSpec{Clients: clients, Participation: gamma},
			Model:       ModelSpec{Arch: "lenet", Kind: "bayesian"},
			Aggregation: AggregationSpec{Rule: "GAA"},
			Training:    TrainingSpec{BatchSize: 10, Mode: mode},
			Evaluation:  EvaluationSpec{Samples: 10},
		}).WithDefaults()
	}
	const perClientModel, fixedModel = 841_712 * 4, 841_712 * 2
	const perClientAct, fixedAct = 125_440, 313_600
	for _, c := range []struct {
		name string
		spec *Spec
		k    float64 // the clients trained together
	}{
		{"10000 clients, 100 per round", spec(10_000, 0.01, ""), 100},
		{"1000 clients, 50 per round", spec(1000, 0.05, ""), 50},
		{"100 clients, all per round", spec(100, 1, ""), 100},
		{"10 clients, participation left out", spec(10, 0, ""), 10},
		{"tiny share rounds up to one client", spec(1000, 0.0001, ""), 1},
		{"10000 clients, sequential", spec(10_000, 0.01, "sequential"), 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := memoryParts(c.spec)
			if want := perClientModel*c.k + fixedModel; m.Model != want {
				t.Errorf("model part %.0f bytes, want %.0f (K = %v)", m.Model, want, c.k)
			}
			if want := perClientAct*c.k + fixedAct; m.Act != want {
				t.Errorf("activations %.0f bytes, want %.0f (K = %v)", m.Act, want, c.k)
			}
		})
	}
	// The benchmark's largest federation fits where its 100 trained clients do.
	if err := checkMemory(spec(10_000, 0.01, "")); err != nil {
		t.Errorf("10,000 clients with 100 per round: %v", err)
	}
}

// TestRoundClockFigures checks BenchmarkCrossDevice's arithmetic on three rounds ending 1, 3 and 6
// s after the start, the third evaluated: rounds 2 and 3 take 2 s and 3 s of wall time, of which
// local training 1 s each, the server step 0.25 s and 0.5 s, evaluation 0 s and 1 s; overhead (wall
// minus local and evaluation) 1 s and 1 s, other (minus the server step too) 0.75 s and 0.5 s; 200
// examples in 2 s of local training.
func TestRoundClockFigures(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := &roundClock{start: t0, examples: map[int]int{1: 50, 2: 100, 3: 100}}
	for i, t := range []progress.Timings{
		{Local: 900 * time.Millisecond},
		{Local: time.Second, Aggregate: 250 * time.Millisecond},
		{Local: time.Second, Aggregate: 500 * time.Millisecond, Eval: time.Second},
	} {
		c.ends = append(c.ends, t0.Add(time.Duration([]int{1, 3, 6}[i])*time.Second))
		c.timings = append(c.timings, t)
	}
	got := c.figures(10, 3)
	want := crossDeviceFigures{roundS: 2, evalRoundS: 3, evalS: 1, localS: 1, aggS: 0.375, overheadS: 1, otherS: 0.625,
		samplesPerS: 100, rounds: 1, evalRounds: 1}
	if got != want {
		t.Errorf("figures %+v, want %+v", got, want)
	}
}
