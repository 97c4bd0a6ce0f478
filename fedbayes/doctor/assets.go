package doctor

import (
	"strings"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/plots"
)

// installableData are the datasets `make data` installs from Debian packages: missing ones are
// failures. The others (MNIST, CIFAR, SVHN...) are the user's own files: missing ones are optional.
var installableData = map[string]bool{
	"fashion-mnist": true, "digits": true, "iris": true, "wine": true,
	"breast-cancer": true, "boston": true, "diabetes": true,
}

// checkData reports the datasets `make data` installs one by one, and the user-provided formats
// (MNIST, EMNIST, CIFAR, SVHN) in one optional line.
func checkData(repo string) []Check {
	var cs []Check
	var present, absent []string
	for _, a := range data.Status(data.Dir()) {
		if !installableData[a.Name] {
			if a.Present {
				present = append(present, a.Name)
			} else {
				absent = append(absent, a.Name)
			}
			continue
		}
		c := Check{Name: "data: " + a.Name, OK: a.Present, Detail: a.Path}
		install := inCheckout(repo, "data", "fedbayes data install")
		if a.Corrupt != "" {
			c.Detail, c.Fix = a.Corrupt, "rm -r "+a.Path+" && "+install
		} else if !a.Present {
			c.Detail = "missing " + strings.Join(a.Missing, ", ") + " in " + a.Path + " (" + a.Source + ")"
			c.Fix = install
		}
		cs = append(cs, c)
	}
	user := Check{Name: "data: your files", Optional: true, OK: len(absent) == 0,
		Detail: "present: " + orNone(present) + "; not present: " + orNone(absent),
		Fix:    "to use them, copy the original files into " + data.Dir() + " as docs/data.md says (fedbayes cannot download them)"}
	return append(cs, user)
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// checkCharts reports the offline ECharts library that charts and figures load.
func checkCharts(repo string) []Check {
	c := Check{Name: "echarts", Fix: plots.InstallCommand()}
	if repo != "" {
		c.Fix = "cd " + repo + " && make charts   (runs: " + plots.InstallCommand() + ")"
	}
	dir, err := plots.EChartsDir()
	if err != nil {
		c.Detail = "ECharts " + plots.EChartsVersion + " not installed in " + plots.NPMDir()
		return []Check{c}
	}
	c.OK, c.Detail, c.Fix = true, dir, ""
	return []Check{c}
}
