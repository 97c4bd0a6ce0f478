package plots

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// requireBrowserEnv, when "1", turns missing node / chromium / ECharts into test failures (CI
// installs them); otherwise those tests skip.
const requireBrowserEnv = "FEDBAYES_REQUIRE_BROWSER"

// needTools skips (or fails under FEDBAYES_REQUIRE_BROWSER=1) when any error is non-nil.
func needTools(t *testing.T, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err == nil {
			continue
		}
		if os.Getenv(requireBrowserEnv) == "1" {
			t.Fatalf("%s=1 but a tool is missing: %v", requireBrowserEnv, err)
		}
		t.Skipf("skipping (set %s=1 to fail instead): %v", requireBrowserEnv, err)
	}
}

// fakeECharts installs a fake ECharts package of the given version and bundle text under a
// temporary FEDBAYES_NPM, for tests of the HTML that do not need the real library.
func fakeECharts(t *testing.T, version, bundle string) string {
	t.Helper()
	npm := t.TempDir()
	dir := filepath.Join(npm, "node_modules", "echarts")
	if err := os.MkdirAll(filepath.Join(dir, "dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	pkg, _ := json.Marshal(map[string]string{"name": "echarts", "version": version})
	if err := os.WriteFile(filepath.Join(dir, "package.json"), pkg, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dist", "echarts.min.js"), []byte(bundle), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(NPMDirEnv, npm)
	return npm
}

// seriesOf returns the option's series as maps.
func seriesOf(t *testing.T, c *Chart) []map[string]any {
	t.Helper()
	list, ok := c.Option["series"].([]any)
	if !ok {
		t.Fatalf("chart %q: series is %T, want a list", c.Name, c.Option["series"])
	}
	out := make([]map[string]any, len(list))
	for i, s := range list {
		out[i] = s.(map[string]any)
	}
	return out
}

// pointsOf returns the [x, y] data of a series.
func pointsOf(t *testing.T, s map[string]any) [][2]float64 {
	t.Helper()
	data := s["data"].([]any)
	out := make([][2]float64, len(data))
	for i, d := range data {
		v := d.(map[string]any)["value"].([]any)
		out[i] = [2]float64{v[0].(float64), v[1].(float64)}
	}
	return out
}

// datasetPoints returns the [x, y] points series s of chart c reads from the chart's dataset (its
// encode.x and encode.y columns).
func datasetPoints(t *testing.T, c *Chart, s map[string]any) [][2]float64 {
	t.Helper()
	enc, ok := s["encode"].(map[string]any)
	if !ok {
		t.Fatalf("series %v has no encode", s["name"])
	}
	xi, yi := int(enc["x"].(float64)), int(enc["y"].(float64))
	rows := c.Option["dataset"].(map[string]any)["source"].([]any)
	out := make([][2]float64, len(rows))
	for i, r := range rows {
		row := r.([]any)
		out[i] = [2]float64{row[xi].(float64), row[yi].(float64)}
	}
	return out
}

// mustContainAll fails unless every want is a substring of s.
func mustContainAll(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s does not contain %q", what, w)
		}
	}
}
