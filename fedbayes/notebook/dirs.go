package notebook

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// ResultsEnv is the environment variable that moves every notebook's results (default: the
// repository's results/ folder, which git ignores).
const ResultsEnv = "FEDBAYES_RESULTS"

// ResultsDir returns where a notebook writes its runs at a budget: $FEDBAYES_RESULTS/NAME/BUDGET,
// or RESULTS/NAME/BUDGET under the repository's results/ folder. It never uses the system's
// temporary folder, which is emptied at boot and shared between checkouts and users.
func ResultsDir(name string, b Budget) (string, error) {
	if name == "" || strings.ContainsAny(name, `/\`) {
		return "", fmt.Errorf("notebook: results folder name %q: give a plain name such as \"02-federated-vi\"", name)
	}
	if root := os.Getenv(ResultsEnv); root != "" {
		abs, err := filepath.Abs(root)
		if err != nil {
			return "", fmt.Errorf("notebook: %s=%q: %w", ResultsEnv, root, err)
		}
		return filepath.Join(abs, name, string(b)), nil
	}
	repo, err := RepoRoot()
	if err != nil {
		return "", fmt.Errorf("notebook: %w; set %s to a folder for the results", err, ResultsEnv)
	}
	return filepath.Join(repo, "results", name, string(b)), nil
}

// RepoEnv names the repository to the kernel (kernels/launch sets it).
const RepoEnv = "FEDBAYES_REPO"

// RepoRoot returns the fedbayes repository's root: the first folder holding go.mod with module
// fedbayes.dev, from $FEDBAYES_REPO (set by the kernel), else from the working directory up (a
// notebook runs in notebooks/), else from this package's source folder up.
func RepoRoot() (string, error) {
	var starts []string
	if r := os.Getenv(RepoEnv); r != "" {
		starts = append(starts, r)
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for {
			if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && isFedbayesModule(string(b)) {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("the fedbayes repository (go.mod of module fedbayes.dev) was not found above %v", starts)
}

func isFedbayesModule(gomod string) bool {
	for _, line := range strings.Split(gomod, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && f[1] == "fedbayes.dev" {
			return true
		}
	}
	return false
}
