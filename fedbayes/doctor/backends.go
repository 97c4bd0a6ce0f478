package doctor

import (
	"fmt"
	"io"
	"strings"

	"github.com/gomlx/gomlx/backends"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/internal/catch"
)

// SpeedSteps is the number of timed LeNet steps of the speed check (after one untimed step).
const SpeedSteps = 5

// BackendReport describes one backend present on this machine: the pure-Go backend, or XLA with one
// PJRT plugin.
type BackendReport struct {
	// Name is "pure Go" or "XLA <plugin name>".
	Name string
	// Config is its GoMLX configuration ($GOMLX_BACKEND value).
	Config string
	// Chosen is true for the backend fedbayes uses (backend.Choose).
	Chosen bool
	// Plugin is the PJRT plugin (nil for pure Go).
	Plugin *backend.Plugin
	// API is the plugin's PJRT C API version, and APINote compares it with go-xla v0.1.4's.
	API     backend.APIVersion
	APINote string
	// Devices describes each device of the backend.
	Devices []string
	// Speed is the LeNet speed check (zero when not run or failed).
	Speed Speed
	// Err is the first failure (loading the plugin, creating the backend, the speed check).
	Err error
}

// Backends reports the pure-Go backend and one XLA backend per plugin found, with each plugin's PJRT
// API version against go-xla's, the device list and, with speed, a LeNet speed check on each. It never
// panics; failures are in each report's Err.
func Backends(speed bool) []BackendReport {
	choice, chooseErr := backend.Choose()
	reports := []BackendReport{{Name: "pure Go", Config: backend.PureGo}}
	for _, p := range backend.Plugins() {
		reports = append(reports, BackendReport{Name: "XLA " + p.Name, Config: backend.ConfigFor(p), Plugin: &p})
	}
	if chooseErr == nil && choice.Plugin != nil && !slicesContainsPath(reports, choice.Plugin.Path) {
		// A plugin named by $GOMLX_BACKEND outside the usual folders.
		reports = append(reports, BackendReport{Name: "XLA " + choice.Plugin.Name, Config: choice.Config, Plugin: choice.Plugin})
	}
	if chooseErr == nil && choice.Plugin == nil && choice.Config != backend.PureGo {
		// A pure-Go configuration set by $GOMLX_BACKEND ("go", "simplegoplus:parallelism=1", ...).
		reports = append(reports, BackendReport{Name: "$GOMLX_BACKEND", Config: choice.Config})
	}
	for i := range reports {
		r := &reports[i]
		if chooseErr == nil {
			r.Chosen = r.Config == choice.Config || (r.Plugin != nil && choice.Plugin != nil && r.Plugin.Path == choice.Plugin.Path)
			if r.Chosen {
				r.Config = choice.Config
			}
		}
		if r.Plugin != nil {
			v, err := backend.Probe(r.Plugin.Path)
			if err != nil {
				r.Err = err
				continue
			}
			r.API = v
			var ok bool
			if ok, r.APINote = v.Compatible(); !ok {
				r.Err = fmt.Errorf("%s", r.APINote)
				continue
			}
		}
		r.Devices, r.Speed, r.Err = exercise(r.Config, r.Chosen, speed)
	}
	return reports
}

func slicesContainsPath(rs []BackendReport, path string) bool {
	for _, r := range rs {
		if r.Plugin != nil && r.Plugin.Path == path {
			return true
		}
	}
	return false
}

// exercise creates the backend (the process-wide one when it is the chosen one, so that a GPU is not
// claimed twice), lists its devices and runs the speed check.
func exercise(config string, chosen, speed bool) (devices []string, s Speed, err error) {
	var be backends.Backend
	if chosen {
		be, err = backend.Default()
	} else {
		be, err = backend.New(config)
		if err == nil {
			defer be.Finalize()
		}
	}
	if err != nil {
		return nil, s, err
	}
	err = catch.Do(func() {
		for d := 0; d < be.NumDevices(); d++ {
			devices = append(devices, be.DeviceDescription(backends.DeviceNum(d)))
		}
	})
	if err != nil || !speed {
		return devices, s, err
	}
	err = catch.Do(func() { s, err = SpeedCheck(be, SpeedSteps) })
	return devices, s, err
}

// InstallHint is the command that installs an XLA plugin, for when none is present.
const InstallHint = "`fedbayes backend install cpu` (or `make xla`; `install cuda` on an NVIDIA GPU machine, " +
	"`install --from FILE` for a plugin you have); see docs/backends.md"

// WriteBackends prints the reports, one block per backend, the plugin files found that cannot be used
// (backend.PluginProblems), and the install command when no XLA plugin is present.
func WriteBackends(w io.Writer, reports []BackendReport) {
	hasXLA := false
	for _, r := range reports {
		mark := " "
		if r.Chosen {
			mark = "*"
		}
		fmt.Fprintf(w, "%s %s: %s\n", mark, r.Name, r.Config)
		if r.Plugin != nil {
			hasXLA = true
			fmt.Fprintf(w, "    plugin: %s (%s)\n", r.Plugin.Path, r.Plugin.Where)
			if r.APINote != "" {
				fmt.Fprintf(w, "    %s\n", r.APINote)
			}
		}
		if len(r.Devices) > 0 {
			fmt.Fprintf(w, "    devices: %s\n", strings.Join(r.Devices, "; "))
		}
		if r.Plugin == nil {
			fmt.Fprintf(w, "    kernels: %s\n", backend.Kernels(r.Config))
		}
		if r.Err != nil {
			fmt.Fprintf(w, "    FAILED: %v\n", r.Err)
		} else if r.Speed.Steps > 0 {
			fmt.Fprintf(w, "    speed: %s\n", r.Speed)
		}
	}
	for _, p := range backend.PluginProblems() {
		fmt.Fprintf(w, "  not usable: %s\n", p)
	}
	if !hasXLA {
		fmt.Fprintf(w, "No XLA plugin found. To install one: %s.\n", InstallHint)
	}
	fmt.Fprintln(w, "(* = the backend fedbayes uses)")
}
