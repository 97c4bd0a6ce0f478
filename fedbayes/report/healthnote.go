package report

import (
	"fmt"
	"strings"
)

// healthNote says, for the flagged rows of the table (Health.Flagged), why their variances cannot
// tell rules apart, each row with its own figures: one sentence per verdict (healthVerdict), then
// each row's figures (healthFigures) in parentheses after its name; rows are named together only
// when their verdict and figures agree. "" when no row is flagged. A row's figures are those of its
// first flagged run (TableRow.Health); the note says so when some cell holds several seeds.
func (t *Table) healthNote() string {
	type group struct {
		figures string
		names   []string
	}
	var verdicts []string
	byVerdict := map[string][]*group{}
	tags := map[string]string{}
	for _, row := range t.Rows {
		if !row.Health.Flagged() {
			continue
		}
		v, f := healthVerdict(row.Health), healthFigures(row.Health)
		if _, ok := byVerdict[v]; !ok {
			verdicts = append(verdicts, v)
			tags[v] = row.Health.Short()
		}
		name := strings.Join(row.Key, " ")
		i := 0
		for i < len(byVerdict[v]) && byVerdict[v][i].figures != f {
			i++
		}
		if i == len(byVerdict[v]) {
			byVerdict[v] = append(byVerdict[v], &group{figures: f})
		}
		byVerdict[v][i].names = append(byVerdict[v][i].names, name)
	}
	if len(verdicts) == 0 {
		return ""
	}
	flagged := 0
	for _, gs := range byVerdict {
		for _, g := range gs {
			flagged += len(g.names)
		}
	}
	notes := make([]string, 0, len(verdicts)+1)
	for _, v := range verdicts {
		rows := make([]string, len(byVerdict[v]))
		for i, g := range byVerdict[v] {
			rows[i] = fmt.Sprintf("%s (%s)", strings.Join(g.names, ", "), g.figures)
		}
		words := v
		if flagged == 1 { // one row: its one rule, not "the rules of these rows"
			words = strings.Replace(words, "in their variances the rules of these rows differ", "in its variances the rule of this row differs", 1)
		}
		notes = append(notes, fmt.Sprintf("%s %s: %s: %s.", HealthMark, tags[v], words, strings.Join(rows, "; ")))
	}
	if _, hi := t.seedRange(); hi > 1 {
		notes = append(notes, "Figures of each row's first flagged seed.")
	}
	return strings.Join(notes, " ")
}

// healthVerdict is what a flagged posterior health means for the rules compared in a table, in
// words that hold for every row it fits and name no rule (healthFigures holds the row's own numbers):
// the four flagged cases of RowHealth.
func healthVerdict(h Health) string {
	switch {
	case h.State == HealthUniform:
		return "the variances moved, but alike on every client, so in their variances the rules of these rows differ only by their own arithmetic on a shared variance, not by how they weigh the clients' different variances (how a rule combines the means is another matter)"
	case h.State == HealthClamped:
		return "most variances sit at the clamp bound of log σ², where training passes no gradient, so in their variances the rules of these rows differ only by their own arithmetic on the clamped values"
	case h.Moved >= MinMovedShare:
		return "local training did not move the variances; the global model's moved through the aggregation rule's arithmetic alone, so in their variances the rules of these rows differ only by that arithmetic, not by what the clients learned"
	}
	return "the variances stayed at their initial value, so in their variances the rules of these rows differ only by their own arithmetic on that shared value, not by how they weigh what the clients learned"
}

// healthFigures are the figures a flagged posterior health rests on, as the table note gives them
// for one row: the share of the global model's variances that moved (or sit at the clamp), how far
// the clients disagree (for HealthUniform), what local training moved, and the spread from the
// initial to the final model.
func healthFigures(h Health) string {
	var parts []string
	switch {
	case h.State == HealthUniform:
		parts = append(parts, fmt.Sprintf("%s of the global variances moved by more than %g in log σ², the clients' differ by at most %.2g, %g needed",
			pct(h.Moved), HealthThreshold, h.DisagreementMax, MinDisagreement))
	case h.State == HealthClamped:
		parts = append(parts, fmt.Sprintf("%s at the clamp", pct(h.Clamped)))
	case h.Moved >= MinMovedShare:
		parts = append(parts, fmt.Sprintf("%s of the global variances moved by more than %g in log σ²", pct(h.Moved), HealthThreshold))
	}
	parts = append(parts,
		fmt.Sprintf("local training moved %s of the clients' variances by more than %g in a round, %.2g on average", AtMost(h.LocalMovedMax), HealthThreshold, h.LocalShiftMax),
		fmt.Sprintf("spread %.4g → %.4g", h.SpreadStart, h.SpreadEnd))
	return strings.Join(parts, "; ")
}
