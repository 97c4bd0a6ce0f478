package main

import (
	"bytes"
	"errors"
	"io"
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
	tests := []struct {
		args       []string
		status     int
		wantOut    string
		wantStderr string
	}{
		{args: nil, status: 0, wantOut: "Commands:"},
		{args: []string{"help"}, status: 0, wantOut: "version"},
		{args: []string{"nosuch"}, status: 2, wantStderr: `unknown command "nosuch"`},
		{args: []string{"test-fails"}, status: 1, wantStderr: "fedbayes test-fails: it failed"},
		{args: []string{"test-usage"}, status: 2, wantStderr: "usage"},
		{args: []string{"test-panics"}, status: 3, wantStderr: "internal error: boom"},
		{args: []string{"version", "-h"}, status: 0, wantOut: "Usage: fedbayes version"},
		{args: []string{"backend", "-nosuchflag"}, status: 1, wantStderr: "flag provided but not defined"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if got := runMain(tc.args, &out, &errOut); got != tc.status {
				t.Errorf("status = %d, want %d (stderr %q)", got, tc.status, errOut.String())
			}
			if !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("stdout = %q, want it to contain %q", out.String(), tc.wantOut)
			}
			if !strings.Contains(errOut.String(), tc.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", errOut.String(), tc.wantStderr)
			}
		})
	}
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
