package explore

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"fedbayes.dev/fedbayes/aggregate"
)

func papersControls(t *testing.T) (State, Controls) {
	t.Helper()
	s := PapersState()
	c, err := ControlsOf(s)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func TestParseMessage(t *testing.T) {
	s, c := papersControls(t)
	choices := RuleChoices(s)
	body, err := c.Encode(choices)
	if err != nil {
		t.Fatal(err)
	}
	moved := c
	moved.Clients, moved.Rule, moved.Mean[4], moved.Var[0], moved.Weight[2] = 5, choices[3], MeanScale.Max, VarScale.Min, 0
	movedBody, err := moved.Encode(choices)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Split(body, ",")
	with := func(i int, v string) string {
		f := append([]string(nil), fields...)
		f[i] = v
		return strings.Join(f, ",")
	}
	for _, tc := range []struct {
		name, msg string
		want      Message
		err       string
	}{
		{"beat", "b,0," + body, Message{Kind: Beat, Seq: 0, Controls: c}, ""},
		{"change", "c,41," + movedBody, Message{Kind: Change, Seq: 41, Controls: moved}, ""},
		{"hidden", "h,3," + body, Message{Kind: Hidden, Seq: 3, Controls: c}, ""},
		{"bye", "x,7," + body, Message{Kind: Bye, Seq: 7, Controls: c}, ""},
		{"stop", "s,7," + body, Message{Kind: StopClicked, Seq: 7, Controls: c}, ""},
		{"too few fields", "b,1,0,0", Message{}, "fields"},
		{"empty", "", Message{}, "fields"},
		{"unknown kind", "q,1," + body, Message{}, "unknown page message kind"},
		{"long kind", "bb,1," + body, Message{}, "not one letter"},
		{"negative seq", "b,-1," + body, Message{}, "sequence number"},
		{"seq not a number", "b,one," + body, Message{}, "sequence number"},
		{"clients out of range", "b,1," + with(0, "4"), Message{}, "clients selector"},
		{"rule out of range", "b,1," + with(1, fmt.Sprint(len(choices))), Message{}, "rule selector"},
		{"mean out of range", "b,1," + with(2, "101"), Message{}, "mean slider"},
		{"variance out of range", "b,1," + with(2+MaxClients, "-141"), Message{}, "variance slider"},
		{"weight not a number", "b,1," + with(2+2*MaxClients, "1.5"), Message{}, "not an integer"},
	} {
		got, err := ParseMessage(tc.msg, choices)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	if _, err := (Controls{Clients: 2, Rule: "nope"}).Encode(choices); err == nil {
		t.Error("Encode of an unknown rule: no error")
	}
}

// GoNB hands each page message to its own goroutine, so they arrive in any order: the control
// state with the highest sequence number must win, and an older one arriving last must not
// replace it (the table fell behind the slider after fast key presses).
func TestLiveNewestStateWins(t *testing.T) {
	s, c := papersControls(t)
	l := newLive(s, c)
	choices := RuleChoices(s)
	const n = 50
	msgs := make([]string, n)
	var last Controls
	for i := range n {
		ci := c
		ci.Mean[0] = MeanScale.Min + 3*i
		ci.Var[1] = VarScale.Max - i
		body, err := ci.Encode(choices)
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = fmt.Sprintf("c,%d,%s", i+1, body)
		last = ci
	}
	rng := rand.New(rand.NewSource(1))
	order := rng.Perm(n)
	// The newest first: every later (older) message must be dropped.
	for i, o := range order {
		if o == n-1 {
			order[0], order[i] = order[i], order[0]
		}
	}
	now := time.Unix(1000, 0)
	l.receive(msgs[order[0]], now)
	var wg sync.WaitGroup
	for _, o := range order[1:] {
		wg.Add(1)
		go func() { defer wg.Done(); l.receive(msgs[o], now) }()
	}
	wg.Wait()
	if l.controls != last || l.seq != n {
		t.Errorf("after %d shuffled changes: seq %d, controls %+v; want seq %d, %+v", n, l.seq, l.controls, n, last)
	}
	select {
	case <-l.first:
	default:
		t.Error("the first message did not mark the page live")
	}
	select {
	case <-l.dirty:
	default:
		t.Error("no redraw pending")
	}
	// A heartbeat carries the current state again: a change lost on the way is repaired by it.
	body, _ := c.Encode(choices)
	l.receive(fmt.Sprintf("b,%d,%s", n+1, body), now)
	if l.controls != c || l.seq != n+1 {
		t.Errorf("heartbeat with a newer state: seq %d, controls %+v", l.seq, l.controls)
	}
	// A message that cannot be read is an error shown in the table, not a change.
	l.receive("c,99,garbage", now)
	if l.applyErr == nil || l.controls != c {
		t.Errorf("unreadable message: err %v, controls %+v", l.applyErr, l.controls)
	}
}

func TestLiveGone(t *testing.T) {
	s, c := papersControls(t)
	body, err := c.Encode(RuleChoices(s))
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{PageTimeout: 10 * time.Second, HiddenPageTimeout: 5 * time.Minute}
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		name  string
		kinds []MessageKind
		after time.Duration
		want  string // substring of the reason; "" alive
	}{
		{"visible, recent beat", []MessageKind{Beat}, 5 * time.Second, ""},
		{"visible, silent", []MessageKind{Beat}, 11 * time.Second, "sent nothing for 11s"},
		{"hidden, silent a minute", []MessageKind{Beat, Hidden}, time.Minute, ""},
		{"hidden, silent too long", []MessageKind{Hidden}, 6 * time.Minute, "sent nothing"},
		{"visible again", []MessageKind{Hidden, Beat}, 11 * time.Second, "sent nothing"},
		{"bye", []MessageKind{Beat, Bye}, 0, "closed or reloaded"},
		{"stop", []MessageKind{StopClicked}, 0, "stopped"},
	} {
		l := newLive(s, c)
		for i, k := range tc.kinds {
			l.receive(fmt.Sprintf("%c,%d,%s", k, i, body), t0)
		}
		got := l.gone(t0.Add(tc.after), opt)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: gone %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The explorer's toy case and `fedbayes aggregate` (whose -seed defaults to DefaultSeed) give the
// same PPA numbers: one seed convention.
func TestPapersStateSeed(t *testing.T) {
	s := PapersState()
	if s.Seed != DefaultSeed {
		t.Fatalf("PapersState seed %d, want DefaultSeed %d", s.Seed, DefaultSeed)
	}
	v, err := Render(s)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := s.NormalizedWeights()
	want, err := aggregate.Scalar(aggregate.PPA, s.Clients, w, aggregate.Options{Seed: DefaultSeed, PopulationSize: DefaultPopulationSize})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range v.Rows {
		if r.Rule == aggregate.PPA && (r.Mean != want.Mean || r.Var != want.Var) {
			t.Errorf("explorer PPA N(%v, %v), aggregate with seed %d N(%v, %v)", r.Mean, r.Var, DefaultSeed, want.Mean, want.Var)
		}
	}
}

// The panel shows each slider's value beside it, as the table prints it, and its script gets
// every label.
func TestPanelAndScript(t *testing.T) {
	s, c := papersControls(t)
	l := newLive(s, c)
	opt := Options{MaxDuration: time.Minute, PageTimeout: 10 * time.Second, HiddenPageTimeout: time.Minute}
	p, err := l.panelHTML(c, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`id="` + l.slotID("mean", 1) + `-value"`, `>2</span>`, `>0.25</span>`, `>0.5</span>`,
		`data-state="0,0,`, `id="` + l.rootID + `"`, "Stop</button>", `class="fedbayes-explorer-offline"`,
	} {
		if !strings.Contains(p, want) {
			t.Errorf("panel lacks %q", want)
		}
	}
	js, err := l.script()
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(js, ")({")
	var cfg struct {
		Labels map[string][]string
		Addr   string
	}
	if i < 0 || json.Unmarshal([]byte(js[i+2:len(js)-2]), &cfg) != nil {
		t.Fatalf("script does not end with its configuration: %.200s", js[max(0, i):])
	}
	if cfg.Addr != l.addr || len(cfg.Labels["var"]) != VarScale.Max-VarScale.Min+1 || cfg.Labels["var"][-VarScale.Min] != "1" {
		t.Errorf("script configuration: addr %q, %d variance labels", cfg.Addr, len(cfg.Labels["var"]))
	}
}
