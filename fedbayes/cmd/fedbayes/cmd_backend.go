package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/doctor"
)

func init() {
	register(&command{name: "backend", summary: "the GoMLX backend fedbayes uses (-v: plugins, devices, speed); `backend install` adds XLA", run: runBackend})
}

const backendHelp = `Prints the GoMLX backend configuration fedbayes uses (the value for GOMLX_BACKEND).
With -v, also why, every backend on this machine (the pure-Go one and XLA with each PJRT plugin found),
each plugin's PJRT API version against the one go-xla %s expects, the devices, and a LeNet training
step timed on each; with no plugin, the command that installs one.

  fedbayes backend install [cpu|cuda]   downloads a plugin with go-xla's installer
  fedbayes backend install --from FILE  installs a plugin file you have
See docs/backends.md.

`

// runBackend prints the chosen backend configuration; -v adds the report; "install" installs a plugin.
func runBackend(args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "install" {
		return runBackendInstall(args[1:], stdout)
	}
	fs := newFlagSet("backend", "| install [cpu|cuda] | install --from FILE", stdout)
	usage := fs.Usage
	fs.Usage = func() { fmt.Fprintf(fs.Output(), backendHelp, backend.GoXLAVersion); usage() }
	verbose := fs.Bool("v", false, "also print why, the plugins (with PJRT API versions), devices and a LeNet speed check on each backend")
	noSpeed := fs.Bool("nospeed", false, "with -v: skip the speed check")
	reason := fs.Bool("reason", false, "print only the reason for the choice")
	if err := parseArgs(fs, args, nil); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (did you mean `fedbayes backend install %s`?)", errUsage, fs.Arg(0), fs.Arg(0))
	}
	c, err := backend.Choose()
	if err != nil {
		return err
	}
	if *reason {
		fmt.Fprintln(stdout, c.Reason)
		return nil
	}
	fmt.Fprintln(stdout, c.Config)
	if *verbose {
		fmt.Fprintf(stdout, "reason: %s\n", c.Reason)
		reports := doctor.Backends(!*noSpeed)
		if s := backend.Current().Settings; len(s) > 0 {
			fmt.Fprintf(stdout, "settings made for XLA: %v\n", s)
		}
		fmt.Fprintln(stdout, "\nbackends on this machine:")
		doctor.WriteBackends(stdout, reports)
	}
	return nil
}

const installHelp = `Installs an XLA PJRT plugin where fedbayes finds it ($FEDBAYES_XLA_DIR, else ~/.local/lib/go-xla).

  fedbayes backend install cpu    the CPU plugin %s from github.com/gomlx/pjrt-cpu-binaries
  fedbayes backend install cuda   jax's CUDA 13 plugin and the NVIDIA libraries, from pypi.org
  fedbayes backend install --from FILE
                                  a plugin file you have (e.g. a Python environment's
                                  site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so): checked
                                  (it must load as a PJRT plugin), then linked (or copied, -copy)

Both downloads use go-xla %s's own installer. Without network access the command stops within
-timeout and says which file to download by hand and where to put it.

`

func runBackendInstall(args []string, stdout io.Writer) error {
	fs := newFlagSet("backend install", "[cpu|cuda] | --from FILE", stdout)
	usage := fs.Usage
	fs.Usage = func() { fmt.Fprintf(fs.Output(), installHelp, backend.CPUPluginVersion, backend.GoXLAVersion); usage() }
	from := fs.String("from", "", "install this plugin `file` instead of downloading one")
	dir := fs.String("dir", "", "install into this `folder` (default $FEDBAYES_XLA_DIR, else ~/.local/lib/go-xla); fedbayes searches it when it is the default or $FEDBAYES_XLA_DIR")
	copyFile := fs.Bool("copy", false, "with -from: copy the file instead of linking to it")
	name := fs.String("name", "", "with -from: the plugin's platform (cpu, cuda, ...) when its file name does not say")
	force := fs.Bool("force", false, "install the CUDA plugin even where no NVIDIA GPU is found")
	timeout := fs.Duration("timeout", 15*time.Second, "how long to wait for the download site to answer")
	if err := parseArgs(fs, args, nil); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(1))
	}
	kind := fs.Arg(0)
	if *from != "" {
		if kind != "" {
			return fmt.Errorf("%w: give either a kind (%s) or -from FILE, not both", errUsage, kind)
		}
		p, v, err := backend.InstallFrom(*from, backend.FromOptions{Dir: *dir, Name: *name, Copy: *copyFile})
		if err != nil {
			return err
		}
		_, why := v.Compatible()
		fmt.Fprintf(stdout, "Installed %s plugin %s into %s\n  %s\n", p.Name, p.Path, p.Where, why)
		return afterInstall(stdout, p, *dir)
	}
	if kind == "" {
		kind = "cpu"
	}
	if kind != "cpu" && kind != "cuda" {
		return fmt.Errorf("%w: unknown plugin kind %q: want cpu or cuda (or -from FILE)", errUsage, kind)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	p, err := backend.Install(ctx, backend.InstallOptions{Kind: kind, Dir: *dir, Force: *force, Timeout: *timeout, Log: stdout})
	if err != nil {
		var ie *backend.InstallError
		if errors.As(err, &ie) {
			// The message is long and ends with the manual steps: print it on stdout, fail briefly.
			fmt.Fprintln(stdout, ie.Error())
			return fmt.Errorf("%s plugin not installed (no download possible); see the steps above", kind)
		}
		return err
	}
	fmt.Fprintf(stdout, "\nInstalled and checked: %s\n", p.Path)
	return afterInstall(stdout, p, *dir)
}

// afterInstall says whether fedbayes will now use the plugin, and how to check it.
func afterInstall(stdout io.Writer, p backend.Plugin, dir string) error {
	if dir != "" {
		abs, _ := filepath.Abs(dir)
		if def, err := backend.Dir(); err == nil && def != abs {
			fmt.Fprintf(stdout, "fedbayes searches %s only when told: export %s=%s\n", abs, backend.DirEnv, abs)
		}
	}
	if p.IsCUDA() {
		if _, err := os.Stat("/dev/nvidiactl"); err != nil {
			fmt.Fprintln(stdout, "No NVIDIA GPU device on this machine: fedbayes will not choose this plugin here.")
		}
	}
	fmt.Fprintln(stdout, "Check with: fedbayes backend -v")
	return nil
}
