package partition

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSamplerTrace, by hand: 5 clients, 2 per round. A round that lists exactly 2 clients samples
// them; one that lists 3 samples 2 of those 3; a size-proportional draw stays among the listed; a
// round outside the trace is an error; the draws reproduce.
func TestSamplerTrace(t *testing.T) {
	trace := [][]int{{3, 1}, {0, 4}, {2, 3, 4}}
	for _, method := range []SamplingMethod{SampleUniform, SampleSize} {
		s := sampler(t, 5, 2, []int{1, 2, 3, 4, 5}, SamplingOptions{Method: method, Trace: trace})
		want := [][]int{{1, 3}, {0, 4}}
		for r := 1; r <= 3; r++ {
			d, err := s.Round(r, nil)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := s.Round(r, nil); !reflect.DeepEqual(d, again) {
				t.Fatalf("%s round %d: not reproducible", method, r)
			}
			if r <= 2 && !reflect.DeepEqual(d.Sampled, want[r-1]) {
				t.Errorf("%s round %d: sampled %v, want %v", method, r, d.Sampled, want[r-1])
			}
			if len(d.Sampled) != 2 || !slices.IsSorted(d.Sampled) || d.Sampled[0] == d.Sampled[1] {
				t.Errorf("%s round %d: sampled %v", method, r, d.Sampled)
			}
			for _, k := range d.Sampled {
				if !slices.Contains(trace[r-1], k) {
					t.Errorf("%s round %d: client %d sampled, but the trace lists %v", method, r, k, trace[r-1])
				}
			}
		}
		for _, r := range []int{0, 4} {
			if _, err := s.Round(r, nil); err == nil || !strings.Contains(err.Error(), "outside the availability trace's rounds 1 to 3") {
				t.Errorf("%s round %d: %v", method, r, err)
			}
		}
	}
	// Round 3 over many seeds: each of the C(3, 2) = 3 pairs of the listed clients comes up.
	pairs := map[[2]int]bool{}
	for seed := uint64(0); seed < 60; seed++ {
		p := Participation{NumClients: 5, Active: 2, Seed: seed}
		s, err := NewSampler(p, slices.Repeat([]int{1}, 5), SamplingOptions{Trace: trace})
		if err != nil {
			t.Fatal(err)
		}
		d, _ := s.Round(3, nil)
		pairs[[2]int{d.Sampled[0], d.Sampled[1]}] = true
	}
	if len(pairs) != 3 {
		t.Errorf("round 3 drew the pairs %v, want all three of {2, 3, 4}", pairs)
	}
}

// TestSamplerTraceKeepsItsCopy: changing the caller's table after NewSampler changes nothing.
func TestSamplerTraceKeepsItsCopy(t *testing.T) {
	trace := [][]int{{0, 1}}
	s := sampler(t, 3, 2, nil, SamplingOptions{Trace: trace})
	trace[0][0] = 2
	if d, _ := s.Round(1, nil); !reflect.DeepEqual(d.Sampled, []int{0, 1}) {
		t.Errorf("sampled %v after the caller's change, want [0 1]", d.Sampled)
	}
}

// TestSamplerTraceRefuses: the trace's errors name the field trace and the round.
func TestSamplerTraceRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  SamplingOptions
		want string
	}{
		{"empty trace", SamplingOptions{Trace: [][]int{}}, "no rounds"},
		{"empty round", SamplingOptions{Trace: [][]int{{0, 1}, {}}}, "round 2 lists no clients"},
		{"unknown client", SamplingOptions{Trace: [][]int{{0, 5}}}, "round 1 lists client 5, but the clients are 0 to 4"},
		{"negative client", SamplingOptions{Trace: [][]int{{-1, 2}}}, "round 1 lists client -1"},
		{"twice", SamplingOptions{Trace: [][]int{{0, 1}, {3, 3, 1}}}, "round 2 lists client 3 twice"},
		{"too few", SamplingOptions{Trace: [][]int{{0, 1}, {2}}}, "round 2 lists 1 available clients, fewer than the 2 of a round"},
		{"with availability", SamplingOptions{Trace: [][]int{{0, 1}}, Availability: []float64{1}}, "not both"},
	} {
		p := Participation{NumClients: 5, Active: 2, Seed: 1}
		_, err := NewSampler(p, slices.Repeat([]int{1}, 5), c.opt)
		var se *SamplingError
		if !errors.As(err, &se) || se.Field != "trace" || !strings.Contains(se.Problem, c.want) {
			t.Errorf("%s: %v, want a trace error with %q", c.name, err, c.want)
		}
	}
}

// TestReadTrace: one round a line, ids by commas or spaces, comments skipped; an empty line, a
// non-id and an empty file are refused with the line.
func TestReadTrace(t *testing.T) {
	got, err := ReadTrace(strings.NewReader("# round 1 first\n3, 1\n0 4\n  2,3 ,4\t\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{3, 1}, {0, 4}, {2, 3, 4}}; !reflect.DeepEqual(got, want) {
		t.Errorf("trace %v, want %v", got, want)
	}
	for _, c := range []struct{ text, want string }{
		{"0 1\n\n2 3\n", "line 2 (round 2) lists no clients"},
		{"0 1\n# c\n2 x\n", `line 3 (round 2): "x" is not a client id`},
		{"0 -1\n", `line 1 (round 1): "-1" is not a client id`},
		{"# only a comment\n", "no rounds"},
		{"", "no rounds"},
	} {
		if _, err := ReadTrace(strings.NewReader(c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
	dir := t.TempDir()
	path := dir + "/trace.txt"
	if err := os.WriteFile(path, []byte("0,1\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if tr, err := ReadTraceFile(path); err != nil || len(tr) != 2 {
		t.Errorf("ReadTraceFile: %v %v", tr, err)
	}
	if _, err := ReadTraceFile(dir + "/missing.txt"); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("a missing file: %v", err)
	}
}
