package engine

import (
	"context"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/progress"
)

func TestRunListAndSelection(t *testing.T) {
	s, err := ParseSpec([]byte(`{"name": "rl", "dataset": {"name": "digits"}, "seeds": [3, 4],
		"sweep": {"aggregation.rule": ["EAA", "GAA"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	refs, err := RunList(s)
	if err != nil {
		t.Fatal(err)
	}
	settings, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 4 {
		t.Fatalf("%d runs, want 4: %+v", len(refs), refs)
	}
	// Settings in sweep order, then seeds; the index is the position.
	for i, r := range refs {
		st := settings[i/2]
		if r.Index != i || r.Setting != st.Name || r.Seed != st.Spec.Seeds[i%2] || !strings.HasSuffix(r.Name, "-seed"+[]string{"3", "4"}[i%2]) {
			t.Errorf("run %d = %+v (setting %s)", i, r, st.Name)
		}
	}
	for _, idx := range []int{-1, 4} {
		_, err := Run(context.Background(), s, Options{Dir: t.TempDir(), Runs: []int{idx}, Progress: progress.Discard, NoFigures: true})
		if err == nil || !strings.Contains(err.Error(), "out of range: the spec has 4 runs (0 to 3)") {
			t.Errorf("run index %d: %v", idx, err)
		}
	}
	bad := *s
	bad.Training.Optimizer = "lbfgs"
	if _, err := RunList(&bad); err == nil || !strings.Contains(err.Error(), "lbfgs") {
		t.Errorf("invalid spec listed: %v", err)
	}
}
