package engine

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"

	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
)

// samplingSpec is digitsSpec with 6 clients, 4 of them sampled per round by power-of-choice among 5
// size-drawn candidates, one of the 4 failing to return (drop rate 0.25), half the clients
// stragglers, 4 rounds, and size weighting.
func samplingSpec() *Spec {
	s := digitsSpec()
	s.Partition.Clients, s.Partition.Participation = 6, 4.0/6
	s.Partition.Sampling = &SamplingSpec{Method: "power-of-choice", Candidates: 5, DropRate: 0.25, StragglerRate: 0.5}
	s.Training.Rounds = 4
	return s
}

func TestSamplingSpecValidate(t *testing.T) {
	checkSpecErrors(t, samplingSpec, []specErrorCase{
		{"unknown method", func(s *Spec) { s.Partition.Sampling.Method = "best" }, "partition.sampling.method"},
		{"too few candidates", func(s *Spec) { s.Partition.Sampling.Candidates = 3 }, "partition.sampling.candidates"},
		{"candidates without power-of-choice", func(s *Spec) { s.Partition.Sampling.Method = "size" }, "partition.sampling.candidates"},
		{"availability length", func(s *Spec) { s.Partition.Sampling.Availability = []float64{1, 1} }, "partition.sampling.availability"},
		{"availability range", func(s *Spec) { s.Partition.Sampling.Availability = []float64{-1} }, "partition.sampling.availability"},
		{"too few available", func(s *Spec) { s.Partition.Sampling.Availability = []float64{1, 1, 1, 0, 0, 0} }, "partition.sampling.availability"},
		{"drop rate", func(s *Spec) { s.Partition.Sampling.DropRate = 1 }, "partition.sampling.drop_rate"},
		{"straggler rate", func(s *Spec) { s.Partition.Sampling.StragglerRate = 2 }, "partition.sampling.straggler_rate"},
		{"power-of-choice of sampling clients", func(s *Spec) {
			s.Partition.Sampling.StragglerRate = 0
			s.Model = ModelSpec{Arch: "mlp", Kind: "deterministic", Hidden: []int{16}}
			s.Aggregation = AggregationSpec{Rule: "FedAvg"}
			s.Training.Optimizer, s.Training.Momentum = "sgd", 0
			s.Training.Sampler = &predictive.SamplerConfig{}
		}, "partition.sampling.method"},
	})
	if err := samplingSpec().Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestSamplingRounds checks the round setup: the sampled clients are power-of-choice's, a straggler's
// job runs between one and half of its steps per epoch, the others all of theirs.
func TestSamplingRounds(t *testing.T) {
	requireDigits(t)
	s := samplingSpec().WithDefaults()
	p, err := newProblem(s, 3, &datasetCache{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := newClientTraining(s, p, 3)
	if err != nil {
		t.Fatal(err)
	}
	slow := 0
	for round := 1; round <= 20; round++ {
		in, ids, _, err := c.round(round, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != 4 || len(c.draw.Returned) != 3 {
			t.Fatalf("round %d: sampled %v, returned %v; want 4 and 3", round, ids, c.draw.Returned)
		}
		for _, job := range in.jobs {
			full := (len(job.indices) + 31) / 32
			got := job.epochSteps(32)
			if c.draws.Straggler(job.id) {
				slow++
				if got < 1 || got > max(1, full/2) {
					t.Errorf("round %d: straggler %d runs %d of %d steps", round, job.id, got, full)
				}
			} else if got != full {
				t.Errorf("round %d: client %d runs %d of %d steps", round, job.id, got, full)
			}
		}
	}
	if slow == 0 {
		t.Errorf("no straggler sampled in 20 rounds")
	}
	// returned keeps the returned clients' losses in the order of ids and records their NLL (not
	// the ELBO loss) for power-of-choice.
	_, ids, sizes, err := c.round(21, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := localOutcome{loss: []float64{10, 11, 12, 13}, nll: []float64{0.5, 0.6, 0.7, 0.8}}
	kept, kids, ksizes, err := c.returned(out, ids, sizes)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(kids, c.draw.Returned) || len(ksizes) != 3 || len(kept.loss) != 3 || len(out.loss) != 4 {
		t.Fatalf("returned %v (sizes %v, losses %v) of %v; want %v", kids, ksizes, kept.loss, ids, c.draw.Returned)
	}
	for i, id := range kids {
		j := slices.Index(ids, id)
		if kept.loss[i] != out.loss[j] || ksizes[i] != sizes[j] || c.losses[id] != out.nll[j] {
			t.Errorf("client %d: loss %v, size %d, recorded %v; want %v, %d, %v", id, kept.loss[i], ksizes[i], c.losses[id], out.loss[j], sizes[j], out.nll[j])
		}
	}
	// One-client training runs the stragglers' fewer steps: the round's step count is the jobs'
	// epochSteps, fewer than their full steps.
	s.Training.Mode = "sequential"
	c, err = newClientTraining(s, p, 3)
	if err != nil {
		t.Fatal(err)
	}
	global, err := NewFederation(samplingSpec(), 3)
	if err != nil {
		t.Fatal(err)
	}
	initial, err := global.Initial()
	if err != nil {
		t.Fatal(err)
	}
	in, _, _, err := c.round(1, initial)
	if err != nil {
		t.Fatal(err)
	}
	want, full := 0, 0
	for _, job := range in.jobs {
		want += job.epochSteps(32)
		full += (len(job.indices) + 31) / 32
	}
	var steps int
	in.onStep = func(_, n, _ int) { steps = n }
	if _, err := c.train(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if steps != want || want >= full {
		t.Errorf("round 1 ran %d steps; the jobs' steps are %d of %d full ones", steps, want, full)
	}
}

// TestSamplingRun runs samplingSpec: every row lists the 3 clients that returned among the 4
// sampled, the strategy's size weights cover only those that returned, the bytes count the model
// sent to 4 and received from 3; it then interrupts a run after round 2 and resumes it: the rows are
// those of the uninterrupted run (power-of-choice's losses come back from the checkpoint).
func TestSamplingRun(t *testing.T) {
	requireDigits(t)
	s := samplingSpec()
	s.Aggregation.Weighting = "size"
	ref := runQuiet(t, s, t.TempDir(), false)
	if ref.Runs[0].State != results.Completed {
		t.Fatalf("%+v", ref.Runs[0])
	}
	want, err := results.ReadRun(ref.Runs[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newProblem(s.WithDefaults(), 3, &datasetCache{})
	if err != nil {
		t.Fatal(err)
	}
	sizes := p.part.Sizes()
	per := bytesPerModel(finalGlobal(t, ref.Runs[0].Dir))
	for _, row := range want.Rows {
		if len(row.Clients) != 3 || len(row.Sampled) != 4 {
			t.Fatalf("round %d: clients %v, sampled %v", row.Round, row.Clients, row.Sampled)
		}
		total := 0
		for _, k := range row.Clients {
			if !slices.Contains(row.Sampled, k) {
				t.Fatalf("round %d: client %d returned without being sampled", row.Round, k)
			}
			total += sizes[k]
		}
		for i, k := range row.Clients {
			if w := float64(sizes[k]) / float64(total); math.Abs(row.ClientWeights[i]-w) > 1e-12 {
				t.Errorf("round %d: client %d weight %v, want its share %v of the returned clients", row.Round, k, row.ClientWeights[i], w)
			}
		}
		if row.BytesSent != 7*per {
			t.Errorf("round %d: %d bytes, want 7 models of %d", row.Round, row.BytesSent, per)
		}
	}

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := func(_ string, _ int64, round int) {
		if round == 2 {
			cancel()
		}
	}
	_, err = Run(ctx, s, Options{Dir: dir, Progress: progress.Discard, NoFigures: true, AfterRound: stop})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the interrupted run: %v", err)
	}
	sum := runQuiet(t, s, dir, true)
	if r := sum.Runs[0]; !r.Resumed || r.State != results.Completed {
		t.Fatalf("resumed run: %+v", r)
	}
	got, err := results.ReadRun(sum.Runs[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != len(want.Rows) {
		t.Fatalf("%d rows resumed, %d uninterrupted", len(got.Rows), len(want.Rows))
	}
	for i := range got.Rows {
		a, b := got.Rows[i], want.Rows[i]
		a.Time, b.Time = results.Timing{}, results.Timing{}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("row %d differs:\nresumed       %+v\nuninterrupted %+v", i, a, b)
		}
	}
}

// TestSamplingSequential: with stragglers and dropouts the vectorised and the one-client paths train
// the same clients alike.
func TestSamplingSequential(t *testing.T) {
	requireDigits(t)
	var rows [][]results.Row
	for _, mode := range []string{"vectorized", "sequential"} {
		s := samplingSpec()
		s.Training.Rounds, s.Training.Mode = 2, mode
		sum := runQuiet(t, s, t.TempDir(), false)
		run, err := results.ReadRun(sum.Runs[0].Dir)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, run.Rows)
	}
	for i := range rows[0] {
		a, b := rows[0][i], rows[1][i]
		if !reflect.DeepEqual(a.Clients, b.Clients) || !reflect.DeepEqual(a.Sampled, b.Sampled) {
			t.Errorf("round %d: clients %v / %v, sampled %v / %v", a.Round, a.Clients, b.Clients, a.Sampled, b.Sampled)
		}
		for _, m := range []string{results.Accuracy, results.NLL, "loss"} {
			if math.Abs(a.Metrics[m]-b.Metrics[m]) > 1e-3*math.Max(1, math.Abs(a.Metrics[m])) {
				t.Errorf("round %d: %s %v (vectorised) vs %v (sequential)", a.Round, m, a.Metrics[m], b.Metrics[m])
			}
		}
	}
}

// TestKeptDivergence: a dropped client's non-finite loss does not end the run; a returned one's does,
// with the training's message when it names that client.
func TestKeptDivergence(t *testing.T) {
	msg := "client 4: training loss NaN at epoch 1, step 2"
	for _, tc := range []struct {
		diverged string
		ids      []int
		loss     []float64
		want     string
	}{
		{"", []int{1, 2}, []float64{0.5, 0.4}, ""},
		{msg, []int{1, 2}, []float64{0.5, 0.4}, ""},
		{msg, []int{1, 4}, []float64{0.5, math.NaN()}, msg},
		{msg, []int{1, 2}, []float64{math.Inf(1), 0.4}, "client 1: mean training loss +Inf over the round"},
	} {
		if got := keptDivergence(tc.diverged, tc.ids, tc.loss); got != tc.want {
			t.Errorf("keptDivergence(%q, %v, %v) = %q, want %q", tc.diverged, tc.ids, tc.loss, got, tc.want)
		}
	}
}
