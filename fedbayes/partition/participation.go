package partition

import (
	"fmt"
	"math"
	"slices"
)

// Participation draws the active clients of each round when only a fraction of the clients take
// part: Ozer et al. (2022), Sec. 5 (100 clients, 10 active per round), after McMahan et al. (2017).
// Each round's draw depends only on (Seed, round), so any round can be replayed on its own.
type Participation struct {
	// NumClients is the number of clients C.
	NumClients int
	// Active is the number of clients drawn per round: max(1, round(gamma C)).
	Active int
	// Seed makes the draws deterministic.
	Seed uint64
}

// NewParticipation returns the participation of numClients clients with a fraction gamma in (0, 1]
// active per round.
func NewParticipation(numClients int, gamma float64, seed uint64) (Participation, error) {
	if numClients < 1 {
		return Participation{}, fmt.Errorf("partition: participation: number of clients must be positive, got %d", numClients)
	}
	if !(gamma > 0 && gamma <= 1) {
		return Participation{}, fmt.Errorf("partition: participation: active fraction must be in (0, 1], got %v", gamma)
	}
	active := max(1, int(math.Round(gamma*float64(numClients))))
	return Participation{NumClients: numClients, Active: active, Seed: seed}, nil
}

// Round returns the active clients of a round (round >= 0), in increasing order, drawn uniformly
// without replacement.
func (p Participation) Round(round int) ([]int, error) {
	if p.NumClients < 1 || p.Active < 1 || p.Active > p.NumClients {
		return nil, fmt.Errorf("partition: participation: invalid %d active of %d clients", p.Active, p.NumClients)
	}
	if round < 0 {
		return nil, fmt.Errorf("partition: participation: round must be >= 0, got %d", round)
	}
	rng := newRNG(p.Seed^(uint64(round)*0xbf58476d1ce4e5b9), streamParticipation+uint64(round))
	// A partial Fisher-Yates shuffle of the identity 0..C-1 that stores only the positions it has
	// swapped (Active of them at most), so that a round costs O(Active) whatever the number of
	// idle clients: the same draws as shuffling the whole identity.
	moved := make(map[int]int, 2*p.Active)
	at := func(i int) int {
		if v, ok := moved[i]; ok {
			return v
		}
		return i
	}
	out := make([]int, p.Active)
	for i := range p.Active {
		j := i + rng.IntN(p.NumClients-i)
		out[i], moved[j] = at(j), at(i)
	}
	slices.Sort(out)
	return out, nil
}
