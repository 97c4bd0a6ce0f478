package metrics

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestClassificationHandComputed(t *testing.T) {
	probs := []float32{0.85, 0.15, 0.35, 0.65, 0.05, 0.95}
	labels := []int32{0, 0, 1}
	for _, tc := range []struct {
		bins int
		ece  float64
	}{
		// 10 bins: confidences 0.85, 0.65, 0.95 fall in three bins, |acc - conf| = 0.15, 0.65, 0.05.
		{10, (0.15 + 0.65 + 0.05) / 3},
		// 2 bins: all in (0.5, 1]: mean confidence 2.45/3, accuracy 2/3.
		{2, 2.45/3 - 2.0/3},
	} {
		r, err := EvaluateClassification(probs, labels, 2, tc.bins)
		mustNoErr(t, err)
		checks := []struct {
			name      string
			got, want float64
		}{
			{"accuracy", r.Accuracy, 2.0 / 3},
			{"nll", r.NLL, 0.42121144946133443},
			{"brier", r.Brier, (0.045 + 0.845 + 0.005) / 3},
			{"ece", r.ECE, tc.ece},
			{"ece%", r.ECEPercent(), 100 * tc.ece},
			{"acc%", r.AccuracyPercent(), 200.0 / 3},
		}
		for _, c := range checks {
			if !near(c.got, c.want, 1e-6*math.Max(1, math.Abs(c.want))) {
				t.Errorf("bins=%d %s = %.9g, want %.9g", tc.bins, c.name, c.got, c.want)
			}
		}
		if r.N != 3 || len(r.Reliability) != tc.bins {
			t.Fatalf("bins=%d: N=%d, %d reliability bins", tc.bins, r.N, len(r.Reliability))
		}
	}
	r, err := EvaluateClassification(probs, labels, 2, 10)
	mustNoErr(t, err)
	want := map[int]ReliabilityBin{
		6: {Lower: 0.6, Upper: 0.7, Count: 1, Confidence: 0.65, Accuracy: 0},
		8: {Lower: 0.8, Upper: 0.9, Count: 1, Confidence: 0.85, Accuracy: 1},
		9: {Lower: 0.9, Upper: 1.0, Count: 1, Confidence: 0.95, Accuracy: 1},
	}
	for b, got := range r.Reliability {
		w := want[b]
		if b != 6 && b != 8 && b != 9 {
			w = ReliabilityBin{Lower: float64(b) / 10, Upper: float64(b+1) / 10}
		}
		if got.Count != w.Count || !near(got.Confidence, w.Confidence, 1e-6) || !near(got.Accuracy, w.Accuracy, 0) ||
			!near(got.Lower, w.Lower, 1e-12) || !near(got.Upper, w.Upper, 1e-12) {
			t.Errorf("bin %d = %+v, want %+v", b, got, w)
		}
	}
}

func TestBinOf(t *testing.T) {
	for _, tc := range []struct {
		conf float64
		bins int
		want int
	}{
		{0, 10, 0}, {0.05, 10, 0}, {0.1, 10, 0}, {0.1000001, 10, 1}, {0.5, 2, 0}, {0.51, 2, 1}, {1, 10, 9}, {1, 1, 0},
	} {
		if got := binOf(tc.conf, tc.bins); got != tc.want {
			t.Errorf("binOf(%v, %d) = %d, want %d", tc.conf, tc.bins, got, tc.want)
		}
	}
}

// refClassification is an independent float64 reference for the classification metrics.
func refClassification(probs []float32, labels []int32, c, bins int) (acc, nll, brier, ece float64) {
	n := len(labels)
	cnt := make([]float64, bins)
	conf := make([]float64, bins)
	hit := make([]float64, bins)
	for i := range n {
		best := 0
		for k := 1; k < c; k++ {
			if probs[i*c+k] > probs[i*c+best] {
				best = k
			}
		}
		ok := best == int(labels[i])
		if ok {
			acc++
		}
		nll -= math.Log(math.Max(float64(probs[i*c+int(labels[i])]), ProbFloor))
		for k := range c {
			y := 0.0
			if k == int(labels[i]) {
				y = 1
			}
			d := float64(probs[i*c+k]) - y
			brier += d * d
		}
		p := float64(probs[i*c+best])
		b := 0
		for b < bins-1 && p > float64(b+1)/float64(bins) {
			b++
		}
		cnt[b]++
		conf[b] += p
		if ok {
			hit[b]++
		}
	}
	for b := range bins {
		if cnt[b] > 0 {
			ece += cnt[b] / float64(n) * math.Abs(hit[b]/cnt[b]-conf[b]/cnt[b])
		}
	}
	fn := float64(n)
	return acc / fn, nll / fn, brier / fn, ece
}

func TestClassificationMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ n, c, bins int }{{500, 10, 15}, {300, 3, 10}, {200, 100, 20}} {
		probs := randomProbs(rng, tc.n, tc.c, 3)
		labels := randomLabels(rng, tc.n, tc.c)
		r, err := EvaluateClassification(probs, labels, tc.c, tc.bins)
		mustNoErr(t, err)
		acc, nll, brier, ece := refClassification(probs, labels, tc.c, tc.bins)
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"acc", r.Accuracy, acc}, {"nll", r.NLL, nll}, {"brier", r.Brier, brier}, {"ece", r.ECE, ece}} {
			if !near(c.got, c.want, 1e-12) {
				t.Errorf("%+v: %s = %.15g, reference %.15g", tc, c.name, c.got, c.want)
			}
		}
	}
}

func TestClassificationStreamingMatchesOneShot(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, c = 1000, 10
	probs := randomProbs(rng, n, c, 2)
	labels := randomLabels(rng, n, c)
	want, err := EvaluateClassification(probs, labels, c, 15)
	mustNoErr(t, err)
	for _, batch := range []int{1, 7, 64, 999, 1000} {
		a, err := NewClassification(c, 15)
		mustNoErr(t, err)
		for s := 0; s < n; s += batch {
			e := min(n, s+batch)
			mustNoErr(t, a.Add(probs[s*c:e*c], labels[s:e]))
		}
		got, err := a.Result()
		mustNoErr(t, err)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("batch %d: streamed result differs from one-shot:\n%+v\n%+v", batch, got, want)
		}
	}
}

func TestClassificationErrors(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name   string
		probs  []float32
		labels []int32
		want   string
	}{
		{"empty", nil, nil, "empty"},
		{"length", []float32{0.5, 0.5, 1}, []int32{0}, "3 probabilities"},
		{"sum", []float32{0.5, 0.5, 0.6, 0.3}, []int32{0, 1}, "batch 1, example 1 (example 2 overall): class probabilities sum to 0.9"},
		{"nan", []float32{nan, 1}, []int32{0}, "class 0 is NaN"},
		{"negative", []float32{-0.1, 1.1}, []int32{0}, "negative"},
		{"label high", []float32{0.5, 0.5}, []int32{2}, "label 2 out of range [0, 2)"},
		{"label negative", []float32{0.5, 0.5}, []int32{-1}, "label -1"},
		{"logits", []float32{2.3, 1}, []int32{0}, "not logits"},
	} {
		a, err := NewClassification(2, 10)
		mustNoErr(t, err)
		mustNoErr(t, a.Add([]float32{0.9, 0.1}, []int32{0}))
		before, _ := a.Result()
		err = a.Add(tc.probs, tc.labels)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		after, _ := a.Result()
		if !reflect.DeepEqual(before, after) {
			t.Errorf("%s: rejected batch changed the accumulator", tc.name)
		}
	}
	for _, tc := range []struct{ c, bins int }{{1, 10}, {0, 10}, {3, -1}} {
		if _, err := NewClassification(tc.c, tc.bins); err == nil {
			t.Errorf("NewClassification(%d, %d) gave no error", tc.c, tc.bins)
		}
	}
	a, _ := NewClassification(3, 0)
	if _, err := a.Result(); err == nil || !strings.Contains(err.Error(), "no examples") {
		t.Errorf("empty Result error %v", err)
	}
	if err := a.SetTolerance(0); err == nil {
		t.Errorf("SetTolerance(0) gave no error")
	}
	mustNoErr(t, a.SetTolerance(0.2))
	mustNoErr(t, a.Add([]float32{0.5, 0.2, 0.2}, []int32{0})) // sums to 0.9, accepted at tolerance 0.2
}

func TestClassificationZeroProbabilityNLLIsFinite(t *testing.T) {
	r, err := EvaluateClassification([]float32{1, 0}, []int32{1}, 2, 0)
	mustNoErr(t, err)
	if want := -math.Log(ProbFloor); !near(r.NLL, want, 1e-9) || r.Accuracy != 0 {
		t.Errorf("NLL %v accuracy %v, want %v and 0", r.NLL, r.Accuracy, want)
	}
}
