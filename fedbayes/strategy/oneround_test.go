package strategy

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/predictive"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestOneRoundBaselinesRefuse checks that OneshotFL and FedKT refuse, naming the field, the
// settings they cannot run with.
func TestOneRoundBaselinesRefuse(t *testing.T) {
	ok := Settings{Kind: models.Deterministic, HasServer: true}
	for _, tc := range []struct {
		name, strategy, field string
		edit                  func(*Settings)
	}{
		{"oneshot without a server set", OneshotFLName, "dataset.server_fraction", func(s *Settings) { s.HasServer = false }},
		{"oneshot on regression", OneshotFLName, "aggregation.rule", func(s *Settings) { s.Regression = true }},
		{"oneshot SWA beyond epochs", OneshotFLName, "aggregation.options.distill.swa_cycles", func(s *Settings) {
			s.Options = mustJSON(OneshotFLOptions{Distill: predictive.DistillConfig{Epochs: 2, SWACycles: 3}})
		}},
		{"oneshot SWA of a Bayesian student", OneshotFLName, "aggregation.options.distill.swa_cycles", func(s *Settings) {
			s.Kind, s.Options = models.Bayesian, mustJSON(OneshotFLOptions{Distill: predictive.DistillConfig{Epochs: 4, SWACycles: 2}})
		}},
		{"fedkt without a server set", FedKTName, "dataset.server_fraction", func(s *Settings) { s.HasServer = false }},
		{"fedkt on regression", FedKTName, "aggregation.rule", func(s *Settings) { s.Regression = true }},
		{"fedkt with sampling clients", FedKTName, "training.sampler", func(s *Settings) { s.Sampling = true }},
		{"fedkt with too many teachers", FedKTName, "aggregation.options", func(s *Settings) { s.Options = mustJSON(FedKTOptions{Teachers: 2_000_000}) }},
		{"fedkt beyond the engine's networks", FedKTName, "aggregation.options", func(s *Settings) {
			s.Clients, s.MaxNetworks, s.Options = 10, 100, mustJSON(FedKTOptions{Students: 2, Teachers: 6})
		}},
		{"fedkt unknown option", FedKTName, "aggregation.options.local.epoch", func(s *Settings) { s.Options = []byte(`{"local": {"epoch": 3}}`) }},
		{"fedkt SWA beyond epochs", FedKTName, "aggregation.options.distill.swa_cycles", func(s *Settings) {
			s.Options = mustJSON(FedKTOptions{Distill: predictive.DistillConfig{Epochs: 1, SWACycles: 2}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.strategy, ok); err != nil {
				t.Fatalf("the base settings were refused: %v", err)
			}
			s := ok
			tc.edit(&s)
			_, err := New(tc.strategy, s)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("got %v, want a refusal of %s", err, tc.field)
			}
		})
	}
}

// flat returns a posterior's means, parameter after parameter.
func flat(t *testing.T, p *posterior.Posterior) []float32 {
	t.Helper()
	var out []float32
	for _, q := range p.Params {
		v, err := tensors.CopyFlatData[float32](q.Mean)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v...)
	}
	return out
}

// TestOneshotFLApproachesLogitAverage checks OneshotFL (Guha et al. 2019; Hasan (2023), App. B.2):
// the student starts from the round's starting model and ends closer (cross-entropy on the server
// inputs) to the softmax of the clients' averaged log-probabilities, computed here in float64 from
// the clients' own predictions; the weights are equal; the same round gives the same model.
func TestOneshotFLApproachesLogitAverage(t *testing.T) {
	cfg, stacked := twoClients(t, models.Deterministic, 3)
	_, start := clientsWithSeed(t, models.Deterministic, 1, 9)
	prev, err := posterior.Unstack(start)
	if err != nil {
		t.Fatal(err)
	}
	server := &data.Dataset{Name: "server", X: inputs(40), Shape: []int{4}, NumClasses: 3, Labels: make([]int32, 40)}
	p := clientProbs(t, cfg, stacked, server.X)
	teacher := make([]float64, len(p[0]))
	for n := 0; n < 40; n++ {
		row, sum := make([]float64, 3), 0.0
		for c := range row {
			for k := range p {
				row[c] += math.Log(p[k][n*3+c]) / 3
			}
			row[c] = math.Exp(row[c])
			sum += row[c]
		}
		for c := range row {
			teacher[n*3+c] = row[c] / sum
		}
	}
	s := Settings{Kind: models.Deterministic, HasServer: true, Options: mustJSON(OneshotFLOptions{Distill: predictive.DistillConfig{Epochs: 30, BatchSize: 8, LearningRate: 0.01}})}
	aggregateOnce := func() *Global {
		st, err := New(OneshotFLName, s)
		if err != nil {
			t.Fatal(err)
		}
		g, err := st.Aggregate(&Round{Number: 1, IDs: []int{0, 1, 2}, Sizes: []int{10, 20, 30}, Stacked: stacked, Previous: prev[0], Model: cfg, Server: server, Samples: 1, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	g := aggregateOnce()
	if g.Predictor != nil {
		t.Fatal("OneshotFL's global model is not one network")
	}
	if !slices.Equal(g.Weights, []float64{1. / 3, 1. / 3, 1. / 3}) {
		t.Errorf("weights %v, want equal", g.Weights)
	}
	before, after := crossEntropy(t, cfg, prev[0], server.X, teacher), crossEntropy(t, cfg, g.Posterior, server.X, teacher)
	if !(after < before-1e-3) {
		t.Errorf("cross-entropy to the logit average: %v at the start, %v distilled", before, after)
	}
	t.Logf("cross-entropy to the logit average on the server set: %.4f at the start, %.4f distilled", before, after)
	if !slices.Equal(flat(t, g.Posterior), flat(t, aggregateOnce().Posterior)) {
		t.Error("the same round gave two different students")
	}
}

// TestFedKTIsPredictiveFedKT checks that the FedKT strategy runs predictive.FedKT on the round's
// client data and server inputs with the round's seeds (the same model bit for bit), and that it
// refuses a round without client data.
func TestFedKTIsPredictiveFedKT(t *testing.T) {
	cfg, stacked := twoClients(t, models.Deterministic, 2)
	client := func(n int, shift float32) *data.Dataset {
		d := &data.Dataset{Name: "client", X: inputs(n), Shape: []int{4}, NumClasses: 3, Labels: make([]int32, n)}
		for i := range d.Labels {
			d.X[i*4] += shift
			d.Labels[i] = int32((i + int(shift)) % 3)
		}
		return d
	}
	sets := []*data.Dataset{client(24, 0), client(18, 1)}
	server := &data.Dataset{Name: "server", X: inputs(30), Shape: []int{4}, NumClasses: 3, Labels: make([]int32, 30)}
	kc := predictive.FedKTConfig{Students: 2, Teachers: 3, Local: predictive.LocalConfig{Epochs: 2, BatchSize: 4}, Distill: predictive.DistillConfig{Epochs: 2, BatchSize: 8}}
	st, err := New(FedKTName, Settings{Kind: models.Deterministic, HasServer: true, Options: mustJSON(kc)})
	if err != nil {
		t.Fatal(err)
	}
	r := &Round{Number: 1, IDs: []int{0, 1}, Sizes: []int{24, 18}, Stacked: stacked, Model: cfg, Server: server, Samples: 1, Seed: 13}
	if _, err := st.Aggregate(r); err == nil || !strings.Contains(err.Error(), "no client data") {
		t.Fatalf("a round without client data: got %v", err)
	}
	r.Data = func() ([]*data.Dataset, error) { return sets, nil }
	g, err := st.Aggregate(r)
	if err != nil {
		t.Fatal(err)
	}
	want := kc.WithDefaults()
	want.Seed = 13
	wcfg := cfg
	wcfg.Seed = 13*3 + 1
	direct, err := predictive.FedKT(wcfg, sets, server.X, want)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(flat(t, g.Posterior), flat(t, direct)) {
		t.Error("the FedKT strategy and predictive.FedKT with the round's seeds differ")
	}
	if !slices.Equal(g.Weights, []float64{0.5, 0.5}) {
		t.Errorf("weights %v, want equal", g.Weights)
	}
}

// TestDistilledStudentStart checks StudentStart of D-BCM: "previous" distils from the round's
// starting model, the default from the clients' average (each equals distil from that start, bit
// for bit), and "previous" without a starting model is an error.
func TestDistilledStudentStart(t *testing.T) {
	cfg, stacked := twoClients(t, models.Deterministic, 2)
	_, start := clientsWithSeed(t, models.Deterministic, 1, 9)
	prev, err := posterior.Unstack(start)
	if err != nil {
		t.Fatal(err)
	}
	server := &data.Dataset{Name: "server", X: inputs(24), Shape: []int{4}, NumClasses: 3, Labels: make([]int32, 24)}
	dc := predictive.DistillConfig{Epochs: 3, BatchSize: 8}
	round := func() *Round {
		return &Round{Number: 1, IDs: []int{0, 1}, Sizes: []int{10, 30}, Stacked: stacked, Previous: prev[0], Model: cfg, Server: server, Samples: 1, Seed: 4}
	}
	bcm, err := New(BCM, Settings{Kind: models.Deterministic})
	if err != nil {
		t.Fatal(err)
	}
	gb, err := bcm.Aggregate(round())
	if err != nil {
		t.Fatal(err)
	}
	teacher, err := gb.Predictor.Predict(server.X, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		start string
		from  *posterior.Posterior
	}{{"", gb.Posterior}, {StudentFromAverage, gb.Posterior}, {StudentFromPrevious, prev[0]}} {
		st, err := New(DBCM, Settings{Kind: models.Deterministic, HasServer: true, Options: mustJSON(DistilledOptions{StudentStart: tc.start, Distill: dc})})
		if err != nil {
			t.Fatal(err)
		}
		g, err := st.Aggregate(round())
		if err != nil {
			t.Fatal(err)
		}
		want, err := distil(round(), tc.from, teacher, dc.WithDefaults())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(flat(t, g.Posterior), flat(t, want)) {
			t.Errorf("student_start %q: the student is not the one distilled from its start", tc.start)
		}
	}
	fromAvg, err := distil(round(), gb.Posterior, teacher, dc.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	fromPrev, err := distil(round(), prev[0], teacher, dc.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(flat(t, fromAvg), flat(t, fromPrev)) {
		t.Fatal("the two starts give the same student; the check above cannot tell them apart")
	}
	st, err := New(DBCM, Settings{Kind: models.Deterministic, HasServer: true, Options: mustJSON(DistilledOptions{StudentStart: StudentFromPrevious, Distill: dc})})
	if err != nil {
		t.Fatal(err)
	}
	r := round()
	r.Previous = nil
	if _, err := st.Aggregate(r); err == nil {
		t.Error("student_start previous without a starting model was accepted")
	}
}
