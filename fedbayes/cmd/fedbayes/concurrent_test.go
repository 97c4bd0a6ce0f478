
// A writer killed with SIGKILL leaves its claim; the next --resume takes it over (the owner is dead
// on this host), says so, and completes the run with each row once.
func TestResumeTakesOverAKilledWritersClaim(t *testing.T) {
	if testing.Short() {
		t.Skip("two processes for seconds")
	}
	dir := t.TempDir()
	spec := concurrentSpec(t, dir, 60, "1")
	out := filepath.Join(dir, "D")
	first, _ := commandProcess(t, "run", spec, "-o", out, "-no-figures")
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m, _ := filepath.Glob(filepath.Join(out, "conc-seed1", results.CheckpointsDir, "*")); len(m) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = first.Process.Kill()
	_ = first.Wait()
	if _, err := os.Stat(filepath.Join(out, "conc-seed1", results.ClaimFile)); err != nil {
		t.Skipf("the run finished before it was killed (%v)", err)
	}
	second, secondOut := commandProcess(t, "run", spec, "-o", out, "--resume", "-no-figures")
	if st := exitCode(t, second); st != 0 {
		t.Fatalf("resume after kill -9: status %d\n%s", st, lastLines(secondOut.String(), 8))
	}
	if !strings.Contains(secondOut.String(), "took over the stale claim") || !strings.Contains(secondOut.String(), "is dead") {
		t.Errorf("no takeover message:\n%s", lastLines(secondOut.String(), 8))
	}
	checkRowsOnce(t, out, 1, 60)
}
