package plots

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

const specExample = `{
  "version": 1,
  "figures": [
    {"name": "acc", "kind": "learning_curves", "size": "wide",
     "data": {"title": "accuracy", "series": [{"name": "EAA", "x": [1, 2], "runs": [[0.5, 0.6], [0.55, 0.65]]}]}},
    {"name": "toy", "kind": "toy_aggregation",
     "data": {"clients": [{"mean": 0, "var": 1}, {"mean": 2, "var": 0.25}], "aggregates": [{"name": "CF", "mean": 1.6, "var": 0.2}], "mixture": true}},
    {"name": "rel", "kind": "reliability", "data": {"series": [{"name": "a", "bins": [{"confidence": 0.5, "accuracy": 0.4, "count": 3}]}]}},
    {"name": "spread", "kind": "learned_spread", "data": {"rules": ["EAA"], "groups": [{"name": "FMNIST", "mean": [3]}]}},
    {"name": "part", "kind": "partition_heatmap", "data": {"counts": [[1, 2], [3, 4]]}},
    {"name": "ret", "kind": "retention", "data": {"series": [{"name": "a", "x": [0.5, 1], "runs": [[0.9, 0.8]]}]}},
    {"name": "layers", "kind": "versus_layers", "data": {"series": [{"name": "a", "x": [0, 1], "runs": [[0.9, 0.8]]}]}},
    {"name": "h", "kind": "versus_heterogeneity", "data": {"series": [{"name": "a", "x": [0, 1], "runs": [[0.9, 0.8]]}]}},
    {"name": "beta", "kind": "nll_versus_beta", "data": {"series": [{"name": "a", "x": [0.1, 1], "runs": [[0.3, 0.4]]}]}},
    {"name": "raw", "kind": "echarts", "data": {"xAxis": {"type": "category", "data": ["a"]}, "yAxis": {}, "series": [{"type": "bar", "data": [1]}]}}
  ]
}`

func TestParseSpecBuildsEveryKind(t *testing.T) {
	s, err := ParseSpec([]byte(specExample))
	if err != nil {
		t.Fatal(err)
	}
	charts, err := s.BuildAll()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for i, f := range s.Figures {
		kinds[f.Kind] = true
		if charts[i].Name != f.Name {
			t.Errorf("chart %d named %q, want %q", i, charts[i].Name, f.Name)
		}
	}
	for _, k := range Kinds() {
		if !kinds[k] {
			t.Errorf("the example spec does not exercise kind %q", k)
		}
	}
}

func TestParseSpecErrors(t *testing.T) {
	fig := func(f string) string { return `{"version": 1, "figures": [` + f + `]}` }
	for _, tc := range []struct {
		name, spec, wantErr string
	}{
		{"not json", `{`, "figure spec"},
		{"version", `{"version": 2, "figures": []}`, "version 2"},
		{"no figures", `{"version": 1, "figures": []}`, "no figures"},
		{"unknown top field", `{"version": 1, "figure": []}`, `unknown field "figure"`},
		{"bad name", fig(`{"name": "a b", "kind": "echarts", "data": {}}`), `name "a b"`},
		{"duplicate", fig(`{"name": "a", "kind": "echarts", "data": {}}, {"name": "a", "kind": "echarts", "data": {}}`), "both named"},
		{"duplicate key", `{"version": 1, "version": 1, "figures": []}`, `"version" appears twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseSpec([]byte(tc.spec)); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	for _, tc := range []struct {
		name    string
		f       FigureSpec
		wantErr string
	}{
		{"unknown kind", FigureSpec{Name: "a", Kind: "pie", Data: json.RawMessage(`{}`)}, `unknown kind "pie"`},
		{"unknown data field", FigureSpec{Name: "a", Kind: "learning_curves", Data: json.RawMessage(`{"serie": []}`)}, `unknown field "serie"`},
		{"duplicate data key", FigureSpec{Name: "a", Kind: "learning_curves", Data: json.RawMessage(`{"series": [], "series": []}`)}, `"series" appears twice`},
		{"missing data", FigureSpec{Name: "a", Kind: "reliability"}, `missing "data"`},
		{"bad size", FigureSpec{Name: "a", Kind: "echarts", Size: "huge", Data: json.RawMessage(`{}`)}, `unknown figure size "huge"`},
		{"builder error names figure", FigureSpec{Name: "fig7", Kind: "learning_curves", Data: json.RawMessage(`{"series": []}`)}, `figure "fig7" (learning_curves)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.f.Build(); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestSpecFileRoundTrip(t *testing.T) {
	f, err := NewFigureSpec("acc", "learning_curves", "column", Curves{Series: []SeedSeries{{Name: "a", X: []float64{1}, Runs: [][]float64{{0.5}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewFigureSpec("bad", "learning_curves", "", Curves{}); err == nil {
		t.Error("NewFigureSpec accepted data its builder rejects")
	}
	path := filepath.Join(t.TempDir(), "figures.json")
	if err := WriteSpecFile(path, f); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSpecFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Figures) != 1 || s.Figures[0].Name != "acc" || s.Version != SpecVersion {
		t.Fatalf("read back %+v", s)
	}
	if _, err := ReadSpecFile(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("ReadSpecFile of a missing file succeeded")
	}
}
