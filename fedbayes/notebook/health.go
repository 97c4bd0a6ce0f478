package notebook

import (
	"fmt"
	"html"
	"math"
	"os"
	"strings"

	"fedbayes.dev/fedbayes/report"
	"fedbayes.dev/fedbayes/results"
	"github.com/janpfeifer/gonb/gonbui"
)

// HealthTable says whether the variances of the runs learned (report.RunHealth), for the groups of
// runs by the labels by, in one line and a small table. The line counts the groups with variances by
// verdict and says what a flag means for rules that combine variances; the table has a row per such
// group: its labels, the verdict (each verdict with its seeds when they differ), the share of the
// global model's variances that moved from their initial value (results.VarMoved, last row) and the
// most that local training moved in a round (results.VarLocalMoved), means over seeds, and the spread
// from the initial to the final model, means over seeds. Groups without variances (FedAvg) are left
// out; the table is nil when no group has them. It is what a notebook shows before a chart or table
// of rules that combine variances, in place of one paragraph per flagged run.
func HealthTable(runs []results.Run, by ...string) (string, *TextTable, error) {
	groups, err := report.GroupRuns(runs, by)
	if err != nil {
		return "", nil, err
	}
	tab := NewTextTable(append(append([]string{}, by...), "variances", "moved", "moved locally (max)", "spread start → end")...)
	count := map[string]int{} // settings by verdict; "mixed" when their seeds disagree
	var order []string
	flagged := map[string]bool{}
	rows := 0
	for _, g := range groups {
		hs := make([]report.Health, 0, len(g.Runs))
		for _, r := range g.Runs {
			if h := report.RunHealth(r); h.State != report.HealthNotVariational {
				hs = append(hs, h)
			}
		}
		if len(hs) == 0 {
			continue
		}
		verdict := healthVerdict(hs)
		key := verdict
		if strings.Contains(verdict, "/") {
			key = "mixed across seeds"
		}
		if count[key] == 0 {
			order = append(order, key)
		}
		count[key]++
		for _, h := range hs {
			if h.Flagged() {
				flagged[h.Short()] = true
			}
		}
		rows++
		localMoved := func(h report.Health) float64 {
			if h.Rows == 0 {
				return math.NaN()
			}
			return h.LocalMovedMax
		}
		tab.Row(append(append([]string{}, g.Key...), verdict,
			meanPercent(hs, func(h report.Health) float64 { return h.Moved }),
			meanPercent(hs, localMoved),
			spreadText(meanOf(hs, func(h report.Health) float64 { return h.SpreadStart }))+" → "+
				spreadText(meanOf(hs, func(h report.Health) float64 { return h.SpreadEnd })))...)
	}
	if rows == 0 {
		return "posterior health: no run has variances", nil, nil
	}
	parts := make([]string, len(order))
	for i, v := range order {
		parts[i] = fmt.Sprintf("%d %s", count[v], v)
	}
	line := fmt.Sprintf("posterior health of %d variational settings: %s", rows, strings.Join(parts, ", "))
	var why []string
	for _, st := range []struct{ tag, means string }{
		{"FROZEN", "local training did not move the variances"},
		{"CLAMPED", "the variances are held at the clamp"},
		{"UNIFORM", "the clients moved them alike"},
	} {
		if flagged[st.tag] {
			why = append(why, st.tag+": "+st.means)
		}
	}
	if len(why) > 0 {
		line += " (" + strings.Join(why, "; ") + "): where they are flagged, rules that combine variances differ in their variances only by their own arithmetic on a shared variance (how they combine the means is another matter)"
	}
	return line + ".", tab, nil
}

// healthVerdict is the verdict of a group's runs (report.Health.Short): one word when the seeds
// agree, else each verdict with how many seeds gave it, "FROZEN 2/3, learned 1/3".
func healthVerdict(hs []report.Health) string {
	count := map[string]int{}
	var order []string
	for _, h := range hs {
		s := h.Short()
		if count[s] == 0 {
			order = append(order, s)
		}
		count[s]++
	}
	if len(order) == 1 {
		return order[0]
	}
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = fmt.Sprintf("%s %d/%d", s, count[s], len(hs))
	}
	return strings.Join(parts, ", ")
}

// meanOf is the mean of f over hs, NaN where a run does not record it.
func meanOf(hs []report.Health, f func(report.Health) float64) float64 {
	sum := 0.0
	for _, h := range hs {
		sum += f(h)
	}
	return sum / float64(len(hs))
}

// meanPercent is meanOf as a percentage, "—" where not recorded (a run from before fedbayes measured
// posterior health).
func meanPercent(hs []report.Health, f func(report.Health) float64) string {
	m := meanOf(hs, f)
	if math.IsNaN(m) {
		return "—"
	}
	return fmt.Sprintf("%.3g %%", 100*m)
}

// spreadText formats a spread, "—" where not recorded.
func spreadText(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.4g", x)
}

// ShowHealth shows HealthTable's line and then its table: in a GoNB cell as one HTML block (so that
// the two stay together and above what the cell displays next; the table's lines never wrap),
// elsewhere as text on standard output.
func ShowHealth(runs []results.Run, by ...string) error {
	line, tab, err := HealthTable(runs, by...)
	if err != nil {
		return err
	}
	if !gonbui.IsNotebook {
		fmt.Println(line)
		if tab == nil {
			return nil
		}
		return tab.Write(os.Stdout)
	}
	block := `<p style="font:13px sans-serif; margin:4px 0">` + html.EscapeString(line) + `</p>`
	if tab != nil {
		t, err := tab.HTML()
		if err != nil {
			return err
		}
		block += t
	}
	return displayHTML(block, nil)
}
