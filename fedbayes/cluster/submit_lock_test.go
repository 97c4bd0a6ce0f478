package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// TestSubmitTakesTheLock checks that two submits into one directory at once send each run once:
// sbatch (slow here, 1 s) is called once, the other submit is refused naming the lock's holder;
// and that a submit finds the lock held by a live process (this one) and refuses before anything is
// written.
func TestSubmitTakesTheLock(t *testing.T) {
	ctx := context.Background()
	fake := fakeSlurm(t, 1001)
	if err := os.WriteFile(filepath.Join(fake, "sbatch"), []byte("#!/bin/sh\n/bin/sleep 1\necho \"$2\" >> \""+fake+"/calls\"\necho \"4242;cluster\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "res")
	o := Options{Spec: sweep(t, 3), SpecName: "quick-digits", Dir: dir, Binary: executable(t)}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = Submit(ctx, o)
		}()
	}
	wg.Wait()
	calls, _ := os.ReadFile(filepath.Join(fake, "calls"))
	if n := strings.Count(string(calls), "\n"); n != 1 {
		t.Errorf("sbatch called %d times, want once (errors %v)", n, errs)
	}
	refused := 0
	for _, err := range errs {
		if err != nil {
			refused++
			if !strings.Contains(err.Error(), "another fedbayes submit into "+dir+" is under way (pid") {
				t.Errorf("refusal %v", err)
			}
		}
	}
	if refused != 1 {
		t.Errorf("%d submits refused, want 1: %v", refused, errs)
	}

	held, err := results.ClaimRun(filepath.Join(dir, SlurmDir))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	scripts, _ := filepath.Glob(filepath.Join(dir, SlurmDir, "*.sbatch"))
	if _, err := Submit(ctx, o); err == nil || !strings.Contains(err.Error(), "another fedbayes submit") {
		t.Errorf("a held lock: %v", err)
	}
	if again, _ := filepath.Glob(filepath.Join(dir, SlurmDir, "*.sbatch")); len(again) != len(scripts) {
		t.Errorf("a refused submit wrote a script: %v", again)
	}
}
