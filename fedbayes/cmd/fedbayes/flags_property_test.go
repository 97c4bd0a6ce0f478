package main

import (
	"bytes"
	"flag"
	"sort"
	"strings"
	"testing"
	"time"
)

// subcommands are the commands whose flags are those of a sub-command (`fedbayes data install -h`).
var subcommands = map[string][]string{"data": {"install", "list", "path"}, "backend": {"install"}}

// everyFlagSet returns the flag set of every command and sub-command, by the arguments that reach
// it, read with -h (which runs nothing).
func everyFlagSet(t *testing.T) map[string]*flag.FlagSet {
	t.Helper()
	sets := map[string]*flag.FlagSet{}
	flagSetMade = func(fs *flag.FlagSet) { sets[fs.Name()] = fs }
	defer func() { flagSetMade = nil }()
	var invocations [][]string
	for name := range commands {
		invocations = append(invocations, []string{name, "-h"})
		for _, sub := range subcommands[name] {
			invocations = append(invocations, []string{name, sub, "-h"})
		}
	}
	for _, args := range invocations {
		var out, errOut bytes.Buffer
		if st := runMain(args, &out, &errOut); st != 0 {
			t.Fatalf("%v: status %d: %s", args, st, errOut.String())
		}
	}
	return sets
}

// TestNumericFlagsChecked is the property that every numeric flag of every command refuses a value
// out of every number's range before the command does anything: NaN and ±Inf for a floating-point
// flag, -1 for an integer or duration one (but seeds and -task-index, signedFlags), each a usage
// error (status 2) naming the flag and the value. A new command or flag is covered without a new
// test.
func TestNumericFlagsChecked(t *testing.T) {
	sets := everyFlagSet(t)
	names := make([]string, 0, len(sets))
	for n := range sets {
		names = append(names, n)
	}
	sort.Strings(names)
	checked := 0
	for _, name := range names {
		prefix := strings.Fields(name)[1:] // "fedbayes data install" -> data install
		sets[name].VisitAll(func(f *flag.Flag) {
			g, ok := f.Value.(flag.Getter)
			if !ok {
				return
			}
			var bad []string
			switch g.Get().(type) {
			case float64:
				bad = []string{"NaN", "+Inf", "-Inf"}
			case int, int64, time.Duration:
				if !signedFlags[f.Name] {
					bad = []string{"-1"}
					if _, ok := g.Get().(time.Duration); ok {
						bad = []string{"-1s"}
					}
				}
			}
			for _, v := range bad {
				args := append(append([]string(nil), prefix...), "-"+f.Name, v)
				var out, errOut bytes.Buffer
				st := runMain(args, &out, &errOut)
				if want := "-" + f.Name + " " + v; st != 2 || !strings.Contains(errOut.String(), want) {
					t.Errorf("%v: status %d, stderr %q; want a usage error naming %q", args, st, errOut.String(), want)
				}
				checked++
			}
		})
	}
	if checked < 20 {
		t.Errorf("%d numeric flag values checked over %d flag sets; the commands have more", checked, len(sets))
	}
	t.Logf("%d values of numeric flags checked over %d flag sets", checked, len(sets))
}
