package main

import (
	"fmt"
	"io"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/runinfo"
)

func init() {
	register(&command{name: "version", summary: "print fedbayes, Go and GoMLX versions, commit and backend", help: versionHelp, run: runVersion})
}

const versionHelp = `Prints fedbayes's release (the newest release of CHANGELOG.md that this source is or follows,
runinfo.Version), what git says of the build when it says anything (the tag, or the commits after it:
v0.1.1-0.DATE-HASH, v0.1.0-3-gabc1234; +dirty or -dirty for a modified tree), the commit, the Go
version, the backend fedbayes would use and the versions of GoMLX, GoNB and go-echarts. Every run
records the same in its run.json (info).`

// runVersion prints the version lines (or, with -json, runinfo.Info).
func runVersion(args []string, stdout io.Writer) error {
	fs := newFlagSet("version", "", stdout)
	asJSON := fs.Bool("json", false, "print as JSON")
	if err := parseArgs(fs, args, nil); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	cfg := "unavailable"
	if c, err := backend.Choose(); err == nil {
		cfg = c.Config + " (" + c.Reason + ")"
	} else {
		cfg = "error: " + err.Error()
	}
	info := runinfo.Collect(cfg)
	if *asJSON {
		return writeJSON(stdout, info)
	}
	fmt.Fprintf(stdout, "fedbayes %s\n", info.Fedbayes)
	if info.Build != "" && info.Build != info.Fedbayes {
		fmt.Fprintf(stdout, "build    %s\n", info.Build)
	}
	fmt.Fprintf(stdout, "commit   %s", info.GitCommit)
	if info.GitDirty {
		fmt.Fprint(stdout, " (modified)")
	}
	fmt.Fprintf(stdout, "\ngo       %s\nbackend  %s\n", info.Go, info.Backend)
	for _, m := range []string{"github.com/gomlx/gomlx", "github.com/janpfeifer/gonb", "github.com/go-echarts/go-echarts/v2"} {
		if v, ok := info.Modules[m]; ok {
			fmt.Fprintf(stdout, "%-8s %s %s\n", "module", m, v)
		}
	}
	return nil
}
