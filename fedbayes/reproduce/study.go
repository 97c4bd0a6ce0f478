package reproduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"fedbayes.dev/fedbayes/internal/words"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
)

// Budget is the budget a reproduction runs at.
type Budget string

const (
	// Full is the papers' rounds, epochs, data and seeds (days on 2 CPU cores).
	Full Budget = "full"
	// Medium is the budget of the report (issue 17): the smallest at which LeNet reaches 85 % on 10
	// IID Fashion-MNIST clients, with at least 3 seeds everywhere (hours per preset on 2 CPU cores;
	// see docs/reproduction.md for the estimate per preset).
	Medium Budget = "medium"
	// Reduced is each preset's reduced budget (under 30 minutes per preset on 2 CPU cores), stated in
	// every run's spec and in the report.
	Reduced Budget = "reduced"
)

// ParseBudget reads "full", "medium" or "reduced".
func ParseBudget(s string) (Budget, error) {
	switch Budget(s) {
	case Full, Medium, Reduced:
		return Budget(s), nil
	}
	return "", fmt.Errorf("reproduce: budget %q; want full, medium or reduced", s)
}

// Preset is one experiment of a paper, an engine preset (fedbayes run): its reduced and medium forms
// are NAME-reduced and NAME-medium unless Medium and Reduced name other presets, as Hasan (2023)'s
// fmnist-fast and fmnist-medium and Chen & Chao's fedbe-fmnist-fast and fedbe-fmnist-medium do.
type Preset struct {
	// Full names the preset at the paper's budget.
	Full string
	// Medium names the medium-budget preset; empty means Full + presets.MediumSuffix.
	Medium string
	// Reduced names the reduced-budget preset; empty means Full + presets.ReducedSuffix.
	Reduced string
	// Only, when set, limits the preset to that budget: a claim preset (fedbayes/presets, claims.go)
	// that the report's budget adds for one finding.
	Only Budget
}

// PresetsAt lists the paper's presets at budget b, in order (those whose Only is another budget left
// out).
func (p *Paper) PresetsAt(b Budget) []Preset {
	var out []Preset
	for _, pr := range p.Presets {
		if pr.Only == "" || pr.Only == b {
			out = append(out, pr)
		}
	}
	return out
}

// Name is the preset's name at budget b.
func (p Preset) Name(b Budget) string {
	if b == Full {
		return p.Full
	}
	if b == Medium {
		if p.Medium != "" {
			return p.Medium
		}
		return p.Full + presets.MediumSuffix
	}
	if p.Reduced != "" {
		return p.Reduced
	}
	return p.Full + presets.ReducedSuffix
}

// Budget returns the budget sentence the preset records in its runs.
func (p Preset) Budget(b Budget) (string, error) {
	s, err := presets.Preset(p.Name(b))
	if err != nil {
		return "", err
	}
	return s.Budget, nil
}

// runPreset runs spec, the preset at the budget, into dir: finished runs are kept, interrupted ones
// resume. With opt.Workers > 1 it runs opt.Worker's share only.
func runPreset(ctx context.Context, spec *engine.Spec, dir string, opt Options) error {
	eo := engine.Options{Dir: dir, Resume: true, Progress: opt.Progress, NoFigures: true}
	if opt.Workers > 1 {
		var err error
		if eo.Runs, err = engine.WorkerShare(spec, opt.Worker, opt.Workers); err != nil || len(eo.Runs) == 0 {
			return err // or fewer runs than workers: nothing for this one
		}
	}
	_, err := engine.Run(ctx, spec, eo)
	return err
}

// Paper is one paper of the report: its presets and how its section is built from their runs.
type Paper struct {
	// ID is the paper's file number in ../shared/papers (000 ... 004).
	ID string
	// Title is the reference as the report prints it.
	Title string
	// Presets are the experiments, in the order they run.
	Presets []Preset
	// Dir is the results sub-directory (default ID); papers sharing runs share it.
	Dir string
	// section builds the report section from the runs of each preset (by preset name at the budget).
	section func(b Budget, runs paperRuns) (*Section, error)
}

// dir is the paper's results sub-directory.
func (p *Paper) dir() string {
	if p.Dir != "" {
		return p.Dir
	}
	return p.ID
}

// Papers lists the papers of the report, in order.
func Papers() []*Paper {
	return []*Paper{ozerPaper(), fischerPaper(), jamoussiPaper(), hasanPaper(), chenPaper()}
}

// SelectPapers returns the papers with the given IDs (all for an empty list).
func SelectPapers(ids []string) ([]*Paper, error) {
	all := Papers()
	if len(ids) == 0 {
		return all, nil
	}
	var out []*Paper
	for _, id := range ids {
		found := false
		for _, p := range all {
			if p.ID == strings.TrimSpace(id) {
				out, found = append(out, p), true
			}
		}
		if !found {
			return nil, fmt.Errorf("reproduce: no paper %q; papers: 000, 001, 002, 003, 004", id)
		}
	}
	return out, nil
}

// Options configure Run.
type Options struct {
	// Dir is the results directory; each paper's runs go to Dir/ID.
	Dir string
	// Budget is Full, Medium or Reduced.
	Budget Budget
	// Presets, if not empty, limits the run to these preset names (at the budget); the report still
	// covers every preset of the selected papers and says which have no runs.
	Presets []string
	// Progress reports the engine runs (nil: progress.New()).
	Progress progress.Reporter
	// Log receives one line per preset and the predictive runs' progress (nil: silent).
	Log io.Writer
	// Worker and Workers, when Workers > 1, run only the runs Worker, Worker + Workers, ... (by
	// their index in engine.RunList) of each preset: the share of one of Workers processes that
	// run the same selection side by side (fedbayes reproduce -jobs).
	Worker, Workers int
}

// selection is one preset Run runs: the paper, the preset's name and spec at the budget, and the
// paper's results directory.
type selection struct {
	paper *Paper
	name  string
	spec  *engine.Spec
	dir   string
}

// selected lists the presets of the papers that Run runs with opt, in order.
func selected(papers []*Paper, opt Options) ([]selection, error) {
	want := map[string]bool{}
	for _, n := range opt.Presets {
		want[n] = true
	}
	var out []selection
	for _, p := range papers {
		for _, pr := range p.PresetsAt(opt.Budget) {
			name := pr.Name(opt.Budget)
			if len(want) > 0 && !want[name] {
				continue
			}
			spec, err := presets.Preset(name)
			if err != nil {
				return nil, fmt.Errorf("reproduce %s: %w", p.ID, err)
			}
			out = append(out, selection{paper: p, name: name, spec: spec, dir: filepath.Join(opt.Dir, p.dir())})
		}
	}
	return out, nil
}

// RunDirs lists the run directories of every run that Run runs with opt (all workers'), so that a
// caller running it in several processes can count the finished ones.
func RunDirs(papers []*Paper, opt Options) ([]string, error) {
	sel, err := selected(papers, opt)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, s := range sel {
		d, err := engine.RunDirs(s.spec, s.dir)
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, d...)
	}
	return dirs, nil
}

// Run runs every preset of the papers at the budget, resuming interrupted runs and keeping finished
// ones, so that repeating it after an interruption only does what is left.
func Run(ctx context.Context, papers []*Paper, opt Options) error {
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	if opt.Workers > 1 && (opt.Worker < 0 || opt.Worker >= opt.Workers) {
		return fmt.Errorf("reproduce: worker %d of %d: want 0 <= worker < workers", opt.Worker, opt.Workers)
	}
	sel, err := selected(papers, opt)
	if err != nil {
		return err
	}
	for _, s := range sel {
		if err := ctx.Err(); err != nil {
			return err
		}
		fmt.Fprintf(opt.Log, "reproduce %s: preset %s -> %s\n", s.paper.ID, s.name, s.dir)
		if err := runPreset(ctx, s.spec, s.dir, opt); err != nil {
			return fmt.Errorf("reproduce %s: %s: %w", s.paper.ID, s.name, err)
		}
	}
	return nil
}

// loadRuns reads a paper's complete runs and sorts them by preset (at the budget). Runs of other
// presets or budgets in the directory are ignored; incomplete, failed and diverged runs of the
// paper's presets are returned as skipped, and as notes for the report. Runs that are not runs of
// their preset as it stands (engine.SpecCheck: another spec, labels or seed, as run --resume
// refuses them) and runs whose binary was built from a modified tree (runinfo.Info.GitDirty) are left
// out, named in a note with the reason: the report reads only runs that the preset and their
// recorded commit reproduce. Two folders holding the same run (a copied folder) are an error
// (results.CheckRuns).
func loadRuns(dir string, p *Paper, b Budget) (map[string][]results.Run, []results.Skipped, []string, error) {
	out := map[string][]results.Run{}
	var notes []string
	var mine []results.Skipped
	pdir := filepath.Join(dir, p.dir())
	if _, err := os.Stat(pdir); errors.Is(err, fs.ErrNotExist) {
		return out, nil, nil, nil // nothing run yet
	}
	runs, skipped, err := results.LoadWith(results.LoadOptions{Expect: engine.ExpectedRounds}, pdir)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reproduce %s: %w", p.ID, err)
	}
	for _, s := range skipped {
		if presetOf(p, b, filepath.Base(s.Dir)) != "" {
			notes = append(notes, fmt.Sprintf("skipped %s: %s", filepath.Base(s.Dir), s.Reason))
			mine = append(mine, s)
		}
	}
	settings, specOf, err := presetChecks(p, b)
	if err != nil {
		return nil, nil, nil, err
	}
	formerRuns := map[string]int{}   // runs of the former one-round runner, by preset
	dirty := map[string][]string{}   // runs computed by a binary built from a modified tree, by preset
	refused := map[string][]string{} // runs that are not runs of their preset, by preset and reason
	for _, r := range runs {
		name := presetOf(p, b, r.Meta.Setting)
		if name == "" {
			continue
		}
		if !settings[name][r.Meta.Setting] {
			if r.Meta.Labels["method"] != "" && r.Meta.Labels["variant"] == "" && strings.HasPrefix(r.Meta.Setting, name+"-h") {
				formerRuns[name]++
			}
			continue // a setting the preset no longer has (e.g. a row dropped from a reduced budget)
		}
		base := filepath.Base(r.Dir)
		if err := specOf[name](r.Meta); err != nil {
			why := "not a run of the preset as it stands (" + err.Error() + "); run the preset again"
			refused[name+"\x00"+why] = append(refused[name+"\x00"+why], base)
			continue
		}
		if r.Meta.Info.GitDirty {
			dirty[name] = append(dirty[name], base)
			continue
		}
		out[name] = append(out[name], r)
	}
	for key, dirs := range refused {
		name, why, _ := strings.Cut(key, "\x00")
		sort.Strings(dirs)
		notes = append(notes, fmt.Sprintf("left out %d %s of %s: %s: %s", len(dirs), words.Plural(len(dirs), "run"), name, why, strings.Join(dirs, ", ")))
	}
	for name, dirs := range dirty {
		sort.Strings(dirs)
		notes = append(notes, fmt.Sprintf("left out %d %s of %s computed by a binary built from a modified tree (git_dirty in run.json: "+
			"their code is not the commit they name, so they cannot be reproduced from it): %s; run them again from a clean tree",
			len(dirs), words.Plural(len(dirs), "run"), name, strings.Join(dirs, ", ")))
	}
	for name, n := range formerRuns {
		notes = append(notes, fmt.Sprintf("left out %d runs of %s by the former one-round runner (settings %s-hH-METHOD): "+
			"Hasan (2023)'s presets run on the engine now (settings %s-METHOD-H); run the preset again", n, name, name, name))
	}
	for _, rs := range out {
		sort.SliceStable(rs, func(i, j int) bool {
			if rs[i].Meta.Setting != rs[j].Meta.Setting {
				return rs[i].Meta.Setting < rs[j].Meta.Setting
			}
			return rs[i].Meta.Seed < rs[j].Meta.Seed
		})
	}
	sort.Strings(notes)
	return out, mine, notes, nil
}

// presetChecks returns, for each engine preset of the paper at budget b, its setting names and the
// check of a run's recorded meta against it (engine.SpecCheck, the check run --resume applies).
func presetChecks(p *Paper, b Budget) (map[string]map[string]bool, map[string]func(results.Meta) error, error) {
	names := map[string]map[string]bool{}
	checks := map[string]func(results.Meta) error{}
	for _, pr := range p.PresetsAt(b) {
		spec, err := presets.Preset(pr.Name(b))
		if err != nil {
			return nil, nil, err
		}
		settings, err := spec.Expand()
		if err != nil {
			return nil, nil, err
		}
		names[pr.Name(b)] = map[string]bool{}
		for _, st := range settings {
			names[pr.Name(b)][st.Name] = true
		}
		if checks[pr.Name(b)], err = engine.SpecCheck(spec); err != nil {
			return nil, nil, err
		}
	}
	return names, checks, nil
}

// presetOf returns the name of the paper's preset (at budget b) a setting or run directory belongs to,
// or "". A full-budget preset does not claim its own "-reduced" or "-medium" settings.
func presetOf(p *Paper, b Budget, setting string) string {
	best := ""
	for _, pr := range p.PresetsAt(b) {
		name := pr.Name(b)
		rest, ok := strings.CutPrefix(setting, name+"-")
		if !ok || strings.HasPrefix(rest, strings.TrimPrefix(presets.ReducedSuffix, "-")+"-") ||
			strings.HasPrefix(rest, strings.TrimPrefix(presets.MediumSuffix, "-")+"-") {
			continue
		}
		if len(name) > len(best) {
			best = name
		}
	}
	return best
}
