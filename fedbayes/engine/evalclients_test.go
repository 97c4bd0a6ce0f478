package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/internal/pinned"
	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
)

// heldOutSpec is digitsSpec with a fifth of each client's examples held out and scored.
func heldOutSpec() *Spec {
	s := digitsSpec()
	s.Partition.HeldOut = 0.2
	s.Training.Rounds = 3
	return s
}

// TestEvaluationSpecValidate: the held-out split, the scored clients and the availability trace
// are refused with the field's path.
func TestEvaluationSpecValidate(t *testing.T) {
	checkSpecErrors(t, heldOutSpec, []specErrorCase{
		{"held-out share 1", func(s *Spec) { s.Partition.HeldOut = 1 }, "partition.held_out"},
		{"held-out share negative", func(s *Spec) { s.Partition.HeldOut = -0.1 }, "partition.held_out"},
		{"held-out unused", func(s *Spec) { s.Evaluation.Fairness = "local" }, "partition.held_out"},
		{"held-out fairness without a split", func(s *Spec) { s.Partition.HeldOut, s.Evaluation.Fairness = 0, "held-out" }, "evaluation.fairness"},
		{"held-out on regression", func(s *Spec) {
			s.Dataset = DatasetSpec{Name: "diabetes"}
			s.Partition.Method, s.Partition.Alpha, s.Partition.MinSize = "iid", 0, 0
			s.Model = ModelSpec{Arch: "mlp", Kind: "bayesian", Hidden: []int{8}}
		}, "partition.held_out"},
		{"fairness clients", func(s *Spec) { s.Evaluation.FairnessClients = -1 }, "evaluation.fairness_clients"},
		{"fairness clients bound", func(s *Spec) { s.Evaluation.FairnessClients = maxClients + 1 }, "evaluation.fairness_clients"},
		{"unknown fairness", func(s *Spec) { s.Evaluation.Fairness = "heldout" }, "evaluation.fairness"},
	})
	trace := func(rounds ...[]int) func(s *Spec) {
		return func(s *Spec) { s.Partition.Sampling = &SamplingSpec{Trace: rounds} }
	}
	checkSpecErrors(t, traceSpec, []specErrorCase{
		{"trace shorter than the run", trace([]int{0, 1}, []int{2, 3}), "partition.sampling.trace"},
		{"trace empty round", trace([]int{0, 1}, []int{}, []int{2, 3}, []int{4, 5}), "partition.sampling.trace"},
		{"trace unknown client", trace([]int{0, 1}, []int{2, 6}, []int{2, 3}, []int{4, 5}), "partition.sampling.trace"},
		{"trace negative client", trace([]int{0, -1}, []int{2, 3}, []int{2, 3}, []int{4, 5}), "partition.sampling.trace"},
		{"trace client twice", trace([]int{0, 1}, []int{3, 3}, []int{2, 3}, []int{4, 5}), "partition.sampling.trace"},
		{"trace too few", trace([]int{0, 1}, []int{3}, []int{2, 3}, []int{4, 5}), "partition.sampling.trace"},
		{"trace and availability", func(s *Spec) { s.Partition.Sampling.Availability = []float64{1} }, "partition.sampling.trace"},
	})
	for _, s := range []*Spec{heldOutSpec(), traceSpec()} {
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	if d := heldOutSpec().WithDefaults(); d.Evaluation.Fairness != "held-out" || d.Evaluation.scoredClients() != 100 {
		t.Errorf("defaults: fairness %q, fairness_clients %d; want held-out and 100", d.Evaluation.Fairness, d.Evaluation.scoredClients())
	}
	// A spec that leaves the new fields out records the spec it recorded before they existed.
	if raw, err := json.Marshal(digitsSpec().WithDefaults()); err != nil || strings.Contains(string(raw), "fairness_clients") ||
		strings.Contains(string(raw), "held_out") || strings.Contains(string(raw), "trace") {
		t.Errorf("the defaulted spec names a new field: %s (%v)", raw, err)
	}
	for _, c := range []struct{ json, want string }{
		{`{"dataset": {"name": "digits"}, "evaluation": {"fairness_clients": 0}}`, "evaluation.fairness_clients: 0 is not allowed here"},
		{`{"dataset": {"name": "digits"}, "partition": {"clients": 3, "participation": 0.34, "sampling": {"trace": [[0], [1], [2], [5]]}}, "training": {"rounds": 4}}`,
			"partition.sampling.trace: round 4 lists client 5, but the clients are 0 to 2"},
		{`{"dataset": {"name": "digits"}, "partition": {"clients": 3, "participation": 0.34, "sampling": {"trace": [[0], [1]]}}, "training": {"rounds": 4}}`,
			"partition.sampling.trace: lists 2 rounds, but training.rounds is 4"},
	} {
		if _, err := ParseSpec([]byte(c.json)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.json, err, c.want)
		}
	}
}

// TestHeldOutProblem: each client trains on n_k - ceil(0.2 n_k) of the examples the partition gave
// it and holds out the rest; a share that leaves a client nothing is refused at partition.held_out.
func TestHeldOutProblem(t *testing.T) {
	requireDigits(t)
	s := heldOutSpec().WithDefaults()
	p, err := newProblem(s, 3, &datasetCache{})
	if err != nil {
		t.Fatal(err)
	}
	base := digitsSpec().WithDefaults()
	q, err := newProblem(base, 3, &datasetCache{})
	if err != nil {
		t.Fatal(err)
	}
	for k, all := range q.part.Clients {
		n := len(all)
		train, held := p.part.Clients[k], p.heldOut[k]
		if h := int(math.Ceil(0.2*float64(n) - 1e-9)); len(held) != h || len(train) != n-h {
			t.Errorf("client %d of %d examples: %d train, %d held out; want %d and %d", k, n, len(train), len(held), n-h, h)
		}
		union := append(slices.Clone(train), held...)
		slices.Sort(union)
		if !reflect.DeepEqual(union, all) {
			t.Errorf("client %d: training and held-out examples are not its examples", k)
		}
		for _, i := range held {
			if slices.Contains(train, i) {
				t.Errorf("client %d trains on its held-out example %d", k, i)
			}
		}
	}
	ids := p.fairnessClients(s.Evaluation.scoredClients(), 3)
	_, ys := p.fairnessSets("held-out", s.Evaluation.FairnessExamples, ids, 3)
	for k, y := range ys {
		if want := min(len(p.heldOut[k]), s.Evaluation.FairnessExamples); len(y) != want {
			t.Errorf("client %d: %d held-out fairness examples, want %d", k, len(y), want)
		}
	}
	tiny := heldOutSpec()
	tiny.Partition = PartitionSpec{Method: "iid", Clients: 300, HeldOut: 0.6} // 2 examples each: ceil(1.2) = 2
	if _, err := newProblem(tiny.WithDefaults(), 3, &datasetCache{}); err == nil || !strings.Contains(err.Error(), "partition.held_out") ||
		!strings.Contains(err.Error(), "leaves none to train on") {
		t.Errorf("a share that leaves a client nothing: %v", err)
	}
}

// TestFairnessClients: up to evaluation.fairness_clients every client is scored; past it a seeded
// sample of that many, the same for the same seed; a client's fairness examples do not depend on
// which other clients are scored (so all clients scored give today's sets).
func TestFairnessClients(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Partition = PartitionSpec{Method: "dirichlet", Clients: 40, Alpha: 1, MinSize: 5}
	s.Dataset.Subsample = 1200
	p, err := newProblem(s.WithDefaults(), 3, &datasetCache{})
	if err != nil {
		t.Fatal(err)
	}
	if ids := p.fairnessClients(40, 3); len(ids) != 40 || ids[39] != 39 {
		t.Errorf("40 of 40 clients: %v", ids)
	}
	ids := p.fairnessClients(10, 3)
	if len(ids) != 10 || !slices.IsSorted(ids) || slices.Compact(slices.Clone(ids))[9] != ids[9] || ids[9] >= 40 {
		t.Fatalf("10 of 40 clients: %v", ids)
	}
	if again := p.fairnessClients(10, 3); !reflect.DeepEqual(again, ids) {
		t.Errorf("the same seed scores %v, then %v", ids, again)
	}
	if other := p.fairnessClients(10, 4); reflect.DeepEqual(other, ids) {
		t.Errorf("seeds 3 and 4 score the same clients %v", ids)
	}
	all := p.fairnessClients(40, 3)
	for _, mode := range []string{"local", "test-share"} {
		ax, ay := p.fairnessSets(mode, 7, all, 3)
		sx, sy := p.fairnessSets(mode, 7, ids, 3)
		for j, k := range ids {
			if !reflect.DeepEqual(sx[j], ax[k]) || !reflect.DeepEqual(sy[j], ay[k]) {
				t.Errorf("%s: client %d's examples depend on the other clients scored", mode, k)
			}
		}
	}
}

// TestHeldOutRunRecordsDistribution runs heldOutSpec: each row holds the five order statistics of
// the clients' accuracy, NLL and ECE, which are those of the row's own per-client accuracies
// (recomputed here) and of the clients' held-out sets; the weighted accuracy weighs by the training
// sizes. The same spec scoring 3 of its 4 clients records the distribution over 3 and no
// per-client list.
func TestHeldOutRunRecordsDistribution(t *testing.T) {
	requireDigits(t)
	s := heldOutSpec()
	sum := runQuiet(t, s, t.TempDir(), false)
	run, err := results.ReadRun(sum.Runs[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newProblem(s.WithDefaults(), 3, &datasetCache{})
	if err != nil {
		t.Fatal(err)
	}
	sizes := p.part.Sizes()
	for _, row := range run.Rows {
		acc := row.ClientAccuracy
		if len(acc) != 4 {
			t.Fatalf("round %d: %d client accuracies, want 4", row.Round, len(acc))
		}
		d, err := metrics.DistributionOf(acc)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]float64{"client_accuracy_min": d.Min, "client_accuracy_p10": d.P10,
			"client_accuracy_median": d.Median, "client_accuracy_p90": d.P90, "client_accuracy_max": d.Max} {
			if got, ok := row.Metrics[name]; !ok || got != want {
				t.Errorf("round %d: %s %v (recorded: %v), want %v", row.Round, name, got, ok, want)
			}
		}
		var wsum, total float64
		for k, a := range acc {
			wsum += float64(sizes[k]) * a
			total += float64(sizes[k])
		}
		if got := row.Metrics[results.WeightedAccuracy]; math.Abs(got-wsum/total) > 1e-12 {
			t.Errorf("round %d: weighted accuracy %v, want %v", row.Round, got, wsum/total)
		}
		for _, m := range clientMetrics {
			v := make([]float64, len(clientStatistics))
			for i, q := range clientStatistics {
				v[i] = row.Metrics[m+"_"+q]
			}
			if !slices.IsSorted(v) || math.IsNaN(v[0]) {
				t.Errorf("round %d: %s's order statistics %v are not increasing", row.Round, m, v)
			}
		}
	}
	// Accuracy of the held-out examples is not the accuracy on the training data.
	local := heldOutSpec()
	local.Partition.HeldOut = 0
	lrun, err := results.ReadRun(runQuiet(t, local, t.TempDir(), false).Runs[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := run.Rows[2].Metrics["client_nll_median"], lrun.Rows[2].Metrics["client_nll_median"]; a == b {
		t.Errorf("held-out and local scoring give the same median client NLL %v", a)
	}

	sampled := heldOutSpec()
	sampled.Evaluation.FairnessClients = 3
	srun, err := results.ReadRun(runQuiet(t, sampled, t.TempDir(), false).Runs[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range srun.Rows {
		if row.ClientAccuracy != nil {
			t.Errorf("round %d: a sample of the clients records a per-client list %v", row.Round, row.ClientAccuracy)
		}
		for _, m := range clientMetrics {
			v := make([]float64, len(clientStatistics))
			for i, q := range clientStatistics {
				v[i] = row.Metrics[m+"_"+q]
			}
			if !slices.IsSorted(v) || math.IsNaN(v[0]) {
				t.Errorf("round %d: %s's order statistics %v are not increasing", row.Round, m, v)
			}
		}
		if row.Metrics[results.Accuracy] != run.Rows[i].Metrics[results.Accuracy] {
			t.Errorf("round %d: scoring fewer clients changed the test accuracy", row.Round)
		}
	}
}

// traceSpec is digitsSpec with 6 clients, 2 a round, available by a trace of 4 rounds that lists
// exactly 2 clients in rounds 1, 2 and 4 and 3 in round 3.
func traceSpec() *Spec {
	s := digitsSpec()
	s.Partition.Clients, s.Partition.Participation = 6, 1.0/3
	s.Partition.Method, s.Partition.Alpha, s.Partition.MinSize = "iid", 0, 0
	s.Partition.Sampling = &SamplingSpec{Trace: [][]int{{5, 0}, {1, 2}, {3, 4, 1}, {0, 5}}}
	s.Training.Rounds = 4
	return s
}

// TestTraceRun, by hand: the rows list the trace's clients in the rounds that list two, two of the
// three in round 3; an interrupted run resumes to the rows of the uninterrupted one.
func TestTraceRun(t *testing.T) {
	requireDigits(t)
	s := traceSpec()
	ref := runQuiet(t, s, t.TempDir(), false)
	want, err := results.ReadRun(ref.Runs[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Rows) != 4 {
		t.Fatalf("%d rows, want 4", len(want.Rows))
	}
	for r, clients := range [][]int{{0, 5}, {1, 2}, nil, {0, 5}} {
		got := want.Rows[r].Clients
		if clients == nil {
			if len(got) != 2 || !slices.Contains([]int{1, 3, 4}, got[0]) || !slices.Contains([]int{1, 3, 4}, got[1]) {
				t.Errorf("round 3: clients %v, want two of 1, 3, 4", got)
			}
			continue
		}
		if !reflect.DeepEqual(got, clients) || want.Rows[r].Sampled != nil {
			t.Errorf("round %d: clients %v (sampled %v), want %v", r+1, got, want.Rows[r].Sampled, clients)
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
	if _, err := Run(ctx, s, Options{Dir: dir, Progress: progress.Discard, NoFigures: true, AfterRound: stop}); !errors.Is(err, context.Canceled) {
		t.Fatalf("the interrupted run: %v", err)
	}
	sum := runQuiet(t, s, dir, true)
	if r := sum.Runs[0]; !r.Resumed || r.State != results.Completed {
		t.Fatalf("resumed run: %+v", r)
	}
	compareRows(t, sum.Runs[0].Dir, want.Rows)
	// Another trace is another experiment: its resume is refused, naming the field.
	other := traceSpec()
	other.Partition.Sampling.Trace[3] = []int{1, 5}
	if _, err := Run(context.Background(), other, Options{Dir: dir, Resume: true, Progress: progress.Discard}); err == nil ||
		!strings.Contains(err.Error(), "partition.sampling.trace") {
		t.Errorf("resume with another trace: %v", err)
	}
}

// TestHeldOutResume: a held-out run that scores a sample of its clients, interrupted after round 2,
// resumes to the rows of the uninterrupted run, bit for bit.
func TestHeldOutResume(t *testing.T) {
	requireDigits(t)
	s := heldOutSpec()
	s.Training.Rounds, s.Evaluation.FairnessClients = 4, 3
	ref := runQuiet(t, s, t.TempDir(), false)
	want, err := results.ReadRun(ref.Runs[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := func(_ string, _ int64, round int) {
		if round == 2 {
			cancel()
		}
	}
	if _, err := Run(ctx, s, Options{Dir: dir, Progress: progress.Discard, NoFigures: true, AfterRound: stop}); !errors.Is(err, context.Canceled) {
		t.Fatalf("the interrupted run: %v", err)
	}
	sum := runQuiet(t, s, dir, true)
	if r := sum.Runs[0]; !r.Resumed || r.State != results.Completed {
		t.Fatalf("resumed run: %+v", r)
	}
	compareRows(t, sum.Runs[0].Dir, want.Rows)
}

// compareRows fails unless the run in dir has the rows want, timings aside.
func compareRows(t *testing.T, dir string, want []results.Row) {
	t.Helper()
	got, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != len(want) {
		t.Fatalf("%d rows resumed, %d uninterrupted", len(got.Rows), len(want))
	}
	for i := range got.Rows {
		a, b := got.Rows[i], want[i]
		a.Time, b.Time = results.Timing{}, results.Timing{}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("row %d differs:\nresumed       %+v\nuninterrupted %+v", i, a, b)
		}
	}
}

// TestMemoryEstimateCountsScoredClients: the predictive's rows are the scored clients' fairness
// examples when they outnumber the test set.
func TestMemoryEstimateCountsScoredClients(t *testing.T) {
	s := digitsSpec()
	s.Partition = PartitionSpec{Method: "iid", Clients: 1000}
	s.Evaluation.FairnessExamples = 200
	pred := func(n int) float64 {
		c := s.Clone()
		c.Evaluation.FairnessClients = n
		return memoryParts(c.WithDefaults()).Pred
	}
	if got, want := pred(0), 4*2*100*200*10.0; got != want { // float32, M = 2, 100 x 200 rows, 10 classes
		t.Errorf("default: %v bytes, want %v", got, want)
	}
	if got, want := pred(1000), 4*2*1000*200*10.0; got != want {
		t.Errorf("all 1,000 clients: %v bytes, want %v", got, want)
	}
}

// TestFairnessPinned: up to DefaultFairnessClients clients every client is scored on the fairness
// sets it had before evaluation.fairness_clients existed, with the same numbers: the last row's
// weighted and worst accuracy, the lowest and highest client accuracy and every client's accuracy
// (for 100 clients their count and sum), pinned at commit d875591, equal on the three kernel paths.
func TestFairnessPinned(t *testing.T) {
	requireDigits(t)
	for _, c := range []struct{ name, pin string }{
		{"local", "0.55855555555555547 0.16666666666666666 0.16666666666666666 0.69999999999999996 0.56666666666666665 0.16666666666666666 0.69999999999999996 0.66666666666666663"},
		{"test-share", "0.50905555555555559 0.23333333333333334 0.23333333333333334 0.66666666666666663 0.53333333333333333 0.23333333333333334 0.66666666666666663 0.5"},
		{"local100", "0.16481223922114033 0.013333333333333332 0 0.46666666666666667 100 16.476190476190471"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := digitsSpec()
			s.Evaluation.Fairness = c.name
			if c.name == "local100" {
				s.Evaluation.Fairness = "local"
				s.Dataset.Subsample = 1500
				s.Partition = PartitionSpec{Method: "iid", Clients: 100, Participation: 0.1}
			}
			run, err := results.ReadRun(runQuiet(t, s, t.TempDir(), false).Runs[0].Dir)
			if err != nil {
				t.Fatal(err)
			}
			row := run.Rows[len(run.Rows)-1]
			var f []string
			for _, m := range []string{results.WeightedAccuracy, results.WorstAccuracy, MetricClientAccuracyMin, MetricClientAccuracyMax} {
				f = append(f, fmt.Sprintf("%.17g", row.Metrics[m]))
			}
			if c.name == "local100" {
				sum := 0.0
				for _, a := range row.ClientAccuracy {
					sum += a
				}
				f = append(f, fmt.Sprint(len(row.ClientAccuracy)), fmt.Sprintf("%.17g", sum))
			} else {
				for _, a := range row.ClientAccuracy {
					f = append(f, fmt.Sprintf("%.17g", a))
				}
			}
			got := strings.Join(f, " ")
			pinned.Check(t, c.name, got, pinned.Pins{AVX512: c.pin, Haswell: c.pin, Plain: c.pin})
		})
	}
}
