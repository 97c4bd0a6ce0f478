package strategy

import (
	"errors"
	"fmt"

	"fedbayes.dev/fedbayes/aggregate"

	"fedbayes.dev/fedbayes/predictive"
)

// FedKTName is the registered name of FedKT.
const FedKTName = "fedkt"

// FedKT is one-shot federated learning by knowledge transfer (Li et al. 2021; a one-round baseline
// of Hasan (2023), Sec. 2.2.2 and Table 3.1), run by predictive.FedKT: every client trains s x t
// teachers on disjoint subsets of its data, labels the server's inputs with s majority votes and
// trains s students on them; the server labels its inputs by the students' consistent vote and
// trains the global model on those labels.
//
// FedKT's clients do not send one trained model: their local step is the teachers and students,
// which this strategy trains from the clients' data (Round.ClientData) inside the server step, as
// the simulation of what each client would do on its own machine. The models the engine's local
// training produced in the round are not used (only their count and order); a spec with
// aggregation.rule fedkt should keep training.local_epochs at 1 to spend little on them. FedKT
// starts from nothing the previous round held, so it is a one-round method: over several rounds
// every round repeats the same transfer with fresh seeds.
type FedKT struct {
	// Config holds the students s, the teachers t, the vote, the teachers' local training and the
	// distillation (Seed is set from the round).
	Config predictive.FedKTConfig

	clients int // the partition's clients, for ServerNetworks
}

// FedKTOptions are FedKT's options, the spec's aggregation.options of fedkt: students s (0: 2),
// teachers t per student (0: 5), plain_vote, the teachers' local training (local; each zero field
// takes the clients' training, Settings.Local, field by field: one set of defaults, the spec's
// training section's; localFrom) and the students' distillation (distill; zero fields: predictive's
// defaults). The seed is derived per round.
type FedKTOptions = predictive.FedKTConfig

// newFedKT builds FedKT from its options (FedKTOptions), refusing an experiment without a server
// set, with regression or sampling clients, or with more teacher networks than the engine trains at
// once.
func newFedKT(s Settings) (*FedKT, error) {
	var k FedKTOptions
	if err := DecodeOptions(s, &k); err != nil {
		return nil, err
	}
	if k.Students < 0 || k.Teachers < 0 {
		return nil, &FieldError{Field: OptionsField, Problem: fmt.Sprintf("students %d and teachers %d must be >= 0 (0 takes 2 and 5)", k.Students, k.Teachers)}
	}
	if err := firstError(checkCount(OptionsField+".local.epochs", k.Local.Epochs, MaxOptionEpochs),
		checkCount(OptionsField+".local.batch_size", k.Local.BatchSize, MaxOptionBatch)); err != nil {
		return nil, err
	}
	if k.Local.LearningRate < 0 {
		return nil, &FieldError{Field: OptionsField + ".local.learning_rate", Problem: fmt.Sprintf("%v; must be >= 0 (0 takes the default)", k.Local.LearningRate)}
	}
	if m := k.Local.Momentum; !(m >= 0 && m < 1) {
		return nil, &FieldError{Field: OptionsField + ".local.momentum", Problem: fmt.Sprintf("%v; must be in [0, 1) (0: none)", m)}
	}
	if o := k.Local.Optimizer; o != "" && o != "sgd" && o != "adam" {
		return nil, notOneOf(OptionsField+".local.optimizer", o, []string{"sgd", "adam"})
	}
	if k.Local.Momentum != 0 && k.Local.Optimizer == "adam" {
		return nil, &FieldError{Field: OptionsField + ".local.momentum", Problem: fmt.Sprintf("%v with optimizer adam; momentum is SGD's", k.Local.Momentum)}
	}
	if k.Seed != 0 || k.Local.Seed != 0 {
		return nil, &FieldError{Field: OptionsField + ".seed", Problem: "FedKT's seeds (partitions, batch orders, students) are derived from the run's seed and the round; remove seed"}
	}
	if err := checkDistill(OptionsField+".distill", k.Distill); err != nil {
		return nil, err
	}
	if err := firstError(
		requireServer(s, "FedKT's students and global model learn the votes on the server's set", hasanServer),
		requireClassification(s, "FedKT votes on class labels")); err != nil {
		return nil, err
	}
	if s.Sampling {
		return nil, &FieldError{Field: "training.sampler", Problem: "FedKT's teachers use the local optimiser (Hasan (2023), Sec. 3.3.4); unset the sampler"}
	}
	k.Local = localFrom(k.Local, s.Local)
	c := k.WithDefaults()
	if n := s.MaxNetworks; n > 0 && (c.Students > n || c.Teachers > n || s.Clients > n || s.Clients*c.Students*c.Teachers > n) {
		return nil, &FieldError{Field: OptionsField, Problem: fmt.Sprintf("%d clients x %d students x %d teachers: too many teacher networks; at most %d", s.Clients, c.Students, c.Teachers, n)}
	}
	if err := firstError(invalid(OptionsField, c.Validate()), checkDistilled(OptionsField+".distill", c.Distill, false)); err != nil {
		return nil, err
	}
	return &FedKT{Config: c, clients: s.Clients}, nil
}

// ServerNetworks implements ServerNetworker: the K s t teachers train at once on the client axis of
// one model (predictive.FedKT).
func (f *FedKT) ServerNetworks() int { return f.clients * f.Config.Students * f.Config.Teachers }

// CheckClients implements ClientChecker: each of a student's t teachers trains on one of t
// disjoint parts of a client's examples (Li et al. 2021), so every client needs at least t.
func (f *FedKT) CheckClients(sizes []int) error {
	t := f.Config.Teachers
	for k, n := range sizes {
		if n < t {
			return &FieldError{Field: OptionsField + ".teachers", Problem: fmt.Sprintf("%d teachers per student, but client %d has %d examples: each teacher needs at least one", t, k, n)}
		}
	}
	return nil
}

// Aggregate runs FedKT on the round's clients' data and the server set.
func (f *FedKT) Aggregate(r *Round) (*Global, error) {
	if r.Server == nil {
		return nil, fmt.Errorf("FedKT: the experiment has no server set")
	}
	sets, err := r.ClientData()
	if err != nil {
		return nil, fmt.Errorf("FedKT: %w", err)
	}
	kc := f.Config
	kc.Seed = r.Seed
	cfg := r.Model
	cfg.Seed = r.Seed*3 + 1 // the teachers', students' and global model's initialisations
	g, err := predictive.FedKT(cfg, sets, r.Server.X, kc)
	if teachersDiverged(err) {
		// A teacher's loss went non-finite (a step size too large for its subset): FedKT's
		// method broke down in this round, as a client's training diverging does, so the run is
		// diverged, not failed, and a sweep goes on.
		return nil, &DivergedError{fmt.Errorf("FedKT round %d: %w", r.Number, err)}
	}
	if err != nil {
		return nil, err
	}
	// The consistent vote counts every client once.
	return &Global{Posterior: g, Weights: aggregate.EqualWeights(len(r.IDs))}, nil
}

// teachersDiverged reports whether err is predictive.FedKT's error for a teacher (or student) whose
// training diverged, predictive.DivergedError (engine's TestFedKTTeachersNaNDiverges trains teachers
// at a step size of 1e30 and checks that the run is marked diverged with this reason).
func teachersDiverged(err error) bool {
	de := (*predictive.DivergedError)(nil)
	return errors.As(err, &de)
}

func init() {
	registerBuiltin(FedKTName, func(s Settings) (Strategy, error) { return newFedKT(s) })
}

// localFrom fills the zero fields of FedKT's local options o from the clients' training base: the
// optimizer (with base's momentum, unless o gives one), the learning rate, the epochs and the batch
// size. A momentum of 0 under an optimizer o names means none.
func localFrom(o, base predictive.LocalConfig) predictive.LocalConfig {
	if o.Optimizer == "" {
		o.Optimizer = base.Optimizer
		if o.Momentum == 0 {
			o.Momentum = base.Momentum
		}
	}
	if o.LearningRate == 0 {
		o.LearningRate = base.LearningRate
	}
	if o.Epochs == 0 {
		o.Epochs = base.Epochs
	}
	if o.BatchSize == 0 {
		o.BatchSize = base.BatchSize
	}
	return o
}
