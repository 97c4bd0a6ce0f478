package engine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/partition"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
)

// crossDeviceShape is one federation of the cross-device benchmark: clients of equal size (an IID
// split of subsample examples; 0 keeps all of Fashion-MNIST's 60,000), sampled of them per round.
type crossDeviceShape struct {
	name                        string
	clients, sampled, subsample int
}

// crossDeviceShapes are the federations of BenchmarkCrossDevice. C1000-m50 is the shape of
// pfl-research's CIFAR-10 benchmark as issue 52 gives it (Granqvist et al. (2024), "pfl-research:
// simulation framework for accelerating research in private federated learning", arXiv:2404.06430:
// 1,000 clients of 50 examples, 50 per round, 1,500 rounds);
// C10000-m100 is issue 52's larger federation, 10,000 clients of the 6 examples each that
// Fashion-MNIST's 60,000 allow, 100 per round; C1000-m100 is C10000-m100 with 9,000 fewer idle
// clients (1,000 clients of 6 examples, 100 per round): the same local work, so that the two
// rounds' overheads compare the number of idle clients alone.
var crossDeviceShapes = []crossDeviceShape{
	{"C1000-m50", 1000, 50, 50_000},
	{"C1000-m100", 1000, 100, 6_000},
	{"C10000-m100", 10_000, 100, 0},
}

// crossDeviceModels are the benchmark's networks: LeNet-5 with FedAvg, and the Bayesian LeNet (every
// weight layer variational, the default) with GAA (Ozer et al. (2022)).
var crossDeviceModels = []struct {
	name  string
	model ModelSpec
	rule  string
}{
	{"lenet-fedavg", ModelSpec{Arch: "lenet", Kind: "deterministic"}, "FedAvg"},
	{"bayes-lenet-gaa", ModelSpec{Arch: "lenet", Kind: "bayesian"}, "GAA"},
}

// crossDeviceRounds is the number of rounds each run measures: $FEDBAYES_XDEV_ROUNDS (make
// bench-crossdevice ROUNDS=), default 30.
func crossDeviceRounds(b *testing.B) int {
	v := os.Getenv("FEDBAYES_XDEV_ROUNDS")
	if v == "" {
		return 30
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 2 {
		b.Fatalf("FEDBAYES_XDEV_ROUNDS=%q: want an integer of at least 2", v)
	}
	return n
}

// crossDeviceSpec is the spec of one shape and model: one local epoch at batch 10 (SGD, the
// engine's default rate 0.01), evaluation every 10 rounds and after the last on 2,000 test images
// with the defaults (M = 10 for the Bayesian LeNet; fairness local on at most
// DefaultFairnessClients clients drawn from the seed).
func crossDeviceSpec(sh crossDeviceShape, model ModelSpec, rule string, rounds int) *Spec {
	return &Spec{
		Name:        "xdev",
		Dataset:     DatasetSpec{Name: "fashion-mnist", Subsample: sh.subsample, TestSubsample: 2_000},
		Partition:   PartitionSpec{Method: "iid", Clients: sh.clients, Participation: float64(sh.sampled) / float64(sh.clients)},
		Model:       model,
		Aggregation: AggregationSpec{Rule: rule},
		Training:    TrainingSpec{Rounds: rounds, LocalEpochs: 1, BatchSize: 10},
		Evaluation:  EvaluationSpec{Every: 10},
	}
}

// roundClock is a progress.Reporter that records when each round ended, its timings (local,
// aggregate, eval) and its local training examples.
type roundClock struct {
	start    time.Time
	ends     []time.Time
	timings  []progress.Timings
	examples map[int]int // round -> training examples of its clients, from the last Step
}

func (c *roundClock) Start(int, string) { c.start = time.Now() }
func (c *roundClock) Update(_ int, _ map[string]float64, t progress.Timings) {
	c.ends, c.timings = append(c.ends, time.Now()), append(c.timings, t)
}
func (c *roundClock) Done(string) {}
func (c *roundClock) Step(round, _, _, examples int) {
	if c.examples == nil {
		c.examples = map[int]int{}
	}
	c.examples[round] = examples
}

// crossDeviceFigures are the steady-state figures of one run: rounds 2 to T (round 1 compiles
// the training step), those without evaluation apart from those with it.
type crossDeviceFigures struct {
	roundS, evalRoundS, evalS, localS, aggS, overheadS, otherS, samplesPerS float64
	rounds, evalRounds                                                      int
}

// figures computes the steady-state figures: a round's wall time is from the end of the previous
// round's observers (row, checkpoint, health, progress) to the end of its own; its overhead is
// that wall time minus local training and evaluation (the server step included), other the part
// none of the three timings covers.
func (c *roundClock) figures(every, last int) crossDeviceFigures {
	var f crossDeviceFigures
	var local time.Duration
	examples := 0
	for i := 1; i < len(c.ends); i++ {
		round, t := i+1, c.timings[i]
		wall := c.ends[i].Sub(c.ends[i-1])
		f.overheadS += (wall - t.Local - t.Eval).Seconds()
		f.otherS += (wall - t.Total()).Seconds()
		f.localS += t.Local.Seconds()
		f.aggS += t.Aggregate.Seconds()
		local += t.Local
		examples += c.examples[round]
		if round%every == 0 || round == last {
			f.evalRounds++
			f.evalRoundS += wall.Seconds()
			f.evalS += t.Eval.Seconds()
		} else {
			f.rounds++
			f.roundS += wall.Seconds()
		}
	}
	n := float64(len(c.ends) - 1)
	f.overheadS, f.otherS, f.localS, f.aggS = f.overheadS/n, f.otherS/n, f.localS/n, f.aggS/n
	f.roundS /= float64(max(1, f.rounds))
	f.evalRoundS /= float64(max(1, f.evalRounds))
	f.evalS /= float64(max(1, f.evalRounds))
	f.samplesPerS = float64(examples) / local.Seconds()
	return f
}

// peakRSSMB is the process's peak resident set (VmHWM of /proc/self/status) in MB, or 0 where that
// file does not exist. It covers the whole process: make bench-crossdevice runs each sub-benchmark
// in its own.
func peakRSSMB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}

// liveHeap is the Go heap's live bytes after a full collection (runtime/metrics).
func liveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// BenchmarkCrossDevice runs the cross-device benchmark of issue 52 end to end through Run (results
// written, a checkpoint every round): pfl-research's shape (1,000 clients of 50 examples, 50 per
// round, batch 10, one local epoch, evaluation every 10 rounds) and 10,000 clients of 6 with 100
// per round, on Fashion-MNIST with LeNet-5 (FedAvg) and the Bayesian LeNet (GAA); see
// crossDeviceShapes. One iteration is one run of $FEDBAYES_XDEV_ROUNDS rounds (default 30). It
// reports, over rounds 2 to T: s/round (a round without evaluation), evalround-s and eval-s (a round
// with evaluation, and its evaluation alone), local-s/round, agg-s/round, overhead-s/round (the
// round's wall time minus local training and evaluation), other-s/round (minus the server step
// too), samples/s of local training; and total-s (the run, setup included), setup-s (total-s minus
// the rounds), peak-RSS-MB. The sub-benchmark idle-client reports the live heap one idle client
// costs (B/idle-client), apart from its examples.
//
//	make bench-crossdevice ROUNDS=30
//	FEDBAYES_XDEV_ROUNDS=30 go test ./fedbayes/engine -run '^$' -bench 'CrossDevice/bayes-lenet-gaa/C10000' -benchtime=1x
func BenchmarkCrossDevice(b *testing.B) {
	requireFashionMNIST(b)
	b.Run("idle-client", benchIdleClient)
	for _, method := range []string{"uniform", "size", "power-of-choice"} {
		for _, clients := range []int{1000, 10_000, 100_000} {
			b.Run(fmt.Sprintf("round-setup/%s/C%d-m100", method, clients), func(b *testing.B) { benchRoundSetup(b, method, clients, 100) })
		}
	}
	for _, m := range crossDeviceModels {
		for _, sh := range crossDeviceShapes {
			b.Run(m.name+"/"+sh.name, func(b *testing.B) {
				rounds := crossDeviceRounds(b)
				s := crossDeviceSpec(sh, m.model, m.rule, rounds)
				if err := s.Validate(); err != nil {
					b.Fatal(err)
				}
				var f crossDeviceFigures
				var total, setup time.Duration
				var last map[string]float64
				for i := 0; i < b.N; i++ {
					clock := &roundClock{}
					dir := b.TempDir()
					start := time.Now()
					sum, err := Run(context.Background(), s, Options{Dir: dir, Progress: clock, NoFigures: true})
					if err != nil {
						b.Fatal(err)
					}
					total = time.Since(start)
					if len(sum.Runs) != 1 || sum.Runs[0].State != results.Completed || len(clock.ends) != rounds {
						b.Fatalf("run: %+v, %d rounds recorded", sum.Runs, len(clock.ends))
					}
					setup = clock.start.Sub(start)
					f = clock.figures(10, rounds)
					last = sum.Runs[0].Metrics
					run, err := results.ReadRun(sum.Runs[0].Dir)
					if err != nil {
						b.Fatal(err)
					}
					for _, row := range run.Rows { // the rows' time fields, as a reader sees them
						b.Logf("row round %d: local_s %.3f aggregate_s %.3f eval_s %.3f", row.Round, row.Time.LocalSeconds, row.Time.AggregateSeconds, row.Time.EvalSeconds)
					}
				}
				b.ReportMetric(f.roundS, "s/round")
				b.ReportMetric(f.evalRoundS, "evalround-s")
				b.ReportMetric(f.evalS, "eval-s")
				b.ReportMetric(f.localS, "local-s/round")
				b.ReportMetric(f.aggS, "agg-s/round")
				b.ReportMetric(f.overheadS, "overhead-s/round")
				b.ReportMetric(f.otherS, "other-s/round")
				b.ReportMetric(f.samplesPerS, "samples/s")
				b.ReportMetric(total.Seconds(), "total-s")
				b.ReportMetric(setup.Seconds(), "setup-s")
				b.ReportMetric(peakRSSMB(), "peak-RSS-MB")
				const budget, every = 1500, 10
				evals := budget / every
				est := setup.Seconds() + float64(budget-evals)*f.roundS + float64(evals)*f.evalRoundS
				b.Logf("measured %d rounds (%d evaluated): accuracy %.4f; extrapolated to %d rounds: setup %.1f s + %d x %.3f s + %d x %.3f s = %.0f s (%.2f h)",
					rounds, (rounds+9)/10, last[results.Accuracy], budget, setup.Seconds(), budget-evals, f.roundS, evals, f.evalRoundS, est, est/3600)
			})
		}
	}
}

// benchIdleClient measures the live Go heap of the engine's per-client state (the partition's
// index lists and class counts, the sampler's sizes and straggler flags, the fairness sample) for
// 1,000 and 10,000 clients over the same 60,000-example pool, and reports the difference per
// client: what an idle client costs besides its examples, which the pool holds whatever the
// number of clients (3,136 bytes each).
func benchIdleClient(b *testing.B) {
	cache := &datasetCache{}
	if _, _, err := cache.load("fashion-mnist", data.Dir(), 0); err != nil {
		b.Fatal(err)
	}
	held := func(clients int) (uint64, any) {
		s := crossDeviceSpec(crossDeviceShape{clients: clients, sampled: 100}, ModelSpec{Arch: "lenet", Kind: "bayesian"}, "GAA", 10).WithDefaults()
		before := liveHeap()
		p, err := newProblem(s, 0, cache)
		if err != nil {
			b.Fatal(err)
		}
		part, err := partition.NewParticipation(s.Partition.Clients, s.Partition.Participation, derive(0, tagParticipation))
		if err != nil {
			b.Fatal(err)
		}
		sampler, err := partition.NewSampler(part, p.part.Sizes(), samplingOptions(s.Partition.Sampling))
		if err != nil {
			b.Fatal(err)
		}
		ids := p.fairnessClients(s.Evaluation.scoredClients(), 0)
		keep := []any{p, sampler, ids}
		return liveHeap() - before, keep
	}
	var perClient float64
	for i := 0; i < b.N; i++ {
		small, k1 := held(1000)
		large, k2 := held(10_000)
		perClient = (float64(large) - float64(small)) / 9000
		runtime.KeepAlive(k1)
		runtime.KeepAlive(k2)
	}
	b.ReportMetric(perClient, "B/idle-client")
	b.ReportMetric(perClient*10_000/1e6, "idle-MB/10k-clients")
}

// benchRoundSetup times the part of a round's overhead that could depend on the number of clients:
// drawing the round's sampled clients (partition.Sampler.Round with partition.sampling.method
// method), building their jobs (clientTraining.round) and keeping those that returned
// (clientTraining.returned), for clients of 6 examples with sampled per round, over 100 rounds an
// iteration. It reports us/round.
func benchRoundSetup(b *testing.B, method string, clients, sampled int) {
	const rounds = 100
	s := crossDeviceSpec(crossDeviceShape{clients: clients, sampled: sampled}, ModelSpec{Arch: "lenet"}, "FedAvg", rounds)
	if method != "uniform" {
		s.Partition.Sampling = &SamplingSpec{Method: method}
	}
	s = s.WithDefaults()
	part, err := partition.IIDSize(6*clients, clients, 1)
	if err != nil {
		b.Fatal(err)
	}
	c := &clientTraining{spec: s, prob: &problem{part: part}, seed: 0}
	if method == "power-of-choice" {
		c.losses = make([]float64, clients)
		for k := range c.losses {
			c.losses[k] = float64(k % 7) // ranks among the candidates
		}
	}
	if c.part, err = partition.NewParticipation(clients, s.Partition.Participation, derive(0, tagParticipation)); err != nil {
		b.Fatal(err)
	}
	if c.draws, err = partition.NewSampler(c.part, part.Sizes(), samplingOptions(s.Partition.Sampling)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for r := 1; r <= rounds; r++ {
			in, ids, sizes, err := c.round(r, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, ids, _, err = c.returned(localOutcome{}, ids, sizes); err != nil || len(ids) != sampled || len(in.jobs) != sampled {
				b.Fatalf("round %d: %d returned of %d jobs: %v", r, len(ids), len(in.jobs), err)
			}
		}
	}
	b.ReportMetric(time.Since(start).Seconds()*1e6/float64(b.N*rounds), "us/round")
}
