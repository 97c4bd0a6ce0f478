package plots

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestNPMDir(t *testing.T) {
	for _, tc := range []struct {
		name, npm, home, want string
	}{
		{"explicit npm dir wins", "/x/npm", "/h", "/x/npm"},
		{"home", "", "/h", "/h/npm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(NPMDirEnv, tc.npm)
			t.Setenv(HomeEnv, tc.home)
			if got := NPMDir(); got != tc.want {
				t.Errorf("NPMDir() = %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("cache", func(t *testing.T) {
		t.Setenv(NPMDirEnv, "")
		t.Setenv(HomeEnv, "")
		t.Setenv("XDG_CACHE_HOME", "/c")
		if got := NPMDir(); got != filepath.Join("/c", "fedbayes", "npm") {
			t.Errorf("NPMDir() = %q, want /c/fedbayes/npm", got)
		}
	})
}

func TestInstallCommandQuotes(t *testing.T) {
	for _, tc := range []struct{ dir, want string }{
		{"/a/b", "npm install --prefix /a/b echarts@" + EChartsVersion},
		{"/a b/it's", `npm install --prefix '/a b/it'\''s' echarts@` + EChartsVersion},
	} {
		t.Setenv(NPMDirEnv, tc.dir)
		if got := InstallCommand(); got != tc.want {
			t.Errorf("InstallCommand() = %q, want %q", got, tc.want)
		}
	}
}

func TestEChartsDirErrors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		t.Setenv(NPMDirEnv, t.TempDir())
		_, err := EChartsDir()
		if err == nil || !strings.Contains(err.Error(), InstallCommand()) {
			t.Fatalf("EChartsDir() error = %v, want one naming %q", err, InstallCommand())
		}
	})
	t.Run("wrong version", func(t *testing.T) {
		fakeECharts(t, "5.4.0", "window.echarts={};")
		_, err := EChartsDir()
		if err == nil || !strings.Contains(err.Error(), "5.4.0") || !strings.Contains(err.Error(), EChartsVersion) {
			t.Fatalf("EChartsDir() error = %v, want one naming both versions", err)
		}
	})
	t.Run("ok, source map comment removed", func(t *testing.T) {
		npm := fakeECharts(t, EChartsVersion, "var a=1;\n//# sourceMappingURL=echarts.min.js.map")
		dir, err := EChartsDir()
		if err != nil || dir != filepath.Join(npm, "node_modules", "echarts") {
			t.Fatalf("EChartsDir() = %q, %v", dir, err)
		}
		js, err := EChartsBundle()
		if err != nil || js != "var a=1;\n" {
			t.Fatalf("EChartsBundle() = %q, %v; want the code without the source-map comment", js, err)
		}
	})
	t.Run("bundle that would close the script element", func(t *testing.T) {
		fakeECharts(t, EChartsVersion, `var s="</script>";`)
		if _, err := EChartsBundle(); err == nil {
			t.Fatal("EChartsBundle() accepted a bundle holding </script>")
		}
	})
}
