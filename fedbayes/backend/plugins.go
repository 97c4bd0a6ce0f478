package backend

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/gomlx/go-xla/pkg/installer"
	"github.com/gomlx/go-xla/pkg/pjrt"
)

// GoXLAVersion is the go-xla release GoMLX v0.26.0 builds on; its installer and its PJRT header set
// what fedbayes expects of a plugin.
const GoXLAVersion = "v0.1.4"

// ExpectedAPI is the PJRT C API version of the header go-xla v0.1.4 is compiled with
// (pkg/pjrt/pjrt_c_api.h: PJRT_API_MAJOR 0, PJRT_API_MINOR 83). A test checks it against that file.
var ExpectedAPI = APIVersion{Major: 0, Minor: 83}

// CPUPluginVersion is the release of github.com/gomlx/pjrt-cpu-binaries that go-xla v0.1.4 installs
// and was tested with.
var CPUPluginVersion = pjrt.DefaultCPUVersion

// DirEnv names the folder fedbayes installs PJRT plugins into and searches first.
const DirEnv = "FEDBAYES_XLA_DIR"

// APIVersion is a PJRT C API version (PJRT_Api.pjrt_api_version).
type APIVersion struct {
	Major, Minor int
}

// String formats the version as "major.minor".
func (v APIVersion) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Compatible says whether a plugin of version v works with go-xla v0.1.4, in words. The PJRT C API
// breaks compatibility only with a new major version; within a major version, newer plugins keep the
// older fields (a plugin of minor >= 83 has every function go-xla calls) and an older plugin may lack
// functions added since.
func (v APIVersion) Compatible() (ok bool, why string) {
	e := ExpectedAPI
	switch {
	case v.Major != e.Major:
		return false, fmt.Sprintf("PJRT API %s, but go-xla %s needs major version %d: use a plugin built for PJRT API %s",
			v, GoXLAVersion, e.Major, e)
	case v.Minor < e.Minor:
		return true, fmt.Sprintf("PJRT API %s is older than the %s go-xla %s is built for: functions added since may be missing",
			v, e, GoXLAVersion)
	case v.Minor > e.Minor:
		return true, fmt.Sprintf("PJRT API %s, newer than go-xla %s's %s (compatible within major version %d)",
			v, GoXLAVersion, e, e.Major)
	}
	return true, fmt.Sprintf("PJRT API %s, as go-xla %s expects", v, GoXLAVersion)
}

// Plugin is a PJRT plugin file found on this machine.
type Plugin struct {
	// Name is the plugin's platform name, from its file name: "cpu", "cuda", ...
	Name string
	// Path is the absolute path of the file (symbolic links resolved).
	Path string
	// Where says how it was found: "fedbayes folder" (Dir) or "go-xla search path".
	Where string
}

// IsCUDA reports whether the plugin is for NVIDIA GPUs.
func (p Plugin) IsCUDA() bool {
	return strings.Contains(strings.ToLower(p.Name), "cuda") || strings.Contains(strings.ToLower(p.Name), "nvidia")
}

// Dir is the folder fedbayes installs plugins into: $FEDBAYES_XLA_DIR if set, else go-xla's own
// default (~/.local/lib/go-xla on Linux), which GoMLX and go-xla also search, so that other GoMLX
// programs find the same plugins. The CUDA plugin goes into its "nvidia" subfolder, next to the
// NVIDIA libraries it loads (go-xla's layout).
func Dir() (string, error) {
	if d := os.Getenv(DirEnv); d != "" {
		return filepath.Abs(d)
	}
	lib, err := installer.DefaultHomeLibPath()
	if err != nil {
		return "", fmt.Errorf("no folder for XLA plugins: %w; set %s", err, DirEnv)
	}
	return filepath.Join(lib, "go-xla"), nil
}

var pluginFile = regexp.MustCompile(`^pjrt_c_api_(.+)_plugin\.(so|dylib)$`)

// Plugins lists the usable PJRT plugins found, in the order fedbayes prefers them: the fedbayes
// folder (Dir and Dir/nvidia) first, then go-xla's search path ($PJRT_PLUGIN_LIBRARY_PATH, or
// ~/.local/lib/go-xla, /usr/local/lib/go-xla and the system library folders); within each, CUDA
// before CPU. A CUDA plugin counts only on a machine with an NVIDIA GPU (go-xla's rule). One plugin
// per platform name: the first found. Files that do not load as PJRT plugins of a major API version
// go-xla can use are skipped; PluginProblems says which and why.
func Plugins() []Plugin {
	p, _ := scanPlugins()
	return p
}

// PluginProblems lists, in words, the plugin files found that fedbayes cannot use (not loadable, not a
// PJRT plugin, another major PJRT API version), and a failure of go-xla's own search.
func PluginProblems() []string {
	_, problems := scanPlugins()
	return problems
}

func scanPlugins() (out []Plugin, problems []string) {
	seen := map[string]bool{}
	add := func(p Plugin) {
		if real, err := filepath.EvalSymlinks(p.Path); err == nil {
			p.Path = real
		}
		if seen[p.Name] || seen[p.Path] || (p.IsCUDA() && !hasNvidiaGPU()) {
			return
		}
		v, err := Probe(p.Path)
		if err == nil {
			if ok, why := v.Compatible(); !ok {
				err = fmt.Errorf("%s: %s", p.Path, why)
			}
		}
		if err != nil {
			seen[p.Path] = true
			problems = append(problems, err.Error())
			return
		}
		seen[p.Name], seen[p.Path] = true, true
		out = append(out, p)
	}
	var own []Plugin
	if dir, err := Dir(); err == nil {
		for _, d := range []string{dir, filepath.Join(dir, "nvidia")} {
			entries, _ := os.ReadDir(d)
			for _, e := range entries {
				if pluginFile.MatchString(e.Name()) {
					path := filepath.Join(d, e.Name())
					own = append(own, Plugin{Name: pluginName(path), Path: path, Where: "fedbayes folder " + dir})
				}
			}
		}
	}
	slices.SortStableFunc(own, byPreference)
	for _, p := range own {
		add(p)
	}
	var found []Plugin
	m, err := goXLAPlugins()
	if err != nil {
		problems = append(problems, err.Error())
	}
	for _, path := range m {
		found = append(found, Plugin{Name: cmp.Or(pluginName(path), filepath.Base(path)), Path: path, Where: "go-xla search path"})
	}
	slices.SortStableFunc(found, func(a, b Plugin) int {
		return cmp.Or(byPreference(a, b), strings.Compare(a.Name, b.Name))
	})
	for _, p := range found {
		add(p)
	}
	return out, problems
}

// byPreference orders CUDA plugins before CPU ones before the rest (go-xla's DefaultPlugins order).
func byPreference(a, b Plugin) int {
	rank := func(p Plugin) int {
		switch {
		case p.IsCUDA():
			return 0
		case p.Name == "cpu":
			return 1
		}
		return 2
	}
	return cmp.Compare(rank(a), rank(b))
}

// goXLAPlugins is pjrt.AvailablePlugins (name -> path), which dlopens every candidate. In go-xla
// v0.1.4 a file named like a plugin that dlopen refuses makes it panic (checkPlugin closes a nil
// handle); that is returned as an error, with no plugins from go-xla's search path.
func goXLAPlugins() (m map[string]string, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("go-xla's plugin search stopped on a file named like a plugin that does not load "+
				"(in $PJRT_PLUGIN_LIBRARY_PATH, ~/.local/lib/go-xla, /usr/local/lib/go-xla or a system library folder): "+
				"remove or replace it (%v)", r)
		}
	}()
	return pjrt.AvailablePlugins(), nil
}

// hasNvidiaGPU is go-xla's first test for an NVIDIA GPU: /dev/nvidia* device files.
func hasNvidiaGPU() bool {
	m, _ := filepath.Glob("/dev/nvidia*")
	return len(m) > 0
}
