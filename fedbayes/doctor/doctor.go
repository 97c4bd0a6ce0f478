// Package doctor checks that a machine can run fedbayes: the Go toolchain, the GoNB kernel and
// Jupyter, the compute backend, the datasets and the offline chart library. Each check says what is
// wrong and the exact command that fixes it. `fedbayes doctor` and notebooks/00-start-here use it.
package doctor

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"

	"fedbayes.dev/fedbayes/runinfo"
)

// Check is the outcome of one check.
type Check struct {
	// Name is what was checked ("go", "kernel", "backend", "data: fashion-mnist", ...).
	Name string
	// OK reports whether the check passed.
	OK bool
	// Optional marks checks whose failure leaves fedbayes usable (e.g. a missing XLA plugin).
	Optional bool
	// Detail says what was found.
	Detail string
	// Fix is the command (or action) that fixes a failed check; empty when OK.
	Fix string
}

// Run performs every check, in order, starting with the checkout (RepoDir). It never panics: a
// check that panics is reported as failed. Without a checkout the checks that only the notebooks
// need (gonb, goimports, Jupyter, the kernel) are optional and the fixes name no make target: the
// fedbayes binary works alone.
func Run() []Check {
	repo := RepoDir()
	out := []Check{checkCheckout(repo)}
	fns := []func(repo string) []Check{checkGo, checkTools, checkJupyter, checkKernel, checkBackend, checkData, checkCharts}
	for _, fn := range fns {
		out = append(out, safe(fn, repo)...)
	}
	return out
}

// checkCheckout reports the fedbayes checkout found (RepoDir), or, when there is none, that the
// binary works without one (optional): the notebooks, the kernel and the make targets need one.
func checkCheckout(repo string) Check {
	if repo != "" {
		return Check{Name: "checkout", OK: true, Detail: repo}
	}
	where := wd()
	if exe, err := os.Executable(); err == nil {
		where += " or " + exe
	}
	return Check{Name: "checkout", Optional: true,
		Detail: "no fedbayes checkout found from " + where + "; the fedbayes command works without one, the notebooks need one",
		Fix:    "for the notebooks, clone fedbayes and run fedbayes doctor inside the clone, or set FEDBAYES_REPO to its path"}
}

// noCheckout marks c, a check of something only the notebooks need, as optional when there is no
// checkout (repo is ""), saying so in its detail.
func noCheckout(c Check, repo string) Check {
	if repo == "" && !c.OK {
		c.Optional = true
		c.Detail += " (needed by the notebooks only)"
	}
	return c
}

// inCheckout returns the command that runs makeTarget in the checkout repo, or, without one
// (repo is ""), alone, the command that does the same.
func inCheckout(repo, makeTarget, alone string) string {
	if repo == "" {
		return alone
	}
	return "cd " + repo + " && make " + makeTarget
}

func safe(fn func(string) []Check, repo string) (cs []Check) {
	defer func() {
		if r := recover(); r != nil {
			cs = []Check{{Name: "internal", Detail: fmt.Sprintf("check panicked: %v", r), Fix: "report this as a bug"}}
		}
	}()
	return fn(repo)
}

// Failed returns the required checks that failed.
func Failed(cs []Check) []Check {
	var out []Check
	for _, c := range cs {
		if !c.OK && !c.Optional {
			out = append(out, c)
		}
	}
	return out
}

// Write prints the checks as an aligned table, then the fixes: under "To fix:" those of required
// checks that failed, under "Optional:" those of optional ones (fedbayes works without them).
func Write(w io.Writer, cs []Check) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range cs {
		mark := "ok"
		if !c.OK {
			mark = "MISSING"
			if c.Optional {
				mark = "optional"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", mark, c.Name, c.Detail)
	}
	_ = tw.Flush()
	var required, optional []string
	for _, c := range cs {
		if c.OK || c.Fix == "" {
			continue
		}
		line := fmt.Sprintf("  %s: %s", c.Name, c.Fix)
		if c.Optional {
			optional = append(optional, line)
		} else {
			required = append(required, line)
		}
	}
	if len(required) > 0 {
		fmt.Fprintf(w, "\nTo fix:\n%s\n", strings.Join(required, "\n"))
	}
	if len(optional) > 0 {
		fmt.Fprintf(w, "\nOptional:\n%s\n", strings.Join(optional, "\n"))
	}
	if len(Failed(cs)) == 0 {
		if len(optional) > 0 {
			fmt.Fprintln(w, "\nEverything fedbayes needs is in place; the items under \"Optional\" add to it.")
		} else {
			fmt.Fprintln(w, "\nEverything fedbayes needs is in place.")
		}
	}
}

func wd() string {
	d, _ := os.Getwd()
	return d
}

// RepoDir returns the fedbayes checkout: $FEDBAYES_REPO (set by the kernel launcher), else the first
// of these folders or their parents whose go.mod declares module fedbayes.dev: the working
// directory, the folder of the running binary (symlinks resolved: .build/bin/fedbayes lies in its
// checkout, wherever it is run from), and the folder this package was compiled from when it is still
// there (a `go run` or `go test` binary); "" if none is found.
func RepoDir() string {
	if r := os.Getenv("FEDBAYES_REPO"); r != "" {
		return r
	}
	var starts []string
	if d, err := os.Getwd(); err == nil {
		starts = append(starts, d)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, binaryDir(exe))
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	return findRepo(starts)
}

// binaryDir returns the folder that holds the executable exe, its symlinks resolved (a link in
// ~/bin to a checkout's .build/bin/fedbayes gives that .build/bin).
func binaryDir(exe string) string {
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Dir(exe)
}

// findRepo returns the first of the folders starts, or of their parents, whose go.mod declares
// fedbayes's module (runinfo.ModulePath), or "".
func findRepo(starts []string) string {
	for _, dir := range starts {
		for dir != "" {
			if runinfo.ModuleOf(filepath.Join(dir, "go.mod")) == runinfo.ModulePath {
				return dir
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return ""
}
