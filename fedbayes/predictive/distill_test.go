package predictive

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/models"
)

// softTeacher returns N inputs of 2 features and a teacher softmax(A x) over 3 classes.
func softTeacher(N int) (x, probs []float32) {
	rng := rand.New(rand.NewPCG(21, 22))
	A := [3][2]float64{{2, 0}, {-1, 1.5}, {-1, -1.5}}
	for n := 0; n < N; n++ {
		x0, x1 := rng.NormFloat64(), rng.NormFloat64()
		x = append(x, float32(x0), float32(x1))
		row := make([]float64, 3)
		for c := range row {
			row[c] = A[c][0]*x0 + A[c][1]*x1
		}
		normalizeLog(row)
		for _, v := range row {
			probs = append(probs, float32(math.Exp(v)))
		}
	}
	return x, probs
}

// meanKL is the mean KL(teacher || student) over examples.
func meanKL(teacher, student []float32, C int) float64 {
	var s float64
	for i, p := range teacher {
		if p > 0 {
			s += float64(p) * (math.Log(float64(p)) - math.Log(max(float64(student[i]), 1e-12)))
		}
	}
	return s / float64(len(teacher)/C)
}

func TestDistillClassification(t *testing.T) {
	const N = 600
	x, probs := softTeacher(N)
	tests := []struct {
		name string
		cfg  DistillConfig
	}{
		{"adam", DistillConfig{Epochs: 30, BatchSize: 50, LearningRate: 0.05, Seed: 1}},
		{"sgd+swa", DistillConfig{Optimizer: "sgd", Epochs: 30, BatchSize: 50, LearningRate: 0.1, SWACycles: 3, Seed: 1}},
	}
	for _, tc := range tests {
		student, err := models.NewWithBackend(backend.MustDefault(), models.Config{Options: models.Options{Arch: models.ArchMLP, Hidden: []int{}}, InputShape: []int{2},
			NumClasses: 3, Clients: 2, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		before, err := PredictModel(student, x, 1)
		if err != nil {
			t.Fatal(err)
		}
		// Student 1 learns the uniform distribution instead.
		uniform := make([]float32, len(probs))
		for i := range uniform {
			uniform[i] = 1.0 / 3
		}
		if err := Distill(student, x, []Teacher{{Probs: probs}, {Probs: uniform}}, tc.cfg); err != nil {
			t.Fatal(err)
		}
		after, err := PredictModel(student, x, 1)
		if err != nil {
			t.Fatal(err)
		}
		kb, ka := meanKL(probs, before.Probs[0], 3), meanKL(probs, after.Probs[0], 3)
		if !(ka < 0.05 && ka < kb/5) {
			t.Errorf("%s: KL(teacher || student) %v before, %v after", tc.name, kb, ka)
		}
		if ku := meanKL(uniform, after.Probs[1], 3); !(ku < 0.05) {
			t.Errorf("%s: student 1: KL to uniform %v", tc.name, ku)
		}
	}
}

func TestDistillRegression(t *testing.T) {
	m := newLinear(t, 1, 1)
	var x, y []float32
	for i := 0; i < 200; i++ {
		v := float32(i)/50 - 2
		x = append(x, v)
		y = append(y, 2*v-1)
	}
	if err := Distill(m, x, []Teacher{{Mean: y}}, DistillConfig{Epochs: 60, BatchSize: 20, LearningRate: 0.05, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	cp, err := PredictModel(m, x, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range cp.Mean[0] {
		if math.Abs(float64(v-y[i])) > 0.1 {
			t.Fatalf("example %d: student %v, teacher %v", i, v, y[i])
		}
	}
}

func TestDistillErrors(t *testing.T) {
	m := newLinear(t, 2, 1)
	tests := []struct {
		teachers []Teacher
		cfg      DistillConfig
		want     string
	}{
		{[]Teacher{{Mean: []float32{1}}}, DistillConfig{}, "1 teachers for a student model of 2"},
		{[]Teacher{{Mean: []float32{1}}, {Mean: []float32{1, 2}}}, DistillConfig{}, "teacher 1 has 2 means"},
		{[]Teacher{{Mean: []float32{1}}, {Mean: []float32{1}}}, DistillConfig{Optimizer: "lbfgs"}, "lbfgs"},
		{[]Teacher{{Mean: []float32{1}}, {Mean: []float32{1}}}, DistillConfig{Epochs: 2, SWACycles: 3}, "SWA cycles 3"},
	}
	for _, tc := range tests {
		if err := Distill(m, []float32{0.5}, tc.teachers, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
