package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"fedbayes.dev/fedbayes/internal/strictjson"
)

// Timing splits the wall time of one round, in seconds.
type Timing struct {
	// LocalSeconds is the local training of the active clients (for a first round that the engine
	// shared between runs of one call, the time that shared training took).
	LocalSeconds float64 `json:"local_s"`
	// AggregateSeconds is the server's weighting and aggregation.
	AggregateSeconds float64 `json:"aggregate_s"`
	// EvalSeconds is the evaluation of the global model.
	EvalSeconds float64 `json:"eval_s"`
}

// Total returns the sum of the three parts.
func (t Timing) Total() float64 { return t.LocalSeconds + t.AggregateSeconds + t.EvalSeconds }

// Row is one evaluated round, one line of rounds.jsonl. Non-finite metric values (a diverging
// NLL) are kept: they are written as the strings "NaN", "+Inf" and "-Inf".
type Row struct {
	// Round is the round number (0 may be used for the model before training).
	Round int
	// Metrics holds the evaluation of the global model after the round, by name (see Accuracy,
	// NLL, ECE, Spread, ...).
	Metrics map[string]float64
	// Time is the wall time of the round's parts.
	Time Timing
	// BytesSent is the number of bytes sent between server and clients in the round (both ways).
	BytesSent int64
	// Clients lists the ids of the round's active clients: those whose models the server combined.
	Clients []int
	// Sampled lists the ids of the clients sampled in the round when some of them did not return
	// (dropouts, engine spec partition.sampling.drop_rate); nil when every sampled client returned.
	Sampled []int
	// ClientWeights are the aggregation weights of the active clients, in the order of Clients.
	ClientWeights []float64
	// ClientAccuracy holds per-client test accuracies of the global model (for fairness).
	ClientAccuracy []float64
}

// MetricNames returns the names in r.Metrics, sorted.
func (r Row) MetricNames() []string {
	names := make([]string, 0, len(r.Metrics))
	for k := range r.Metrics {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Validate checks a row before it is appended (its values are checked on reading, CheckValues: a
// diverging run's NaN NLL is recorded).
func (r Row) Validate() error {
	if r.Round < 0 {
		return fmt.Errorf("results: row round %d is negative", r.Round)
	}
	for k := range r.Metrics {
		if k == "" {
			return fmt.Errorf("results: row of round %d: empty metric name", r.Round)
		}
	}
	for name, v := range map[string]float64{"local": r.Time.LocalSeconds, "aggregate": r.Time.AggregateSeconds, "eval": r.Time.EvalSeconds} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("results: row of round %d: %s time %v is not a finite non-negative number of seconds", r.Round, name, v)
		}
	}
	if r.BytesSent < 0 {
		return fmt.Errorf("results: row of round %d: bytes sent %d is negative", r.Round, r.BytesSent)
	}
	if len(r.ClientWeights) > 0 && len(r.Clients) > 0 && len(r.ClientWeights) != len(r.Clients) {
		return fmt.Errorf("results: row of round %d: %d client weights for %d clients", r.Round, len(r.ClientWeights), len(r.Clients))
	}
	if r.Sampled != nil && len(r.Sampled) <= len(r.Clients) {
		return fmt.Errorf("results: row of round %d: %d clients sampled, not more than the %d that returned", r.Round, len(r.Sampled), len(r.Clients))
	}
	return r.checkHealth() // all posterior-health metrics or none, and only beside the spread
}

// jfloat is a float64 that survives JSON when it is not finite.
type jfloat float64

func (f jfloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (f *jfloat) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*f = jfloat(math.NaN())
		return nil
	case `"+Inf"`, `"Inf"`:
		*f = jfloat(math.Inf(1))
		return nil
	case `"-Inf"`:
		*f = jfloat(math.Inf(-1))
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("not a number: %s", b)
	}
	*f = jfloat(v)
	return nil
}

// rowJSON is the line format of Row.
type rowJSON struct {
	Round          int               `json:"round"`
	Metrics        map[string]jfloat `json:"metrics"`
	Time           Timing            `json:"time"`
	BytesSent      int64             `json:"bytes_sent"`
	Clients        []int             `json:"clients,omitempty"`
	Sampled        []int             `json:"sampled,omitempty"`
	ClientWeights  []jfloat          `json:"client_weights,omitempty"`
	ClientAccuracy []jfloat          `json:"client_accuracy,omitempty"`
}

func toJFloats(v []float64) []jfloat {
	if v == nil {
		return nil
	}
	out := make([]jfloat, len(v))
	for i, x := range v {
		out[i] = jfloat(x)
	}
	return out
}

func fromJFloats(v []jfloat) []float64 {
	if v == nil {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// MarshalJSON writes the row in the rounds.jsonl line format (without the newline).
func (r Row) MarshalJSON() ([]byte, error) {
	j := rowJSON{Round: r.Round, Metrics: map[string]jfloat{}, Time: r.Time, BytesSent: r.BytesSent,
		Clients: r.Clients, Sampled: r.Sampled, ClientWeights: toJFloats(r.ClientWeights), ClientAccuracy: toJFloats(r.ClientAccuracy)}
	for k, v := range r.Metrics {
		j.Metrics[k] = jfloat(v)
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads a row in the rounds.jsonl line format; unknown fields are an error.
func (r *Row) UnmarshalJSON(b []byte) error {
	var j rowJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the row")
	}
	*r = Row{Round: j.Round, Metrics: make(map[string]float64, len(j.Metrics)), Time: j.Time, BytesSent: j.BytesSent,
		Clients: j.Clients, Sampled: j.Sampled, ClientWeights: fromJFloats(j.ClientWeights), ClientAccuracy: fromJFloats(j.ClientAccuracy)}
	for k, v := range j.Metrics {
		r.Metrics[k] = float64(v)
	}
	return nil
}

// rowsFile is the content of a rounds.jsonl file as read.
type rowsFile struct {
	// rows are the complete rows, in increasing round.
	rows []Row
	// torn is the length of a final segment without its newline that is not a complete row (a
	// write cut short by a kill): it is not part of rows.
	torn int
	// unterminated is true when the final row is complete but lacks its newline. Such a row is
	// kept: a JSON object cannot be a proper prefix of another one, so only the newline is missing.
	unterminated bool
}

// parseRows reads the content of a rounds.jsonl file. A final segment without its newline is kept
// when it parses as a complete row (only the newline is missing; see rowsFile.unterminated) and is
// otherwise a torn write, dropped with its length in torn. A malformed complete line, a row that
// fails Row.Validate, or rounds that do not increase, are errors naming the line.
func parseRows(path string, data []byte) (rowsFile, error) {
	var rf rowsFile
	var tail []byte
	if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) {
		tail = data[i+1:]
		data = data[:i+1]
	}
	line := 0
	add := func(text []byte) error {
		line++
		var r Row
		if err := decodeRow(text, &r); err != nil {
			return fmt.Errorf("results: %s line %d: malformed row (%v); the file is corrupt", path, line, err)
		}
		if err := r.Validate(); err != nil {
			return fmt.Errorf("results: %s line %d: %w", path, line, err)
		}
		if n := len(rf.rows); n > 0 && r.Round <= rf.rows[n-1].Round {
			return fmt.Errorf("results: %s line %d: round %d does not follow round %d", path, line, r.Round, rf.rows[n-1].Round)
		}
		rf.rows = append(rf.rows, r)
		return nil
	}
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		text := data[:i]
		data = data[i+1:]
		if err := add(text); err != nil {
			return rowsFile{}, err
		}
	}
	if len(tail) > 0 {
		var r Row
		if decodeRow(tail, &r) == nil {
			if err := add(tail); err != nil {
				return rowsFile{}, err
			}
			rf.unterminated = true
		} else {
			rf.torn = len(tail)
		}
	}
	return rf, nil
}

// decodeRow decodes one line of a rounds.jsonl file strictly (strictjson.Decode: no duplicate key, no
// number outside float64's range, no unknown field); an error gives the column in the line.
func decodeRow(text []byte, r *Row) error {
	err := strictjson.Decode(text, r)
	var je *strictjson.Error
	if errors.As(err, &je) {
		where := fmt.Sprintf("column %d", je.Column)
		if je.Path != "" {
			where = je.Path + ", " + where
		}
		return fmt.Errorf("%s: %s", where, je.Problem)
	}
	return err
}

// readRows reads dir/rounds.jsonl (see parseRows); a missing file is an error.
func readRows(dir string) (rowsFile, error) {
	path := filepath.Join(dir, RowsFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return rowsFile{}, fmt.Errorf("results: %w", err)
	}
	return parseRows(path, data)
}

// encodeRows writes rows in the rounds.jsonl format.
func encodeRows(rows []Row) ([]byte, error) {
	var buf bytes.Buffer
	for _, r := range rows {
		b, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("results: row of round %d: %w", r.Round, err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}
