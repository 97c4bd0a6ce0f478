package doctor

import (
	"fedbayes.dev/fedbayes/simplegoplus"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"

	"fedbayes.dev/fedbayes/backend"
)

// checkGo reports the Go toolchain on PATH (GoNB compiles every cell with it).
func checkGo(string) []Check {
	c := Check{Name: "go", Fix: "install Go 1.24 or newer and put it on PATH (https://go.dev/doc/install)"}
	out, err := exec.Command("go", "version").Output()
	if err != nil {
		c.Detail = "no `go` command on PATH"
		return []Check{c}
	}
	c.OK, c.Detail, c.Fix = true, strings.TrimSpace(string(out)), ""
	return []Check{c}
}

// checkTools reports gonb and goimports, built by `make tools` into .build/bin.
func checkTools(repo string) []Check {
	var cs []Check
	for _, tool := range []string{"gonb", "goimports"} {
		c := Check{Name: tool, Fix: inCheckout(repo, "tools", "clone fedbayes and run make tools in the clone")}
		p := filepath.Join(repo, ".build", "bin", tool)
		switch st, err := os.Stat(p); {
		case repo == "":
			c.Detail = "not built: no checkout"
		case err == nil && !st.IsDir():
			c.OK, c.Detail, c.Fix = true, p, ""
		default:
			c.Detail = "not built (" + p + ")"
		}
		cs = append(cs, noCheckout(c, repo))
	}
	return cs
}

// checkJupyter reports Debian's Jupyter Notebook and nbconvert under /usr/bin/python3.
func checkJupyter(repo string) []Check {
	const apt = "apt-get install jupyter-notebook python3-nbconvert python3-nbclient python3-ipykernel"
	c := Check{Name: "jupyter", Fix: "sudo " + apt}
	if repo != "" {
		c.Fix = "cd " + repo + " && make system   (runs " + apt + ")"
	}
	out, err := exec.Command("/usr/bin/python3", "-c", "import notebook, nbconvert; print(notebook.__version__, nbconvert.__version__)").Output()
	if err != nil {
		c.Detail = "Jupyter Notebook or nbconvert not importable by /usr/bin/python3"
		return []Check{noCheckout(c, repo)}
	}
	v := strings.Fields(string(out))
	c.OK, c.Fix = true, ""
	c.Detail = "notebook " + v[0] + ", nbconvert " + v[len(v)-1]
	return []Check{c}
}

// checkKernel reports the "Go (fedbayes)" kernel spec written by `make kernel`.
func checkKernel(repo string) []Check {
	c := Check{Name: "kernel", Fix: inCheckout(repo, "kernel", "clone fedbayes and run make kernel in the clone")}
	if repo == "" {
		c.Detail = "not installed: no checkout"
		return []Check{noCheckout(c, repo)}
	}
	p := filepath.Join(repo, ".build", "jupyter", "kernels", "fedbayes", "kernel.json")
	if _, err := os.Stat(p); err != nil {
		c.Detail = "kernel spec not installed (" + p + ")"
		return []Check{c}
	}
	c.OK, c.Detail, c.Fix = true, p, ""
	return []Check{c}
}

// checkBackend creates the chosen backend and runs a one-op computation on it, then reports every
// backend present (Backends): each XLA plugin with its PJRT API version and devices, and a LeNet speed
// check on each. A missing XLA plugin is optional, with the command that installs one.
func checkBackend(string) []Check {
	choice, err := backend.Choose()
	if err != nil {
		return []Check{{Name: "backend", Detail: err.Error(), Fix: "unset GOMLX_BACKEND, or fix it as the message says"}}
	}
	c := Check{Name: "backend", Detail: choice.Config + " (" + choice.Reason + ")"}
	b, err := backend.Default()
	if err != nil {
		c.Detail, c.Fix = err.Error(), "unset GOMLX_BACKEND to use the pure-Go backend"
		return []Check{c}
	}
	sum, err := tryAdd(b)
	if err != nil || sum != 3 {
		c.Detail = fmt.Sprintf("%s: 1+2 computed %v (error %v)", choice.Config, sum, err)
		c.Fix = "report this as a bug, with `fedbayes version`"
		return []Check{c}
	}
	c.OK = true
	cs := []Check{c}
	// Which CPU kernels the pure-Go backend uses: OpenBLAS is optional (training works without it,
	// several times slower).
	kc := Check{Name: "cpu kernels", Optional: true, OK: simplegoplus.BLASInUse(), Detail: simplegoplus.Kernels()}
	if !kc.OK {
		kc.Fix = "apt-get install libopenblas-dev (or `make setup`), then restart the program or kernel"
	}
	cs = append(cs, kc)
	reports := Backends(true)
	plugins := 0
	for _, r := range reports {
		if r.Plugin == nil {
			continue
		}
		plugins++
		pc := Check{Name: "xla plugin " + r.Plugin.Name, Optional: !r.Chosen, OK: r.Err == nil,
			Detail: r.Plugin.Path + ": " + r.APINote}
		if len(r.Devices) > 0 {
			pc.Detail += "; devices: " + strings.Join(r.Devices, "; ")
		}
		if r.Err != nil {
			pc.Detail = r.Plugin.Path + ": " + r.Err.Error()
			pc.Fix = "replace it: `fedbayes backend install " + r.Plugin.Name + "` or `install --from FILE` (docs/backends.md)"
		}
		cs = append(cs, pc)
	}
	if problems := backend.PluginProblems(); len(problems) > 0 {
		cs = append(cs, Check{Name: "xla plugin files", Optional: true, Detail: "not usable: " + strings.Join(problems, "; "),
			Fix: "remove or replace them: " + InstallHint})
	}
	if plugins == 0 {
		cs = append(cs, Check{Name: "xla plugin", Optional: true, Detail: "none found (XLA is the fast path, on CPU or GPU)",
			Fix: "install one: " + InstallHint})
	}
	for _, r := range reports {
		if r.Plugin != nil && r.Speed.Steps == 0 && r.Err != nil {
			continue // reported above
		}
		sc := Check{Name: "speed: " + r.Name, Optional: !r.Chosen, OK: r.Err == nil, Detail: r.Speed.String()}
		if r.Err != nil {
			sc.Detail, sc.Fix = "LeNet training step failed: "+r.Err.Error(), "report this as a bug, with `fedbayes version`"
			if r.Config == "go" {
				sc.Fix = "stock SimpleGo lacks the convolution gradients LeNet needs: unset GOMLX_BACKEND (fedbayes's pure-Go backend has them)"
			}
		}
		cs = append(cs, sc)
	}
	return cs
}

// tryAdd computes 1+2 on the backend.
func tryAdd(b backends.Backend) (sum float32, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	out, err := graph.ExecOnce(b, func(g *graph.Graph) *graph.Node {
		return graph.Add(graph.Const(g, float32(1)), graph.Const(g, float32(2)))
	})
	if err != nil {
		return 0, err
	}
	return out.Value().(float32), nil
}
