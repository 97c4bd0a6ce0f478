package main

import (
	"errors"
	"fmt"
	"io"

	"fedbayes.dev/fedbayes/doctor"
)

func init() {
	register(&command{name: "doctor", summary: "check this machine: Go, kernel, Jupyter, backend, data, charts", run: runDoctor})
}

// runDoctor prints every check and fails when a required one fails.
func runDoctor(args []string, stdout io.Writer) error {
	fs := newFlagSet("doctor", "", stdout)
	if err := fs.Parse(args); err != nil {
		return err
	}
	cs := doctor.Run()
	doctor.Write(stdout, cs)
	if n := len(doctor.Failed(cs)); n > 0 {
		return errors.New(fmt.Sprint(n, " required check(s) failed; run the commands under \"To fix\""))
	}
	return nil
}
