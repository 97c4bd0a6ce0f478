package results

import (
	"fmt"
	"strings"
	"unicode"

	"fedbayes.dev/fedbayes/aggregate"
)

// RowOrder is the order of a table's rows.
type RowOrder int

const (
	// OrderPaper puts baselines first (FedAvg, FED, deterministic models; see baselineNames), then
	// the aggregation rules in the order aggregate.Rules lists them (EAA, GAA, AALV, PPA, LP,
	// Conflation, CF, RKLB, WB, DWC; their aliases NWA, WS, WC and LLP rank as the rule), then every
	// other row; ties sort by key as OrderSorted does.
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
	return 0, fmt.Errorf("results: row order %q is not one of paper, sorted", s)
}

// baselineNames are the baselines of the papers' tables, in the order they come first: FedAvg
// (McMahan et al. 2017), Ozer et al. (2022)'s FED and FEDAVG rows, and deterministic networks
// (Fischer et al. (2024)'s DET-NWA).
var baselineNames = []string{"FEDAVG", "FED", "DETERMINISTIC", "DET"}

// ruleAliases map the other names of rules to the rule (see aggregate.ParseRule).
var ruleAliases = map[string]aggregate.Rule{"NWA": aggregate.EAA, "WS": aggregate.GAA, "WC": aggregate.CF, "LLP": aggregate.RKLB}

// paperRank returns the rank of a row label value under OrderPaper: 0..len(baselines)-1 for a
// baseline, then the rules' ranks, then one rank for everything else. A value matches by its first
// word (split at anything but letters and digits, case ignored) that names a baseline or a rule,
// so "FedAvg", "ozer-fmnist-FED", "DET-NWA" and "gaa_w" all rank.
func paperRank(value string) int {
	rules := aggregate.Rules()
	ruleRank := func(r aggregate.Rule) int {
		for i, x := range rules {
			if x == r {
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
		for _, r := range rules {
			if r != aggregate.FedAvg && up == strings.ToUpper(string(r)) {
				return ruleRank(r)
			}
		}
	}
	return len(baselineNames) + len(rules)
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
