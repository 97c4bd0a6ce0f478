package engine

import (
	"bytes"
	"encoding/gob"
	"fmt"

	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// checkpointVersion is the version of the engine's checkpoint blob.
const checkpointVersion = 1

// checkpointState is what the engine needs to continue a run after a round: the round, the global
// posterior and, for power-of-choice sampling, each client's mean training NLL of the last round it returned (nil
// otherwise).
// Every random stream is derived from (seed, round, client, epoch), and the optimizer state starts
// from zero every round, so nothing else is needed.
type checkpointState struct {
	Version int
	Round   int
	Global  []checkpointParam
	Losses  []float64
	// Strategy is a stateful strategy's state (strategy.Stateful: partitioned VI's sites), or nil.
	Strategy []byte
}

// checkpointParam is one parameter of a posterior in plain data.
type checkpointParam struct {
	Name         string
	Dims         []int
	Mean, LogVar []float32
	Gaussian     bool
}

// encodeCheckpoint writes the state after round as a gob blob; losses are power-of-choice's client
// losses (nil without it), state a stateful strategy's state (nil without one).
func encodeCheckpoint(round int, global *posterior.Posterior, losses []float64, state []byte) ([]byte, error) {
	st := checkpointState{Version: checkpointVersion, Round: round, Losses: losses, Strategy: state}
	for _, q := range global.Params {
		mean, err := tensors.CopyFlatData[float32](q.Mean)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: parameter %q: %w", q.Name, err)
		}
		cp := checkpointParam{Name: q.Name, Dims: q.Mean.Shape().Dimensions, Mean: mean}
		if q.LogVar != nil {
			cp.Gaussian = true
			if cp.LogVar, err = tensors.CopyFlatData[float32](q.LogVar); err != nil {
				return nil, fmt.Errorf("checkpoint: parameter %q: %w", q.Name, err)
			}
		}
		st.Global = append(st.Global, cp)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(st); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return buf.Bytes(), nil
}

// decodeCheckpoint reads a blob written by encodeCheckpoint: the round, the global model and the
// strategy's state (nil when it keeps none).
func decodeCheckpoint(blob []byte) (round int, global *posterior.Posterior, state []byte, err error) {
	var st checkpointState
	if err := gob.NewDecoder(bytes.NewReader(blob)).Decode(&st); err != nil {
		return 0, nil, nil, fmt.Errorf("checkpoint: unreadable engine state: %w", err)
	}
	if st.Version != checkpointVersion {
		return 0, nil, nil, fmt.Errorf("checkpoint: engine state version %d; this fedbayes reads version %d", st.Version, checkpointVersion)
	}
	global = &posterior.Posterior{}
	for _, cp := range st.Global {
		size := 1
		for _, d := range cp.Dims {
			size *= d
		}
		if len(cp.Mean) != size || (cp.Gaussian && len(cp.LogVar) != size) {
			return 0, nil, nil, fmt.Errorf("checkpoint: parameter %q: %d values for shape %v", cp.Name, len(cp.Mean), cp.Dims)
		}
		q := posterior.Param{Name: cp.Name, Mean: tensors.FromFlatDataAndDimensions(cp.Mean, cp.Dims...)}
		if cp.Gaussian {
			q.LogVar = tensors.FromFlatDataAndDimensions(cp.LogVar, cp.Dims...)
		}
		global.Params = append(global.Params, q)
	}
	if err := global.Validate(); err != nil {
		return 0, nil, nil, fmt.Errorf("checkpoint: %w", err)
	}
	return st.Round, global, st.Strategy, nil
}

// checkpointLosses reads the client losses of a blob written by encodeCheckpoint (nil when it holds
// none).
func checkpointLosses(blob []byte) ([]float64, error) {
	var st checkpointState
	if err := gob.NewDecoder(bytes.NewReader(blob)).Decode(&st); err != nil {
		return nil, fmt.Errorf("checkpoint: unreadable engine state: %w", err)
	}
	return st.Losses, nil
}
