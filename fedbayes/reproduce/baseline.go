package reproduce

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"fedbayes.dev/fedbayes/internal/strictjson"

	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/results"
)

// The report's baseline: a file beside the report (BaselineFile) keeps the verdicts of an earlier
// report, the verdict rule it printed and what each of its presets ran, so that a finding whose
// verdict has changed since can say what changed it: a preset's set-up (its recorded spec), its
// seeds, the verdict rule, or, when none of these did, how the report's code judges the finding.
// The baseline changes only when asked (ReportOptions.SetBaseline), so that writing the report
// again from the same runs gives the same page.

// BaselineFile is the baseline's name in the report's figure directory (docs/reproduction/).
const BaselineFile = "baseline.json"

// Baseline is what a report concluded and from which runs.
type Baseline struct {
	// From says which report it describes: its commit and how it was made.
	From string `json:"from"`
	// Rule is the verdict rule that report printed.
	Rule string `json:"rule"`
	// Findings are its findings, paper by paper.
	Findings []BaselineFinding `json:"findings"`
	// Presets describes the complete runs it read of each preset, by preset name at the budget.
	Presets map[string]BaselinePreset `json:"presets"`
}

// BaselineFinding is one finding of a baseline.
type BaselineFinding struct {
	// Paper is the paper's ID (000 ... 004); Claim is the finding as the report words it.
	Paper string `json:"paper"`
	Claim string `json:"claim"`
	// Verdict is the verdict it had.
	Verdict Verdict `json:"verdict"`
}

// BaselinePreset is what a report read of one preset.
type BaselinePreset struct {
	// Runs counts its complete runs; Seeds are their seeds, sorted.
	Runs  int     `json:"runs"`
	Seeds []int64 `json:"seeds"`
	// Setting is the first of its settings by name, and Spec the spec that setting's runs recorded:
	// the preset's set-up, compared field by field.
	Setting string          `json:"setting"`
	Spec    json.RawMessage `json:"spec"`
	// Settings holds the spec each of its settings' runs recorded, by setting, Setting's included,
	// so that a change to any setting is found; a baseline without it compares Setting alone.
	Settings map[string]json.RawMessage `json:"settings,omitempty"`
}

// settingsOf lists the settings of p to compare, sorted by name: Settings, or Setting alone.
func (p BaselinePreset) settingsOf() []string {
	if len(p.Settings) == 0 {
		if p.Setting == "" {
			return nil
		}
		return []string{p.Setting}
	}
	return slices.Sorted(maps.Keys(p.Settings))
}

// specOf is the spec setting's runs recorded.
func (p BaselinePreset) specOf(setting string) json.RawMessage {
	if raw, ok := p.Settings[setting]; ok {
		return raw
	}
	return p.Spec
}

// maxBaselineBytes bounds the baseline file read (a report's baseline is tens of kilobytes).
const maxBaselineBytes = 8 << 20

// ReadBaseline reads a baseline file; a missing file gives nil and no error.
func ReadBaseline(path string) (*Baseline, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reproduce: baseline: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > maxBaselineBytes {
		return nil, fmt.Errorf("reproduce: baseline %s: %d bytes, more than the %d a baseline can hold", path, st.Size(), maxBaselineBytes)
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxBaselineBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reproduce: baseline %s: %w", path, err)
	}
	if len(raw) > maxBaselineBytes {
		return nil, fmt.Errorf("reproduce: baseline %s: more than the %d bytes a baseline can hold", path, maxBaselineBytes)
	}
	var b Baseline
	if err := strictjson.DecodeFile(path, raw, &b); err != nil {
		return nil, fmt.Errorf("reproduce: baseline: %w", err)
	}
	for i, fd := range b.Findings {
		if fd.Paper == "" || fd.Claim == "" || fd.Verdict == "" {
			return nil, fmt.Errorf("reproduce: baseline %s: finding %d lacks its paper, claim or verdict", path, i+1)
		}
	}
	return &b, nil
}

// WriteBaseline writes b to path atomically.
func WriteBaseline(path string, b *Baseline) error {
	raw, err := json.MarshalIndent(b, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("reproduce: baseline: %w", err)
	}
	return results.WriteFileAtomic(path, append(raw, '\n'), 0o644)
}

// baselinePresets describes the complete runs of each preset (by name at the budget).
func baselinePresets(complete map[string][]results.Run) map[string]BaselinePreset {
	out := map[string]BaselinePreset{}
	for name, rs := range complete {
		if len(rs) == 0 {
			continue
		}
		seeds := map[int64]bool{}
		settings := map[string]json.RawMessage{}
		first := rs[0]
		for _, r := range rs {
			seeds[r.Meta.Seed] = true
			settings[r.Meta.Setting] = r.Meta.Spec
			if fingerprintBefore(r.Meta.Setting, r.Meta.Spec, first.Meta.Setting, first.Meta.Spec) {
				first = r
			}
		}
		s := make([]int64, 0, len(seeds))
		for k := range seeds {
			s = append(s, k)
		}
		slices.Sort(s)
		out[name] = BaselinePreset{Runs: len(rs), Seeds: s, Setting: first.Meta.Setting, Spec: first.Meta.Spec, Settings: settings}
	}
	return out
}

// verdictChange says, for a finding of paper whose verdict differs from the baseline's, what changed
// since: each of the finding's presets whose set-up or seeds changed, or which has runs now and had
// none then (or the reverse), and the verdict rule; when none did, the finding's checks in the
// report's code. It returns "" when the baseline has no such finding (by its claim or former claim)
// or the verdict is the same.
func verdictChange(base *Baseline, cur map[string]BaselinePreset, rule, paper string, f Finding) string {
	return verdictChangeWith(base, cur, rule, paper, f, settingSpecs())
}

// settingSpecs returns a function giving the spec a run of a setting of a preset (at a budget)
// records now, from the preset's definition (ok false when the preset has no such setting any more),
// expanding each preset once.
func settingSpecs() func(preset, setting string) (json.RawMessage, bool) {
	expanded := map[string]map[string]json.RawMessage{}
	return func(preset, setting string) (json.RawMessage, bool) {
		specs, done := expanded[preset]
		if !done {
			specs = map[string]json.RawMessage{}
			if spec, err := presets.Preset(preset); err == nil {
				if settings, err := spec.Expand(); err == nil {
					for _, st := range settings {
						if raw, err := json.Marshal(st.Spec); err == nil {
							specs[st.Name] = raw
						}
					}
				}
			}
			expanded[preset] = specs
		}
		raw, ok := specs[setting]
		return raw, ok
	}
}

// verdictChangeWith is verdictChange with the current spec of a preset's setting from specNow.
func verdictChangeWith(base *Baseline, cur map[string]BaselinePreset, rule, paper string, f Finding,
	specNow func(preset, setting string) (json.RawMessage, bool)) string {
	if base == nil {
		return ""
	}
	i := slices.IndexFunc(base.Findings, func(b BaselineFinding) bool {
		return b.Paper == paper && (b.Claim == f.Claim || f.Formerly != "" && b.Claim == f.Formerly)
	})
	if i < 0 || base.Findings[i].Verdict == f.Verdict {
		return ""
	}
	// Causes by kind, each with the presets it applies to, so that presets that changed alike share a line.
	var kinds []string
	byKind := map[string][]string{}
	add := func(kind, name string) {
		if _, ok := byKind[kind]; !ok {
			kinds = append(kinds, kind)
		}
		byKind[kind] = append(byKind[kind], "`"+name+"`")
	}
	presets := slices.Clone(f.Presets)
	sort.Strings(presets)
	for _, name := range presets {
		was, had := base.Presets[name]
		now, has := cur[name]
		wasRun, isRun := had && was.Runs > 0, has && now.Runs > 0
		if had {
			for _, k := range setupChanges(name, was, specNow) {
				add(k, name)
			}
		}
		switch {
		case wasRun && !isRun:
			add(fmt.Sprintf("no runs the report reads now (%d before): not run yet as it stands", was.Runs), name)
		case !wasRun && isRun:
			add("runs now (none before)", name)
		case wasRun && isRun && !slices.Equal(was.Seeds, now.Seeds):
			add(fmt.Sprintf("seeds (%s before, %s now)", seedList(was.Seeds), seedList(now.Seeds)), name)
		}
	}
	var causes []string
	for _, k := range kinds {
		causes = append(causes, strings.Join(byKind[k], ", ")+": "+k)
	}
	if base.Rule != rule {
		why := "the verdict rule (the paragraph above; docs/statistics.md)"
		if f.RuleNote != "" {
			why += ": " + f.RuleNote
		}
		causes = append(causes, why)
	}
	if len(causes) == 0 {
		causes = append(causes, "how the report judges this finding (its checks), on the same runs under the same rule")
	}
	claim := ""
	if base.Findings[i].Claim != f.Claim {
		claim = fmt.Sprintf(" (as \"%s\")", base.Findings[i].Claim)
	}
	return fmt.Sprintf("from *%s*%s; since then: %s", base.Findings[i].Verdict, claim, strings.Join(causes, "; "))
}

// setupChanges says how the settings of preset name in the baseline (was) differ from the same
// settings of the preset as it stands (specNow): each distinct difference once, with how many of the
// settings it applies to where not all, and the settings the preset no longer has.
func setupChanges(name string, was BaselinePreset, specNow func(preset, setting string) (json.RawMessage, bool)) []string {
	settings := was.settingsOf()
	var order, gone []string
	count := map[string]int{}
	for _, st := range settings {
		spec, ok := specNow(name, st)
		if !ok {
			gone = append(gone, st)
			continue
		}
		a := results.Meta{Setting: st, Spec: was.specOf(st)}
		b := results.Meta{Setting: st, Spec: spec}
		why := a.Differs(b)
		if why == "" {
			continue
		}
		why = strings.ReplaceAll(strings.TrimPrefix(why, "the specs differ: "), " in the recorded run, ", " before, ")
		if count[why] == 0 {
			order = append(order, why)
		}
		count[why]++
	}
	var out []string
	for _, why := range order {
		if n := count[why]; n < len(settings) {
			out = append(out, fmt.Sprintf("set-up of %d of its %d settings (%s)", n, len(settings), why))
		} else {
			out = append(out, "set-up ("+why+")")
		}
	}
	switch {
	case len(gone) == 1:
		out = append(out, fmt.Sprintf("settings (%s is not one of them now)", gone[0]))
	case len(gone) > 1:
		out = append(out, fmt.Sprintf("settings (%d of its %d are not among them now, %s first)", len(gone), len(settings), gone[0]))
	}
	return out
}

// presetBaseline describes preset name (at a budget) as it stands, for a preset with no complete runs:
// no runs, and the spec its first setting would record, so that verdictChange can say how its set-up
// changed before it runs again.
func presetBaseline(name string) (BaselinePreset, error) {
	spec, err := presets.Preset(name)
	if err != nil {
		return BaselinePreset{}, err
	}
	settings, err := spec.Expand()
	if err != nil {
		return BaselinePreset{}, err
	}
	var first string
	var firstSpec json.RawMessage
	for _, st := range settings {
		raw, err := json.Marshal(st.Spec)
		if err != nil {
			return BaselinePreset{}, err
		}
		if first == "" || fingerprintBefore(st.Name, raw, first, firstSpec) {
			first, firstSpec = st.Name, raw
		}
	}
	return BaselinePreset{Setting: first, Spec: firstSpec}, nil
}

// fingerprintBefore orders the settings of a preset for the one whose spec stands for the preset's
// set-up in a baseline: variational settings (whose spec holds every field a variational net reads)
// before deterministic ones, then by name.
func fingerprintBefore(a string, specA json.RawMessage, b string, specB json.RawMessage) bool {
	da, db := deterministicSpec(specA), deterministicSpec(specB)
	if da != db {
		return db
	}
	return a < b
}

// deterministicSpec says whether a recorded spec's model is deterministic (model.kind; absent means
// bayesian, engine's default).
func deterministicSpec(raw json.RawMessage) bool {
	var s struct {
		Model struct {
			Kind models.Kind `json:"kind"`
		} `json:"model"`
	}
	_ = json.Unmarshal(raw, &s)
	return s.Model.Kind == models.Deterministic
}
