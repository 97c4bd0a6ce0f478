package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"fedbayes.dev/fedbayes/internal/strictjson"
)

// State is how a run ended.
type State string

// The states recorded in status.json. A run without status.json is incomplete (still running,
// or killed).
const (
	Completed State = "completed"
	Diverged  State = "diverged"
	Failed    State = "failed"
)

// Status is the content of status.json, written once when a run ends.
type Status struct {
	// State is completed, diverged or failed.
	State State `json:"state"`
	// Round is the last round run: the final round when completed, the round where the loss or
	// parameters became non-finite when diverged, the round in progress when failed.
	Round int `json:"round"`
	// Reason says why a run diverged (e.g. "NaN loss on client 3").
	Reason string `json:"reason,omitempty"`
	// Error is the error message of a failed run.
	Error string `json:"error,omitempty"`
	// Time is when the status was written (RFC 3339, UTC).
	Time string `json:"time"`
}

// Validate checks the fields for the state.
func (s Status) Validate() error {
	switch s.State {
	case Completed:
	case Diverged:
		if s.Reason == "" {
			return fmt.Errorf("results: status diverged at round %d without a reason", s.Round)
		}
	case Failed:
		if s.Error == "" {
			return fmt.Errorf("results: status failed at round %d without an error message", s.Round)
		}
	default:
		return fmt.Errorf("results: status state %q is not one of %q, %q, %q", s.State, Completed, Diverged, Failed)
	}
	if s.Round < 0 {
		return fmt.Errorf("results: status round %d is negative", s.Round)
	}
	return nil
}

// String describes the status in words, e.g. "diverged at round 7: NaN loss".
func (s Status) String() string {
	switch s.State {
	case Diverged:
		return fmt.Sprintf("diverged at round %d: %s", s.Round, s.Reason)
	case Failed:
		return fmt.Sprintf("failed at round %d: %s", s.Round, s.Error)
	case "":
		return "incomplete (no status)"
	}
	return fmt.Sprintf("%s after round %d", s.State, s.Round)
}

// readStatus reads status.json in dir; ok is false when the file does not exist.
func readStatus(dir string) (st Status, ok bool, err error) {
	path := filepath.Join(dir, StatusFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Status{}, false, nil
	}
	if err != nil {
		return Status{}, false, fmt.Errorf("results: %w", err)
	}
	if err := strictjson.DecodeFile(path, data, &st); err != nil {
		return Status{}, false, fmt.Errorf("results: %w", err)
	}
	if err := st.Validate(); err != nil {
		return Status{}, false, fmt.Errorf("%w (in %s)", err, path)
	}
	return st, true, nil
}

func nowUTC() string { return time.Now().UTC().Format(time.RFC3339) }
