package engine_test

import (
	"encoding/json"
	"testing"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/presets"
)

// FuzzParseSpec: any bytes give a valid spec (every setting of which validates) or an error; never a
// panic or a hang. Seeds are the presets' specs (package presets: this test is in package engine_test,
// which may import it) and the hostile cases of issue 21; crashers found are
// kept in testdata/fuzz/FuzzParseSpec. Run: go test -run '^$' -fuzz FuzzParseSpec -fuzztime 15s ./fedbayes/engine/
func FuzzParseSpec(f *testing.F) {
	for _, name := range presets.PresetNames() {
		if p, err := presets.Preset(name); err == nil {
			if raw, err := json.Marshal(p); err == nil {
				f.Add(raw)
			}
		}
	}
	for _, s := range []string{
		`{"dataset": {"name": "digits"}, "training": {"rounds": 1, "rounds": 2}}`,
		`{"dataset": {"name": "digits"}, "seeds": [9007199254740993], "sweep": {"aggregation.rule": ["GAA", "EAA"]}}`,
		"\xEF\xBB\xBF" + `{"dataset": {"name": "digits"}, "training": {"lr": NaN}}`,
		`{"dataset": {"name": "digits"}, "model": {"hidden": [100000, 100000]}}`,
		`{"dataset": {"name": "iris"}, "variants": [{"label": "a", "set": {"model.kind": "deterministic", "aggregation.rule": "FedAvg"}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := engine.ParseSpec(raw)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		settings, err := s.Expand()
		if err != nil {
			t.Fatalf("ParseSpec accepted a spec whose Expand fails: %v", err)
		}
		if len(settings) == 0 || len(settings) > engine.MaxSettings {
			t.Fatalf("%d settings", len(settings))
		}
		for _, st := range settings {
			if err := st.Spec.Validate(); err != nil {
				t.Fatalf("setting %s does not validate: %v", st.Name, err)
			}
		}
	})
}
