package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// TestNotifyEnd checks how the end of a run reaches the loop's observers: each in order, an
// observer's failure turning a completed run into a failed one for the observers after it (with
// both errors in the run's), and a cancellation staying a cancellation.
func TestNotifyEnd(t *testing.T) {
	var seen []string
	record := func(name string, fail error) roundObserver {
		return roundObserver{name: name, end: func(e loopEnd) error {
			seen = append(seen, fmt.Sprintf("%s:%s:%v", name, e.state, e.err != nil))
			return fail
		}}
	}
	broken := errors.New("disk full")
	obs := []roundObserver{record("status", broken), {name: "no end"}, record("progress", nil)}
	err := notifyEnd(obs, loopEnd{round: 3, state: results.Completed})
	if !errors.Is(err, broken) || len(seen) != 2 || seen[0] != "status:completed:false" || seen[1] != "progress::true" {
		t.Errorf("a failed status write: error %v, observers saw %v; want the failure, and progress to see a failed run", err, seen)
	}
	seen = nil
	err = notifyEnd(obs[1:], loopEnd{round: 2, err: context.Canceled})
	if !errors.Is(err, context.Canceled) || len(seen) != 1 || !(loopEnd{err: err}).cancelled() {
		t.Errorf("a cancelled run: error %v, observers saw %v", err, seen)
	}
	seen = nil
	if err := notifyEnd(obs[1:], loopEnd{round: 4, state: results.Diverged, reason: "NaN"}); err != nil || seen[0] != "progress:diverged:false" {
		t.Errorf("a diverged run: error %v, observers saw %v", err, seen)
	}
}
