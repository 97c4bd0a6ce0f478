package report

import (
	"fmt"
	"strings"
	"unicode"
)

// RowOrder is the order of a table's rows.
type RowOrder int

const (
	// OrderPaper puts baselines first (FedAvg, FED, deterministic models; see baselineNames), then
	// the aggregation rules in the order aggregate.Rules lists them (RuleOrder: EAA, GAA, AALV, PPA,
	// LP, Conflation, CF, RKLB, WB, DWC; their aliases NWA, WS, WC and LLP rank as the rule), then
	// every other row; ties sort by key as OrderSorted does.
	OrderPaper RowOrder = iota
	// OrderSorted sorts rows by key, numbers numerically.
	OrderSorted
)

// ParseRowOrder reads "paper" or "sorted".
func ParseRowOrder(s string) (RowOrder, error) {
	switch s {
	case "paper":
		return OrderPaper, nil
	case "sorted":
		return OrderSorted, nil
	}
	return 0, fmt.Errorf("report: row order %q is not one of paper, sorted", s)
}

// baselineNames are the baselines of the papers' tables, in the order they come first: FedAvg
// (McMahan et al. 2017), Ozer et al. (2022)'s FED and FEDAVG rows, and deterministic networks
// (Fischer et al. (2024)'s DET-NWA).
var baselineNames = []string{"FEDAVG", "FED", "DETERMINISTIC", "DET"}

// RuleOrder is the order of the aggregation rules in tables: the order of aggregate.Rules without
// FedAvg (a baseline here). It is a copy, so that reading results does not pull in the GoMLX
// graph code of package aggregate; a test of the fedbayes command checks that the two agree.
var RuleOrder = []string{"EAA", "GAA", "AALV", "PPA", "LP", "Conflation", "CF", "RKLB", "WB", "DWC"}

// ruleAliases map the other names of rules to the rule (see aggregate.ParseRule).
var ruleAliases = map[string]string{"NWA": "EAA", "WS": "GAA", "WC": "CF", "LLP": "RKLB"}

// paperRank returns the rank of a row label value under OrderPaper: 0..len(baselines)-1 for a
// baseline, then the rules' ranks, then one rank for everything else. A value matches by its first
// word (split at anything but letters and digits, case ignored) that names a baseline or a rule,
// so "FedAvg", "ozer-fmnist-FED", "DET-NWA" and "gaa_w" all rank.
func paperRank(value string) int {
	ruleRank := func(name string) int {
		for i, r := range RuleOrder {
			if strings.EqualFold(r, name) {
				return len(baselineNames) + i
			}
		}
		return -1
	}
	words := strings.FieldsFunc(value, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		up := strings.ToUpper(w)
		for i, b := range baselineNames {
			if up == b {
				return i
			}
		}
		if r, ok := ruleAliases[up]; ok {
			return ruleRank(r)
		}
		if k := ruleRank(up); k >= 0 {
			return k
		}
	}
	return len(baselineNames) + len(RuleOrder)
}

// lessRow orders row keys under order: label by label, by paperRank under OrderPaper and then as
// lessKey (numbers numerically).
func lessRow(order RowOrder, a, b []string) bool {
	for i := range a {
		if a[i] == b[i] {
			continue
		}
		if order == OrderPaper {
			if ra, rb := paperRank(a[i]), paperRank(b[i]); ra != rb {
				return ra < rb
			}
		}
		return lessKey(a[i:i+1], b[i:i+1])
	}
	return false
}
