package partition

import (
	"reflect"
	"strings"
	"testing"
)

func TestParticipation(t *testing.T) {
	// Ozer et al. (2022): 100 clients, 10 active per round.
	p, err := NewParticipation(100, 0.1, 42)
	if err != nil {
		t.Fatal(err)
	}
	if p.Active != 10 {
		t.Fatalf("active = %d, want 10", p.Active)
	}
	seen := make([]int, 100)
	var first []int
	for r := range 200 {
		ids, err := p.Round(r)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != 10 {
			t.Fatalf("round %d: %d clients", r, len(ids))
		}
		for j, id := range ids {
			if id < 0 || id >= 100 || (j > 0 && ids[j-1] >= id) {
				t.Fatalf("round %d: clients %v not distinct, sorted and in range", r, ids)
			}
			seen[id]++
		}
		again, _ := p.Round(r)
		if !reflect.DeepEqual(ids, again) {
			t.Fatalf("round %d: not reproducible", r)
		}
		if r == 0 {
			first = ids
		} else if r == 1 && reflect.DeepEqual(ids, first) {
			t.Errorf("rounds 0 and 1 drew the same clients")
		}
	}
	// 2,000 draws over 100 clients: each is active about 20 times.
	for id, n := range seen {
		if n < 5 || n > 40 {
			t.Errorf("client %d active in %d of 200 rounds", id, n)
		}
	}
	all, _ := NewParticipation(10, 1, 1)
	if ids, _ := all.Round(3); len(ids) != 10 {
		t.Errorf("gamma 1: %v", ids)
	}
	one, _ := NewParticipation(10, 0.01, 1)
	if one.Active != 1 {
		t.Errorf("tiny gamma: %d active, want 1", one.Active)
	}
}

func TestParticipationErrors(t *testing.T) {
	for _, tc := range []struct {
		c     int
		gamma float64
		want  string
	}{{0, 0.5, "number of clients"}, {10, 0, "active fraction"}, {10, 1.5, "active fraction"}} {
		if _, err := NewParticipation(tc.c, tc.gamma, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewParticipation(%d, %v): %v", tc.c, tc.gamma, err)
		}
	}
	p, _ := NewParticipation(10, 0.5, 1)
	if _, err := p.Round(-1); err == nil {
		t.Errorf("negative round gave no error")
	}
	if _, err := (Participation{NumClients: 3, Active: 4}).Round(0); err == nil {
		t.Errorf("invalid participation gave no error")
	}
}
