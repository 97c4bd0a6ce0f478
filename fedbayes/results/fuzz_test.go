package results

import (
	"encoding/json"
	"math"
	"testing"
)

// FuzzParseRows feeds arbitrary bytes to the rounds.jsonl reader. It must never panic, and what it
// accepts must be consistent: rounds strictly increase, every row passes Row.Validate, a torn tail
// and an unterminated last row exclude each other, and the accepted rows written back in the
// rounds.jsonl format read back as the same rounds and values. Checking the rows against a status
// (Run.Check) must not panic either. The seed corpus is in testdata/fuzz/FuzzParseRows.
func FuzzParseRows(f *testing.F) {
	good, err := encodeRows([]Row{accRow(1, 0.5, 1), accRow(2, 0.75, math.Inf(1))})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(good[:len(good)-9])
	f.Add([]byte(`{"round":1,"metrics":{"accuracy":"NaN"},"time":{"local_s":0,"aggregate_s":0,"eval_s":0},"bytes_sent":0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rf, err := parseRows("rounds.jsonl", data)
		if err != nil {
			return
		}
		if rf.torn > 0 && rf.unterminated {
			t.Fatalf("torn %d bytes and an unterminated last row at once", rf.torn)
		}
		if rf.torn > len(data) {
			t.Fatalf("torn %d bytes of %d", rf.torn, len(data))
		}
		for i, r := range rf.rows {
			if err := r.Validate(); err != nil {
				t.Fatalf("accepted row %d fails Validate: %v", i, err)
			}
			if i > 0 && r.Round <= rf.rows[i-1].Round {
				t.Fatalf("accepted rounds %d then %d", rf.rows[i-1].Round, r.Round)
			}
			_ = r.CheckValues()
		}
		last := 0
		if n := len(rf.rows); n > 0 {
			last = rf.rows[n-1].Round
		}
		for _, st := range []Status{{State: Completed, Round: last}, {State: Diverged, Round: last, Reason: "x"}, {}} {
			run := Run{Dir: "d", Status: st, Rows: rf.rows, TornBytes: rf.torn}
			_ = run.Check(func(Meta) ([]int, bool) { return []int{1, 2, 3}, true })
		}
		again, err := encodeRows(rf.rows)
		if err != nil {
			t.Fatalf("accepted rows cannot be written back: %v", err)
		}
		rf2, err := parseRows("again", again)
		if err != nil || rf2.torn != 0 || rf2.unterminated || len(rf2.rows) != len(rf.rows) {
			t.Fatalf("rows written back read as %d rows (torn %d, unterminated %v, %v), want %d", len(rf2.rows), rf2.torn, rf2.unterminated, err, len(rf.rows))
		}
		for i := range rf.rows {
			a, _ := json.Marshal(rf.rows[i])
			b, _ := json.Marshal(rf2.rows[i])
			if string(a) != string(b) {
				t.Fatalf("row %d changed when written back:\n%s\n%s", i, a, b)
			}
		}
	})
}
