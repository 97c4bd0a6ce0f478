package results

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"fedbayes.dev/fedbayes/internal/strictjson"
)

// checkpointMagic is the first line of every checkpoint file.
const checkpointMagic = "fedbayes-checkpoint 1\n"

// Checkpoint is the state saved after a round: an opaque blob (e.g. a gob of the global posterior
// and the RNG state) and what the rows file held when it was saved.
type Checkpoint struct {
	// Round is the last round completed when the checkpoint was saved.
	Round int
	// Blob is the engine's state, returned byte for byte.
	Blob []byte
	// Rows is the number of rows appended up to and including Round; LastRowRound is the round
	// of the last of them (-1 if none). Resume checks the rows file against both.
	Rows, LastRowRound int
}

// checkpointHeader is the JSON line after the magic line.
type checkpointHeader struct {
	Round        int    `json:"round"`
	Rows         int    `json:"rows"`
	LastRowRound int    `json:"last_row_round"`
	Size         int    `json:"size"`
	SHA256       string `json:"sha256"`
}

// checkpointName is the file name of the checkpoint of a round; names sort by round.
func checkpointName(round int) string { return fmt.Sprintf("round-%09d.ckpt", round) }

// checkpointRound parses a checkpoint file name; ok is false for other files.
func checkpointRound(name string) (int, bool) {
	if !strings.HasPrefix(name, "round-") || !strings.HasSuffix(name, ".ckpt") {
		return 0, false
	}
	r, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, "round-"), ".ckpt"))
	return r, err == nil && r >= 0
}

// encodeCheckpoint writes c in the checkpoint file format.
func encodeCheckpoint(c Checkpoint) ([]byte, error) {
	sum := sha256.Sum256(c.Blob)
	h, err := json.Marshal(checkpointHeader{Round: c.Round, Rows: c.Rows, LastRowRound: c.LastRowRound,
		Size: len(c.Blob), SHA256: hex.EncodeToString(sum[:])})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(len(checkpointMagic) + len(h) + 1 + len(c.Blob))
	buf.WriteString(checkpointMagic)
	buf.Write(h)
	buf.WriteByte('\n')
	buf.Write(c.Blob)
	return buf.Bytes(), nil
}

// readCheckpointFile reads and verifies one checkpoint file (magic, header, size, SHA-256).
func readCheckpointFile(path string) (Checkpoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("results: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	magic, err := r.ReadString('\n')
	if err != nil || magic != checkpointMagic {
		return Checkpoint{}, fmt.Errorf("results: %s: not a fedbayes checkpoint", path)
	}
	line, err := r.ReadBytes('\n')
	if err != nil {
		return Checkpoint{}, fmt.Errorf("results: %s: truncated checkpoint header", path)
	}
	var h checkpointHeader
	if err := strictjson.DecodeFile(path+" (header)", line, &h); err != nil {
		return Checkpoint{}, fmt.Errorf("results: bad checkpoint header: %w", err)
	}
	blob, err := io.ReadAll(r)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("results: %s: %w", path, err)
	}
	if len(blob) != h.Size {
		return Checkpoint{}, fmt.Errorf("results: %s: checkpoint holds %d bytes, header says %d", path, len(blob), h.Size)
	}
	if sum := sha256.Sum256(blob); hex.EncodeToString(sum[:]) != h.SHA256 {
		return Checkpoint{}, fmt.Errorf("results: %s: checkpoint checksum mismatch", path)
	}
	if want, _ := checkpointRound(filepath.Base(path)); want != h.Round {
		return Checkpoint{}, fmt.Errorf("results: %s: file name says round %d, header says %d", path, want, h.Round)
	}
	return Checkpoint{Round: h.Round, Blob: blob, Rows: h.Rows, LastRowRound: h.LastRowRound}, nil
}

// listCheckpoints returns the rounds of the checkpoint files of a run, in increasing order.
func listCheckpoints(runDir string) ([]int, error) {
	entries, err := os.ReadDir(filepath.Join(runDir, CheckpointsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	var rounds []int
	for _, e := range entries {
		if r, ok := checkpointRound(e.Name()); ok && !e.IsDir() {
			rounds = append(rounds, r)
		}
	}
	sort.Ints(rounds)
	return rounds, nil
}

// LatestCheckpoint returns the newest valid checkpoint of the run in runDir; ok is false when
// there is none. Invalid checkpoint files (wrong checksum, truncated) are skipped, each noted in
// skipped.
func LatestCheckpoint(runDir string) (c Checkpoint, ok bool, skipped []string, err error) {
	rounds, err := listCheckpoints(runDir)
	if err != nil {
		return Checkpoint{}, false, nil, err
	}
	for i := len(rounds) - 1; i >= 0; i-- {
		c, err := readCheckpointFile(filepath.Join(runDir, CheckpointsDir, checkpointName(rounds[i])))
		if err != nil {
			skipped = append(skipped, err.Error())
			continue
		}
		return c, true, skipped, nil
	}
	return Checkpoint{}, false, skipped, nil
}
