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
		if r.Error != "" || math.Abs(r.Mean-w[0]) > 1e-12 || math.Abs(r.Variance-w[1]) > 1e-12 {
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
		{[]string{"aggregate", "-rule", "DWC", "0,1", "2,0.25"}, 1, "needs the previous global"},
		{[]string{"aggregate", "-rule", "Median", "0,1"}, 2, `unknown rule "Median"`},
		{[]string{"aggregate", "-w", "0.5,-0.5", "-rule", "EAA", "0,1", "1,1"}, 1, "client 1: weight -0.5 is negative"},
		{[]string{"aggregate", "-rule", "EAA", "0,1", "1,0"}, 1, "client 1: variance 0 is not positive"},
		{[]string{"aggregate", "-rule", "EAA", "0,1", "x,1"}, 2, "client 1"},
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
