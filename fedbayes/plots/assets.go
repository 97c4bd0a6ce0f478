package plots

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// EChartsVersion is the exact npm version of ECharts that fedbayes loads in browsers and uses for
// server-side rendering (also pinned in fedbayes/plots/js/package.json).
const EChartsVersion = "6.1.0"

// NPMDirEnv names the environment variable that overrides where the npm packages (ECharts) are
// installed; see NPMDir.
const NPMDirEnv = "FEDBAYES_NPM"

// HomeEnv names the environment variable of the fedbayes home folder; when set (and NPMDirEnv is
// not), npm packages live in $FEDBAYES_HOME/npm.
const HomeEnv = "FEDBAYES_HOME"

// NPMDir is the npm prefix holding ECharts: $FEDBAYES_NPM if set, else $FEDBAYES_HOME/npm, else
// os.UserCacheDir()/fedbayes/npm (for example ~/.cache/fedbayes/npm), else a folder under the
// temporary directory. It is outside the repository on purpose: node_modules is large and
// machine-specific.
func NPMDir() string {
	if d := os.Getenv(NPMDirEnv); d != "" {
		return d
	}
	if d := os.Getenv(HomeEnv); d != "" {
		return filepath.Join(d, "npm")
	}
	if cache, err := os.UserCacheDir(); err == nil && cache != "" {
		return filepath.Join(cache, "fedbayes", "npm")
	}
	return filepath.Join(os.TempDir(), "fedbayes", "npm")
}

// InstallCommand is the shell command that installs the pinned ECharts into NPMDir.
func InstallCommand() string {
	return fmt.Sprintf("npm install --prefix %s echarts@%s", shellQuote(NPMDir()), EChartsVersion)
}

// shellQuote quotes s for a POSIX shell when it holds characters a shell would interpret.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@%=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// EChartsDir returns the folder of the installed ECharts npm package (NPMDir()/node_modules/echarts).
// It returns an error saying what to run when the package is missing or is not EChartsVersion.
func EChartsDir() (string, error) {
	dir := filepath.Join(NPMDir(), "node_modules", "echarts")
	raw, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", fmt.Errorf("plots: ECharts %s is not installed in %s (it is needed to draw charts offline); install it with:\n  %s",
			EChartsVersion, NPMDir(), InstallCommand())
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		return "", fmt.Errorf("plots: reading %s: %w; reinstall with:\n  %s", filepath.Join(dir, "package.json"), err, InstallCommand())
	}
	if pkg.Version != EChartsVersion {
		return "", fmt.Errorf("plots: %s holds ECharts %s but fedbayes needs %s; install it with:\n  %s",
			dir, pkg.Version, EChartsVersion, InstallCommand())
	}
	return dir, nil
}

// EChartsBundlePath returns the path of the browser bundle dist/echarts.min.js of the installed
// ECharts, or the error of EChartsDir.
func EChartsBundlePath() (string, error) {
	dir, err := EChartsDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "dist", "echarts.min.js")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("plots: ECharts bundle missing: %w; reinstall with:\n  %s", err, InstallCommand())
	}
	return p, nil
}

var bundleCache struct {
	sync.Mutex
	path string
	js   string
}

// EChartsBundle returns the text of dist/echarts.min.js, ready to be inlined in a <script> element:
// the trailing source-map comment is removed (the map is not shipped with a page). The text is read
// once per process and path.
func EChartsBundle() (string, error) {
	p, err := EChartsBundlePath()
	if err != nil {
		return "", err
	}
	bundleCache.Lock()
	defer bundleCache.Unlock()
	if bundleCache.path == p {
		return bundleCache.js, nil
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("plots: reading the ECharts bundle: %w", err)
	}
	js := string(raw)
	if i := strings.LastIndex(js, "//# sourceMappingURL="); i >= 0 && !strings.Contains(js[i:], "\n") {
		js = js[:i]
	}
	if strings.Contains(strings.ToLower(js), "</script") {
		// The bundle is inlined in a <script> element; "</script" inside it would end the element.
		return "", fmt.Errorf("plots: %s contains \"</script\" and cannot be inlined in HTML", p)
	}
	bundleCache.path, bundleCache.js = p, js
	return js, nil
}
