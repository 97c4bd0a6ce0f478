package engine

import (
	"encoding/json"

	"fedbayes.dev/fedbayes/results"
)

// ExpectedRounds returns the rounds at which a run of the engine spec stored in meta evaluates the
// global model: every Evaluation.Every-th round and the last (see the round loop in run.go). ok is
// false when meta's spec is not an engine spec with a number of rounds (a predictive run, for
// example); results.Run.Check then checks its rows against the status only. It is a results.Expect.
func ExpectedRounds(meta results.Meta) (rounds []int, ok bool) {
	var s struct {
		Training *struct {
			Rounds int `json:"rounds"`
		} `json:"training"`
		Evaluation *struct {
			Every int `json:"every"`
		} `json:"evaluation"`
	}
	if json.Unmarshal(meta.Spec, &s) != nil || s.Training == nil || s.Training.Rounds < 1 {
		return nil, false
	}
	every := 1 // the default, which a stored spec may leave out
	if s.Evaluation != nil && s.Evaluation.Every > 0 {
		every = s.Evaluation.Every
	}
	const maxRounds = 1 << 20 // a bound on the list (8 MB); no spec runs that many rounds
	if s.Training.Rounds > maxRounds {
		return nil, false
	}
	for r := every; r < s.Training.Rounds; r += every {
		rounds = append(rounds, r)
	}
	return append(rounds, s.Training.Rounds), true
}

var _ results.Expect = ExpectedRounds
