package notebook

import (
	"fmt"
	"path/filepath"
	"strings"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/results"
)

// Incomplete is Load's error when some runs of the specs have not finished (training was stopped,
// or has not been run yet).
type Incomplete struct {
	// Done and Want count the finished and expected runs; Missing names the first unfinished ones.
	Done, Want int
	Missing    []string
}

func (e *Incomplete) Error() string {
	return fmt.Sprintf("%d of %d runs are finished (not yet: %s); run the training cell (again) to finish them, it resumes",
		e.Done, e.Want, strings.Join(e.Missing, ", "))
}

// Load reads the finished runs of the specs (every setting and seed) from dir, ignoring other runs
// there. Runs that diverged count as finished and are left out. A finished run is judged as
// `fedbayes run --resume` judges it (results.CheckOptions: the recorded spec equal to the given one,
// engine.SpecCheck; rows consistent with the status and the spec's rounds, engine.ExpectedRounds):
// one that fails, such as a run whose rows stop at round 2 of 3 or a 3-round run under the name of
// a 5-round spec's run, is an error naming each such folder and why, never returned as finished.
// When some runs have not finished (or failed: the training cell runs them again) it returns an
// *Incomplete error naming them, which Check turns into a message that stops the cell cleanly.
func Load(dir string, specs ...*engine.Spec) ([]results.Run, error) {
	var finished []results.Run
	var missing, refused []string
	want := 0
	for _, s := range specs {
		refs, chk, err := engine.RunChecks(s)
		if err != nil {
			return nil, err
		}
		for _, ref := range refs {
			want++
			r, err := results.ReadRun(filepath.Join(dir, ref.Name))
			switch {
			case err != nil || r.Status.State == "":
				missing = append(missing, ref.Name)
			case r.Status.State == results.Failed:
				// run --resume runs a failed run again: it is not finished.
				missing = append(missing, ref.Name+" (failed: "+r.Status.Reason+")")
			case r.Status.State == results.Completed || r.Status.State == results.Diverged:
				if err := chk.CheckRun(r); err != nil {
					refused = append(refused, err.Error())
					continue
				}
				if r.Status.State == results.Completed && len(r.Rows) > 0 {
					finished = append(finished, r)
				}
			}
		}
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("notebook: %d of %d runs in %s cannot be trusted; remove them and run the training cell again:\n%s",
			len(refused), want, dir, strings.Join(refused, "\n"))
	}
	if len(missing) > 0 {
		shown := missing
		if len(shown) > 3 {
			shown = append(shown[:3:3], fmt.Sprintf("%d more", len(missing)-3))
		}
		return nil, &Incomplete{Done: want - len(missing), Want: want, Missing: shown}
	}
	runs, _, err := results.CheckRuns(finished, results.CheckOptions{}) // each (setting, seed) once across the specs
	if err != nil {
		return nil, err
	}
	return runs, nil
}
