package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/results"
)

// TestParseArgs checks the sorting of arguments into flags and positionals.
func TestParseArgs(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantPos  []string
		wantO    string
		wantV    bool
		wantLvl  float64
		wantErr  string
		wantHelp bool
	}{
		{name: "flags first", args: []string{"-o", "x", "-v", "a", "b"}, wantPos: []string{"a", "b"}, wantO: "x", wantV: true},
		{name: "flags last", args: []string{"a", "b", "-o", "x", "-v"}, wantPos: []string{"a", "b"}, wantO: "x", wantV: true},
		{name: "flags between", args: []string{"a", "-o=x", "b", "--v"}, wantPos: []string{"a", "b"}, wantO: "x", wantV: true},
		{name: "a value that looks like a flag", args: []string{"a", "-o", "-v"}, wantPos: []string{"a"}, wantO: "-v"},
		{name: "a negative value", args: []string{"-level", "-0.5", "a"}, wantPos: []string{"a"}, wantLvl: -0.5},
		{name: "double dash ends the flags", args: []string{"-v", "--", "-o", "x"}, wantPos: []string{"-o", "x"}, wantV: true},
		{name: "a lone dash is positional", args: []string{"-", "-v"}, wantPos: []string{"-"}, wantV: true},
		{name: "bool with a value", args: []string{"a", "-v=false"}, wantPos: []string{"a"}},
		{name: "unknown flag", args: []string{"a", "-nosuch"}, wantErr: `usage: unknown flag "-nosuch"; see fedbayes test -h`},
		{name: "unknown flag as typed", args: []string{"a", "--nosuch=1"}, wantErr: `usage: unknown flag "--nosuch"; see fedbayes test -h`},
		{name: "bad value", args: []string{"a", "-level", "x"}, wantErr: `invalid value "x" for flag -level`},
		{name: "missing value", args: []string{"a", "-o"}, wantErr: "flag needs an argument: -o"},
		{name: "control character", args: []string{"-no\nsuch"}, wantErr: `unknown flag "-no\nsuch"`},
		{name: "help after a positional", args: []string{"a", "-h"}, wantHelp: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			fs := newFlagSet("test", "ARGS", &out)
			o := fs.String("o", "", "out")
			v := fs.Bool("v", false, "verbose")
			lvl := fs.Float64("level", 0, "level")
			err := parseArgs(fs, tc.args, nil)
			switch {
			case tc.wantHelp:
				if err != flag.ErrHelp || !strings.Contains(out.String(), "Usage: fedbayes test") {
					t.Fatalf("error %v, output %q; want flag.ErrHelp and the usage", err, out.String())
				}
				return
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if out.Len() > 0 {
					t.Errorf("the flag package printed %q", out.String())
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if !equalStrings(fs.Args(), tc.wantPos) || *o != tc.wantO || *v != tc.wantV || *lvl != tc.wantLvl {
				t.Errorf("positional %q, -o %q, -v %v, -level %v; want %q, %q, %v, %v", fs.Args(), *o, *v, *lvl, tc.wantPos, tc.wantO, tc.wantV, tc.wantLvl)
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

// flagOrderCase is one command line written twice: flags before the positional arguments and after
// them. Both must give the same status and output (DIR stands for a fresh folder of each run).
type flagOrderCase struct {
	command       string
	setup         func(t *testing.T, dir string) // writes what the command reads into DIR
	before, after []string
	status        int
	wantOut       string // in stdout (after DIR is replaced back)
	wantStderr    string
}

// stamp matches a UTC time in a file name, as in job-quick-digits-20261127T160814.038Z.sbatch.
var stamp = regexp.MustCompile(`[0-9]{8}T[0-9]{6}(\.[0-9]+)?Z`)

// TestFlagsAnywhere runs every command with its flags before and after its positional arguments:
// `fedbayes table runs/ -format latex` and `fedbayes figures runs/ -o figs` read the flags, as
// `-format latex runs/` does. Every registered command has a case; those that take a flag with a
// value have one where it follows a stray or positional argument and is read, and those with no
// positional arguments one where a stray argument is refused (status 2) wherever the flags are.
func TestFlagsAnywhere(t *testing.T) {
	figSpec := func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "figures.json"), figuresSpec) }
	tableRuns := func(t *testing.T, dir string) {
		writeTableRun(t, filepath.Join(dir, "runs"), "eaa", "digits", 1, map[string]float64{"accuracy": 0.75, "nll": 0.5, "ece": 0.125}, results.Completed)
		writeTableRun(t, filepath.Join(dir, "runs"), "eaa", "digits", 2, map[string]float64{"accuracy": 0.875, "nll": 0.25, "ece": 0.125}, results.Completed)
	}
	specFile := func(name, text string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, name), text) }
	}
	cases := []flagOrderCase{
		{command: "aggregate", before: []string{"aggregate", "-rule", "EAA", "-json", "1,1", "2,3"}, after: []string{"aggregate", "1,1", "2,3", "-rule", "EAA", "-json"},
			wantOut: `"rule": "EAA"`},
		{command: "backend", setup: specFile("p.so", "not a plugin"),
			before: []string{"backend", "install", "-from", "DIR/p.so", "cpu"}, after: []string{"backend", "install", "cpu", "-from", "DIR/p.so"},
			status: 2, wantStderr: "give either a kind (cpu) or -from FILE, not both"},
		{command: "data", before: []string{"data", "path", "-dir", "DIR", "iris"}, after: []string{"data", "path", "iris", "-dir", "DIR"},
			wantOut: filepath.Join("DIR", data.SklearnDir) + "\n"},
		{command: "doctor", before: []string{"doctor", "-h", "extra"}, after: []string{"doctor", "extra", "-h"}, wantOut: "Usage: fedbayes doctor"},
		// doctor has no flag but -h: a stray argument is refused, also after "--".
		{command: "doctor", before: []string{"doctor", "extra"}, after: []string{"doctor", "--", "extra"}, status: 2, wantStderr: `doctor takes no arguments (got "extra")`},
		{command: "export", setup: tableRuns, before: []string{"export", "-format", "jsonl", "DIR/runs"}, after: []string{"export", "DIR/runs", "-format", "jsonl"},
			wantOut: `{"setting":"eaa-digits","dataset":"digits","rule":"eaa","seed":1,"round":5,"accuracy":0.75,`},
		{command: "fedbe", setup: specFile("r.json", `{"name": "r", "dataset": {"name": "digits"}, "training": {"rounds": 2}}`),
			before: []string{"fedbe", "-print", "-rounds", "3", "DIR/r.json"}, after: []string{"fedbe", "DIR/r.json", "-print", "-rounds", "3"}, wantOut: `"rounds": 3`},
		{command: "figures", setup: figSpec, before: []string{"figures", "-o", "DIR/figs", "-png-scale", "-1", "DIR"}, after: []string{"figures", "DIR", "-o", "DIR/figs", "-png-scale", "-1"},
			status: 2, wantStderr: "-png-scale -1 must be positive"},
		{command: "ground-truth", before: []string{"ground-truth", "-help", "extra"}, after: []string{"ground-truth", "extra", "-help"}, wantOut: "Usage: fedbayes ground-truth"},
		{command: "ground-truth", before: []string{"ground-truth", "-o", "DIR/gt", "-seeds", "x", "extra"}, after: []string{"ground-truth", "extra", "-o", "DIR/gt", "-seeds", "x"},
			status: 2, wantStderr: `invalid value "x" for flag -seeds`},
		{command: "ground-truth", before: []string{"ground-truth", "-o", "DIR/gt", "-seeds", "1", "extra"}, after: []string{"ground-truth", "extra", "-o", "DIR/gt", "-seeds", "1"},
			status: 2, wantStderr: `unexpected argument "extra"`},
		{command: "predictive", setup: specFile("p.json", `{"name": "p", "dataset": {"name": "digits"}, "partition": {"clients": 3}}`),
			before: []string{"predictive", "-print", "-seeds", "7", "DIR/p.json"}, after: []string{"predictive", "DIR/p.json", "-print", "-seeds", "7"}, wantOut: `"seeds": [`},
		{command: "reproduce", before: []string{"reproduce", "-help", "extra"}, after: []string{"reproduce", "extra", "-help"}, wantOut: "Usage: fedbayes reproduce"},
		// Value flags after a stray argument are read (a bad value is refused as such), and the stray
		// argument is refused wherever the flags are, before anything runs.
		{command: "reproduce", before: []string{"reproduce", "-results", "DIR/r", "-jobs", "x", "extra"}, after: []string{"reproduce", "extra", "-results", "DIR/r", "-jobs", "x"},
			status: 2, wantStderr: `invalid value "x" for flag -jobs`},
		{command: "reproduce", before: []string{"reproduce", "-results", "DIR/r", "-o", "DIR/r.md", "-report-only", "extra"},
			after: []string{"reproduce", "extra", "-results", "DIR/r", "-o", "DIR/r.md", "-report-only"}, status: 2, wantStderr: `unexpected arguments ["extra"]`},
		{command: "run", before: []string{"run", "-fast", "-print", "quick-digits"}, after: []string{"run", "quick-digits", "-fast", "-print"}, wantOut: `"name": "quick-digits-fast"`},
		{command: "status", before: []string{"status", "-v", "DIR", "quick-digits"}, after: []string{"status", "DIR", "quick-digits", "-v"}, wantOut: "task  run"},
		{command: "submit", before: []string{"submit", "-o", "DIR/res", "-dry-run", "-time", "10", "quick-digits"},
			after: []string{"submit", "quick-digits", "-o", "DIR/res", "-dry-run", "-time", "10"}, wantOut: "dry run: wrote"},
		{command: "table", setup: tableRuns, before: []string{"table", "-format", "latex", "DIR/runs"}, after: []string{"table", "DIR/runs", "-format", "latex"},
			wantOut: `\begin{tabular}`},
		{command: "version", before: []string{"version", "-h", "extra"}, after: []string{"version", "extra", "-h"}, wantOut: "Usage: fedbayes version"},
		{command: "version", before: []string{"version", "-json", "extra"}, after: []string{"version", "extra", "-json"}, status: 2, wantStderr: `unexpected argument "extra"`},
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.command] = true
		t.Run(tc.command, func(t *testing.T) {
			var outs [2]string
			for i, args := range [][]string{tc.before, tc.after} {
				dir := t.TempDir()
				if tc.setup != nil {
					tc.setup(t, dir)
				}
				full := make([]string, len(args))
				for k, a := range args {
					full[k] = strings.ReplaceAll(a, "DIR", dir)
				}
				var stdout, stderr bytes.Buffer
				status := runMain(full, &stdout, &stderr)
				// The same folder name, and the same time where a file name holds one (submit's script).
				out := stamp.ReplaceAllString(strings.ReplaceAll(stdout.String(), dir, "DIR"), "TIME")
				errOut := stamp.ReplaceAllString(strings.ReplaceAll(stderr.String(), dir, "DIR"), "TIME")
				if status != tc.status || !strings.Contains(out, tc.wantOut) || !strings.Contains(errOut, tc.wantStderr) {
					t.Fatalf("%q: status %d (want %d)\nstdout %s\nstderr %s\nwant %q and %q", args, status, tc.status, out, errOut, tc.wantOut, tc.wantStderr)
				}
				outs[i] = out + "\x00" + errOut
			}
			if outs[0] != outs[1] {
				t.Errorf("flags before and after the arguments differ:\n%s\n---\n%s", outs[0], outs[1])
			}
		})
	}
	for _, name := range commandNames() {
		if !covered[name] {
			t.Errorf("command %s has no case in TestFlagsAnywhere", name)
		}
	}
}

// commandNames returns the registered commands, sorted.
func commandNames() []string {
	var names []string
	for n := range commands {
		if !strings.HasPrefix(n, "test-") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// TestUsageErrorsEverywhere checks that an unknown flag, in every command, prints one error on
// stderr, once, nothing on stdout, and exits with status 2.
func TestUsageErrorsEverywhere(t *testing.T) {
	for _, name := range commandNames() {
		args := []string{name, "--bogus"}
		if name == "data" {
			args = []string{name, "list", "--bogus"}
		}
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			status := runMain(args, &stdout, &stderr)
			if status != 2 || stdout.Len() > 0 || strings.Count(stderr.String(), "bogus") != 1 || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("%q: status %d, stdout %q, stderr %q; want 2, nothing, and one line naming the flag", args, status, stdout.String(), stderr.String())
			}
			if !strings.Contains(stderr.String(), "fedbayes "+name) || !strings.Contains(stderr.String(), "-h") {
				t.Errorf("stderr %q does not name the command and its -h", stderr.String())
			}
		})
	}
}

// TestVersionFlag checks that `fedbayes --version` and `-version` print what `fedbayes version` does.
func TestVersionFlag(t *testing.T) {
	var want, wantErr bytes.Buffer
	if st := runMain([]string{"version"}, &want, &wantErr); st != 0 {
		t.Fatalf("version: status %d: %s", st, wantErr.String())
	}
	for _, args := range [][]string{{"--version"}, {"-version"}, {"--version", "-json"}} {
		var out, errOut bytes.Buffer
		st := runMain(args, &out, &errOut)
		if st != 0 || errOut.Len() > 0 {
			t.Fatalf("%q: status %d, stderr %s", args, st, errOut.String())
		}
		if len(args) == 1 && out.String() != want.String() {
			t.Errorf("%q printed\n%s\nwant\n%s", args, out.String(), want.String())
		}
		if len(args) == 2 && !strings.Contains(out.String(), `"fedbayes": `) {
			t.Errorf("%q printed %s", args, out.String())
		}
	}
	var out, errOut bytes.Buffer
	if st := runMain([]string{"version", "extra"}, &out, &errOut); st != 2 || !strings.Contains(errOut.String(), `unexpected argument "extra"`) {
		t.Errorf("version extra: status %d, stderr %q", st, errOut.String())
	}
	if st := runMain([]string{"help"}, &out, &errOut); st != 0 || !strings.Contains(out.String(), "fedbayes --version") {
		t.Errorf("help does not show --version:\n%s", out.String())
	}
}

// digitsInstalled skips the test when scikit-learn's digits are not in the data folder.
func digitsInstalled(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(data.Dir(), data.SklearnDir, "digits.csv.gz")); err != nil {
		t.Skipf("digits not installed: %v", err)
	}
}

// goOption matches a Go option or config field named in a message (Options.Dir, FitOptions.Tol).
var goOption = regexp.MustCompile(`[A-Z][A-Za-z]*(Options|Config)\b`)

// TestMessagesNameFlagsAndFields checks that errors a command-line user can meet name the flag or
// the spec field they set, not a Go option: an empty -o (the engine's Options.Dir), DWC without
// -prev (aggregate's Options.Previous).
func TestMessagesNameFlagsAndFields(t *testing.T) {
	cases := []commandCase{
		{args: []string{"aggregate", "-rule", "DWC", "0,1", "2,1"}, status: 2, wantStderr: "DWC needs the previous global: give -prev MEAN,VARIANCE"},
		{args: []string{"aggregate", "0,1", "2,1"}, status: 0, wantOut: "DWC needs the previous global: give -prev MEAN,VARIANCE"},
	}
	for _, args := range [][]string{
		{"run", "quick-digits", "-o", ""},
		{"submit", "quick-digits", "-o", "", "-dry-run"},
		{"fedbe", "-preset", "fedbe-digits-fast", "-o", ""},
		{"predictive", "-preset", "digits-fast", "-o", " "},
	} {
		cases = append(cases, commandCase{args: args, status: 2, wantStderr: "-o: give a results folder (it is empty)"})
	}
	runCommandCases(t, cases)
	for _, tc := range cases {
		var out, errOut bytes.Buffer
		runMain(tc.args, &out, &errOut)
		if m := goOption.FindString(out.String() + errOut.String()); m != "" {
			t.Errorf("%q names the Go option %s:\n%s%s", tc.args, m, out.String(), errOut.String())
		}
	}
}
