package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"fedbayes.dev/fedbayes/runinfo"
)

// SchemaVersion is the version of the on-disk format written by this package, stored in run.json.
const SchemaVersion = 1

// File names inside a run directory.
const (
	MetaFile       = "run.json"
	RowsFile       = "rounds.jsonl"
	StatusFile     = "status.json"
	CheckpointsDir = "checkpoints"
)

// SettingLabel is the pseudo-label that groups runs by Meta.Setting.
const SettingLabel = "setting"

// Meta is the content of run.json: everything needed to know what a run computed and to repeat it.
type Meta struct {
	// Schema is SchemaVersion at the time of writing.
	Schema int `json:"schema"`
	// Setting names the experimental setting; runs of one setting differ only in their seed.
	Setting string `json:"setting"`
	// Labels describe the setting for grouping in tables, e.g. {"rule": "eaa", "weighting":
	// "size", "dataset": "fmnist", "partition": "iid"}. Keys must not be "setting" or "seed".
	Labels map[string]string `json:"labels,omitempty"`
	// Seed is the run's random seed.
	Seed int64 `json:"seed"`
	// Spec is the full experiment spec, as JSON, exactly as the engine was given it.
	Spec json.RawMessage `json:"spec"`
	// Info is the provenance: versions, git commit, backend, machine.
	Info runinfo.Info `json:"info"`
}

// NewMeta builds a Meta, marshalling spec (any JSON-encodable value, e.g. the engine's spec
// struct, or a json.RawMessage) into Meta.Spec.
func NewMeta(setting string, labels map[string]string, seed int64, spec any, info runinfo.Info) (Meta, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return Meta{}, fmt.Errorf("results: setting %q: spec cannot be written as JSON: %w", setting, err)
	}
	m := Meta{Schema: SchemaVersion, Setting: setting, Labels: labels, Seed: seed, Spec: raw, Info: info}
	return m, m.Validate()
}

// Validate checks that the meta can be written and grouped.
func (m Meta) Validate() error {
	if strings.TrimSpace(m.Setting) == "" {
		return fmt.Errorf("results: run meta: empty setting name")
	}
	for k := range m.Labels {
		switch {
		case strings.TrimSpace(k) == "":
			return fmt.Errorf("results: setting %q: empty label name", m.Setting)
		case k == SettingLabel || k == "seed":
			return fmt.Errorf("results: setting %q: label %q is reserved (use Meta.Setting and Meta.Seed)", m.Setting, k)
		}
	}
	if len(m.Spec) == 0 {
		return fmt.Errorf("results: setting %q: empty spec", m.Setting)
	}
	if !json.Valid(m.Spec) {
		return fmt.Errorf("results: setting %q: spec is not valid JSON", m.Setting)
	}
	return nil
}

// Budget returns the budget the run's spec states: its "budget" field, at the top level (engine
// specs) or inside a top-level "spec" object (predictive runs, which store the spec with the
// trial's settings). It is "" when the spec states none.
func (m Meta) Budget() string {
	var spec struct {
		Budget string `json:"budget"`
		Spec   *struct {
			Budget string `json:"budget"`
		} `json:"spec"`
	}
	if json.Unmarshal(m.Spec, &spec) != nil {
		return ""
	}
	if spec.Budget == "" && spec.Spec != nil {
		return spec.Spec.Budget
	}
	return spec.Budget
}

// Label returns the value of a grouping label: Setting for "setting", else Labels[name].
func (m Meta) Label(name string) (string, bool) {
	if name == SettingLabel {
		return m.Setting, true
	}
	v, ok := m.Labels[name]
	return v, ok
}

// LabelNames returns "setting" followed by the run's label names, sorted.
func (m Meta) LabelNames() []string {
	names := make([]string, 0, len(m.Labels)+1)
	for k := range m.Labels {
		names = append(names, k)
	}
	sort.Strings(names)
	return append([]string{SettingLabel}, names...)
}

// Differs says how m (the recorded run) and o (the run asked for now) describe different
// experiments, or "" when they describe the same one. It names every field that differs with both
// values: the setting, the seed, each label, and each spec field by its JSON path (e.g. "the specs
// differ: training.rounds: 5 in the recorded run, 6 now"; the specs are compared as JSON values with
// exact numbers, at most five fields listed). Provenance (Info), the budget sentence (see Budget)
// and the sweep's list of seeds (the spec's top-level "seeds"; the run's own Seed is compared),
// which describe a run without changing what it computes, are not compared: adding seeds to a spec
// keeps its finished runs. Runners use it to refuse a finished run recorded for another spec
// instead of keeping it silently.
func (m Meta) Differs(o Meta) string { return sameRun(m, o) }

// sameRun is Differs: a is the recorded meta, b the given one.
func sameRun(a, b Meta) string {
	var diffs []string
	if a.Setting != b.Setting {
		diffs = append(diffs, fmt.Sprintf("setting: %q in the recorded run, %q now", clip(a.Setting), clip(b.Setting)))
	}
	if a.Seed != b.Seed {
		diffs = append(diffs, fmt.Sprintf("seed: %d in the recorded run, %d now", a.Seed, b.Seed))
	}
	diffs = append(diffs, labelDiffs(nonNil(a.Labels), nonNil(b.Labels))...)
	if len(diffs) > 0 {
		return joinDiffs(diffs)
	}
	va, errA := decodeSpec(a.Spec)
	vb, errB := decodeSpec(b.Spec)
	switch {
	case errA != nil:
		return fmt.Sprintf("the specs differ: the recorded spec cannot be read (%v)", errA)
	case errB != nil:
		return fmt.Sprintf("the specs differ: the given spec cannot be read (%v)", errB)
	}
	if d := specDiffs(specToCompare(va), specToCompare(vb)); len(d) > 0 {
		return "the specs differ: " + joinDiffs(d)
	}
	return ""
}

// specToCompare upgrades a decoded spec of a former layout (UpgradeSpec) and removes from it what
// does not change what one run computes: the budget
// sentence (its top-level "budget" and the "budget" of a top-level "spec" object, where Budget
// looks) and the top-level "seeds", the sweep's seed list (a run draws every random number from its
// own seed; see engine's seeds.go).
func specToCompare(spec any) any {
	m, ok := spec.(map[string]any)
	if !ok {
		return spec
	}
	UpgradeSpec(m) // a spec of a former layout reads as it would be written now (SpecAliases)
	delete(m, "budget")
	delete(m, "seeds")
	if inner, ok := m["spec"].(map[string]any); ok {
		delete(inner, "budget")
	}
	return m
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._=+-]+`)

// RunName returns the conventional run directory name "SETTING-seedN", with characters other
// than letters, digits and ._=+- replaced by '_'.
func RunName(setting string, seed int64) string {
	s := strings.Trim(unsafeName.ReplaceAllString(setting, "_"), ".")
	if s == "" {
		s = "run"
	}
	return fmt.Sprintf("%s-seed%d", s, seed)
}

// marshalIndented writes v as indented JSON with a trailing newline.
func marshalIndented(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// HasRun reports whether dir holds a run (its run.json), finished or not.
func HasRun(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, MetaFile))
	return err == nil
}
