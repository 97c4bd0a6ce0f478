package results

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestRowJSONRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		row  Row
	}{
		{"full", accRow(3, 0.875, 0.3125)},
		{"non-finite metrics", Row{Round: 7, Metrics: map[string]float64{NLL: math.Inf(1), "loss": math.NaN(), "x": math.Inf(-1)},
			ClientWeights: []float64{math.NaN(), 1}, Clients: []int{4, 9}}},
		{"exact decimals", Row{Round: 0, Metrics: map[string]float64{Accuracy: 0.1 + 0.2, ECE: 1e-17}}},
		{"empty", Row{Round: 1, Metrics: map[string]float64{}}},
		{"dropouts", Row{Round: 2, Metrics: map[string]float64{}, Clients: []int{1, 5}, Sampled: []int{1, 3, 5}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.row)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "\n") {
				t.Fatalf("row JSON spans lines: %s", b)
			}
			var got Row
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if !rowsEqual(got, tc.row) {
				t.Errorf("round trip of %s:\n got %+v\nwant %+v", b, got, tc.row)
			}
		})
	}
}

// rowsEqual compares rows treating NaN as equal to NaN.
func rowsEqual(a, b Row) bool {
	a2, _ := json.Marshal(a)
	b2, _ := json.Marshal(b)
	return string(a2) == string(b2) && a.Round == b.Round && len(a.Metrics) == len(b.Metrics) &&
		reflect.DeepEqual(a.Clients, b.Clients) && reflect.DeepEqual(a.Sampled, b.Sampled)
}

func TestRowJSONRejects(t *testing.T) {
	for _, line := range []string{
		`{"round":1,"metrics":{"accuracy":0.5},"surprise":1}`,
		`{"round":1,"metrics":{"accuracy":"high"}}`,
		`{"round":1,"metrics":{}} {"round":2}`,
	} {
		var r Row
		if err := json.Unmarshal([]byte(line), &r); err == nil {
			t.Errorf("%s: accepted", line)
		}
	}
}

func TestRowValidate(t *testing.T) {
	tests := []struct {
		name string
		row  Row
		want string // "" for valid
	}{
		{"ok", accRow(1, 0.5, 1), ""},
		{"negative round", Row{Round: -1}, "negative"},
		{"empty metric", Row{Round: 1, Metrics: map[string]float64{"": 1}}, "empty metric"},
		{"negative time", Row{Round: 2, Time: Timing{EvalSeconds: -1}}, "eval time"},
		{"NaN time", Row{Round: 2, Time: Timing{LocalSeconds: math.NaN()}}, "local time"},
		{"negative bytes", Row{Round: 2, BytesSent: -5}, "bytes"},
		{"weights vs clients", Row{Round: 2, Clients: []int{1, 2}, ClientWeights: []float64{1}}, "1 client weights for 2 clients"},
		{"sampled not more than returned", Row{Round: 2, Clients: []int{1, 2}, Sampled: []int{1, 2}}, "2 clients sampled, not more than the 2"},
	}
	for _, tc := range tests {
		err := tc.row.Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		wantErr(t, err, tc.want)
	}
}

func TestParseRows(t *testing.T) {
	good := func(rounds ...int) string {
		var b strings.Builder
		for _, r := range rounds {
			j, _ := json.Marshal(accRow(r, 0.5, 1))
			b.Write(j)
			b.WriteByte('\n')
		}
		return b.String()
	}
	tests := []struct {
		name      string
		data      string
		rounds    []int
		torn      int
		unterm    bool
		errSubstr string
	}{
		{"empty", "", nil, 0, false, ""},
		{"three rows", good(1, 2, 3), []int{1, 2, 3}, 0, false, ""},
		{"torn tail", good(1, 2) + `{"round":3,"metr`, []int{1, 2}, 16, false, ""},
		{"complete row without newline is kept", good(1) + strings.TrimSuffix(good(2), "\n"), []int{1, 2}, 0, true, ""},
		{"complete row without newline must still follow", good(2) + strings.TrimSuffix(good(1), "\n"), nil, 0, false, "line 2: round 1 does not follow round 2"},
		{"zeros after power loss", good(1) + "\x00\x00\x00", []int{1}, 3, false, ""},
		{"malformed middle line", good(1) + "{garbage}\n" + good(3), nil, 0, false, "line 2: malformed row"},
		{"malformed last complete line", good(1) + "{\"round\":2,\n", nil, 0, false, "line 2: malformed row"},
		{"rounds go back", good(2, 1), nil, 0, false, "line 2: round 1 does not follow round 2"},
		{"repeated round", good(2, 2), nil, 0, false, "line 2: round 2 does not follow round 2"},
		{"negative time", good(1) + `{"round":2,"metrics":{},"time":{"local_s":-1,"aggregate_s":0,"eval_s":0},"bytes_sent":0}` + "\n", nil, 0, false, "line 2: results: row of round 2: local time -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rf, err := parseRows("rounds.jsonl", []byte(tc.data))
			if tc.errSubstr != "" {
				wantErr(t, err, tc.errSubstr, "rounds.jsonl")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var rounds []int
			for _, r := range rf.rows {
				rounds = append(rounds, r.Round)
			}
			if !reflect.DeepEqual(rounds, tc.rounds) || rf.torn != tc.torn || rf.unterminated != tc.unterm {
				t.Errorf("rounds %v torn %d unterminated %v, want %v torn %d unterminated %v", rounds, rf.torn, rf.unterminated, tc.rounds, tc.torn, tc.unterm)
			}
		})
	}
}
