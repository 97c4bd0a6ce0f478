package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// -list is one short line per preset with its data status, and names what to install.
func TestListPresets(t *testing.T) {
	empty := t.TempDir()
	var out bytes.Buffer
	if err := listPresets(&out, empty); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !strings.HasPrefix(lines[0], "preset ") || !strings.Contains(lines[0], "data") {
		t.Errorf("header %q", lines[0])
	}
	var quick string
	for _, l := range lines {
		if strings.HasPrefix(l, "quick-digits ") {
			quick = l
		}
		if strings.HasPrefix(l, "fischer2024-cifar10-e1 ") && !strings.Contains(l, "missing: cifar10") {
			t.Errorf("CIFAR preset without its data not flagged: %q", l)
		}
		if strings.HasPrefix(l, "ozer") && len([]rune(l)) > 180 {
			t.Errorf("line of %d characters: %q", len([]rune(l)), l)
		}
	}
	if !strings.Contains(quick, "T=3, E=2, 1 seed") || !strings.Contains(quick, "missing: digits") || strings.Contains(quick, "full budget") {
		t.Errorf("quick-digits line %q", quick)
	}
	if !strings.Contains(out.String(), "Data not installed") || !strings.Contains(out.String(), "digits: fedbayes data install") {
		t.Errorf("no install hint:\n%s", out.String())
	}
}

func TestClosest(t *testing.T) {
	names := []string{"ozer2022-fmnist-c10-iid", "ozer2022-fmnist-c10-iid-reduced", "quick-digits"}
	for in, want := range map[string]string{
		"ozer2022-fmnst-c10-iid": "ozer2022-fmnist-c10-iid",
		"quick-digit":            "quick-digits",
		"quick":                  "quick-digits", // a part of the name
		"zzzzzzzz":               "",
	} {
		if got := closest(in, names); got != want {
			t.Errorf("closest(%q) = %q, want %q", in, got, want)
		}
	}
}

// A preset whose data is not installed is refused before any run folder is made.
func TestRunRefusesMissingData(t *testing.T) {
	empty := t.TempDir()
	spec := filepath.Join(t.TempDir(), "spec.json")
	writeFile(t, spec, `{"name": "x", "dataset": {"name": "cifar10", "dir": "`+empty+`"}, "training": {"rounds": 1}}`)
	out := filepath.Join(t.TempDir(), "results")
	var stdout, stderr bytes.Buffer
	if got := runMain([]string{"run", spec, "-o", out}, &stdout, &stderr); got != 1 {
		t.Fatalf("status %d; stderr %s", got, stderr.String())
	}
	if !strings.Contains(stderr.String(), `dataset.name "cifar10": not installed in `+empty) {
		t.Errorf("stderr %q", stderr.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("results folder created: %v", err)
	}
}

// `run -list` lists the predictive-space presets too: Hasan (2023)'s one-round presets
// (presets.HasanPresetNames) and Chen & Chao's FedBE presets (presets.ChenPresetNames) are engine presets.
func TestRunTakesPredictivePresets(t *testing.T) {
	var out bytes.Buffer
	if err := listPresets(&out, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fmnist-fast", "fedbe-fmnist-fast", "chen-lenet-dirichlet-reduced"} {
		if !strings.Contains(out.String(), "\n"+name+" ") {
			t.Errorf("-list does not list %s", name)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fmnist-fast", "-print"}, `"name": "fmnist-fast-fedavg-0"`},
		{[]string{"fedbe-digits-fast", "-print"}, `"name": "fedbe-digits-fast-fedavg"`},
	} {
		var b bytes.Buffer
		if err := runRun(tc.args, &b); err != nil {
			t.Fatalf("run %v: %v", tc.args, err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("run %v printed %q", tc.args, b.String())
		}
	}
}
