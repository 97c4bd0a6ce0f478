package main

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzAggregateArgs: any arguments to `fedbayes aggregate` give a result with exit status 0, or an
// error with status 1 or 2; never a panic, and never a NaN or infinity printed with status 0. The
// arguments are the input split at NUL bytes. PPA's -n is left out (a large population takes
// seconds by design). Run: go test -run '^$' -fuzz FuzzAggregateArgs -fuzztime 15s ./fedbayes/cmd/fedbayes/
func FuzzAggregateArgs(f *testing.F) {
	for _, args := range []string{
		"0,1\x002,0.25",
		"-w\x001e308,1e308\x00-normalize\x001,1\x002,1",
		"-rule\x00PPA\x001e308,1\x00-1e308,1",
		"-json\x00-prev\x001,2\x00-w\x000.5,0.5\x000,1\x002,0.25",
		"-Inf,1\x002,1",
		"--\x00-3,1\x00-1,1",
		"-rule\x00AALV\x001,1e-320\x002,1",
		"-dwc-policy\x00error\x00-prev\x000,0.1\x000,1\x001,1",
	} {
		f.Add(args)
	}
	f.Fuzz(func(t *testing.T, in string) {
		args := strings.Split(in, "\x00")
		for _, a := range args {
			name := strings.TrimLeft(a, "-")
			if strings.HasPrefix(a, "-") && (name == "n" || strings.HasPrefix(name, "n=")) {
				return
			}
		}
		var out, errOut bytes.Buffer
		status := runMain(append([]string{"aggregate"}, args...), &out, &errOut)
		if strings.Contains(errOut.String(), "internal error") {
			t.Fatalf("panic on %q:\n%s", args, errOut.String())
		}
		switch status {
		case 0:
			lower := strings.ToLower(out.String())
			if strings.Contains(lower, "nan") || strings.Contains(lower, "inf") {
				t.Fatalf("status 0 with a non-finite value for %q:\n%s", args, out.String())
			}
		case 1, 2:
			if strings.Count(errOut.String(), "\n") > 1 {
				t.Fatalf("status %d with %d error lines for %q:\n%s", status, strings.Count(errOut.String(), "\n"), args, errOut.String())
			}
		default:
			t.Fatalf("status %d", status)
		}
	})
}
