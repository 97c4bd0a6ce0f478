package report

import (
	"reflect"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

func TestPaperRowOrder(t *testing.T) {
	keys := func(ks ...string) [][]string {
		var out [][]string
		for _, k := range ks {
			out = append(out, strings.Split(k, "/"))
		}
		return out
	}
	tests := []struct {
		name  string
		order RowOrder
		in    [][]string
		want  [][]string
	}{
		{"rules in the papers' order after the baselines", OrderPaper,
			keys("RKLB", "cf", "zeta", "PPA", "AALV", "GAA", "EAA", "FedAvg", "DET-NWA", "FED", "Conflation", "LP", "WB", "DWC"),
			keys("FedAvg", "FED", "DET-NWA", "EAA", "GAA", "AALV", "PPA", "LP", "Conflation", "cf", "RKLB", "WB", "DWC", "zeta")},
		{"aliases rank as their rule", OrderPaper, keys("WC", "WS", "NWA", "LLP"), keys("NWA", "WS", "WC", "LLP")},
		{"setting names rank by their first known word", OrderPaper,
			keys("ozer-fmnist-PPA", "ozer-fmnist-FED", "ozer-fmnist-EAA", "fvbwa-gaa_w"),
			keys("ozer-fmnist-FED", "ozer-fmnist-EAA", "fvbwa-gaa_w", "ozer-fmnist-PPA")},
		{"label by label, ties by value and numbers numerically", OrderPaper,
			keys("svhn/GAA", "fmnist/GAA", "fmnist/EAA", "10/EAA", "9/EAA"),
			keys("9/EAA", "10/EAA", "fmnist/EAA", "fmnist/GAA", "svhn/GAA")},
		{"sorted", OrderSorted, keys("GAA", "FedAvg", "EAA"), keys("EAA", "FedAvg", "GAA")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := append([][]string{}, tc.in...)
			for i := 1; i < len(got); i++ { // insertion sort: the order of lessRow alone
				for j := i; j > 0 && lessRow(tc.order, got[j], got[j-1]); j-- {
					got[j], got[j-1] = got[j-1], got[j]
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("order %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := ParseRowOrder("alpha"); err == nil {
		t.Error("row order \"alpha\" accepted")
	}
}

func TestMixedLabels(t *testing.T) {
	l := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	runs := []results.Run{
		runOf("a", l("rule", "EAA", "partition", "iid", "alpha", "0", "dataset", "fmnist"), 1),
		runOf("b", l("rule", "EAA", "partition", "dirichlet", "alpha", "0.5", "dataset", "fmnist"), 2),
		runOf("c", l("rule", "GAA", "partition", "iid", "alpha", "0", "dataset", "fmnist"), 1),
	}
	tests := []struct {
		by   []string
		want []string
	}{
		{[]string{"rule"}, []string{"alpha"}}, // alpha and partition vary together: the first in sorted order
		{[]string{"rule", "partition"}, nil},
		{[]string{"setting"}, nil},
		{[]string{"dataset"}, []string{"alpha", "rule"}},
	}
	for _, tc := range tests {
		if got := MixedLabels(runs, tc.by); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("MixedLabels(by %v) = %v, want %v", tc.by, got, tc.want)
		}
	}
	// A run without the label counts as a value of its own.
	runs = append(runs, runOf("d", l("rule", "GAA", "partition", "iid", "alpha", "0"), 2))
	if got := MixedLabels(runs, []string{"rule", "partition", "alpha"}); !reflect.DeepEqual(got, []string{"dataset"}) {
		t.Errorf("with a run lacking labels: %v, want [dataset]", got)
	}
}

// TestBoldSignificantNothingWhenNoise: three noisy seeds per cell whose paired differences are not
// significant bold nothing, while a clear gap bolds the cells tied with the best. (Two seeds under the
// former 2-SE rule; a paired test on two seeds has 1 degree of freedom and shows almost nothing, so
// the cells have three.)
func TestBoldSignificantNothingWhenNoise(t *testing.T) {
	acc := func(v float64) map[string]float64 { return map[string]float64{results.Accuracy: v} }
	noisy := []results.Run{
		finalRun("X", nil, 1, acc(0.75)), finalRun("X", nil, 2, acc(0.8)), finalRun("X", nil, 3, acc(0.7)), // 0.75
		// 0.5; X - Z by seed {.5, .05, .2}: t = .25 / .1323 = 1.89 on 2 df, p = .20.
		finalRun("Z", nil, 1, acc(0.25)), finalRun("Z", nil, 2, acc(0.75)), finalRun("Z", nil, 3, acc(0.5)),
	}
	// 0.125; X - Y by seed {.625, .65, .6}: t = 43.3, p = .0005, Holm x 2 = .001 < .05.
	clear := append(append([]results.Run{}, noisy...),
		finalRun("Y", nil, 1, acc(0.125)), finalRun("Y", nil, 2, acc(0.15)), finalRun("Y", nil, 3, acc(0.1)))
	for _, tc := range []struct {
		runs []results.Run
		want string
	}{
		{noisy, ""},
		{clear, "XZ"},
	} {
		tab, err := NewTable(tc.runs, TableSpec{Metrics: []Column{{results.Accuracy, results.HigherIsBetter}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := boldKeys(tab); got != tc.want {
			t.Errorf("bold %q, want %q", got, tc.want)
		}
	}
}
