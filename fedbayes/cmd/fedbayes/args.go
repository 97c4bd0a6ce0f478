package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// parseArgs parses a command's arguments with fs, accepting flags before, between and after the
// positional arguments (Go's flag package alone stops at the first positional one, so that
// `fedbayes table runs/ -format latex` would read "-format" as a directory). After it, fs.Args()
// holds the positional arguments in their order.
//
// Arguments are sorted into flags and positionals before fs parses them: "--" ends the flags (what
// follows is positional, even when it starts with "-"); "-" alone is positional; a flag that takes a
// value and is written without "=" takes the next argument as its value, whatever it looks like
// (as in -level 0.05 or -w -1,2); positional, when not nil, marks more arguments that start with
// "-" as positional (aggregate's clients with a negative mean, -1,2).
//
// The flag package's own printing is silenced: -h or -help prints fs's usage to its output and
// returns flag.ErrHelp (exit status 0); any other parse error is returned once, wrapped in
// errUsage (exit status 2), naming the command's -h.
func parseArgs(fs *flag.FlagSet, args []string, positional func(string) bool) error {
	var flags, rest []string
	dangling := false // the last argument is a flag that wants a value
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' || (positional != nil && positional(a)) {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) {
			if i+1 >= len(args) {
				dangling = true
				break
			}
			flags = append(flags, args[i+1])
			i++
		}
	}
	if !dangling {
		// "--" keeps fs from reading a positional argument that starts with "-" as a flag.
		flags = append(append(flags, "--"), rest...)
	}
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(flags) // with a dangling flag: "flag needs an argument"
	fs.SetOutput(out)
	if err == nil {
		if err := checkNumericFlags(fs); err != nil {
			return fmt.Errorf("%w: %v; see %s -h", errUsage, err, fs.Name())
		}
		return nil
	}
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
		return flag.ErrHelp
	}
	return fmt.Errorf("%w: %s; see %s -h", errUsage, flagErrorText(err, flags), fs.Name())
}

// signedFlags are the numeric flags that may be negative: seeds (any integer is one) and run's
// -task-index (-1, its default, runs every run). Every other integer or duration flag counts or
// bounds something.
var signedFlags = map[string]bool{"seed": true, "task-index": true}

// checkNumericFlags refuses, for every flag given on the command line, a floating-point value that
// is not finite (NaN, Inf) and a negative integer or duration where the flag is not in
// signedFlags, naming the flag and its value. It is the first check of every command's numbers,
// before the command's own ranges (-level in (0, 1), -jobs at least 1), so that a new flag has it
// too (TestNumericFlagsChecked runs every command's numeric flags).
func checkNumericFlags(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if err != nil || !ok {
			return
		}
		switch v := g.Get().(type) {
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				err = fmt.Errorf("-%s %s: not a finite number", f.Name, f.Value)
			}
		case int, int64, time.Duration:
			if reflect.ValueOf(v).Int() < 0 && !signedFlags[f.Name] {
				err = fmt.Errorf("-%s %s: must not be negative", f.Name, f.Value)
			}
		}
	})
	return err
}

// isBoolFlag reports whether f is a boolean flag (one that takes no separate value).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// flagErrorText rewrites a flag package error for a user: "unknown flag "--x"" for an undefined
// flag, written as in args (the flag package names it with one dash), and the whole message on one
// line with control characters escaped.
func flagErrorText(err error, args []string) string {
	msg := err.Error()
	if bad, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		for _, a := range args {
			if name, _, _ := strings.Cut(a, "="); name == "-"+bad {
				bad = name
				break
			}
		}
		msg = "unknown flag " + echo(bad)
	}
	if strings.IndexFunc(msg, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		msg = strings.Trim(strconv.Quote(msg), `"`)
	}
	return msg
}

// needDir returns a usage error when the results folder given to -name is empty.
func needDir(name, dir string) error {
	if strings.TrimSpace(dir) == "" {
		return fmt.Errorf("%w: -%s: give a results folder (it is empty)", errUsage, name)
	}
	return nil
}
