package engine

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"fedbayes.dev/fedbayes/posterior"
)

// returned keeps, of the round last set up (clientTraining.round), what the clients that returned
// sent back: their outcome, ids and sizes, in the order of ids. It records their mean training NLL
// for power-of-choice. Every sampled client trained (the K-client network trains them together); a
// client that drops is left out here, so the server strategy never sees it. out is not changed (a
// shared first-round outcome stays whole for the other runs).
func (c *clientTraining) returned(out localOutcome, ids, sizes []int) (localOutcome, []int, []int, error) {
	keep := make([]int, 0, len(ids)) // positions in ids of the clients that returned
	for j, id := range ids {
		if slices.Contains(c.draw.Returned, id) {
			keep = append(keep, j)
		}
	}
	if len(keep) != len(c.draw.Returned) {
		return localOutcome{}, nil, nil, fmt.Errorf("engine: the round's returned clients %v are not among its sampled %v", c.draw.Returned, ids)
	}
	if c.losses != nil && out.nll != nil {
		for _, j := range keep {
			c.losses[ids[j]] = out.nll[j]
		}
	}
	if len(keep) == len(ids) {
		return out, ids, sizes, nil
	}
	kept := out
	kept.loss, kept.nll, kept.clients = pickAt(out.loss, keep), pickAt(out.nll, keep), pickAt(out.clients, keep)
	kept.diverged = keptDivergence(out.diverged, pickAt(ids, keep), kept.loss)
	var err error
	if out.stacked != nil {
		if kept.stacked, err = pickStacked(out.stacked, keep); err != nil {
			return localOutcome{}, nil, nil, err
		}
	}
	if out.draws != nil {
		kept.draws = make([]*posterior.Posterior, len(out.draws))
		for s, d := range out.draws {
			if kept.draws[s], err = pickStacked(d, keep); err != nil {
				return localOutcome{}, nil, nil, err
			}
		}
	}
	return kept, pickAt(ids, keep), pickAt(sizes, keep), nil
}

// pickAt returns v's elements at positions keep (nil for a nil v).
func pickAt[T any](v []T, keep []int) []T {
	if v == nil {
		return nil
	}
	r := make([]T, len(keep))
	for i, j := range keep {
		r[i] = v[j]
	}
	return r
}

// keptDivergence is the divergence of the clients that returned: none when the round did not
// diverge or only dropped clients' losses are not finite (a dropped client's update never reaches
// the server); the round's message when it names a returned client; else the first returned
// client's non-finite mean loss.
func keptDivergence(diverged string, ids []int, loss []float64) string {
	if diverged == "" || loss == nil {
		return diverged
	}
	first := ""
	for j, l := range loss {
		if math.IsNaN(l) || math.IsInf(l, 0) {
			if strings.HasPrefix(diverged, fmt.Sprintf("client %d:", ids[j])) {
				return diverged
			}
			if first == "" {
				first = fmt.Sprintf("client %d: mean training loss %v over the round", ids[j], l)
			}
		}
	}
	return first
}

// pickStacked returns the clients at positions keep of a posterior stacked on a leading client axis,
// stacked again.
func pickStacked(stacked *posterior.Posterior, keep []int) (*posterior.Posterior, error) {
	list, err := posterior.Unstack(stacked)
	if err != nil {
		return nil, fmt.Errorf("engine: the returned clients: %w", err)
	}
	sel := make([]*posterior.Posterior, len(keep))
	for i, j := range keep {
		if j >= len(list) {
			return nil, fmt.Errorf("engine: the returned clients: position %d of %d stacked clients", j, len(list))
		}
		sel[i] = list[j]
	}
	return posterior.Stack(sel)
}

// restoreCheckpoint sets power-of-choice's client losses from a checkpoint blob (a run without
// power-of-choice keeps none).
func (c *clientTraining) restoreCheckpoint(blob []byte) error {
	if c.losses == nil {
		return nil
	}
	losses, err := checkpointLosses(blob)
	if err != nil {
		return err
	}
	if len(losses) != len(c.losses) {
		return fmt.Errorf("checkpoint: holds %d client losses for power-of-choice over %d clients", len(losses), len(c.losses))
	}
	copy(c.losses, losses)
	return nil
}

// sampledIfDropped is a row's Sampled: the sampled clients when some of them did not return, else
// nil (Clients lists them all).
func sampledIfDropped(sampled, returned []int) []int {
	if len(sampled) == len(returned) {
		return nil
	}
	return sampled
}
