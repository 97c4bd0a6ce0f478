package notebook

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
)

// StudySpec is what an uncertainty study (notebook 03) trains and evaluates: the same network as a
// deterministic, an MC-dropout and a variational net, each repeated Seeds times.
type StudySpec struct {
	Dataset   string      // training data: "digits" (8x8) or "fashion-mnist" (28x28)
	Arch      models.Arch // models.ArchMLP or models.ArchLeNet
	Seeds     int         // independent repetitions, trained together as the clients of one model
	TrainSize int         // training examples used (0: all)
	TestSize  int         // in-distribution test examples (0: all)
	OODSize   int         // examples in each shifted or foreign input set (0: as many as the test set)
	Epochs    int         // passes over the training data
	Batch     int         // mini-batch size
	LR        float64     // Adam learning rate
	Samples   int         // M, Monte Carlo predictions per input (MC dropout and variational)
	Seed      int64       // first seed; repetition k uses Seed + k
	// InitLogVar is the variational net's initial log σ² of every weight (models.Config.InitLogVar).
	InitLogVar float64
}

// Net is one of the networks an uncertainty study compares.
type Net struct {
	Name string
	Kind models.Kind
}

// Nets are the three networks of an uncertainty study, in the order of every table and chart:
// deterministic, MC dropout (Gal and Ghahramani 2016) and variational (mean-field Gaussian weights
// on the ELBO, Ozer et al. 2022, Eqs. 2-3, sampled with Flipout).
var Nets = []Net{{"deterministic", models.Deterministic}, {"MC dropout", models.MCDropout}, {"variational", models.Bayesian}}

// InputSet is one set of inputs the nets predict on.
type InputSet struct {
	Name     string
	X        []float32 // [N, shape...]
	Labels   []int32   // true labels; zeros (placeholders) when !Labelled
	Labelled bool
}

// foreignOf is the other dataset whose images are the foreign inputs.
var foreignOf = map[string]string{"digits": "fashion-mnist", "fashion-mnist": "digits"}

// InputSets loads the training data of s and builds its four input sets: the test set, the test
// images rotated 90° (labels kept: a shifted distribution), images of the other dataset resized to
// the input size (foreign: no class is right) and uniform noise in [0, 1].
func InputSets(s StudySpec) (*data.Dataset, []InputSet, error) {
	train, test, err := data.Load(s.Dataset, data.Dir())
	if err != nil {
		return nil, nil, fmt.Errorf("loading %s: %w (install the data with `fedbayes data install`)", s.Dataset, err)
	}
	train, test = SampleData(train, s.TrainSize, s.Seed), SampleData(test, s.TestSize, s.Seed+1)
	if len(test.Shape) != 3 || test.Shape[0] != test.Shape[1] || test.Shape[2] != 1 {
		return nil, nil, fmt.Errorf("%s: images must be square and grey, got shape %v", s.Dataset, test.Shape)
	}
	n := s.OODSize
	if n <= 0 || n > test.Len() {
		n = test.Len()
	}
	size := test.ExampleSize()
	other := foreignOf[s.Dataset]
	if other == "" {
		return nil, nil, fmt.Errorf("dataset %q: an uncertainty study uses digits or fashion-mnist", s.Dataset)
	}
	foreign, _, err := data.Load(other, data.Dir())
	if err != nil {
		return nil, nil, fmt.Errorf("loading %s for the foreign inputs: %w (install the data with `fedbayes data install`)", other, err)
	}
	if foreign.Len() < n {
		return nil, nil, fmt.Errorf("%s has %d training images, %d wanted", other, foreign.Len(), n)
	}
	foreign = SampleData(foreign, n, s.Seed+2)
	rng := rand.New(rand.NewPCG(uint64(s.Seed), 0x0e))
	noise := make([]float32, n*size)
	for i := range noise {
		noise[i] = rng.Float32()
	}
	none := make([]int32, n)
	return train, []InputSet{
		{Name: "test", X: test.X, Labels: test.Labels, Labelled: true},
		{Name: "rotated 90°", X: Rotate90(test.X[:n*size], test.Shape), Labels: test.Labels[:n], Labelled: true},
		{Name: fmt.Sprintf("foreign: %s", other), X: Resize(foreign.X, foreign.Shape, test.Shape), Labels: none},
		{Name: "uniform noise", X: noise, Labels: none},
	}, nil
}

// NetRun is what one net left after training: its training curve and the uncertainty metrics of
// every input set (metrics.UncertaintyResult keeps per-input scores, O(N), not the M x N x C samples).
type NetRun struct {
	Net            string
	Kind           models.Kind
	Params         int                           // trainable parameters of one repetition
	TrainNLL       [][]float64                   // [seed][epoch] mean training NLL
	Results        [][]metrics.UncertaintyResult // [input set][seed]
	TrainSeconds   float64
	PredictSeconds float64
}

// TrainNet trains s.Seeds repetitions of one net on train, together as the clients of one
// models.Model (each with its own shuffling), with Adam on the mean NLL (deterministic, MC dropout)
// or the ELBO loss NLL + KL / |D| (variational; Ozer et al. 2022, Eq. 3), under a progress bar over
// the epochs, and evaluates M Monte Carlo predictions of every repetition on every input set (one
// for the deterministic net, whose passes all agree).
func TrainNet(s StudySpec, net Net, train *data.Dataset, sets []InputSet) (NetRun, error) {
	run := NetRun{Net: net.Name, Kind: net.Kind}
	fail := func(err error) (NetRun, error) { return run, fmt.Errorf("%s net: %w", net.Name, err) }
	cfg := models.Config{Options: models.Options{Arch: s.Arch, Kind: net.Kind}, InputShape: train.Shape, NumClasses: train.NumClasses,
		Clients: s.Seeds, Seed: s.Seed}
	if net.Kind == models.Bayesian {
		cfg.Estimator, cfg.InitLogVar = models.Flipout, s.InitLogVar
	}
	m, err := models.New(cfg)
	if err != nil {
		return fail(err)
	}
	run.Params = m.NumParams()
	tr, err := m.NewTrainer(models.OptimizerConfig{Kind: models.Adam, LearningRate: s.LR})
	if err != nil {
		return fail(err)
	}
	K, B, n, size := s.Seeds, s.Batch, train.Len(), train.ExampleSize()
	steps := n / max(B, 1)
	if B < 1 || steps == 0 {
		return fail(fmt.Errorf("batch %d: want between 1 and the %d training examples", B, n))
	}
	sizes := make([]int, K)
	rngs, perms := make([]*rand.Rand, K), make([][]int, K)
	run.TrainNLL = make([][]float64, K)
	for k := range K {
		sizes[k] = n
		rngs[k] = rand.New(rand.NewPCG(uint64(s.Seed), uint64(k)))
		run.TrainNLL[k] = make([]float64, s.Epochs)
	}
	x, y := make([]float32, K*B*size), make([]int32, K*B)
	bar := progress.New() // epochs as rounds, with the steps of each epoch and examples/s
	bar.Start(s.Epochs, net.Name+" net, epochs")
	stepper, _ := bar.(progress.StepReporter)
	start := time.Now()
	loop := models.Loop{Epochs: s.Epochs, Steps: steps,
		BeforeEpoch: func(int) error {
			for k := range K {
				perms[k] = rngs[k].Perm(n)
			}
			return nil
		},
		Batch: func(at models.LoopStep) (models.Batch, error) {
			for k := range K {
				for j, i := range perms[k][at.Step*B : (at.Step+1)*B] {
					r := k*B + j
					copy(x[r*size:(r+1)*size], train.X[i*size:(i+1)*size])
					y[r] = train.Labels[i]
				}
			}
			return models.Batch{X: x, Labels: y, DatasetSizes: sizes}, nil
		},
		AfterStep: func(at models.LoopStep, out models.StepStats) error {
			for k := range K {
				run.TrainNLL[k][at.Epoch] += out.NLL[k] / float64(steps)
			}
			if stepper != nil {
				stepper.Step(at.Epoch+1, at.Step+1, steps, (at.Step+1)*B*K)
			}
			return nil
		},
		AfterEpoch: func(e int) (bool, error) {
			bar.Update(e+1, map[string]float64{"nll": run.TrainNLL[0][e]}, progress.Timings{})
			if s.Epochs <= 10 {
				fmt.Printf("  %s: epoch %d/%d, training NLL %.3f (%s)\n", net.Name, e+1, s.Epochs, run.TrainNLL[0][e],
					time.Since(start).Round(time.Second))
			}
			return false, nil
		},
	}
	if err := loop.Run(tr); err != nil { // a step's error reads "epoch E, step S: ..."
		bar.Done("failed")
		return fail(err)
	}
	bar.Done("completed")
	run.TrainSeconds = time.Since(start).Seconds()
	M := s.Samples
	if net.Kind == models.Deterministic {
		M = 1
	}
	start = time.Now()
	for _, set := range sets {
		p, err := m.Predict(set.X, M)
		if err != nil {
			return fail(fmt.Errorf("predicting %s: %w", set.Name, err))
		}
		N, C := p.Examples, p.Outputs
		perSeed := make([]metrics.UncertaintyResult, K)
		for k := range K {
			// p.Probs is [K][M][N][C]: client k's block is the [M, N, C] layout metrics expects.
			perSeed[k], err = metrics.EvaluateUncertainty(p.Probs[k*M*N*C:(k+1)*M*N*C], set.Labels, C, M, metrics.DefaultBins)
			if err != nil {
				return fail(fmt.Errorf("metrics of %s, seed %d: %w", set.Name, k, err))
			}
		}
		run.Results = append(run.Results, perSeed)
	}
	run.PredictSeconds = time.Since(start).Seconds()
	return run, nil
}

// Study is everything an uncertainty study's training cell hands to the later cells (each GoNB
// cell is a new process): the spec, the input sets' names and the runs of the nets.
type Study struct {
	Mode     string // the budget it ran at
	Spec     StudySpec
	Sets     []string // input sets; Sets[0] is the in-distribution test set
	Labelled []bool   // whether a set has true labels (accuracy is meaningful)
	Classes  []string // class names
	Runs     []NetRun // one per net, in the order of Nets
}

// TrainStudy trains every net of Nets on the spec's data and evaluates it on its input sets
// (InputSets, TrainNet), printing a line per net.
func TrainStudy(s StudySpec, mode string) (*Study, error) {
	train, sets, err := InputSets(s)
	if err != nil {
		return nil, err
	}
	st := &Study{Mode: mode, Spec: s, Classes: train.ClassNames}
	if len(st.Classes) != train.NumClasses {
		st.Classes = make([]string, train.NumClasses)
		for c := range st.Classes {
			st.Classes[c] = fmt.Sprint(c)
		}
	}
	for _, set := range sets {
		st.Sets = append(st.Sets, set.Name)
		st.Labelled = append(st.Labelled, set.Labelled)
	}
	for _, net := range Nets {
		run, err := TrainNet(s, net, train, sets)
		if err != nil {
			return nil, err
		}
		fmt.Printf("%-13s %6d parameters: trained in %5.1f s, predictions in %5.1f s\n",
			net.Name, run.Params, run.TrainSeconds, run.PredictSeconds)
		st.Runs = append(st.Runs, run)
	}
	return st, nil
}

// Save writes the study to path (gob), atomically.
func (st *Study) Save(path string) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(st); err != nil {
		return fmt.Errorf("notebook: encoding the study: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return results.WriteFileAtomic(path, buf.Bytes(), 0o644)
}

// LoadStudy reads a study saved by Save. When there is none yet it returns an *Incomplete error
// (the training cell has not run), which Check turns into a message that stops the cell cleanly.
func LoadStudy(path string) (*Study, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &Incomplete{Want: 1, Missing: []string{"the study (" + path + ")"}}
	}
	if err != nil {
		return nil, err
	}
	var st Study
	if err := gob.NewDecoder(bytes.NewReader(raw)).Decode(&st); err != nil {
		return nil, fmt.Errorf("notebook: %s: %w (delete it and run the training cell again)", path, err)
	}
	if len(st.Runs) == 0 || len(st.Sets) == 0 {
		return nil, fmt.Errorf("notebook: %s holds no runs (delete it and run the training cell again)", path)
	}
	for _, r := range st.Runs {
		if len(r.Results) != len(st.Sets) {
			return nil, fmt.Errorf("notebook: %s: net %q has results for %d of %d input sets", path, r.Net, len(r.Results), len(st.Sets))
		}
	}
	return &st, nil
}

// TrainingCurves is the training NLL of every net against the epoch, one row per seed.
func (st *Study) TrainingCurves() plots.Curves {
	curves := plots.Curves{Title: "training NLL (mean ± SE over seeds)", XLabel: "epoch", YLabel: "NLL (nats)"}
	for _, run := range st.Runs {
		x := make([]float64, st.Spec.Epochs)
		for e := range x {
			x[e] = float64(e + 1)
		}
		curves.Series = append(curves.Series, plots.SeedSeries{Name: run.Net, X: x, Runs: run.TrainNLL})
	}
	return curves
}
