package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestAggregateCommandJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	status := runMain([]string{"aggregate", "--json", "-prev", "1,2", "-w", "0.5,0.5", "0,1", "2,0.25"}, &out, &errOut)
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut.String())
	}
	var rows []aggregateRow
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := map[string][2]float64{"EAA": {1, 0.625}, "GAA": {1, 0.3125}, "AALV": {1, 0.5}, "LP": {1, 1.625},
		"Conflation": {1.6, 0.2}, "CF": {1.6, 0.2}, "RKLB": {1.6, 0.4}, "WB": {1, 0.5625}, "DWC": {7.5 / 4.5, 2.0 / 9},
		"FedAvg": {1, 0}}
	if len(rows) != 11 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		w, ok := want[r.Rule]
		if !ok {
			continue // PPA is sampled.
		}
		if r.Error != "" || math.Abs(float64(r.Mean)-w[0]) > 1e-12 || math.Abs(float64(r.Variance)-w[1]) > 1e-12 {
			t.Errorf("%s: %+v, want mean %v variance %v", r.Rule, r, w[0], w[1])
		}
	}
}

func TestAggregateCommandTable(t *testing.T) {
	tests := []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"aggregate", "-rule", "GAA", "-w", "0.5,0.5", "0,1", "2,0.25"}, 0, "GAA   1     0.3125"},
		{[]string{"aggregate", "-rule", "cf", "-3,1", "-1,1"}, 0, "CF    -2"},
		{[]string{"aggregate", "0,1", "2,0.25"}, 0, "DWC         -"},
		{[]string{"aggregate", "-rule", "DWC", "0,1", "2,0.25"}, 2, "DWC needs the previous global: give -prev MEAN,VARIANCE"},
		{[]string{"aggregate", "-rule", "Median", "0,1"}, 2, `unknown rule "Median"`},
		{[]string{"aggregate", "-w", "0.5,-0.5", "-rule", "EAA", "0,1", "1,1"}, 1, "-w: client 2: weight -0.5 is negative"},
		{[]string{"aggregate", "-rule", "EAA", "0,1", "1,0"}, 1, "client 2: variance 0 is not positive"},
		{[]string{"aggregate", "-rule", "EAA", "0,1", "x,1"}, 2, "client 2"},
		{[]string{"aggregate"}, 2, "at least one client"},
	}
	for _, tc := range tests {
		var out, errOut bytes.Buffer
		status := runMain(tc.args, &out, &errOut)
		all := out.String() + errOut.String()
		if status != tc.status || !strings.Contains(all, tc.want) {
			t.Errorf("%v: status %d, output\n%s\nwant status %d and %q", tc.args, status, all, tc.status, tc.want)
		}
	}
}

// TestAggregateCommandHostile covers issue 21's and issue 20's command-line cases: every error exits
// non-zero and is printed once, naming the flag or the client (numbered from 1); results that float64
// can represent are printed exactly.
func TestAggregateCommandHostile(t *testing.T) {
	long := strings.Repeat("x", 10<<20)
	tests := []struct {
		name   string
		args   []string
		status int
		want   []string
		once   string // printed exactly once, when set
	}{
		{"weights do not sum to 1", []string{"-w", "1,3", "0,1", "2,1"}, 1, []string{"-w: the weights sum to 4, not 1; add -normalize"}, "sum to 4"},
		{"weights 1e308 normalised", []string{"-w", "1e308,1e308", "-normalize", "1,1", "2,1"}, 0, []string{"EAA         1.5", "CF          1.5", "RKLB        1.5"}, ""},
		{"conflation 1e308", []string{"-rule", "Conflation", "1e308,1", "1e308,1"}, 0, []string{"Conflation  1e+308  0.5"}, ""},
		{"PPA 1e308 and -1e308", []string{"-rule", "PPA", "1e308,1", "-1e308,1"}, 1, []string{"outside the range of float64"}, ""},
		{"all with an unrepresentable rule", []string{"1e308,1", "-1e308,1"}, 1, []string{"LP", "outside the range", "rules failed"}, ""},
		{"AALV subnormal", []string{"-rule", "AALV", "1,1e-320", "2,1"}, 0, []string{"AALV  1.5   9.99994e-161"}, ""}, // the input 1e-320 is stored as 9.99989e-321,
		{"negative variance", []string{"0,1", "2,-1"}, 1, []string{"client 2: variance -1 is not positive"}, "not positive"},
		{"-Inf first", []string{"-Inf,1", "2,1"}, 1, []string{"client 1: mean is -Inf; it must be finite"}, ""},
		{"unknown negative-looking flag", []string{"-rule", "EAA", "-x1,1", "2,1"}, 2, []string{`unknown flag "-x1,1"`, "goes after --"}, ""},
		{"-n 1e9 style", []string{"-rule", "PPA", "-n", "1e4", "0,1", "2,1"}, 0, []string{"PPA"}, ""},
		{"-n too large", []string{"-rule", "PPA", "-n", "9223372036854775807", "0,1"}, 2, []string{"out of range", "1000000000"}, ""},
		{"long argument", []string{"-rule", "EAA", long + ",1"}, 2, []string{"(10485762 bytes)"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			status := runMain(append([]string{"aggregate"}, tc.args...), &out, &errOut)
			all := out.String() + errOut.String()
			if status != tc.status {
				t.Errorf("status %d, want %d\n%.2000s", status, tc.status, all)
			}
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("output lacks %q:\n%.2000s", w, all)
				}
			}
			if tc.once != "" && strings.Count(all, tc.once) != 1 {
				t.Errorf("%q printed %d times:\n%s", tc.once, strings.Count(all, tc.once), all)
			}
			if len(all) > 5000 {
				t.Errorf("%d bytes of output", len(all))
			}
		})
	}
}

func TestAggregateJSONNonFinite(t *testing.T) {
	raw, err := json.Marshal([]aggregateRow{{Rule: "X", Mean: jsonFloat(math.Inf(1)), Variance: jsonFloat(math.NaN()), Std: 1}})
	if err != nil || string(raw) != `[{"rule":"X","mean":"+Inf","variance":"NaN","std":1}]` {
		t.Errorf("%s, %v", raw, err)
	}
}
