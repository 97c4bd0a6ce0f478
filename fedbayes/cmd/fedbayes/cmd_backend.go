package main

import (
	"fmt"
	"io"

	"fedbayes.dev/fedbayes/backend"
)

func init() {
	register(&command{name: "backend", summary: "print the GoMLX backend configuration fedbayes would use", run: runBackend})
}

// runBackend prints the chosen backend configuration (for GOMLX_BACKEND); -v adds the reason.
func runBackend(args []string, stdout io.Writer) error {
	fs := newFlagSet("backend", "", stdout)
	verbose := fs.Bool("v", false, "also print why, and the XLA plugins found")
	reason := fs.Bool("reason", false, "print only the reason for the choice")
	if err := fs.Parse(args); err != nil {
		return err
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
		fmt.Fprintf(stdout, "reason: %s\nXLA plugins found: %v\n", c.Reason, c.XLAPlugins)
	}
	return nil
}
