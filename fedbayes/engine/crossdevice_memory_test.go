package engine

import "testing"

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
