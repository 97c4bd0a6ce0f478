package results

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckRuns checks each refusal of CheckRuns, the one check every reader of runs uses: the
// refused run is named with the reason, the others kept in order, and a run held twice is an error
// naming both folders.
func TestCheckRuns(t *testing.T) {
	run := func(dir, setting string, seed int64, last int, rows ...int) Run {
		r := Run{Dir: dir, Meta: testMeta(t, setting, map[string]string{"rule": "eaa"}, seed), Status: Status{State: Completed, Round: last}}
		for _, n := range rows {
			r.Rows = append(r.Rows, accRow(n, 0.5, 1))
		}
		return r
	}
	good1, good2 := run("r/a-seed1", "a", 1, 3, 1, 2, 3), run("r/a-seed2", "a", 2, 3, 1, 2, 3)
	dirty := run("r/a-seed3", "a", 3, 3, 1, 2, 3)
	dirty.Meta.Info.GitDirty, dirty.Meta.Info.GitCommit = true, "abc123"
	short := run("r/a-seed4", "a", 4, 3, 1, 2)
	other := run("r/b-seed1", "b", 1, 3, 1, 2, 3)
	copied := good1
	copied.Dir = "r/a-seed1.bak"
	threeRounds := func(Meta) ([]int, bool) { return []int{1, 2, 3}, true }
	fiveRounds := func(Meta) ([]int, bool) { return []int{1, 2, 3, 4, 5}, true }
	onlyA := func(m Meta) error {
		if m.Setting != "a" {
			return errors.New("setting " + m.Setting + " is not a setting of spec a")
		}
		return nil
	}
	tests := []struct {
		name    string
		runs    []Run
		opt     CheckOptions
		keep    []string // the directories kept, in order
		refused []string // "DIR: fragment of the reason"
		err     string
	}{
		{name: "all good", runs: []Run{good1, good2}, keep: []string{"r/a-seed1", "r/a-seed2"}},
		{name: "dirty kept unless asked", runs: []Run{good1, dirty}, keep: []string{"r/a-seed1", "r/a-seed3"}},
		{name: "dirty refused when clean asked", runs: []Run{good1, dirty}, opt: CheckOptions{Clean: true},
			keep: []string{"r/a-seed1"}, refused: []string{"r/a-seed3: holds a run computed by a binary built from a modified tree (git_dirty in run.json, commit abc123)"}},
		{name: "rows stop before the status", runs: []Run{short, good2}, keep: []string{"r/a-seed2"},
			refused: []string{"r/a-seed4: rounds.jsonl ends at round 2, but the run completed after round 3: rows are missing; its rows cannot be trusted"}},
		{name: "another spec's run", runs: []Run{good1, other}, opt: CheckOptions{Spec: onlyA}, keep: []string{"r/a-seed1"},
			refused: []string{"r/b-seed1: holds a run of another experiment (setting b is not a setting of spec a)"}},
		{name: "a 3-round run for a 5-round spec", runs: []Run{good1}, opt: CheckOptions{Expect: fiveRounds},
			refused: []string{"r/a-seed1: completed after round 3, but its spec ends at round 5; its rows cannot be trusted"}},
		{name: "spec's rounds match", runs: []Run{good1}, opt: CheckOptions{Expect: threeRounds}, keep: []string{"r/a-seed1"}},
		{name: "a copied folder", runs: []Run{good1, good2, copied}, err: "r/a-seed1 and r/a-seed1.bak both hold setting a seed 1"},
		{name: "a copied folder even if one is refused", runs: []Run{copied, short, good1}, opt: CheckOptions{Clean: true}, err: "r/a-seed1.bak and r/a-seed1 both hold setting a seed 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, refused, err := CheckRuns(tc.runs, tc.opt)
			if tc.err != "" {
				wantErr(t, err, tc.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var keep []string
			for _, r := range ok {
				keep = append(keep, r.Dir)
			}
			if strings.Join(keep, ",") != strings.Join(tc.keep, ",") {
				t.Errorf("kept %v, want %v", keep, tc.keep)
			}
			if len(refused) != len(tc.refused) {
				t.Fatalf("refused %v, want %v", refused, tc.refused)
			}
			for i, s := range refused {
				if !strings.Contains(s.String(), tc.refused[i]) {
					t.Errorf("refused %q, want it to contain %q", s, tc.refused[i])
				}
				// CheckRun names the folder too.
				for _, r := range tc.runs {
					if r.Dir == s.Dir {
						if err := tc.opt.CheckRun(r); err == nil || !strings.HasPrefix(err.Error(), r.Dir+": ") {
							t.Errorf("CheckRun(%s) = %v, want an error naming the folder", r.Dir, err)
						}
					}
				}
			}
		})
	}
}

// TestLoadRefusesACopiedRunFolder copies a completed run folder (cp -r RUN RUN.bak) and checks that
// LoadWith refuses the directory, naming both folders, rather than counting the seed twice.
func TestLoadRefusesACopiedRunFolder(t *testing.T) {
	root := t.TempDir()
	rows := []Row{accRow(1, 0.4, 2), accRow(2, 0.5, 1)}
	d1 := writeRun(t, root, "a", nil, 1, rows, Completed)
	writeRun(t, root, "a", nil, 2, rows, Completed)
	if _, _, err := LoadWith(LoadOptions{}, root); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", d1, d1+".bak").CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	_, _, err := LoadWith(LoadOptions{}, root)
	wantErr(t, err, filepath.Base(d1)+" and ", filepath.Base(d1)+".bak both hold setting a seed 1")
}
