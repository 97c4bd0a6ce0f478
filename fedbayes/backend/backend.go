// Package backend chooses the GoMLX backend fedbayes computes on.
//
// The rule, applied once per process:
//
//  1. $GOMLX_BACKEND, if set, names the backend (for example "go", "xla:cpu", "xla:cuda" or
//     "xla:/abs/path/pjrt_c_api_cpu_plugin.so"); an unknown name or a missing plugin is an error
//     that says what to do, never a panic.
//  2. Otherwise XLA, when a PJRT plugin is installed (searched in $PJRT_PLUGIN_LIBRARY_PATH and the
//     standard go-xla locations). fedbayes never lets GoMLX download a plugin.
//  3. Otherwise the pure-Go backend (SimpleGo, completed by fedbayes where GoMLX v0.26.0 has gaps).
package backend

import (
	"fmt"
	"os"
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
	// Never download anything: plugins are installed by the user (see docs/backends.md).
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
	// XLAPlugins lists the PJRT plugins found (empty if none).
	XLAPlugins []string
}

// Choose applies the selection rule without creating the backend.
func Choose() (Choice, error) {
	plugins := xlaPlugins()
	if cfg, ok := os.LookupEnv(backends.ConfigEnvVar); ok && cfg != "" {
		name, _, _ := strings.Cut(cfg, ":")
		if !slices.Contains(backends.List(), name) {
			return Choice{}, fmt.Errorf("%s=%q: unknown backend %q; known backends: %s",
				backends.ConfigEnvVar, cfg, name, strings.Join(xslices.SortedKeys(known()), ", "))
		}
		if isXLA(name) && len(plugins) == 0 && !strings.Contains(cfg, "/") {
			return Choice{}, fmt.Errorf("%s=%q asks for XLA, but no PJRT plugin is installed: "+
				"install pjrt_c_api_cpu_plugin.so (or a CUDA plugin) and set PJRT_PLUGIN_LIBRARY_PATH to its folder, "+
				"give its absolute path as %s=\"xla:/abs/path/plugin.so\", or unset %s to use the pure-Go backend",
				backends.ConfigEnvVar, cfg, backends.ConfigEnvVar, backends.ConfigEnvVar)
		}
		reason := "set by $" + backends.ConfigEnvVar
		if r := os.Getenv(LauncherReasonEnv); r != "" {
			reason = r + " (chosen by the kernel launcher)"
		}
		return Choice{Config: cfg, Reason: reason, XLAPlugins: plugins}, nil
	}
	if len(plugins) > 0 {
		return Choice{Config: "xla:" + plugins[0], Reason: "XLA plugin " + plugins[0] + " found", XLAPlugins: plugins}, nil
	}
	return Choice{Config: PureGo, Reason: "no XLA plugin found: pure-Go backend", XLAPlugins: plugins}, nil
}

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

// xlaPlugins lists installed PJRT plugins, in go-xla's preference order (cuda before cpu).
func xlaPlugins() (plugins []string) {
	defer func() {
		if recover() != nil { // a broken plugin folder must not crash the caller
			plugins = nil
		}
	}()
	return xla.GetAvailablePlugins()
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
