// Package backend chooses the GoMLX backend fedbayes computes on.
//
// The rule, applied once per process:
//
//  1. $GOMLX_BACKEND, if set, names the backend (for example "go", "xla:cpu", "xla:cuda" or
//     "xla:/abs/path/pjrt_c_api_cpu_plugin.so"); an unknown name or a missing plugin is an error
//     that says what to do, never a panic.
//  2. Otherwise XLA, when a PJRT plugin is installed: in the fedbayes folder (Dir: $FEDBAYES_XLA_DIR,
//     else ~/.local/lib/go-xla), then in go-xla's search path ($PJRT_PLUGIN_LIBRARY_PATH and the standard
//     go-xla locations); CUDA before CPU. The plugin is loaded by its absolute path. fedbayes never lets
//     GoMLX download a plugin on its own: `fedbayes backend install` does it when asked (install.go).
//  3. Otherwise the pure-Go backend (SimpleGo, completed by fedbayes where GoMLX v0.26.0 has gaps).
package backend

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"fedbayes.dev/fedbayes/simplegoplus"
	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego" // registers "go" (stock SimpleGo)
	"github.com/gomlx/gomlx/backends/xla"
	"github.com/gomlx/gomlx/pkg/support/xslices"
)

// PureGo is the configuration of the pure-Go backend fedbayes uses when no XLA plugin is present:
// SimpleGo completed by fedbayes/simplegoplus (missing ops, fast gradients; see docs/pure-go-backend.md).
// Stock SimpleGo stays available as GOMLX_BACKEND=go.
var PureGo = simplegoplus.BackendName

func init() {
	// Never download anything while computing: plugins are installed on request (install.go,
	// docs/backends.md). See env.go for every setting that differs on XLA.
	xla.EnableAutoInstall(false)
	if os.Getenv(xla.NoAutoInstallEnv) == "" {
		_ = os.Setenv(xla.NoAutoInstallEnv, "1")
	}
}

// LauncherReasonEnv is set by kernels/launch, next to GOMLX_BACKEND, to the reason of its choice.
const LauncherReasonEnv = "FEDBAYES_BACKEND_REASON"

// Choice describes which backend was chosen and why.
type Choice struct {
	// Config is the GoMLX backend configuration string ("go", "xla:cpu", ...).
	Config string
	// Reason says why this backend was chosen, in words.
	Reason string
	// XLAPlugins lists the paths of the PJRT plugins found (empty if none), in order of preference.
	XLAPlugins []string
	// Plugin is the PJRT plugin the configuration loads (nil for the pure-Go backends).
	Plugin *Plugin
	// Settings lists the environment settings fedbayes made for this backend, in words (see env.go).
	Settings []string
}

// Choose applies the selection rule without creating the backend.
func Choose() (Choice, error) {
	found := Plugins()
	paths := make([]string, len(found))
	for i, p := range found {
		paths[i] = p.Path
	}
	if cfg, ok := os.LookupEnv(backends.ConfigEnvVar); ok && cfg != "" {
		name, rest, _ := strings.Cut(cfg, ":")
		if !slices.Contains(backends.List(), name) {
			return Choice{}, fmt.Errorf("%s=%q: unknown backend %q; known backends: %s",
				backends.ConfigEnvVar, cfg, name, strings.Join(xslices.SortedKeys(known()), ", "))
		}
		reason := "set by $" + backends.ConfigEnvVar
		if r := os.Getenv(LauncherReasonEnv); r != "" {
			reason = r + " (chosen by the kernel launcher)"
		}
		c := Choice{Config: cfg, Reason: reason, XLAPlugins: paths}
		if !isXLA(name) {
			return c, nil
		}
		plugin, opts, _ := strings.Cut(rest, ",")
		switch {
		case filepath.IsAbs(plugin):
			c.Plugin = &Plugin{Name: pluginName(plugin), Path: plugin, Where: "$" + backends.ConfigEnvVar}
		case len(found) == 0:
			return Choice{}, fmt.Errorf("%s=%q asks for XLA, but no PJRT plugin is installed: run `fedbayes backend install cpu` "+
				"(or `install cuda`, or `install --from PATH` with a plugin file you have), "+
				"give a plugin's absolute path as %s=\"xla:/abs/path/plugin.so\", or unset %s to use the pure-Go backend",
				backends.ConfigEnvVar, cfg, backends.ConfigEnvVar, backends.ConfigEnvVar)
		default:
			want := cmp.Or(plugin, found[0].Name)
			i := slices.IndexFunc(found, func(p Plugin) bool { return p.Name == want })
			if i < 0 {
				return Choice{}, fmt.Errorf("%s=%q: no PJRT plugin named %q is installed (found: %s)",
					backends.ConfigEnvVar, cfg, want, strings.Join(paths, ", "))
			}
			// The absolute path loads the very file listed, also from the fedbayes folder, which
			// go-xla does not search.
			c.Plugin = &found[i]
			c.Config = xlaConfig(found[i], opts)
		}
		return c, nil
	}
	if len(found) > 0 {
		return Choice{Config: xlaConfig(found[0], ""), Reason: "XLA plugin " + found[0].Path + " found (" + found[0].Where + ")",
			XLAPlugins: paths, Plugin: &found[0]}, nil
	}
	return Choice{Config: PureGo, Reason: "no XLA plugin found: pure-Go backend", XLAPlugins: paths}, nil
}

// ConfigFor is the GoMLX configuration ($GOMLX_BACKEND value) that loads plugin p by its absolute path.
func ConfigFor(p Plugin) string { return xlaConfig(p, "") }

// xlaConfig is the GoMLX configuration that loads plugin p by its absolute path. GoMLX lets the CPU
// plugin share buffers with Go only when it is named "cpu"; loaded by path, fedbayes asks for it.
func xlaConfig(p Plugin, opts string) string {
	cfg := "xla:" + p.Path
	if p.Name == "cpu" && !strings.Contains(opts, "shared_buffers") {
		opts = strings.TrimSuffix("shared_buffers,"+opts, ",")
	}
	if opts != "" {
		cfg += "," + opts
	}
	return cfg
}

// pluginName is the platform name of a plugin file: "cpu" for pjrt_c_api_cpu_plugin.so and for the
// versioned pjrt_c_api_cpu_v0.83.3_plugin.so, "cuda" for jax's xla_cuda_plugin.so; "" if the name does
// not tell.
func pluginName(path string) string {
	base := filepath.Base(path)
	if m := pluginFile.FindStringSubmatch(base); m != nil {
		return versionSuffix.ReplaceAllString(m[1], "")
	}
	lower := strings.ToLower(base)
	for _, n := range []string{"cuda", "cpu", "rocm", "tpu"} {
		if strings.Contains(lower, n) {
			return n
		}
	}
	return ""
}

var versionSuffix = regexp.MustCompile(`_v[0-9][0-9.]*$`)

func known() map[string]bool {
	m := map[string]bool{}
	for _, n := range backends.List() {
		m[n] = true
	}
	return m
}

func isXLA(name string) bool {
	switch name {
	case "xla", "stablehlo", "hlo", "shlo":
		return true
	}
	return false
}

var (
	mu      sync.Mutex
	current backends.Backend
	choice  Choice
)

// Default returns the process-wide backend, creating it on first use with the rule of Choose.
func Default() (backends.Backend, error) {
	mu.Lock()
	defer mu.Unlock()
	if current != nil {
		return current, nil
	}
	c, err := Choose()
	if err != nil {
		return nil, err
	}
	if c.Plugin != nil {
		c.Settings = prepareXLA(*c.Plugin)
	}
	b, err := newWithConfig(c.Config)
	if err != nil {
		return nil, fmt.Errorf("backend %q (%s): %w", c.Config, c.Reason, err)
	}
	current, choice = b, c
	return b, nil
}

// MustDefault is Default for tests and notebooks: it panics with the error's message.
func MustDefault() backends.Backend {
	b, err := Default()
	if err != nil {
		panic(err)
	}
	return b
}

// Current returns the choice behind the process-wide backend (zero if Default was not called).
func Current() Choice {
	mu.Lock()
	defer mu.Unlock()
	return choice
}

// newWithConfig wraps backends.NewWithConfig, which panics on some errors, into an error.
func newWithConfig(cfg string) (b backends.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return backends.NewWithConfig(cfg)
}

// New creates a backend of its own for config (for example to compare backends), with the settings
// of env.go applied for an XLA plugin given by path. The caller finalizes it. Most code wants Default.
func New(config string) (backends.Backend, error) {
	name, rest, _ := strings.Cut(config, ":")
	if path, _, _ := strings.Cut(rest, ","); isXLA(name) && filepath.IsAbs(path) {
		prepareXLA(Plugin{Name: pluginName(path), Path: path})
	}
	return newWithConfig(config)
}
