// Package doctor checks that a machine can run fedbayes: the Go toolchain, the GoNB kernel and
// Jupyter, the compute backend, the datasets and the offline chart library. Each check says what is
// wrong and the exact command that fixes it. `fedbayes doctor` and notebooks/00-start-here use it.
package doctor

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
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

// Run performs every check, in order. It never panics: a check that panics is reported as failed.
func Run() []Check {
	repo := RepoDir()
	if repo == "" {
		return []Check{{Name: "checkout", Detail: "cannot find the fedbayes checkout from " + wd(),
			Fix: "run from inside the fedbayes checkout, or set FEDBAYES_REPO to its path"}}
	}
	fns := []func(repo string) []Check{checkGo, checkTools, checkJupyter, checkKernel, checkBackend, checkData, checkCharts}
	var out []Check
	for _, fn := range fns {
		out = append(out, safe(fn, repo)...)
	}
	return out
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
// parent of the working directory whose go.mod declares module fedbayes.dev; "" if none is found.
func RepoDir() string {
	if r := os.Getenv("FEDBAYES_REPO"); r != "" {
		return r
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "module fedbayes.dev") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
