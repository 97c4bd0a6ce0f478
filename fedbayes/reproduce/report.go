package reproduce

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
)

// Section is one paper's part of the report.
type Section struct {
	// Heading is the section title.
	Heading string
	// Setting says, in Markdown, what the presets run and how they differ from the paper.
	Setting string
	// Blocks are Markdown paragraphs and tables, in order.
	Blocks []string
	// Charts are the section's figures (written as SVG next to the report).
	Charts []*plots.Chart
	// Captions[i] is the caption of Charts[i].
	Captions []string
	// Findings are the paper's qualitative findings and whether they hold.
	Findings []Finding
}

// addChart appends a chart with its caption, or a note when it cannot be drawn.
func (s *Section) addChart(c *plots.Chart, err error, caption string) {
	if err != nil {
		s.Blocks = append(s.Blocks, fmt.Sprintf("*(figure %q not drawn: %v)*", caption, err))
		return
	}
	s.Charts, s.Captions = append(s.Charts, c), append(s.Captions, caption)
}

// ReportOptions configure Write.
type ReportOptions struct {
	// Dir is the results directory Run wrote to.
	Dir string
	// Budget is the budget whose runs the report reads.
	Budget Budget
	// Output is the Markdown file to write (e.g. docs/reproduction.md).
	Output string
	// FigureDir receives the SVG figures; empty means Output without ".md" (docs/reproduction/).
	FigureDir string
	// NoFigures writes no figures (the report says so).
	NoFigures bool
	// Command is the command line that produced the report, printed in its header.
	Command string
	// Records, if not empty, is the directory of the runs' records (LoadRecords), named in the header.
	Records string
	// Baseline is the baseline file (an earlier report's verdicts; see Baseline); empty means
	// BaselineFile in FigureDir. A finding whose verdict differs from the baseline's says what changed.
	Baseline string
	// SetBaseline writes this report's verdicts as the new baseline, after the report.
	SetBaseline bool
}

// Write builds every paper's section from the runs in opt.Dir and writes the report (atomically) and
// its figures. It returns the findings, paper by paper.
func Write(ctx context.Context, papers []*Paper, opt ReportOptions) ([]Finding, error) {
	if opt.FigureDir == "" {
		opt.FigureDir = strings.TrimSuffix(opt.Output, filepath.Ext(opt.Output))
	}
	if opt.Baseline == "" {
		opt.Baseline = filepath.Join(opt.FigureDir, BaselineFile)
	}
	base, err := ReadBaseline(opt.Baseline)
	if err != nil {
		return nil, err
	}
	cur := map[string]BaselinePreset{}
	specNow := settingSpecs() // each preset expanded once for every finding's verdictChange
	var sections []*Section
	var notes [][]string
	var info *runinfo.Info
	commits := map[string]bool{}
	newest := "" // the newest start time of the runs read (RFC 3339 sorts as text)
	var wall wallTime
	for _, p := range papers {
		runs, skipped, skipNotes, err := loadRuns(opt.Dir, p, opt.Budget)
		if err != nil {
			return nil, err
		}
		pr, err := countRuns(p, opt.Budget, runs, skipped)
		if err != nil {
			return nil, err
		}
		addWallTime(p, opt.Budget, runs, skipped, pr, &wall)
		for _, rs := range pr.complete {
			if info == nil && len(rs) > 0 {
				i := rs[0].Meta.Info
				info = &i
			}
			for _, r := range rs {
				newest = max(newest, r.Meta.Info.Time)
				c := shortCommit(r.Meta.Info.GitCommit)
				if r.Meta.Info.GitDirty {
					c += " (modified)"
				}
				commits[c] = true
			}
		}
		sec, err := p.section(opt.Budget, pr)
		if err != nil {
			return nil, fmt.Errorf("reproduce %s: %w", p.ID, err)
		}
		maps.Copy(cur, baselinePresets(pr.complete))
		var names []string
		for _, preset := range p.PresetsAt(opt.Budget) {
			name := preset.Name(opt.Budget)
			names = append(names, name)
			if _, ok := cur[name]; !ok {
				if cur[name], err = presetBaseline(name); err != nil {
					return nil, err
				}
			}
		}
		for i := range sec.Findings {
			if sec.Findings[i].Presets == nil {
				sec.Findings[i].Presets = names
			}
		}
		sections = append(sections, sec)
		if opt.Records != "" {
			stale, err := StaleRecordNotes(p, opt.Records, opt.Budget)
			if err != nil {
				return nil, fmt.Errorf("reproduce %s: %w", p.ID, err)
			}
			skipNotes = append(skipNotes, stale...)
		}
		notes = append(notes, skipNotes)
	}
	figures := map[*plots.Chart]string{}
	if !opt.NoFigures {
		var charts []*plots.Chart
		for _, s := range sections {
			charts = append(charts, s.Charts...)
		}
		if len(charts) > 0 {
			if err := os.MkdirAll(opt.FigureDir, 0o755); err != nil {
				return nil, err
			}
			paths, err := plots.WriteFigures(ctx, opt.FigureDir, plots.FigureOptions{Size: plots.WideFigure, PNGScale: -1}, charts...)
			if err != nil {
				return nil, fmt.Errorf("reproduce: figures (use -no-figures to skip them): %w", err)
			}
			rel, _ := filepath.Rel(filepath.Dir(opt.Output), opt.FigureDir)
			for i, c := range charts {
				if i < len(paths) {
					figures[c] = filepath.ToSlash(filepath.Join(rel, c.Name+".svg"))
				}
			}
		}
	}
	var b strings.Builder
	writeHeader(&b, papers, sections, opt, info, slices.Sorted(maps.Keys(commits)), newest, wall)
	if base != nil {
		rel, err := filepath.Rel(filepath.Dir(opt.Output), opt.Baseline)
		if err != nil {
			rel = opt.Baseline
		}
		fmt.Fprintf(&b, "\n**Baseline.** A finding whose verdict differs from the baseline report's (%s; `%s`) says what has changed "+
			"since: its presets' set-up or seeds, the verdict rule, or, when none of these has, how the report judges it.\n\n", base.From, filepath.ToSlash(rel))
	}
	var all []Finding
	for i, s := range sections {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n", s.Heading, strings.TrimSpace(s.Setting))
		for _, n := range notes[i] {
			fmt.Fprintf(&b, "\n- %s", n)
		}
		if len(notes[i]) > 0 {
			b.WriteString("\n")
		}
		for _, blk := range s.Blocks {
			fmt.Fprintf(&b, "\n%s\n", strings.TrimSpace(blk))
		}
		for j, c := range s.Charts {
			if path, ok := figures[c]; ok {
				fmt.Fprintf(&b, "\n![%s](%s)\n\n*%s*\n", c.Name, path, s.Captions[j])
			} else {
				fmt.Fprintf(&b, "\n*(figure not written: %s)*\n", s.Captions[j])
			}
		}
		if len(s.Findings) > 0 {
			b.WriteString("\n### Findings\n")
			for k := range s.Findings {
				f := &s.Findings[k]
				f.Changed = verdictChangeWith(base, cur, VerdictRule, papers[i].ID, *f, specNow)
				fmt.Fprintf(&b, "\n**%s** — %s. *%s.*\n\n", f.Claim, f.Source, verdictText(f.Verdict))
				if f.Judged != "" {
					fmt.Fprintf(&b, "- Judged by: %s; %s\n", f.Judged, findingBudget(f.Presets, opt.Budget))
				}
				fmt.Fprintf(&b, "- Evidence: %s\n", f.Evidence)
				if f.Why != "" {
					fmt.Fprintf(&b, "- Why: %s\n", f.Why)
				}
				if f.Changed != "" {
					fmt.Fprintf(&b, "- Verdict changed %s\n", f.Changed)
				}
			}
		}
		all = append(all, s.Findings...)
	}
	if err := os.MkdirAll(filepath.Dir(opt.Output), 0o755); err != nil {
		return nil, err
	}
	if err := results.WriteFileAtomic(opt.Output, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	if opt.SetBaseline {
		nb := &Baseline{From: baselineFrom(opt, slices.Sorted(maps.Keys(commits))), Rule: VerdictRule, Presets: cur}
		for i, s := range sections {
			for _, f := range s.Findings {
				nb.Findings = append(nb.Findings, BaselineFinding{Paper: papers[i].ID, Claim: f.Claim, Verdict: f.Verdict})
			}
		}
		if err := WriteBaseline(opt.Baseline, nb); err != nil {
			return nil, err
		}
	}
	return all, nil
}

// findingBudget names the budget of the runs a finding reads (its presets, by name at the budget b):
// b's when every preset runs at it, else each preset's own budget with the preset's name, its
// reason stated under the section with the preset's budget sentence. A finding computed without
// runs says so.
func findingBudget(names []string, b Budget) string {
	if len(names) == 0 {
		return "computed without runs"
	}
	var own []string
	atB := 0
	for _, n := range names {
		if label := budgetLabel(presetBudget(n)); label != "" && label != string(b) {
			own = append(own, fmt.Sprintf("the %s budget of `%s` (its reason under the section)", label, n))
		} else {
			atB++
		}
	}
	switch {
	case len(own) == 0:
		return fmt.Sprintf("%s budget (the presets above)", b)
	case atB > 0:
		own = append(own, fmt.Sprintf("the %s budget for the others", b))
	}
	return strings.Join(own, "; ")
}

// budgetLabel is the name a budget sentence starts with, before its first ':' or '(' ("medium",
// "collapse claim"), or "" when it has none.
func budgetLabel(sentence string) string {
	if i := strings.IndexAny(sentence, ":("); i > 0 {
		return strings.TrimSpace(sentence[:i])
	}
	return ""
}

// presetBudget is the budget sentence of the engine preset name ("" when there is none).
func presetBudget(name string) string {
	s, err := presets.Preset(name)
	if err != nil {
		return ""
	}
	return s.Budget
}

// baselineFrom describes a report for its baseline: the commits of its runs and its command.
func baselineFrom(opt ReportOptions, commits []string) string {
	return fmt.Sprintf("the %s-budget report from runs at %s (%s)", opt.Budget, strings.Join(commits, ", "), opt.Command)
}

// verdictText capitalises a verdict for the report.
func verdictText(v Verdict) string {
	s := string(v)
	return strings.ToUpper(s[:1]) + s[1:]
}

// writeHeader writes the report's title, how it was made, and the summary of findings.
func writeHeader(b *strings.Builder, papers []*Paper, sections []*Section, opt ReportOptions, info *runinfo.Info, commits []string, newest string, wall wallTime) {
	b.WriteString("# Reproduction report\n\n")
	b.WriteString("Do the findings of the papers fedbayes is built from hold in fedbayes? This page is generated: ")
	when := "no run yet"
	if t, err := time.Parse(time.RFC3339, newest); err == nil {
		when = "the newest run it reads started on " + t.UTC().Format("2006-01-02")
	}
	fmt.Fprintf(b, "`%s` wrote it from the runs in `%s`; %s (`fedbayes reproduce` runs the presets below, keeping finished runs "+
		"and resuming interrupted ones, then writes this page, the same page from the same runs). Do not edit it by hand.\n\n", opt.Command, opt.Dir, when)
	if opt.Records != "" {
		fmt.Fprintf(b, "The records of the runs it reads (each run's spec, provenance, metric rows and status; no checkpoints) are kept in "+
			"`%s`, one archive per paper: `fedbayes reproduce -report-only -budget %s -records %s` writes this page again from them "+
			"on any machine, and a run they hold is not run again.\n\n", filepath.Join(opt.Records, string(opt.Budget)), opt.Budget, opt.Records)
	}
	switch opt.Budget {
	case Medium:
		b.WriteString("**Budget: medium.** Every preset runs at its medium budget, stated under each section: all of " +
			"Fashion-MNIST where the paper uses it, LeNet trained for the rounds at which it first passed 85 % with 10 IID clients " +
			"in a measured run, at least 3 seeds, " +
			"and the 100-client presets at the paper's local training for a tenth of its rounds. A claim that this cut cannot show " +
			"has a preset of its own at the cheapest budget that can (000's calibration and collapse claims), named in the " +
			"finding's \"Judged by\" line with its reason under the section. No run of another budget (reduced, full) enters a " +
			"check or a tally; " + paperBudgetCitation() + ". A preset whose runs are not all done is reported as **not run yet (k of n " +
			"runs done)**, with no table and no verdict: a verdict waits for every seed and row. " +
			"`make reproduce BUDGET=medium` continues the runs where they stopped. Why each preset runs what it runs, and " +
			"the wall time estimated per preset: `docs/reproduction/budgets.md`.\n\n")
	case Reduced:
		b.WriteString("**Budget: reduced.** Every preset ran at its reduced budget (under 30 minutes per preset on 2 CPU cores), " +
			"stated under each section: far fewer rounds, local epochs, examples and seeds than the papers. " +
			"Our absolute numbers are therefore not comparable to the papers'; what can be compared is the ordering of methods, " +
			"which is what the findings below test. `make reproduce BUDGET=full` runs the papers' budgets (days on 2 cores).\n\n")
	default:
		b.WriteString("**Budget: full** (the papers' rounds, epochs and seeds where they state them).\n\n")
	}
	fmt.Fprintf(b, "**Wall time spent** on the runs this report reads: %s.\n\n", wall)
	if info != nil {
		word := "commit"
		if len(commits) > 1 {
			word = "commits"
		}
		fmt.Fprintf(b, "Computed with fedbayes %s, %s, GoMLX %s, backend `%s`, %s/%s with %d CPUs, at %s %s (each run's run.json records its own).\n",
			info.Fedbayes, info.Go, info.Modules["github.com/gomlx/gomlx"], info.Backend, info.OS, info.Arch, info.CPUs, word, strings.Join(commits, ", "))
	}
	b.WriteString("Mean ± standard error over seeds; the papers' ± is as they print it (Ozer et al.: standard error; the others do not say).\n\n")
	b.WriteString(VerdictRule + " Each finding's evidence gives the tally of its checks, its numbers and the checks that did not agree.\n\n")
	b.WriteString(verdictCounts(sections) + "\n\n")
	b.WriteString(tableHeader("paper", "presets", "finding", "verdict", "checks: agree / contradict / not decisive, distinct hypotheses where fewer (set aside)", "largest effect, 95 % CI at its Holm step"))
	for i, p := range papers {
		prev := ""
		for _, f := range sections[i].Findings {
			// The presets the finding reads (Finding.Presets), ditto where the row above read the same.
			var names []string
			for _, n := range f.Presets {
				names = append(names, "`"+n+"`")
			}
			cell := strings.Join(names, ", ")
			if len(names) == 0 {
				cell = "–"
			}
			shown := cell
			if cell == prev {
				shown = "〃"
			}
			prev = cell
			claim, verdict := f.Claim, string(f.Verdict)
			if f.Prediction {
				claim += " *(fedbayes's prediction about the authors' code)*"
			}
			if f.Caveat != "" {
				verdict += "; " + f.Caveat
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", p.ID, shown, claim, verdict, tallyCell(f), f.Effect)
		}
	}
}

// tallyCell is a finding's tally for the summary: "12 / 0 / 0", with ", 6 distinct" where the counted
// checks test fewer distinct hypotheses, and " (2)" for checks set aside.
func tallyCell(f Finding) string {
	if f.Verdict == NotRun {
		return ""
	}
	out := fmt.Sprintf("%d / %d / %d", f.Tally[0], f.Tally[1], f.Tally[2])
	if n := f.Tally[0] + f.Tally[1] + f.Tally[2]; f.Distinct > 0 && f.Distinct < n {
		out += fmt.Sprintf(", %d distinct", f.Distinct)
	}
	if f.Aside > 0 {
		out += fmt.Sprintf(" (%d)", f.Aside)
	}
	return out
}

// verdictCounts counts the verdicts of the papers' claims apart from fedbayes's predictions about the
// authors' code (Finding.Prediction).
func verdictCounts(sections []*Section) string {
	var claims, preds map[Verdict]int = map[Verdict]int{}, map[Verdict]int{}
	nc, np := 0, 0
	for _, s := range sections {
		for _, f := range s.Findings {
			if f.Prediction {
				preds[f.Verdict]++
				np++
			} else {
				claims[f.Verdict]++
				nc++
			}
		}
	}
	count := func(m map[Verdict]int) string {
		var parts []string
		for _, v := range []Verdict{Holds, Partly, Fails, Inconclusive, NotTestable, NotRun} {
			if m[v] > 0 {
				parts = append(parts, fmt.Sprintf("*%s* %d", v, m[v]))
			}
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("**%d claims of the papers**: %s. **%d predictions of fedbayes about the authors' code** (counted apart: they test "+
		"fedbayes's reading of the code, not the papers): %s. The tally column counts the checks behind each verdict, and the distinct "+
		"hypotheses they test where fewer (one comparison made twice, as of two rows whose runs gave identical numbers, is one); checks set aside by "+
		"an unmet precondition are in brackets, listed in the finding's evidence and not counted. The effect is the finding's counted "+
		"difference with the largest magnitude (its label names it), with its 95 %% confidence interval at its step in Holm's correction "+
		"(Δ ± t(1 − 0.05/(2k), df) SE for a comparison tested at 0.05/k, written Holm α/k: a comparison the correction finds has an interval "+
		"that excludes 0).", nc, count(claims), np, count(preds))
}

// shortCommit shortens a git commit to 10 characters.
func shortCommit(c string) string {
	if len(c) > 10 {
		return c[:10]
	}
	return c
}

// budgetLine states a preset's budget for a section, or says it is not run yet and how many of its
// runs are done.
func budgetLine(p Preset, b Budget, runs paperRuns) string {
	name := p.Name(b)
	text, err := p.Budget(b)
	if err != nil {
		text = err.Error()
	}
	c, spent := runs.count[name], ""
	if t := runs.time[name]; t.Runs > 0 {
		spent = ", " + hours(t.total()) + " spent"
	}
	if !c.complete() {
		return fmt.Sprintf("- `%s`: **not run yet (%d of %d runs done%s)** (`fedbayes reproduce -budget %s -presets %s`); budget %s",
			name, c.Done, c.Want, spent, b, name, text)
	}
	return fmt.Sprintf("- `%s`: %d runs%s; budget %s", name, c.Done, spent, text)
}
