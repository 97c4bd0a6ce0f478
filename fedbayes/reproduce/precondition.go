package reproduce

import (
	"fmt"
	"strings"

	"fedbayes.dev/fedbayes/internal/words"
)

// mechanism names what a check needs of the runs for its outcome to be evidence about its finding. A
// check that needs none (the empty mechanism) is always evidence.
type mechanism string

const (
	// varianceWeighting: the rules compared differ only through how they weigh the clients' variances
	// (EAA against AALV: an arithmetic against a geometric mean of the same variances), so they can
	// differ only where the clients' variances do.
	varianceWeighting mechanism = "the rules compared differ only through how they weigh the clients' variances, which needs clients whose variances differ"
	// learnedVariances: the check compares variational nets with other nets (deterministic, MC dropout,
	// fewer variational layers), which differ only as far as the variances learned.
	learnedVariances mechanism = "variational nets differ from other nets only as far as their variances learned"
	// spreadArithmetic: an order of learned spreads is evidence about the rules' behaviour on learned
	// variances only where it does not already follow from the rules' formulas (Ozer et al. (2022),
	// Eqs. 4-8) applied to equal client variances.
	spreadArithmetic mechanism = "an order of spreads shows something about learned variances only where the rules' formulas on equal client variances do not already give it"
	// frozenArithmetic: a spread that BFL-P's clamp freezes follows from the frozen-variance arithmetic
	// (FrozenSpread), whatever the clients learned.
	frozenArithmetic mechanism = "a spread is evidence about what the clients learned only where BFL-P's clamp did not freeze it"
	// dwcActs: DWC's combination of the clients' precisions is used, not its fallback to the previous
	// global model.
	dwcActs mechanism = "DWC acts only where it combines the clients' precisions rather than falling back to the previous global model"
	// trainedReference: a harm relative to a reference needs a reference that trained.
	trainedReference mechanism = "a harm relative to the fixed-prior reference shows only against a reference that trained"
)

// precondition is a condition a mechanism needs, checked on the records. Where it is not met, the
// checks that need the mechanism are set aside (listed, not counted): all of them, or, with
// givenOnly, those whose outcome is the one the set-up alone gives them (check.given), for a
// condition under which the set-up decides the outcome in a known direction (an outcome against it
// then still counts). A check that needs another mechanism, or none, is never set aside by it, so a
// precondition cannot hide a significant result of another mechanism.
type precondition struct {
	needs mechanism
	// met says the records satisfy the condition; why says what they show, with the numbers.
	met bool
	why string
	// givenOnly sets aside only the checks that need the mechanism and came out as the set-up alone
	// gives them (check.given).
	givenOnly bool
	// scope, where not "", limits the precondition to the checks of that part of the set-up
	// (check.scope: a layer count), for a condition the records meet in some parts and not others.
	scope string
}

// covers says whether c needs p's mechanism within p's scope.
func (p precondition) covers(c check) bool {
	return c.needs != "" && c.needs == p.needs && (p.scope == "" || p.scope == c.scope)
}

// applies says whether p sets c aside.
func (p precondition) applies(c check) bool {
	return !p.met && p.covers(c) && (!p.givenOnly || c.outcome == c.given)
}

// setAside marks the checks that an unmet precondition sets aside, with its reason, and returns them
// with the number set aside.
func setAside(checks []check, pres []precondition) ([]check, int) {
	out := make([]check, len(checks))
	n := 0
	for i, c := range checks {
		for _, p := range pres {
			if p.applies(c) {
				c.aside = p.why
				n++
				break
			}
		}
		out[i] = c
	}
	return out, n
}

// counted is the checks no precondition set aside.
func counted(checks []check) []check {
	var out []check
	for _, c := range checks {
		if c.aside == "" {
			out = append(out, c)
		}
	}
	return out
}

// verdictOf is the verdict rule with preconditions: judge over the checks no unmet precondition sets
// aside; not testable here when every check is set aside, with the preconditions' reasons. It
// returns the checks marked.
func verdictOf(checks []check, pres []precondition) (Verdict, string, []check) {
	marked, n := setAside(checks, pres)
	if len(checks) == 0 {
		return NotRun, "", marked
	}
	if n == len(checks) {
		var why []string
		for _, p := range pres {
			if !p.met {
				why = append(why, p.why)
			}
		}
		return NotTestable, strings.Join(why, "; "), marked
	}
	return judge(counted(marked)), "", marked
}

// preconditionText says, for the evidence, how each precondition of a finding was applied: met, or
// not met and how many of the checks it set aside (none when no check needs its mechanism).
func preconditionText(pres []precondition, checks []check) string {
	var parts []string
	for _, p := range pres {
		need, aside := 0, 0
		for _, c := range checks {
			if p.covers(c) {
				need++
				if p.applies(c) {
					aside++
				}
			}
		}
		at := ""
		if p.scope != "" {
			at = " at " + p.scope
		}
		switch {
		case p.met:
			parts = append(parts, fmt.Sprintf("Precondition met%s (%s): %s", at, p.needs, p.why))
		case need == 0:
			parts = append(parts, fmt.Sprintf("Precondition not met%s (%s): %s; it applies to none of the %d %s, whose rules differ by more than that mechanism",
				at, p.needs, p.why, len(checks), words.Plural(len(checks), "check")))
		default:
			which := ""
			if p.givenOnly {
				which = " (those whose outcome the set-up alone gives; one against it still counts)"
			}
			parts = append(parts, fmt.Sprintf("Precondition not met%s (%s): %s; set aside, not counted: %d of the %d %s that need it%s",
				at, p.needs, p.why, aside, need, words.Plural(need, "check"), which))
		}
	}
	return strings.Join(parts, ". ")
}

// ruleNote says in one line how the unmet preconditions acted on a finding's checks: the mechanisms
// whose checks they set aside (how many, and in which parts of the set-up where a precondition is
// scoped: one clause per mechanism), and those that apply to none of its checks.
func ruleNote(pres []precondition, checks []check) string {
	var order []mechanism
	aside := map[mechanism]int{}
	scopes := map[mechanism][]string{}
	var parts []string
	for _, p := range pres {
		if p.met {
			continue
		}
		need, n := 0, 0
		for _, c := range checks {
			if p.covers(c) {
				need++
				if p.applies(c) {
					n++
				}
			}
		}
		switch {
		case n > 0:
			if _, seen := aside[p.needs]; !seen {
				order = append(order, p.needs)
			}
			aside[p.needs] += n
			if p.scope != "" {
				scopes[p.needs] = append(scopes[p.needs], p.scope)
			}
		case need == 0 && p.scope == "":
			parts = append(parts, fmt.Sprintf("its precondition (%s) is not met but applies to none of its checks, whose rules differ by more than that, so they are counted", p.needs))
		}
	}
	var out []string
	for _, m := range order {
		at := ""
		if len(scopes[m]) > 0 {
			at = " at " + strings.Join(scopes[m], ", ")
		}
		out = append(out, fmt.Sprintf("%d of its %d %s set aside, not counted, because %s and the records do not provide it%s",
			aside[m], len(checks), words.Plural(len(checks), "check"), m, at))
	}
	return strings.Join(append(out, parts...), "; ")
}
