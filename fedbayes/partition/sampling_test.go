package partition

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// sampler builds a Sampler of c clients, m per round, or fails the test.
func sampler(t *testing.T, c, m int, sizes []int, opt SamplingOptions) *Sampler {
	t.Helper()
	p, err := NewParticipation(c, float64(m)/float64(c), 11)
	if err != nil {
		t.Fatal(err)
	}
	if sizes == nil {
		sizes = slices.Repeat([]int{10}, c)
	}
	s, err := NewSampler(p, sizes, opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSamplerUniformIsParticipation: the default sampler draws what Participation.Round draws, and
// every client returns.
func TestSamplerUniformIsParticipation(t *testing.T) {
	s := sampler(t, 100, 10, nil, SamplingOptions{})
	for r := range 20 {
		d, err := s.Round(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := s.Participation.Round(r)
		if !reflect.DeepEqual(d.Sampled, want) || !reflect.DeepEqual(d.Returned, want) {
			t.Fatalf("round %d: %+v, want %v", r, d, want)
		}
	}
}

// TestSamplerSize: size-proportional sampling of 1 of 2 clients of sizes 1 and 3 draws the large one
// with probability 3/4; draws reproduce per round.
func TestSamplerSize(t *testing.T) {
	s := sampler(t, 2, 1, []int{1, 3}, SamplingOptions{Method: SampleSize})
	large := 0
	const rounds = 4000
	for r := range rounds {
		d, err := s.Round(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := s.Round(r, nil)
		if !reflect.DeepEqual(d, again) {
			t.Fatalf("round %d not reproducible", r)
		}
		if d.Sampled[0] == 1 {
			large++
		}
	}
	// 3/4 of 4000 = 3000, standard deviation sqrt(4000 * 3/16) = 27.
	if large < 2900 || large > 3100 {
		t.Errorf("the client of size 3 drawn %d of %d times, want about 3000", large, rounds)
	}
}

// TestSamplerPowerOfChoice: with d = C every client is a candidate, so the round keeps the m highest
// losses (a client not seen yet, +Inf, first; NaN last).
func TestSamplerPowerOfChoice(t *testing.T) {
	s := sampler(t, 6, 2, nil, SamplingOptions{Method: SamplePowerOfChoice, Candidates: 6})
	for _, tc := range []struct {
		losses []float64
		want   []int
	}{
		{[]float64{0.1, 0.9, 0.3, 0.8, 0.2, 0.5}, []int{1, 3}},
		{[]float64{0.1, 0.9, math.Inf(1), 0.8, 0.2, 0.5}, []int{1, 2}},
		{[]float64{math.NaN(), 0.9, 0.3, math.NaN(), 0.2, 0.5}, []int{1, 5}},
	} {
		d, err := s.Round(3, tc.losses)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(d.Sampled, tc.want) {
			t.Errorf("losses %v: sampled %v, want %v", tc.losses, d.Sampled, tc.want)
		}
	}
	// d = 3 of 6: the two kept are the two highest losses among 3 size-drawn candidates, so the
	// lowest-loss client, at best third among any three, is never kept.
	s = sampler(t, 6, 2, nil, SamplingOptions{Method: SamplePowerOfChoice, Candidates: 3})
	losses := []float64{0.1, 0.9, 0.3, 0.8, 0.2, 0.5}
	for r := range 200 {
		d, _ := s.Round(r, losses)
		if slices.Contains(d.Sampled, 0) {
			t.Fatalf("round %d: kept the lowest-loss client: %v", r, d.Sampled)
		}
	}
	if _, err := s.Round(0, nil); err == nil {
		t.Errorf("power-of-choice without losses gave no error")
	}
}

// TestSamplerAvailability: a client with availability 0 is never drawn, one with 1 always is when
// the others are rare; the draw reproduces.
func TestSamplerAvailability(t *testing.T) {
	s := sampler(t, 4, 2, nil, SamplingOptions{Availability: []float64{0, 1, 0.5, 0.5}})
	for r := range 300 {
		d, err := s.Round(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(d.Sampled, 0) {
			t.Fatalf("round %d: drew the never-available client: %v", r, d.Sampled)
		}
		if len(d.Sampled) != 2 {
			t.Fatalf("round %d: %v", r, d.Sampled)
		}
	}
	if _, err := NewSampler(Participation{NumClients: 3, Active: 2, Seed: 1}, []int{1, 1, 1},
		SamplingOptions{Availability: []float64{0, 0, 1}}); err == nil || !strings.Contains(err.Error(), "only 1 clients") {
		t.Errorf("too few possible clients: %v", err)
	}
}

// TestSamplerDrops: with drop rate 0.3 and 10 sampled, floor(0.7 * 10) = 7 return, a subset of the
// sampled; with 0.99 one still returns.
func TestSamplerDrops(t *testing.T) {
	s := sampler(t, 50, 10, nil, SamplingOptions{DropRate: 0.3})
	seen := map[int]bool{}
	for r := range 50 {
		d, err := s.Round(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Returned) != 7 || !slices.IsSorted(d.Returned) {
			t.Fatalf("round %d: returned %v", r, d.Returned)
		}
		for _, k := range d.Returned {
			if !slices.Contains(d.Sampled, k) {
				t.Fatalf("round %d: client %d returned without being sampled", r, k)
			}
		}
		seen[len(d.Sampled)] = true
	}
	if !seen[10] || len(seen) != 1 {
		t.Errorf("sampled counts %v, want 10 every round", seen)
	}
	one := sampler(t, 10, 5, nil, SamplingOptions{DropRate: 0.99})
	if d, _ := one.Round(0, nil); len(d.Returned) != 1 {
		t.Errorf("drop rate 0.99: %v returned, want one", d.Returned)
	}
}

// TestSamplerStragglers: floor(0.25 * 8) = 2 clients are stragglers; they run between 1 and
// floor(full/2) steps, the others all of them.
func TestSamplerStragglers(t *testing.T) {
	s := sampler(t, 8, 4, nil, SamplingOptions{StragglerRate: 0.25})
	var slow []int
	for k := range 8 {
		if s.Straggler(k) {
			slow = append(slow, k)
		}
	}
	if len(slow) != 2 {
		t.Fatalf("stragglers %v, want 2", slow)
	}
	counts := map[int]bool{}
	for r := range 100 {
		for k := range 8 {
			n := s.StragglerSteps(r, k, 10)
			if !s.Straggler(k) && n != 10 {
				t.Fatalf("client %d is no straggler but runs %d of 10 steps", k, n)
			}
			if s.Straggler(k) {
				if n < 1 || n > 5 {
					t.Fatalf("straggler %d runs %d of 10 steps, want 1..5", k, n)
				}
				counts[n] = true
				if n != s.StragglerSteps(r, k, 10) {
					t.Fatalf("straggler steps not reproducible")
				}
			}
		}
	}
	if len(counts) != 5 {
		t.Errorf("straggler steps take the values %v, want all of 1..5", counts)
	}
	if n := s.StragglerSteps(0, slow[0], 1); n != 1 {
		t.Errorf("a one-step client runs %d steps", n)
	}
}

func TestSamplerErrors(t *testing.T) {
	p := Participation{NumClients: 10, Active: 3, Seed: 1}
	sizes := slices.Repeat([]int{5}, 10)
	for _, tc := range []struct {
		opt  SamplingOptions
		want string
	}{
		{SamplingOptions{Method: "best"}, "unknown method"},
		{SamplingOptions{Method: SamplePowerOfChoice, Candidates: 2}, "2 candidates"},
		{SamplingOptions{Candidates: 4}, "4 candidates"},
		{SamplingOptions{Availability: []float64{1, 1}}, "2 values for 10 clients"},
		{SamplingOptions{Availability: []float64{1.5}}, "must be in [0, 1]"},
		{SamplingOptions{DropRate: 1}, "drop_rate"},
		{SamplingOptions{StragglerRate: -0.1}, "straggler_rate"},
	} {
		if _, err := NewSampler(p, sizes, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.opt, err, tc.want)
		}
	}
	if _, err := NewSampler(p, sizes[:3], SamplingOptions{}); err == nil {
		t.Errorf("3 sizes for 10 clients gave no error")
	}
}
