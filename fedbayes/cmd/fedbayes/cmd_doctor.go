package main

import (
	"errors"
	"fmt"
	"io"

	"fedbayes.dev/fedbayes/doctor"
)

func init() {
	register(&command{name: "doctor", summary: "check this machine: Go, kernel, Jupyter, backends, data, charts", help: doctorHelp, run: runDoctor})
}

const doctorHelp = `Checks that this machine can run fedbayes, and prints the command that fixes anything missing:
the Go toolchain, gonb and goimports, Jupyter and the "Go (fedbayes)" kernel, the compute backend
(a first computation, each XLA plugin with its PJRT API version and devices, and a LeNet training
step timed on each backend), the datasets and the offline chart library.

Fixes for required items are listed under "To fix:"; items fedbayes works without (an XLA plugin,
your own datasets) under "Optional:". Exits with status 1 when a required check fails.
The same checks run in notebooks/00-start-here.ipynb.`

// runDoctor prints every check and fails when a required one fails.
func runDoctor(args []string, stdout io.Writer) error {
	fs := newFlagSet("doctor", "", stdout)
	if err := parseArgs(fs, args, nil); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: doctor takes no arguments (got %q)", errUsage, fs.Arg(0))
	}
	cs := doctor.Run()
	doctor.Write(stdout, cs)
	if n := len(doctor.Failed(cs)); n > 0 {
		return errors.New(fmt.Sprint(n, " required check(s) failed; run the commands under \"To fix\""))
	}
	return nil
}
