package progress

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeClock returns a clock that reads the times set with the returned setter (seconds after t0).
func fakeClock() (now func() time.Time, set func(seconds float64)) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	cur := t0
	return func() time.Time { return cur }, func(s float64) { cur = t0.Add(time.Duration(s * float64(time.Second))) }
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		850 * time.Millisecond:                  "850ms",
		120 * time.Microsecond:                  "120µs",
		3200 * time.Millisecond:                 "3.2s",
		4*time.Minute + 5*time.Second:           "4m05s",
		59*time.Minute + 59700*time.Millisecond: "1h00m",
		2*time.Hour + 3*time.Minute:             "2h03m",
		-2 * time.Second:                        "-2.0s",
		59960 * time.Millisecond:                "1m00s",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestTerminalPlainLines(t *testing.T) {
	var buf bytes.Buffer
	term := NewTerminal(&buf, false)
	now, set := fakeClock()
	term.setClock(now)
	term.Start(10, "eaa-seed1")
	set(2)
	// First update: the round's own timings give the time per round (2s); ETA 9 x 2s.
	term.Update(1, map[string]float64{"zeta": 3, "nll": 0.5, "accuracy": 0.75}, Timings{Local: 1500 * time.Millisecond, Aggregate: 250 * time.Millisecond, Eval: 250 * time.Millisecond})
	set(4.5)
	// Later: wall clock from the first update, (4.5-2)/(2-1) = 2.5s per round; ETA 8 x 2.5s.
	term.Update(2, map[string]float64{"accuracy": 0.8125}, Timings{Local: time.Second})
	set(5)
	term.Done("completed")
	term.Start(3, "eaa-seed2") // the legend is written once
	want := strings.Join([]string{
		Legend,
		"eaa-seed1: 10 rounds",
		"eaa-seed1 round 1/10 [==>                 ]  10% 2.0s/round ETA 18.0s accuracy 0.75 nll 0.5",
		"eaa-seed1 round 2/10 [====>               ]  20% 2.5s/round ETA 20.0s accuracy 0.8125",
		"eaa-seed1 completed: 2 rounds in 5.0s accuracy 0.8125",
		"eaa-seed2: 3 rounds",
		"",
	}, "\n")
	if got := buf.String(); got != want {
		t.Errorf("output:\n%q\nwant:\n%q", got, want)
	}
}

func TestTerminalLiveLine(t *testing.T) {
	var buf bytes.Buffer
	term := NewTerminal(&buf, true)
	now, set := fakeClock()
	term.setClock(now)
	term.Start(4, "")
	legend := buf.String()
	if legend != Legend+"\n" {
		t.Fatalf("live output before the first round %q, want the legend", legend)
	}
	set(1)
	term.Update(1, map[string]float64{"accuracy": 0.5, "nll": 1, "ece": 0.1, "brier": 0.2, "spread": 3, "extra": 9}, Timings{Eval: time.Second})
	first := strings.TrimPrefix(buf.String(), legend)
	if strings.Contains(first, "\n") || !strings.HasPrefix(first, "\r") {
		t.Errorf("live update is not a redrawn line: %q", first)
	}
	if strings.Contains(first, "brier") || !strings.HasSuffix(first, "accuracy 0.5 nll 1 ece 0.1") {
		t.Errorf("live line shows other than the key metrics: %q", first)
	}
	set(2)
	term.Update(2, nil, Timings{})
	second := strings.TrimPrefix(buf.String(), legend+first)
	// The shorter second line blanks the rest of the first one.
	if len([]rune(second)) != len([]rune(first)) {
		t.Errorf("second line %q does not cover the first %q", second, first)
	}
	set(3)
	term.Done("diverged at round 3: NaN loss")
	out := strings.TrimPrefix(buf.String(), legend)
	if !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("Done must end the line once: %q", out)
	}
	if !strings.Contains(out, "\rdiverged at round 3: NaN loss: 2 rounds in 3.0s") {
		t.Errorf("final line: %q", out)
	}
}

func TestRateAfterResume(t *testing.T) {
	var k tracker
	now, set := fakeClock()
	k.now = now
	k.begin(10, "")
	set(3)
	// A resumed run reports round 6 first, with no timings: fall back to elapsed / round.
	k.update(6, nil, Timings{})
	if k.snap.PerRound != 500*time.Millisecond || k.snap.ETA != 2*time.Second {
		t.Errorf("first update: %v per round, ETA %v", k.snap.PerRound, k.snap.ETA)
	}
	set(5)
	k.update(8, nil, Timings{}) // (5-3)/(8-6) = 1s; 2 rounds left
	if k.snap.PerRound != time.Second || k.snap.ETA != 2*time.Second || k.snap.Elapsed != 5*time.Second {
		t.Errorf("second update: %+v", k.snap)
	}
	set(7)
	k.update(10, nil, Timings{})
	if k.snap.ETA != 0 || k.snap.Fraction() != 1 {
		t.Errorf("last round: ETA %v fraction %v", k.snap.ETA, k.snap.Fraction())
	}
}

func TestUpdateWithoutStart(t *testing.T) {
	var buf bytes.Buffer
	term := NewTerminal(&buf, false)
	term.Update(3, map[string]float64{"accuracy": 0.5}, Timings{Local: time.Second})
	term.Done("completed")
	if got := buf.String(); !strings.HasPrefix(got, "round 3 1.0s/round accuracy 0.5\n") {
		t.Errorf("output %q", got)
	}
	Discard.Start(1, "x")
	Discard.Update(1, nil, Timings{})
	Discard.Done("completed")
}

func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	for name, w := range map[string]any{"buffer": &bytes.Buffer{}, "file": f, "null": devnull} {
		if IsTerminal(w.(interface{ Write([]byte) (int, error) })) {
			t.Errorf("%s taken for a terminal", name)
		}
	}
}

func TestNotebookUpdatesOneBlock(t *testing.T) {
	type call struct{ id, html string }
	var calls []call
	syncs := 0
	nb := NewNotebook()
	nb.update = func(id, html string) { calls = append(calls, call{id, html}) }
	nb.sync = func() { syncs++ }
	now, set := fakeClock()
	nb.setClock(now)
	nb.Start(10, "<fmnist & eaa>")
	set(2)
	nb.Update(3, map[string]float64{"accuracy": 0.9, "nll": 0.25, "client_accuracy_p10": 0.7, "lr": 0.01}, Timings{Local: time.Second, Aggregate: 500 * time.Millisecond, Eval: 500 * time.Millisecond})
	set(4)
	nb.Done("completed")
	if len(calls) != 3 || syncs != 1 {
		t.Fatalf("%d updates, %d syncs; want 3, 1", len(calls), syncs)
	}
	for _, c := range calls {
		if c.id != calls[0].id || !strings.HasPrefix(c.id, "fedbayes-progress-") {
			t.Errorf("block ids %q and %q differ", c.id, calls[0].id)
		}
		if strings.Contains(c.html, "<fmnist") || !strings.Contains(c.html, "&lt;fmnist &amp; eaa&gt;") {
			t.Errorf("label not escaped: %s", c.html)
		}
	}
	mid := calls[1].html
	for _, s := range []string{`<progress value="3" max="10"`, "round 3/10 (30%)", "2.0s/round", "ETA 14.0s",
		"accuracy <b>0.9</b> · nll <b>0.25</b>", "local 1.0s · aggregation 500ms · evaluation 500ms"} {
		if !strings.Contains(mid, s) {
			t.Errorf("update HTML lacks %q:\n%s", s, mid)
		}
	}
	// The block shows the key metrics only, as the terminal line does; the rows hold the rest.
	if strings.Contains(mid, "client_accuracy_p10") || strings.Contains(mid, "lr <b>") {
		t.Errorf("update HTML shows more than the key metrics:\n%s", mid)
	}
	if end := calls[2].html; !strings.Contains(end, ">completed</span>: 3 rounds in 4.0s") || strings.Contains(end, "<progress") {
		t.Errorf("final HTML:\n%s", end)
	}
	// Another run in the same process gets a block of its own.
	nb.Start(5, "next")
	if calls[3].id == calls[0].id {
		t.Error("second run reuses the first run's block")
	}
}

func TestNewOutsideNotebook(t *testing.T) {
	if _, ok := New().(*Terminal); !ok {
		t.Errorf("New() outside GoNB is %T, want *Terminal", New())
	}
}

// TestNewWritesToStandardError checks that outside a notebook the progress goes to standard error,
// so that a command's results on standard output can be redirected to a file without it.
func TestNewWritesToStandardError(t *testing.T) {
	term, ok := New().(*Terminal)
	if !ok {
		t.Fatalf("New() is %T outside a notebook, want *Terminal", New())
	}
	if term.w != io.Writer(os.Stderr) {
		t.Errorf("New() writes to %v, want os.Stderr", term.w)
	}
	if sw, ok := NewSweep(nil, 3, "x").bar.(*Terminal); !ok || sw.w != io.Writer(os.Stderr) {
		t.Errorf("NewSweep(nil, ...) does not draw on os.Stderr")
	}
}
