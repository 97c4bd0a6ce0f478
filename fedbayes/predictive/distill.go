package predictive

import (
	"fmt"
	"math"
	"math/rand/v2"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
)

// Teacher is the target of one distilled student on the N server examples: the predictive of an
// ensemble (a BCM, a beta-PredBayes aggregate, FedBE's averaged teachers, ...).
type Teacher struct {
	// Probs are class probabilities [N, C] (classification).
	Probs []float32
	// Mean are the predictive means [N] (regression).
	Mean []float32
}

// DistillConfig configures Distill. Zero values take the documented defaults.
type DistillConfig struct {
	// Optimizer is "adam" (default; Hasan (2023), Tables B.2-B.4) or "sgd" (with Momentum).
	// FedBEConfig's default is SGD with DefaultMomentum instead.
	Optimizer string `json:"optimizer,omitempty"`
	// LearningRate is the (peak) step size (default 1e-3).
	LearningRate float64 `json:"learning_rate,omitempty"`
	// Momentum is SGD's momentum in [0, 1); 0 means none, as in LocalConfig.
	Momentum float64 `json:"momentum,omitempty"`
	// Epochs is the number of passes over the server set (default 20).
	Epochs int `json:"epochs,omitempty"`
	// BatchSize is the minibatch size (default 100).
	BatchSize int `json:"batch_size,omitempty"`
	// SWACycles > 0 turns on stochastic weight averaging (Izmailov et al. 2018), as FedBE distils
	// (Chen & Chao, Alg. 1): the epochs are cut into SWACycles cycles, in each the step size falls
	// linearly from LearningRate to SWAMinLR, and the weights at the end of every cycle are averaged;
	// the student ends at that average.
	SWACycles int `json:"swa_cycles,omitempty"`
	// SWAMinLR is the step size at the end of each SWA cycle (default LearningRate / 10).
	SWAMinLR float64 `json:"swa_min_lr,omitempty"`
	// Seed fixes the batch order and the sampled pseudo-labels.
	Seed int64 `json:"seed,omitempty"`
}

// WithDefaults fills zero fields with their defaults.
func (c DistillConfig) WithDefaults() DistillConfig {
	if c.Optimizer == "" {
		c.Optimizer = "adam"
	}
	if c.LearningRate == 0 {
		c.LearningRate = 1e-3
	}
	if c.Epochs == 0 {
		c.Epochs = 20
	}
	if c.BatchSize == 0 {
		c.BatchSize = 100
	}
	if c.SWACycles > 0 && c.SWAMinLR == 0 {
		c.SWAMinLR = c.LearningRate / 10
	}
	return c
}

// Distill trains the K clients of student, client k to reproduce teachers[k] on the unlabeled server
// inputs x (flat [N, InputShape...]): the distillation step of D-BCM and D-beta-PredBayes (Hasan
// (2023), Algs. 1-2, step 5/6), OneshotFL and FedBE. Start the student where wanted before calling
// (FedBE starts from the mean client model).
//
// Classification minimises KL(teacher || student) through its cross-entropy E_{y ~ teacher}[-log
// q(y|x)], which has the same gradient: every epoch draws a fresh label for each example from the
// teacher's distribution, which makes each step an unbiased estimate of the KL gradient with the
// hard-label likelihood of models.Trainer. Regression minimises the squared error to the teacher's
// mean (the Gaussian likelihood of the student with its fixed noise variance).
func Distill(student *models.Model, x []float32, teachers []Teacher, cfg DistillConfig) error {
	cfg = cfg.WithDefaults()
	K := student.Clients()
	if len(teachers) != K {
		return fmt.Errorf("predictive: Distill: %d teachers for a student model of %d clients", len(teachers), K)
	}
	if cfg.Epochs < 1 || cfg.BatchSize < 1 || !(cfg.LearningRate > 0) || cfg.SWACycles < 0 || cfg.SWACycles > cfg.Epochs {
		return fmt.Errorf("predictive: DistillConfig: epochs %d, batch size %d, learning rate %v, SWA cycles %d; want positive values and at most one cycle per epoch",
			cfg.Epochs, cfg.BatchSize, cfg.LearningRate, cfg.SWACycles)
	}
	mc := student.Config()
	ex := 1
	for _, d := range mc.InputShape {
		ex *= d
	}
	if len(x) == 0 || len(x)%ex != 0 {
		return fmt.Errorf("predictive: Distill: %d server input values are not a positive multiple of the example size %d", len(x), ex)
	}
	N := len(x) / ex
	regression := mc.Task == models.Regression
	sets := make([]*data.Dataset, K)
	for k, t := range teachers {
		d := &data.Dataset{Name: fmt.Sprintf("distill/%d", k), X: x, Shape: mc.InputShape}
		if regression {
			if len(t.Mean) != N {
				return fmt.Errorf("predictive: Distill: teacher %d has %d means for %d server examples", k, len(t.Mean), N)
			}
			d.Targets = t.Mean
		} else {
			if len(t.Probs) != N*mc.NumClasses {
				return fmt.Errorf("predictive: Distill: teacher %d has %d probabilities, want %d examples x %d classes", k, len(t.Probs), N, mc.NumClasses)
			}
			if err := checkRows(t.Probs, mc.NumClasses, fmt.Sprintf("teacher %d", k)); err != nil {
				return err
			}
			d.Labels = make([]int32, N)
			d.NumClasses = mc.NumClasses
		}
		sets[k] = d
	}
	oc, err := optimizerConfig("DistillConfig", cfg.Optimizer, cfg.LearningRate, cfg.Momentum)
	if err != nil {
		return err
	}
	tr, err := student.NewTrainer(oc)
	if err != nil {
		return err
	}
	f, err := newFeed(sets, cfg.BatchSize, uint64(cfg.Seed))
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0xd157))
	per := f.stepsPerEpoch()
	total := cfg.Epochs * per
	var swa *flatParams
	swaCount := 0
	cycleLen := 0
	if cfg.SWACycles > 0 {
		cycleLen = (total + cfg.SWACycles - 1) / cfg.SWACycles
	}
	loop := models.Loop{Epochs: cfg.Epochs, Steps: per,
		BeforeEpoch: func(int) error {
			// A fresh label per example from the teacher's distribution every epoch.
			if !regression {
				for k, t := range teachers {
					resampleLabels(rng, t.Probs, mc.NumClasses, sets[k].Labels)
				}
			}
			return nil
		},
		BeforeStep: func(at models.LoopStep) error {
			if cycleLen == 0 {
				return nil
			}
			r := float64(at.Index%cycleLen) / float64(max(cycleLen-1, 1))
			return tr.SetLearningRate(cfg.LearningRate + r*(cfg.SWAMinLR-cfg.LearningRate))
		},
		Batch: func(models.LoopStep) (models.Batch, error) { return f.next(), nil },
		// SWA: the weights at the end of every cycle (and of the last step) join the running average.
		AfterStep: func(at models.LoopStep, _ models.StepStats) error {
			s := at.Index
			if cycleLen == 0 || (s%cycleLen != cycleLen-1 && s != total-1) {
				return nil
			}
			p, err := student.Posterior()
			if err != nil {
				return err
			}
			cur, err := flatten(p)
			if err != nil {
				return err
			}
			swaCount++
			if swa == nil {
				swa = cur
				return nil
			}
			for i, v := range swa.values {
				for j := range v {
					v[j] += (cur.values[i][j] - v[j]) / float32(swaCount)
				}
			}
			return nil
		},
	}
	if err := loop.Run(tr); err != nil {
		return fmt.Errorf("predictive: distillation: %w", err)
	}
	if swa != nil {
		return setFlat(student, swa)
	}
	return nil
}

// resampleLabels draws one label per example from probs ([N, C]).
func resampleLabels(rng *rand.Rand, probs []float32, C int, labels []int32) {
	for n := range labels {
		u := rng.Float64()
		var s float64
		labels[n] = int32(C - 1)
		for c := 0; c < C; c++ {
			s += float64(probs[n*C+c])
			if u < s {
				labels[n] = int32(c)
				break
			}
		}
	}
}

// LogitAverage returns softmax(mean_k log p_k) per example, [N, C]: the ensemble of OneshotFL,
// which averages the clients' logits (Hasan (2023), App. B.2; log p_k differs from client k's
// logits by a per-example constant, which the softmax removes).
func LogitAverage(clients [][]float32, numClasses int) ([]float32, error) {
	if len(clients) == 0 {
		return nil, fmt.Errorf("predictive: LogitAverage: no clients")
	}
	C := numClasses
	for k, p := range clients {
		if len(p) != len(clients[0]) || len(p)%C != 0 {
			return nil, fmt.Errorf("predictive: LogitAverage: client %d has %d probabilities (client 0: %d, %d classes)", k, len(p), len(clients[0]), C)
		}
		if err := checkRows(p, C, fmt.Sprintf("client %d", k)); err != nil {
			return nil, err
		}
	}
	out := make([]float32, len(clients[0]))
	row := make([]float64, C)
	for n := 0; n*C < len(out); n++ {
		for c := range row {
			var s float64
			for _, p := range clients {
				s += math.Log(max(float64(p[n*C+c]), ProbFloor))
			}
			row[c] = s / float64(len(clients))
		}
		normalizeLog(row)
		for c, v := range row {
			out[n*C+c] = float32(math.Exp(v))
		}
	}
	return out, nil
}
