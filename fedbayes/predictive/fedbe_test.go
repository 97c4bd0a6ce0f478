package predictive

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// blobs returns a 3-class dataset of Gaussian blobs in 2-D; class c is centred at centres[c].
func blobs(n int, seed uint64) *data.Dataset {
	rng := rand.New(rand.NewPCG(seed, 3))
	centres := [3][2]float64{{2, 0}, {-1, 1.7}, {-1, -1.7}}
	d := &data.Dataset{Name: "blobs", Shape: []int{2}, NumClasses: 3}
	for i := 0; i < n; i++ {
		c := rng.IntN(3)
		d.X = append(d.X, float32(centres[c][0]+0.7*rng.NormFloat64()), float32(centres[c][1]+0.7*rng.NormFloat64()))
		d.Labels = append(d.Labels, int32(c))
	}
	return d
}

func blobConfig() models.Config {
	return models.Config{Options: models.Options{Arch: models.ArchMLP, Hidden: []int{8}}, InputShape: []int{2}, NumClasses: 3, Seed: 9}
}

func TestFedBETeachers(t *testing.T) {
	cfg := blobConfig()
	cfg.Clients = 3
	m, err := models.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clients, err := m.Posterior()
	if err != nil {
		t.Fatal(err)
	}
	for _, dist := range []string{"gaussian", "dirichlet"} {
		teachers, mean, err := FedBETeachers(clients, []float64{1, 2, 1}, FedBEConfig{Distribution: dist, Samples: 4}, 5)
		if err != nil {
			t.Fatal(err)
		}
		tf, _ := flatten(teachers)
		cf, _ := flatten(clients)
		mf, _ := flatten(mean)
		if tf.dims[0][0] != 4+3+1 {
			t.Fatalf("%s: %d teachers, want 8", dist, tf.dims[0][0])
		}
		for i := range tf.values {
			per := len(mf.values[i])
			for j := 0; j < per; j++ {
				// Teachers 4..6 are the clients, teacher 7 the weighted mean.
				for k := 0; k < 3; k++ {
					if tf.values[i][(4+k)*per+j] != cf.values[i][k*per+j] {
						t.Fatalf("%s: teacher %d is not client %d", dist, 4+k, k)
					}
				}
				want := (cf.values[i][j] + 2*cf.values[i][per+j] + cf.values[i][2*per+j]) / 4
				if !near(float64(tf.values[i][7*per+j]), float64(want), 1e-5) || tf.values[i][7*per+j] != mf.values[i][j] {
					t.Fatalf("%s: teacher 7 is not the weighted mean", dist)
				}
			}
		}
	}
	if _, _, err := FedBETeachers(clients, nil, FedBEConfig{Distribution: "uniform"}, 1); err == nil {
		t.Errorf("unknown distribution accepted")
	}
}

// skewedClients splits 900 blobs among three clients, each holding every example of one class and 20
// of the next.
func skewedClients() []*data.Dataset {
	all := blobs(900, 1)
	var byClass [3][]int
	for i, y := range all.Labels {
		byClass[y] = append(byClass[y], i)
	}
	var clients []*data.Dataset
	for c := 0; c < 3; c++ {
		idx := append([]int(nil), byClass[c]...)
		idx = append(idx, byClass[(c+1)%3][:20]...)
		clients = append(clients, all.Subset(idx))
	}
	return clients
}

// TestFedBERounds runs two FedBE rounds (FedBEServer) on three clients that each see mostly one class.
func TestFedBERounds(t *testing.T) {
	clients := skewedClients()
	server, test := blobs(300, 2), blobs(300, 3)
	fc := FedBEConfig{Samples: 4, Seed: 3, Distill: DistillConfig{Epochs: 6, BatchSize: 30, SWACycles: 2}}
	lc := LocalConfig{Epochs: 3, BatchSize: 20, LearningRate: 0.05}
	// Two rounds of Chen & Chao's Alg. 1 (the engine runs them as the fedbe-gaussian strategy): the
	// clients train from the global model, FedBEServer makes the next one.
	fedbe := func() *posterior.Posterior {
		cfg := blobConfig()
		cfg.Clients = len(clients)
		m, err := models.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		global, err := m.ClientPosterior(0)
		if err != nil {
			t.Fatal(err)
		}
		sizes := []float64{float64(clients[0].Len()), float64(clients[1].Len()), float64(clients[2].Len())}
		for r := 1; r <= 2; r++ {
			if err := m.SetPosterior(global); err != nil {
				t.Fatal(err)
			}
			l := lc
			l.Seed = int64(r)
			if _, err := TrainClients(m, clients, l); err != nil {
				t.Fatal(err)
			}
			trained, err := m.Posterior()
			if err != nil {
				t.Fatal(err)
			}
			if global, err = FedBEServer(blobConfig(), trained, sizes, server.X, fc, r); err != nil {
				t.Fatal(err)
			}
		}
		return global
	}
	g := fedbe()
	st, err := posterior.Stack([]*posterior.Posterior{g})
	if err != nil {
		t.Fatal(err)
	}
	probs, _, _, err := EnsembleMean(blobConfig(), st, test.X)
	if err != nil {
		t.Fatal(err)
	}
	r, err := metrics.EvaluateClassification(probs, test.Labels, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Accuracy < 0.85 {
		t.Errorf("FedBE accuracy %v on separable blobs", r.Accuracy)
	}
	// Same seed, same global model.
	g2 := fedbe()
	a := tensors.MustCopyFlatData[float32](g.Params[0].Mean)
	b := tensors.MustCopyFlatData[float32](g2.Params[0].Mean)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different FedBE models")
		}
	}
}

// TestSharpen checks the pseudo labels' sharpening against hand-computed rows: (0.5, 0.3, 0.2) at
// temperature 0.5 squares and normalises to (0.25, 0.09, 0.04)/0.38, at 2 takes square roots, at 1
// is unchanged, and a class at probability 0 keeps the 1e-8 floor.
func TestSharpen(t *testing.T) {
	sq := math.Sqrt(0.5) + math.Sqrt(0.3) + math.Sqrt(0.2)
	for _, tc := range []struct {
		in   []float32
		temp float64
		want []float64
	}{
		{[]float32{0.5, 0.3, 0.2}, 0.5, []float64{0.25 / 0.38, 0.09 / 0.38, 0.04 / 0.38}},
		{[]float32{0.5, 0.3, 0.2}, 2, []float64{math.Sqrt(0.5) / sq, math.Sqrt(0.3) / sq, math.Sqrt(0.2) / sq}},
		{[]float32{0.5, 0.3, 0.2}, 1, []float64{0.5, 0.3, 0.2}},
		{[]float32{1, 0, 0, 0.2, 0.2, 0.6}, 0.5, []float64{1 / (1 + 2e-8), 1e-8 / (1 + 2e-8), 1e-8 / (1 + 2e-8), 0.04 / 0.44, 0.04 / 0.44, 0.36 / 0.44}},
		// A near-uniform row at a small temperature still sharpens towards its largest class.
		{[]float32{0.35, 0.33, 0.32}, 0.01, []float64{1 / (1 + math.Pow(0.33/0.35, 100) + math.Pow(0.32/0.35, 100)),
			math.Pow(0.33/0.35, 100) / (1 + math.Pow(0.33/0.35, 100) + math.Pow(0.32/0.35, 100)),
			math.Pow(0.32/0.35, 100) / (1 + math.Pow(0.33/0.35, 100) + math.Pow(0.32/0.35, 100))}},
	} {
		p := append([]float32(nil), tc.in...)
		if err := Sharpen(p, 3, tc.temp); err != nil {
			t.Fatalf("Sharpen(%v, %v): %v", tc.in, tc.temp, err)
		}
		for i, w := range tc.want {
			if math.Abs(float64(p[i])-w) > 1e-6 {
				t.Errorf("Sharpen(%v, %v)[%d] = %v, want %v", tc.in, tc.temp, i, p[i], w)
			}
		}
	}
	for _, bad := range []struct {
		n, classes int
		temp       float64
	}{{4, 3, 0.5}, {3, 0, 0.5}, {3, 3, 0}, {3, 3, -1}, {3, 3, math.Inf(1)}, {3, 3, math.NaN()}, {3, 3, 0.5}} { // the last: a row of zeros
		if err := Sharpen(make([]float32, bad.n), bad.classes, bad.temp); err == nil {
			t.Errorf("Sharpen(%d values, %d classes, temperature %v): no error", bad.n, bad.classes, bad.temp)
		}
	}
}

// TestFedBEServerSharpens checks that the temperature reaches the distillation: from the same
// trained clients, each of which sees mostly one class (so their averaged predictive is diffuse),
// the student distilled on labels sharpened at temperature 0.3 is more confident on the server set
// than the one distilled on the plain average.
func TestFedBEServerSharpens(t *testing.T) {
	clients := skewedClients()
	cfg := blobConfig()
	cfg.Clients = len(clients)
	m, err := models.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TrainClients(m, clients, LocalConfig{Epochs: 3, BatchSize: 20, LearningRate: 0.05, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	trained, err := m.Posterior()
	if err != nil {
		t.Fatal(err)
	}
	server := blobs(300, 2)
	confidence := func(temperature float64) float64 {
		fc := FedBEConfig{Samples: 4, Seed: 3, Temperature: temperature, Distill: DistillConfig{Epochs: 6, BatchSize: 30, SWACycles: 2}}
		g, err := FedBEServer(blobConfig(), trained, nil, server.X, fc, 1)
		if err != nil {
			t.Fatal(err)
		}
		st, err := posterior.Stack([]*posterior.Posterior{g})
		if err != nil {
			t.Fatal(err)
		}
		probs, _, _, err := EnsembleMean(blobConfig(), st, server.X)
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for n := 0; n < len(probs); n += 3 {
			sum += float64(max(probs[n], probs[n+1], probs[n+2]))
		}
		return sum / float64(len(probs)/3)
	}
	for _, bad := range []float64{-0.5, math.NaN(), math.Inf(1)} {
		fc := FedBEConfig{Samples: 4, Seed: 3, Temperature: bad}
		if _, err := FedBEServer(blobConfig(), trained, nil, server.X, fc, 1); err == nil || !strings.Contains(err.Error(), "temperature") {
			t.Errorf("FedBEServer with temperature %v: %v, want an error naming the temperature", bad, err)
		}
	}
	plain, sharp := confidence(0), confidence(0.3)
	if !(sharp > plain+0.02) {
		t.Errorf("mean confidence on the server set: %.4f with temperature 0.3, %.4f without; want the sharpened labels to give a more confident student", sharp, plain)
	}
	t.Logf("mean confidence: %.4f plain, %.4f sharpened", plain, sharp)
}
