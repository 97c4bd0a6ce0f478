package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

func TestRunMainStatus(t *testing.T) {
	register(&command{name: "test-panics", summary: "test", run: func([]string, io.Writer) error { panic("boom") }})
	register(&command{name: "test-fails", summary: "test", run: func([]string, io.Writer) error { return errors.New("it failed") }})
	register(&command{name: "test-usage", summary: "test", run: func([]string, io.Writer) error { return errUsage }})
	defer func() {
		for _, n := range []string{"test-panics", "test-fails", "test-usage"} {
			delete(commands, n)
		}
	}()
	tests := []commandCase{
		{args: nil, status: 0, wantOut: "Commands:"},
		{args: []string{"help"}, status: 0, wantOut: "version"},
		{args: []string{"nosuch"}, status: 2, wantStderr: `unknown command "nosuch"`},
		{args: []string{"test-fails"}, status: 1, wantStderr: "fedbayes test-fails: it failed"},
		{args: []string{"test-usage"}, status: 2, wantStderr: "usage"},
		{args: []string{"test-panics"}, status: 3, wantStderr: "internal error: boom"},
		{args: []string{"version", "-h"}, status: 0, wantOut: "Usage: fedbayes version"},
		{args: []string{"backend", "-nosuchflag"}, status: 2, wantStderr: `unknown flag "-nosuchflag"; see fedbayes backend -h`},
	}
	runCommandCases(t, tests)
}

func TestVersionJSON(t *testing.T) {
	var out bytes.Buffer
	if err := runVersion([]string{"-json"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"fedbayes"`, `"git_commit"`, `"backend"`, `"modules"`} {
		if !strings.Contains(out.String(), key) {
			t.Errorf("version -json lacks %s: %s", key, out.String())
		}
	}
}

// commandCase is one fedbayes command line and what its exit status and output must hold.
type commandCase struct {
	name       string // the subtest's name; the arguments when empty
	args       []string
	status     int
	wantOut    string // a substring of stdout
	wantStderr string // a substring of stderr
}

// runCommandCases runs each case through runMain as a subtest and checks its status and output.
func runCommandCases(t *testing.T, cases []commandCase) {
	t.Helper()
	for _, tc := range cases {
		name := tc.name
		if name == "" {
			name = strings.Join(tc.args, " ")
		}
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := runMain(tc.args, &stdout, &stderr); got != tc.status {
				t.Fatalf("status %d, want %d\nstdout %s\nstderr %s", got, tc.status, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.wantOut) {
				t.Errorf("stdout %q lacks %q", stdout.String(), tc.wantOut)
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tc.wantStderr)
			}
		})
	}
}

// TestEveryCommandHelp runs every command and sub-command with -h, also followed by a value as a
// user who takes -h for a flag of the command writes it (`fedbayes ground-truth -h 0.5`): each must
// print its usage line and a description of what it does on standard output, exit 0, and do
// nothing else: nothing on standard error (where progress goes) and no file in the working
// directory (where the commands' default output folders are).
func TestEveryCommandHelp(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	var lines [][]string
	for name := range commands {
		lines = append(lines, []string{name, "-h"}, []string{name, "-h", "0.5"}, []string{name, "--help"})
	}
	for _, sub := range [][]string{{"backend", "install"}, {"data", "install"}, {"data", "list"}, {"data", "path"}} {
		lines = append(lines, append(sub, "-h"))
	}
	for _, args := range lines {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := runMain(args, &stdout, &stderr); got != 0 {
				t.Fatalf("status %d, want 0\nstdout %s\nstderr %s", got, stdout.String(), stderr.String())
			}
			if stderr.Len() > 0 {
				t.Errorf("stderr %q, want nothing", stderr.String())
			}
			if want := "Usage: fedbayes " + args[0]; !strings.Contains(stdout.String(), want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
			}
			if !hasDescription(stdout.String()) {
				t.Errorf("no description of what the command does:\n%s", stdout.String())
			}
		})
	}
	if entries, err := os.ReadDir(wd); err != nil || len(entries) > 0 {
		t.Errorf("-h wrote in the working directory: %v %v", entries, err)
	}
}

// hasDescription reports whether a usage text holds a line of prose (five words or more) besides
// its usage line and the flags' lines (flag.PrintDefaults: "  -name type" and "    \tusage").
func hasDescription(usage string) bool {
	for _, line := range strings.Split(usage, "\n") {
		if strings.HasPrefix(line, "Usage:") || strings.HasPrefix(line, "  -") || strings.HasPrefix(line, "    \t") {
			continue
		}
		if len(strings.Fields(line)) >= 5 {
			return true
		}
	}
	return false
}
