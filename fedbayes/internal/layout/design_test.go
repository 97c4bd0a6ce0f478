package layout

import (
	"go/build"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "fedbayes.dev/"

// designRow matches a row of docs/design.md's package table: | `fedbayes/x` | holds | depends on |.
var designRow = regexp.MustCompile("^\\| `(fedbayes/[^`]+)` \\| .* \\| (.*) \\|$")

// backticked matches a package name in the "depends on" column.
var backticked = regexp.MustCompile("`([^`]+)`")

// TestDesignTableMatchesImports reads docs/design.md's package table and checks that every package
// under fedbayes/ has one row, and that the packages a row names in backticks are exactly the
// fedbayes packages the package's non-test files import (go/build, as `go list -f '{{.Imports}}'`).
func TestDesignTableMatchesImports(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	table := map[string][]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		m := designRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := table[m[1]]; dup {
			t.Errorf("docs/design.md has two rows for %s", m[1])
		}
		deps := []string{}
		for _, d := range backticked.FindAllStringSubmatch(m[2], -1) {
			deps = append(deps, d[1])
		}
		slices.Sort(deps)
		table[m[1]] = deps
	}
	code := packageImports(t, root)
	if len(code) < 20 {
		t.Fatalf("found %d packages under fedbayes/: the walk is wrong", len(code))
	}
	for pkg, imports := range code {
		deps, ok := table[pkg]
		if !ok {
			t.Errorf("docs/design.md has no row for %s (it imports %v)", pkg, imports)
			continue
		}
		if !slices.Equal(deps, imports) {
			t.Errorf("docs/design.md: %s depends on %v, but its code imports %v", pkg, deps, imports)
		}
	}
	for pkg := range table {
		if _, ok := code[pkg]; !ok {
			t.Errorf("docs/design.md has a row for %s, which is not a package", pkg)
		}
	}
}

// packageImports returns, for every package directory under root/fedbayes, its path relative to the
// module ("fedbayes/engine") and the fedbayes packages its non-test Go files import, relative to
// fedbayes/ and sorted.
func packageImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(filepath.Join(root, "fedbayes"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return filepath.SkipDir
		}
		p, err := build.Default.ImportDir(path, 0)
		if err != nil {
			if _, none := err.(*build.NoGoError); none {
				return nil
			}
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		imports := []string{}
		for _, imp := range p.Imports {
			if own, ok := strings.CutPrefix(imp, module+"fedbayes/"); ok {
				imports = append(imports, own)
			}
		}
		slices.Sort(imports)
		out[filepath.ToSlash(rel)] = imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
