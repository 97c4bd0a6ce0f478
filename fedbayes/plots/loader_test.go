package plots

import (
	"context"
	"image"
	"image/color"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLibraryForPage(t *testing.T) {
	needRenderTools(t)
	root := t.TempDir()
	loader, err := libraryForPage(root, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(loader) > 4096 || !strings.Contains(loader, "files/_charts/"+LibraryFileName()) || strings.Contains(loader, "echarts.init") {
		t.Errorf("loader of %d bytes:\n%.400s", len(loader), loader)
	}
	js, err := EChartsBundle()
	if err != nil {
		t.Fatal(err)
	}
	copied, err := os.ReadFile(filepath.Join(root, ChartsDir, LibraryFileName()))
	if err != nil || string(copied) != js {
		t.Fatalf("bundle copy: %v (%d bytes, want %d)", err, len(copied), len(js))
	}
	for _, inline := range []struct{ root, flag string }{{"", ""}, {root, "1"}} {
		lib, err := libraryForPage(inline.root, inline.flag)
		if err != nil || len(lib) < len(js) {
			t.Errorf("root %q inline %q: %d bytes, %v; want the inlined bundle", inline.root, inline.flag, len(lib), err)
		}
	}
}

// A page served like Jupyter's (data-base-url, /files/ route, an AMD loader as classic Notebook
// has) loads ECharts through the small loader and draws its chart; without the copy it stays blank.
func TestLoaderDrawsInChromium(t *testing.T) {
	needBrowser(t)
	root := t.TempDir()
	if _, err := InstallLibraryCopy(root); err != nil {
		t.Fatal(err)
	}
	c := testChart(t, "a")
	c.Width, c.Height = 600, 300
	chart, err := ChartHTML(c)
	if err != nil {
		t.Fatal(err)
	}
	const amd = `<script>window.define = function () { throw new Error("anonymous define"); }; window.define.amd = {};</script>`
	page := `<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0}</style></head>` +
		`<body data-base-url="/nb/">` + amd + LibraryLoaderHTML() + chart + `</body></html>`
	for _, tc := range []struct {
		name  string
		files string // served as /nb/files/
		drawn bool
	}{
		{"copy served", root, true},
		{"no copy", t.TempDir(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.HandleFunc("/nb/page", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(page)) })
			mux.Handle("/nb/files/", http.StripPrefix("/nb/files/", http.FileServer(http.Dir(tc.files))))
			srv := httptest.NewServer(mux)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			shot := filepath.Join(t.TempDir(), "page.png")
			if err := Screenshot(ctx, srv.URL+"/nb/page", shot, 600, 300, 1, 4000); err != nil {
				t.Fatal(err)
			}
			f := InkFraction(readPNG(t, shot), image.Rect(0, 0, 600, 300), color.White)
			if tc.drawn && f < 0.02 {
				t.Errorf("ink %.4f: the chart did not draw", f)
			}
			if !tc.drawn && f > 0.001 {
				t.Errorf("ink %.4f without the copy, want blank", f)
			}
		})
	}
}
