package plots

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func testChart(t *testing.T, name string) *Chart {
	t.Helper()
	c, err := LearningCurves(name, Curves{Title: "t </script> x", Series: []SeedSeries{{Name: "a", X: []float64{1, 2, 3}, Runs: [][]float64{{1, 2, 3}, {2, 3, 3}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLibraryHTMLShadowsAMD(t *testing.T) {
	fakeECharts(t, EChartsVersion, "/*bundle*/var x=1;")
	lib, err := LibraryHTML()
	if err != nil {
		t.Fatal(err)
	}
	mustContainAll(t, "LibraryHTML", lib,
		"<script", "(function (define, exports, module) {", "/*bundle*/var x=1;", "}).call(window);",
		`window.echarts.version === "`+EChartsVersion+`"`, `new Event("`+ReadyEvent+`")`, "</script>")
	if strings.Index(lib, "/*bundle*/") < strings.Index(lib, "(function (define, exports, module)") {
		t.Error("the bundle is not inside the function that hides define")
	}
}

func TestChartHTML(t *testing.T) {
	c := testChart(t, "lc")
	a, err := ChartHTML(c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ChartHTML(c)
	if err != nil {
		t.Fatal(err)
	}
	idRE := regexp.MustCompile(`<div id="(fedbayes-lc-[0-9a-f]{12})"`)
	ma, mb := idRE.FindStringSubmatch(a), idRE.FindStringSubmatch(b)
	if ma == nil || mb == nil || ma[1] == mb[1] {
		t.Fatalf("chart ids %v and %v: want two different fedbayes-lc-HEX ids", ma, mb)
	}
	mustContainAll(t, "ChartHTML", a, `var id = "`+ma[1]+`"`, "window.echarts.init(el", `addEventListener("`+ReadyEvent+`", draw)`,
		"width:720px;height:400px", `t \u003c/script\u003e x`)
	if strings.Count(a, "</script>") != 1 {
		t.Errorf("ChartHTML holds %d </script>, want exactly its own", strings.Count(a, "</script>"))
	}
	if _, err := ChartHTML(nil); err == nil {
		t.Error("ChartHTML(nil) succeeded")
	}
}

func TestPageHTML(t *testing.T) {
	fakeECharts(t, EChartsVersion, "/*bundle*/")
	a, b := testChart(t, "a"), testChart(t, "b")
	page, err := PageHTML("two <charts>", a, b)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(page, "/*bundle*/"); n != 1 {
		t.Errorf("the library appears %d times, want once", n)
	}
	mustContainAll(t, "PageHTML", page, "<title>two &lt;charts&gt;</title>", `id="fedbayes-chart-1"`, `id="fedbayes-chart-2"`)
	if strings.Index(page, "/*bundle*/") > strings.Index(page, `id="fedbayes-chart-1"`) {
		t.Error("the library comes after the first chart")
	}
	again, _ := PageHTML("two <charts>", a, b)
	if again != page {
		t.Error("PageHTML is not deterministic")
	}
	path := filepath.Join(t.TempDir(), "p.html")
	if err := WriteHTML(path, "x", a); err != nil {
		t.Fatal(err)
	}
	if raw, err := os.ReadFile(path); err != nil || !strings.Contains(string(raw), "fedbayes-chart-1") {
		t.Errorf("WriteHTML wrote %d bytes, %v", len(raw), err)
	}
	t.Setenv(NPMDirEnv, t.TempDir())
	if _, err := PageHTML("x", a); err == nil || !strings.Contains(err.Error(), "npm install") {
		t.Errorf("PageHTML without ECharts: error = %v, want the install command", err)
	}
}

// Outside GoNB, Display and friends do nothing but still check their input.
func TestDisplayOutsideGoNB(t *testing.T) {
	fakeECharts(t, EChartsVersion, "/*bundle*/")
	c := testChart(t, "d")
	if err := DisplayLibrary(); err != nil {
		t.Errorf("DisplayLibrary: %v", err)
	}
	if err := Display(c); err != nil {
		t.Errorf("Display: %v", err)
	}
	if err := Update("", c); err == nil {
		t.Error("Update with an empty display id succeeded")
	}
	if err := Display(nil); err == nil {
		t.Error("Display(nil) succeeded")
	}
}
