package predictive

import (
	"fmt"
	"math/rand/v2"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
)

// FedKTConfig configures FedKT. Zero values take the documented defaults.
//
// Li et al. (2021) call the students per party s (the number of partitions of its data) and the
// teachers per student t (the subsets of one partition); their public MNIST script runs s = 2,
// t = 5.
type FedKTConfig struct {
	// Students is s, the number of students per client, each taught by its own partition of the
	// client's data (default 2).
	Students int `json:"students,omitempty"`
	// Teachers is t, the number of teachers per student: the partition's disjoint subsets, one
	// teacher each (default 5).
	Teachers int `json:"teachers,omitempty"`
	// PlainVote turns consistent voting off: the server labels the public set by the plain majority
	// of all students instead.
	PlainVote bool `json:"plain_vote,omitempty"`
	// Local trains the teachers (Hasan (2023), Sec. 3.3.4: FedKT's clients use the local optimiser).
	// In a Spec, zero means the spec's local.
	Local LocalConfig `json:"local,omitzero"`
	// Distill trains the students and the final model on the voted labels of the server set (Hasan
	// (2023), Table B.1 tunes FedKT's "distill" optimiser). In a Spec, zero means the spec's distill.
	Distill DistillConfig `json:"distill,omitzero"`
	// Seed fixes the partitions, the batch orders and the students' label order.
	Seed int64 `json:"seed,omitempty"`
}

// WithDefaults fills zero fields with their defaults.
func (c FedKTConfig) WithDefaults() FedKTConfig {
	if c.Students == 0 {
		c.Students = 2
	}
	if c.Teachers == 0 {
		c.Teachers = 5
	}
	c.Local = c.Local.WithDefaults()
	c.Distill = c.Distill.WithDefaults()
	return c
}

// Validate reports the first invalid field by its JSON name (call after WithDefaults).
func (c FedKTConfig) Validate() error {
	if c.Students < 1 || c.Students > maxSizeCount {
		return fmt.Errorf("predictive: fedkt.students = %d: want in [1, %d]", c.Students, maxSizeCount)
	}
	if c.Teachers < 1 || c.Teachers > maxSizeCount {
		return fmt.Errorf("predictive: fedkt.teachers = %d: want in [1, %d]", c.Teachers, maxSizeCount)
	}
	return nil
}

// FedKT is one-shot federated learning by knowledge transfer (Li et al. 2021, "Practical one-shot
// federated learning for cross-silo setting"; a one-round baseline of Hasan (2023), Sec. 2.2.2 and
// Table 3.1), for classification:
//
//  1. every client k cuts its data s times (kc.Students) into t disjoint random subsets
//     (kc.Teachers) and trains one teacher per subset (kc.Local; all K s t teachers at once on the
//     client axis of one model of cfg's architecture);
//  2. for each of its s partitions, the client labels the server's unlabeled inputs serverX by the
//     majority vote of the partition's t teachers (MajorityVote) and trains a student on those labels
//     (kc.Distill, one-hot targets);
//  3. the server labels serverX by the consistent vote of the K s students (ConsistentVote: a client
//     counts only where its s students agree; with kc.PlainVote, MajorityVote of all students) and
//     trains the final model on those labels (kc.Distill).
//
// Li et al.'s optional Laplace noise on the vote counts (their differentially private variants) is
// not part of the baseline Hasan compares with and is not implemented. The teachers start from
// cfg.Seed's initialisation, the students from cfg.Seed+1 and the final model from cfg.Seed+2;
// kc.Seed fixes the partitions and the batch orders. Same seeds, same model. The result is the
// final model, unstacked.
func FedKT(cfg models.Config, clients []*data.Dataset, serverX []float32, kc FedKTConfig) (*posterior.Posterior, error) {
	kc = kc.WithDefaults()
	if err := kc.Validate(); err != nil {
		return nil, err
	}
	if cfg.Task == models.Regression {
		return nil, fmt.Errorf("predictive: FedKT is for classification only (its server votes on labels; Hasan (2023), Sec. 3.3.4)")
	}
	C := cfg.NumClasses
	K, S, T := len(clients), kc.Students, kc.Teachers
	if K == 0 {
		return nil, fmt.Errorf("predictive: FedKT: no clients")
	}
	ex := 1
	for _, d := range cfg.InputShape {
		ex *= d
	}
	if ex < 1 || len(serverX) == 0 || len(serverX)%ex != 0 {
		return nil, fmt.Errorf("predictive: FedKT: %d server input values are not a positive multiple of the example size %d", len(serverX), ex)
	}
	rng := rand.New(rand.NewPCG(uint64(kc.Seed), 0xfed7))
	sets := make([]*data.Dataset, 0, K*S*T)
	for k, d := range clients {
		if d.Len() < T {
			return nil, fmt.Errorf("predictive: fedkt.teachers = %d: client %d has only %d examples, fewer than one per teacher", T, k, d.Len())
		}
		for j := 0; j < S; j++ {
			perm := rng.Perm(d.Len())
			for i := 0; i < T; i++ {
				// Subset i of t near-equal parts (the first Len mod t parts one longer).
				lo, hi := i*d.Len()/T, (i+1)*d.Len()/T
				idx := append([]int(nil), perm[lo:hi]...)
				sub, err := d.Select(idx)
				if err != nil {
					return nil, fmt.Errorf("predictive: FedKT: client %d, partition %d, subset %d: %w", k, j, i, err)
				}
				sets = append(sets, sub)
			}
		}
	}
	tcfg := cfg
	tcfg.Clients = K * S * T
	teachers, err := models.New(tcfg)
	if err != nil {
		return nil, err
	}
	lc := kc.Local
	lc.Seed = kc.Seed*3 + 1
	if _, err := TrainClients(teachers, sets, lc); err != nil {
		return nil, fmt.Errorf("predictive: FedKT teachers: %w", err)
	}
	tp, err := PredictModel(teachers, serverX, 1)
	if err != nil {
		return nil, err
	}
	targets := make([]Teacher, K*S)
	for ks := range targets {
		votes := make([][]int32, T)
		for i := range votes {
			votes[i] = argmaxRows(tp.Probs[ks*T+i], C)
		}
		labels, err := MajorityVote(votes, C)
		if err != nil {
			return nil, err
		}
		targets[ks] = Teacher{Probs: oneHot(labels, C)}
	}
	scfg := cfg
	scfg.Clients = K * S
	scfg.Seed = cfg.Seed + 1
	students, err := models.New(scfg)
	if err != nil {
		return nil, err
	}
	dc := kc.Distill
	dc.Seed = kc.Seed*3 + 2
	if err := Distill(students, serverX, targets, dc); err != nil {
		return nil, fmt.Errorf("predictive: FedKT students: %w", err)
	}
	sp, err := PredictModel(students, serverX, 1)
	if err != nil {
		return nil, err
	}
	votes := make([][][]int32, K)
	for k := range votes {
		for j := 0; j < S; j++ {
			votes[k] = append(votes[k], argmaxRows(sp.Probs[k*S+j], C))
		}
	}
	var final []int32
	if kc.PlainVote {
		var all [][]int32
		for _, v := range votes {
			all = append(all, v...)
		}
		final, err = MajorityVote(all, C)
	} else {
		final, err = ConsistentVote(votes, C)
	}
	if err != nil {
		return nil, err
	}
	fcfg := cfg
	fcfg.Clients = 1
	fcfg.Seed = cfg.Seed + 2
	global, err := models.New(fcfg)
	if err != nil {
		return nil, err
	}
	dc.Seed = kc.Seed*3 + 3
	if err := Distill(global, serverX, []Teacher{{Probs: oneHot(final, C)}}, dc); err != nil {
		return nil, fmt.Errorf("predictive: FedKT final model: %w", err)
	}
	return global.ClientPosterior(0)
}

// MajorityVote returns, per example, the class most voters give it: votes[m][n] is voter m's class
// for example n (Li et al. (2021), the teachers' vote). A tie goes to the smallest class.
func MajorityVote(votes [][]int32, numClasses int) ([]int32, error) {
	if len(votes) == 0 {
		return nil, fmt.Errorf("predictive: MajorityVote: no voters")
	}
	N := len(votes[0])
	if err := checkVotes(votes, N, numClasses, "voter"); err != nil {
		return nil, err
	}
	counts := make([]int, numClasses)
	out := make([]int32, N)
	for n := range out {
		clear(counts)
		for _, v := range votes {
			counts[v[n]]++
		}
		out[n] = argmaxCount(counts)
	}
	return out, nil
}

// ConsistentVote is the server's vote of FedKT (Li et al. (2021), consistent voting): votes[k][j][n]
// is the class that student j of client k gives example n. A client whose students all agree on an
// example gives that class as many votes as it has students; a client whose students disagree
// abstains. The class with the most votes wins, a tie going to the smallest class. Where every
// client abstains, the plain majority of all students decides (our choice: the paper does not say).
func ConsistentVote(votes [][][]int32, numClasses int) ([]int32, error) {
	if len(votes) == 0 || len(votes[0]) == 0 {
		return nil, fmt.Errorf("predictive: ConsistentVote: no students")
	}
	N := len(votes[0][0])
	for k, v := range votes {
		if len(v) == 0 {
			return nil, fmt.Errorf("predictive: ConsistentVote: client %d has no students", k)
		}
		if err := checkVotes(v, N, numClasses, fmt.Sprintf("client %d, student", k)); err != nil {
			return nil, err
		}
	}
	counts := make([]int, numClasses)
	plain := make([]int, numClasses)
	out := make([]int32, N)
	for n := range out {
		clear(counts)
		clear(plain)
		any := false
		for _, students := range votes {
			c := students[0][n]
			agree := true
			for _, s := range students {
				plain[s[n]]++
				agree = agree && s[n] == c
			}
			if agree {
				counts[c] += len(students)
				any = true
			}
		}
		if any {
			out[n] = argmaxCount(counts)
		} else {
			out[n] = argmaxCount(plain)
		}
	}
	return out, nil
}

// checkVotes checks that every voter gives N labels in [0, numClasses).
func checkVotes(votes [][]int32, N, numClasses int, what string) error {
	if numClasses < 2 {
		return fmt.Errorf("predictive: numClasses = %d, want at least 2", numClasses)
	}
	for m, v := range votes {
		if len(v) != N {
			return fmt.Errorf("predictive: %s %d gives %d labels, want %d", what, m, len(v), N)
		}
		for n, c := range v {
			if c < 0 || int(c) >= numClasses {
				return fmt.Errorf("predictive: %s %d, example %d: class %d is outside [0, %d)", what, m, n, c, numClasses)
			}
		}
	}
	return nil
}

// argmaxCount returns the index of the largest count, the smallest index on a tie.
func argmaxCount(counts []int) int32 {
	best := 0
	for c, v := range counts {
		if v > counts[best] {
			best = c
		}
	}
	return int32(best)
}

// argmaxRows returns each row's most probable class of probs [N, C], the smallest on a tie.
func argmaxRows(probs []float32, C int) []int32 {
	out := make([]int32, len(probs)/C)
	for n := range out {
		row := probs[n*C : (n+1)*C]
		best := 0
		for c, v := range row {
			if v > row[best] {
				best = c
			}
		}
		out[n] = int32(best)
	}
	return out
}

// oneHot returns the [N, C] one-hot probabilities of labels.
func oneHot(labels []int32, C int) []float32 {
	out := make([]float32, len(labels)*C)
	for n, y := range labels {
		out[n*C+int(y)] = 1
	}
	return out
}
