package main

import (
	"fmt"
	"io"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/runinfo"
)

func init() {
	register(&command{name: "version", summary: "print fedbayes, Go and GoMLX versions, commit and backend", run: runVersion})
}

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
	fmt.Fprintf(stdout, "fedbayes %s\ncommit   %s", info.Fedbayes, info.GitCommit)
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
