package predictive

import (
	"slices"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/partition"
	"fedbayes.dev/fedbayes/posterior"
)

func TestMajorityVoteByHand(t *testing.T) {
	tests := []struct {
		name  string
		votes [][]int32
		C     int
		want  []int32
	}{
		// Example 0: 2, 2, 1 -> 2. Example 1: 0, 1, 1 -> 1. Example 2: a three-way tie 2, 1, 0 -> 0.
		// Example 3: unanimous 1.
		{"three voters", [][]int32{{2, 0, 2, 1}, {2, 1, 1, 1}, {1, 1, 0, 1}}, 3, []int32{2, 1, 0, 1}},
		// A two-two tie between classes 3 and 1 goes to 1.
		{"tie", [][]int32{{3}, {1}, {3}, {1}}, 4, []int32{1}},
		{"one voter", [][]int32{{4, 0}}, 5, []int32{4, 0}},
	}
	for _, tc := range tests {
		got, err := MajorityVote(tc.votes, tc.C)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v (%v), want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestConsistentVoteByHand(t *testing.T) {
	// Three clients with two students each, four examples, three classes. votes[k][j][n].
	votes := [][][]int32{
		{{0, 1, 2, 0}, {0, 2, 2, 1}}, // client 0: agrees on 0 (ex 0) and 2 (ex 2)
		{{1, 1, 0, 2}, {1, 1, 1, 0}}, // client 1: agrees on 1 (ex 0) and 1 (ex 1)
		{{1, 0, 0, 1}, {2, 0, 0, 2}}, // client 2: agrees on 0 (ex 1) and 0 (ex 2)
	}
	// Example 0: client 0 gives class 0 two votes, client 1 class 1 two votes, client 2 abstains:
	// a tie, class 0. Example 1: client 1 -> 1 (2 votes), client 2 -> 0 (2): tie, 0.
	// Example 2: client 0 -> 2 (2 votes), client 2 -> 0 (2), client 1 abstains: tie, 0.
	// Example 3: every client abstains; the plain vote of the six students 0,1,2,0,1,2 is a
	// three-way tie, class 0.
	got, err := ConsistentVote(votes, 3)
	if err != nil || !slices.Equal(got, []int32{0, 0, 0, 0}) {
		t.Errorf("ties: %v (%v)", got, err)
	}
	// Without ties: where the plain vote and the consistent vote differ, consistency decides.
	votes = [][][]int32{
		{{2, 1}, {2, 1}}, // agrees on 2, 1
		{{1, 0}, {0, 2}}, // abstains on both
		{{1, 0}, {0, 2}}, // abstains on both
		{{0, 2}, {1, 0}}, // abstains on both
	}
	// Example 0: plain counts 0:3, 1:3, 2:2 would say 0; only client 0 is consistent -> 2.
	// Example 1: plain counts 0:3, 1:2, 2:3 would say 0; consistent -> 1.
	got, err = ConsistentVote(votes, 3)
	if err != nil || !slices.Equal(got, []int32{2, 1}) {
		t.Errorf("consistent: %v (%v), want [2 1]", got, err)
	}
	plain, err := MajorityVote([][]int32{{2, 1}, {2, 1}, {1, 0}, {0, 2}, {1, 0}, {0, 2}, {0, 2}, {1, 0}}, 3)
	if err != nil || !slices.Equal(plain, []int32{0, 0}) {
		t.Errorf("plain: %v (%v), want [0 0]", plain, err)
	}
}

func TestVoteErrors(t *testing.T) {
	if _, err := MajorityVote(nil, 3); err == nil || !strings.Contains(err.Error(), "no voters") {
		t.Errorf("no voters: %v", err)
	}
	if _, err := MajorityVote([][]int32{{0, 1}, {0}}, 3); err == nil || !strings.Contains(err.Error(), "voter 1 gives 1 labels, want 2") {
		t.Errorf("lengths: %v", err)
	}
	if _, err := MajorityVote([][]int32{{0, 3}}, 3); err == nil || !strings.Contains(err.Error(), "example 1: class 3") {
		t.Errorf("class: %v", err)
	}
	if _, err := ConsistentVote([][][]int32{{{0}}, {}}, 3); err == nil || !strings.Contains(err.Error(), "client 1 has no students") {
		t.Errorf("no students: %v", err)
	}
	if _, err := ConsistentVote([][][]int32{{{0}}, {{-1}}}, 3); err == nil || !strings.Contains(err.Error(), "client 1, student 0, example 0") {
		t.Errorf("class: %v", err)
	}
}

// fedktDigits splits digits into a server set and 3 skewed clients.
func fedktDigits(t *testing.T) (cfg models.Config, clients []*data.Dataset, server, test *data.Dataset) {
	t.Helper()
	requireSklearn(t)
	train, test, err := data.Load("digits", data.Dir(), data.WithSeed(1))
	if err != nil {
		t.Fatal(err)
	}
	server, rest, err := data.SplitServer(train, 0.2, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := partition.Heterogeneity(rest.Labels, rest.NumClasses, 3, 0.3, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, idx := range p.Clients {
		d, err := rest.Select(idx)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, d)
	}
	cfg = models.Config{Options: models.Options{Arch: models.ArchMLP, Hidden: []int{32}}, InputShape: train.Shape, NumClasses: train.NumClasses, Seed: 5}
	return cfg, clients, server, test
}

func TestFedKTDigits(t *testing.T) {
	cfg, clients, server, test := fedktDigits(t)
	kc := FedKTConfig{Students: 2, Teachers: 3, Seed: 9,
		Local:   LocalConfig{Epochs: 15, BatchSize: 16, LearningRate: 0.05},
		Distill: DistillConfig{Epochs: 15, BatchSize: 32, LearningRate: 5e-3}}
	g, err := FedKT(cfg, clients, server.X, kc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := posterior.Stack([]*posterior.Posterior{g})
	if err != nil {
		t.Fatal(err)
	}
	probs, _, _, err := EnsembleMean(cfg, st, test.X)
	if err != nil {
		t.Fatal(err)
	}
	pred := argmaxRows(probs, test.NumClasses)
	correct := 0
	for n, y := range test.Labels {
		if pred[n] == y {
			correct++
		}
	}
	acc := float64(correct) / float64(len(pred))
	if acc < 0.7 { // chance is 0.1
		t.Errorf("FedKT test accuracy %.3f, want well above chance", acc)
	}
	// Same seeds, same model.
	again, err := FedKT(cfg, clients, server.X, kc)
	if err != nil {
		t.Fatal(err)
	}
	a, b := flatOf(t, g), flatOf(t, again)
	if !slices.Equal(a, b) {
		t.Error("FedKT with the same seeds gave a different model")
	}
	t.Logf("FedKT on digits (3 clients, h = 0.3, s = 2, t = 3): test accuracy %.3f", acc)
}

func TestFedKTErrors(t *testing.T) {
	tiny := &data.Dataset{Name: "tiny", X: []float32{1, 2, 3, 4}, Shape: []int{2}, Labels: []int32{0, 1}, NumClasses: 2}
	cfg := models.Config{Options: models.Options{Arch: models.ArchMLP}, InputShape: []int{2}, NumClasses: 2}
	tests := []struct {
		name string
		cfg  models.Config
		kc   FedKTConfig
		want string
	}{
		{"regression", models.Config{Options: models.Options{Arch: models.ArchMLP}, InputShape: []int{2}, Task: models.Regression}, FedKTConfig{}, "classification only"},
		{"students", cfg, FedKTConfig{Students: -1}, "fedkt.students = -1"},
		{"teachers", cfg, FedKTConfig{Teachers: 3}, "fedkt.teachers = 3: client 0 has only 2 examples"},
	}
	for _, tc := range tests {
		if _, err := FedKT(tc.cfg, []*data.Dataset{tiny}, tiny.X, tc.kc); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := FedKT(cfg, []*data.Dataset{tiny}, []float32{1, 2, 3}, FedKTConfig{Teachers: 1}); err == nil || !strings.Contains(err.Error(), "3 server input values") {
		t.Errorf("server inputs: %v", err)
	}
	if _, err := FedKT(cfg, nil, tiny.X, FedKTConfig{}); err == nil || !strings.Contains(err.Error(), "no clients") {
		t.Errorf("no clients: %v", err)
	}
}
