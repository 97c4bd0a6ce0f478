package explore

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"strings"
	"sync"
	"time"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/plots"
	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/comms"
	"github.com/janpfeifer/gonb/gonbui/dom"
)

// Mode says whether Run builds live widgets.
type Mode int

const (
	// Auto (the default) is Live inside a GoNB notebook and Static outside one. It does not depend
	// on the notebooks' budget or fast mode. In a headless run that says so (HeadlessEnv, set by
	// kernels/run-notebooks) it draws the initial state, says it is not live, and returns at once.
	Auto Mode = iota
	// Static renders the state once (chart and table) and returns.
	Static
	// Live renders the state, builds the controls and redraws on each change until the Stop
	// button, the context, Options.MaxDuration or the page going away (a 'bye' when it unloads, or
	// no message for Options.PageTimeout) ends it. When no page answers within
	// Options.ConnectTimeout, it keeps the initial drawing and says so.
	Live
)

// HeadlessEnv names the environment variable that marks a headless run (nbconvert, `make test`):
// when it is "1", an Auto explorer does not wait for a page that cannot come.
const HeadlessEnv = "FEDBAYES_HEADLESS"

// Default limits of a live explorer.
const (
	// DefaultConnectTimeout is long enough for a browser on a loaded machine: the page must load
	// GoNB's connection script, open its WebSocket and run the explorer's script.
	DefaultConnectTimeout = 60 * time.Second
	DefaultMaxDuration    = 30 * time.Minute
	// DefaultPageTimeout ends the explorer when a visible page has sent nothing for this long
	// (it sends a heartbeat every heartbeatEvery): a page closed without its 'bye' frees the kernel
	// within seconds.
	DefaultPageTimeout = 10 * time.Second
	// DefaultHiddenPageTimeout is the same for a page that said it is hidden (a background tab),
	// whose timers the browser may slow down to one a minute.
	DefaultHiddenPageTimeout = 5 * time.Minute
	// heartbeatEvery is how often the page tells the kernel it is still open.
	heartbeatEvery = 2 * time.Second
)

// Options configures Run. The zero value is Auto with the default limits.
type Options struct {
	// Mode chooses static or live (Auto: see Auto).
	Mode Mode
	// ConnectTimeout bounds the wait for the page's first message (0: DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// MaxDuration ends a live explorer after this long, so that a forgotten cell frees the kernel
	// (0: DefaultMaxDuration).
	MaxDuration time.Duration
	// PageTimeout ends a live explorer when a visible page has sent nothing for this long (it was
	// closed or reloaded without its 'bye'), so that the kernel does not stay busy (0:
	// DefaultPageTimeout).
	PageTimeout time.Duration
	// HiddenPageTimeout is PageTimeout for a page in a background tab (0:
	// DefaultHiddenPageTimeout).
	HiddenPageTimeout time.Duration
}

// ResolveMode returns the mode Run uses for m: Auto becomes Live inside a notebook and Static
// outside one.
func ResolveMode(m Mode, inNotebook bool) Mode {
	if m != Auto {
		return m
	}
	if !inNotebook {
		return Static
	}
	return Live
}

// Run shows the explorer for the initial state s in a GoNB cell and returns the last state shown.
//
// Static: the chart (plots.Display) and the table, exactly for s. Live: s is first snapped to the
// sliders (ControlsOf), the chart and table are shown, then a panel of controls (number of clients,
// rule, mean, variance and weight per client with each value beside its slider, Stop); each change
// redraws the chart (plots.Update) and the table in place. When the explorer ends, the panel is
// replaced by a line with the final state, so a saved notebook shows what was last drawn. Outside a
// notebook, Static only computes.
func Run(ctx context.Context, s State, opt Options) (final State, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("explore: %v", r)
		}
	}()
	mode := ResolveMode(opt.Mode, gonbui.IsNotebook)
	if mode == Live && !gonbui.IsNotebook {
		return s, fmt.Errorf("explore: the live explorer needs a GoNB notebook (use Static outside one)")
	}
	if mode == Static {
		return s, showStatic(s, "")
	}
	if opt.Mode == Auto && os.Getenv(HeadlessEnv) == "1" {
		note := HeadlessNote()
		fmt.Println(note)
		return s, showStatic(s, note)
	}
	if opt.ConnectTimeout <= 0 {
		opt.ConnectTimeout = DefaultConnectTimeout
	}
	if opt.MaxDuration <= 0 {
		opt.MaxDuration = DefaultMaxDuration
	}
	if opt.PageTimeout <= 0 {
		opt.PageTimeout = DefaultPageTimeout
	}
	if opt.HiddenPageTimeout <= 0 {
		opt.HiddenPageTimeout = DefaultHiddenPageTimeout
	}
	return runLive(ctx, s, opt)
}

// showStatic renders s and shows it with a note under the table.
func showStatic(s State, note string) error {
	v, err := Render(s)
	if err != nil {
		return err
	}
	return show(v, note)
}

// Show displays a view in a GoNB cell, the chart (plots.Display) and then the table, and waits
// until GoNB has both (gonbui.Sync), so that output sent as the last action of a cell is not lost.
// Outside a notebook it does nothing.
func Show(v View) error { return show(v, "") }

func show(v View, note string) error {
	if v.Chart == nil {
		return fmt.Errorf("explore: Show of a view without a chart (use Render)")
	}
	if err := plots.Display(v.Chart); err != nil {
		return err
	}
	gonbui.DisplayHTML(v.Table + noteHTML(note))
	gonbui.Sync()
	return gonbui.Error()
}

func noteHTML(note string) string {
	if note == "" {
		return ""
	}
	return `<div style="font:12px sans-serif;color:#666">` + html.EscapeString(note) + "</div>\n"
}

// HeadlessNote is what the explorer says in a headless run (HeadlessEnv set).
func HeadlessNote() string {
	return "The explorer is not live here: this is a headless run (nbconvert or make test, " + HeadlessEnv +
		"=1), with no page to move the sliders. It shows its initial state only; open the notebook in " +
		"Jupyter to explore."
}

// NoPageNote is what a live explorer says when no page answered within timeout.
func NoPageNote(timeout time.Duration) string {
	return fmt.Sprintf("The explorer is not live: no page answered within %s. If this notebook is open "+
		"in a browser, its script did not run or could not reach the kernel (an untrusted notebook runs "+
		"no scripts: File > Trust Notebook; a very loaded machine: run the cell again). It shows its "+
		"initial state only. In a headless run, %s=1 skips this wait.", timeout, HeadlessEnv)
}

// live is the state of a running live explorer. The page sends every message (Message) to one
// address; GoNB delivers each in its own goroutine, in any order, so receive keeps the newest
// control state by its sequence number.
type live struct {
	previous *aggregate.Gaussian
	seed     int64
	choices  []aggregate.Rule
	chartID  string
	tableID  string
	panelID  string
	rootID   string
	addr     string

	mu       sync.Mutex
	seq      int64    // sequence number of controls (-1 before the first message)
	controls Controls // the newest control state received
	applyErr error    // a message that could not be read
	heard    time.Time
	hidden   bool
	ended    string // why the page ended the explorer (Bye, Stop), "" while it runs

	first     chan struct{} // closed at the first message
	firstOnce sync.Once
	dirty     chan struct{} // a redraw is pending (one at most)
	wake      chan struct{} // a heartbeat, a bye or a stop arrived
}

func newLive(s State, c Controls) *live {
	uid := gonbui.UniqueId()
	l := &live{
		previous: s.Previous, seed: s.Seed, choices: RuleChoices(s), controls: c, seq: -1,
		chartID: "fedbayes-explorer-chart-" + uid,
		tableID: "fedbayes-explorer-table-" + uid,
		panelID: "fedbayes-explorer-panel-" + uid,
		rootID:  "fedbayes-explorer-root-" + uid,
		addr:    "/fedbayes/explorer/" + uid,
		first:   make(chan struct{}),
		dirty:   make(chan struct{}, 1),
		wake:    make(chan struct{}, 1),
	}
	return l
}

// receive handles one message of the page, from any goroutine: any message marks the page alive;
// a newer control state (higher sequence number) replaces the current one and marks a redraw; an
// older one is dropped; Bye and StopClicked end the explorer. A message that cannot be read is
// shown in the table.
func (l *live) receive(value string, now time.Time) {
	m, err := ParseMessage(value, l.choices)
	l.mu.Lock()
	l.heard = now
	redraw := false
	if err != nil {
		l.applyErr, redraw = err, true
	} else {
		switch m.Kind {
		case Hidden:
			l.hidden = true
		case Beat, Change:
			l.hidden = false
		case Bye:
			l.ended = "stopped: the page was closed or reloaded, so the kernel was released"
		case StopClicked:
			l.ended = "stopped"
		}
		if m.Seq > l.seq {
			l.seq, l.controls, l.applyErr, redraw = m.Seq, m.Controls, nil, true
		}
	}
	l.mu.Unlock()
	l.firstOnce.Do(func() { close(l.first) })
	if redraw {
		select {
		case l.dirty <- struct{}{}:
		default:
		}
	}
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// gone returns why the page ended the explorer, or "" while it is alive at now.
func (l *live) gone(now time.Time, opt Options) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended != "" {
		return l.ended
	}
	limit := opt.PageTimeout
	if l.hidden {
		limit = opt.HiddenPageTimeout
	}
	if quiet := now.Sub(l.heard); quiet > limit {
		return fmt.Sprintf("stopped: the page sent nothing for %s (closed or reloaded), so the kernel was released", quiet.Round(time.Second))
	}
	return ""
}

func runLive(ctx context.Context, s State, opt Options) (State, error) {
	c, err := ControlsOf(s)
	if err != nil {
		return s, err
	}
	l := newLive(s, c)
	shown, err := l.draw(c, -1)
	if err != nil {
		return s, err
	}
	// Subscribing first makes GoNB deliver the address and install its connection script in the
	// page; the panel's script then sends the controls' state as soon as that connection is up.
	sub := comms.Subscribe(l.addr, func(_ string, v string) { l.receive(v, time.Now()) })
	defer comms.Unsubscribe(sub)
	panel, err := l.panelHTML(c, opt)
	if err != nil {
		return s, err
	}
	gonbui.UpdateHTML(l.panelID, panel)
	script, err := l.script()
	if err != nil {
		return s, err
	}
	dom.TransientJavascript(script)
	if err := gonbui.Error(); err != nil {
		return s, err
	}
	timeout := time.NewTimer(opt.ConnectTimeout)
	defer timeout.Stop()
	select {
	case <-l.first:
	case <-timeout.C:
		note := NoPageNote(opt.ConnectTimeout)
		gonbui.UpdateHTML(l.panelID, noteHTML(note))
		gonbui.Sync()
		fmt.Println(note)
		return shown, gonbui.Error()
	case <-ctx.Done():
		gonbui.UpdateHTML(l.panelID, "")
		gonbui.Sync()
		return shown, nil
	}
	deadline := time.NewTimer(opt.MaxDuration)
	defer deadline.Stop()
	watch := time.NewTicker(time.Second)
	defer watch.Stop()
	redraw := func() {
		l.mu.Lock()
		cur, seq, applyErr := l.controls, l.seq, l.applyErr
		l.mu.Unlock()
		if applyErr != nil {
			gonbui.UpdateHTML(l.tableID, ErrorHTML(applyErr))
			return
		}
		c = cur
		if st, err := l.draw(c, seq); err == nil {
			shown = st
		}
	}
	why := ""
	for why == "" {
		select {
		case <-ctx.Done():
			why = "stopped (context done)"
		case <-deadline.C:
			why = fmt.Sprintf("stopped after %s (Options.MaxDuration); run the cell again to explore more", opt.MaxDuration)
		case <-l.dirty:
			redraw()
		case <-l.wake:
		case <-watch.C:
		}
		if why == "" {
			why = l.gone(time.Now(), opt)
		}
	}
	// A change that arrived with the Stop is drawn too: the final drawing matches the controls.
	select {
	case <-l.dirty:
		redraw()
	default:
	}
	final, err := c.State(l.previous, l.seed)
	line := fmt.Sprintf("Explorer %s; last state: %s.", why, describe(shown))
	if err != nil {
		line = fmt.Sprintf("Explorer %s; the controls give no valid state (%v); last state drawn: %s.", why, err, describe(shown))
		final = shown
	}
	gonbui.UpdateHTML(l.panelID, noteHTML(line))
	gonbui.Sync()
	return final, gonbui.Error()
}

// draw renders the controls' state into the chart and table blocks; an invalid state shows its
// error in the table and keeps the last chart. The table carries the sequence number and the
// controls it was drawn for (data-seq, data-controls; data-seq -1 before the page's first message),
// for the checks of kernels/check-explorer.
func (l *live) draw(c Controls, seq int64) (State, error) {
	st, err := c.State(l.previous, l.seed)
	var v View
	if err == nil {
		v, err = Render(st)
	}
	if err != nil {
		gonbui.UpdateHTML(l.tableID, ErrorHTML(err))
		return st, err
	}
	enc, err := c.Encode(l.choices)
	if err != nil {
		return st, err
	}
	if err := plots.Update(l.chartID, v.Chart); err != nil {
		return st, err
	}
	gonbui.UpdateHTML(l.tableID, fmt.Sprintf(`<div class="fedbayes-explorer-drawn" data-seq="%d" data-controls="%s">`, seq, enc)+
		v.Table+"</div>\n")
	return st, gonbui.Error()
}

func (l *live) slotID(what string, k int) string {
	return fmt.Sprintf("%s-%s-%d", l.panelID, what, k)
}

// panelHTML is the panel of controls: the number of clients, the rule, Stop, and one row per
// client slot with its three sliders, each with its value beside it.
func (l *live) panelHTML(c Controls, opt Options) (string, error) {
	enc, err := c.Encode(l.choices)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	cell := `padding:2px 6px;font:13px sans-serif`
	fmt.Fprintf(&b, `<div id="%s" class="fedbayes-explorer-panel" data-seq="0" data-state="%s">`+"\n", l.rootID, enc)
	// Shown until the panel's script runs, and again in a page reloaded from the saved notebook,
	// where the controls are a copy that no cell listens to.
	b.WriteString(`<div class="fedbayes-explorer-offline" style="font:12px sans-serif;color:#b00020">` +
		`These controls are not connected to the kernel (the explorer ended, or this page was reloaded): run the cell again to explore.</div>` + "\n")
	fmt.Fprintf(&b, `<div style="%s">clients <select id="%s">`, cell, l.slotID("clients", 0))
	for k := MinClients; k <= MaxClients; k++ {
		sel := ""
		if k == c.Clients {
			sel = " selected"
		}
		fmt.Fprintf(&b, `<option value="%d"%s>%d</option>`, k-MinClients, sel, k)
	}
	fmt.Fprintf(&b, `</select> &nbsp; rule <select id="%s">`, l.slotID("rule", 0))
	for i, r := range l.choices {
		sel := ""
		if r == c.Rule {
			sel = " selected"
		}
		fmt.Fprintf(&b, `<option value="%d"%s>%s</option>`, i, sel, html.EscapeString(ChoiceLabel(r)))
	}
	fmt.Fprintf(&b, `</select> &nbsp; <button id="%s">Stop</button></div>`+"\n", l.slotID("stop", 0))
	b.WriteString(`<table style="border-collapse:collapse">` + "\n")
	fmt.Fprintf(&b, `<tr><th style="%s"></th><th style="%s">mean μ ∈ [-5, 5]</th><th style="%s">variance σ² ∈ [2⁻⁷, 2⁷] (log)</th><th style="%s">weight (relative)</th></tr>`+"\n",
		cell, cell, cell, cell)
	for k := range MaxClients {
		op := "1"
		if k >= c.Clients {
			op = "0.35"
		}
		fmt.Fprintf(&b, `<tr id="%s" style="opacity:%s"><td style="%s">client %d</td>`, l.slotID("row", k), op, cell, k+1)
		for _, sl := range []struct {
			id  string
			sc  Scale
			pos int
		}{{"mean", MeanScale, c.Mean[k]}, {"var", VarScale, c.Var[k]}, {"weight", WeightScale, c.Weight[k]}} {
			label := sl.sc.Labels()[sl.pos-sl.sc.Min]
			fmt.Fprintf(&b, `<td style="%s;white-space:nowrap"><input type="range" id="%s" min="%d" max="%d" step="1" value="%d" style="vertical-align:middle"> <span id="%s-value" style="display:inline-block;min-width:4.5em;font-variant-numeric:tabular-nums">%s</span></td>`,
				cell, l.slotID(sl.id, k), sl.sc.Min, sl.sc.Max, sl.pos, l.slotID(sl.id, k), label)
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
	fmt.Fprintf(&b, `<div style="font:12px sans-serif;color:#666">The kernel runs this explorer until Stop, for at most %s, or until this page is closed or reloaded (within %s; %s for a background tab); other cells wait until then.</div>`+"\n",
		opt.MaxDuration, opt.PageTimeout, opt.HiddenPageTimeout)
	b.WriteString("</div>\n")
	return b.String(), nil
}

//go:embed live.js
var liveJS string

// script returns the panel's script: it sends the whole control state with a sequence number on
// every change, a heartbeat with the same state every heartbeatEvery ('h' while the page is
// hidden), a 'bye' when the page unloads, and shows each slider's value beside it.
func (l *live) script() (string, error) {
	cfg := map[string]any{
		"root": l.rootID, "panel": l.panelID, "addr": l.addr, "every": heartbeatEvery.Milliseconds(),
		"slots": MaxClients, "labels": map[string][]string{
			"mean": MeanScale.Labels(), "var": VarScale.Labels(), "weight": WeightScale.Labels(),
		},
		"mins": map[string]int{"mean": MeanScale.Min, "var": VarScale.Min, "weight": WeightScale.Min},
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		return "", err
	}
	return "(" + liveJS + ")(" + string(js) + ");", nil
}

// describe is a one-line summary of a state.
func describe(s State) string {
	w, err := s.NormalizedWeights()
	parts := make([]string, len(s.Clients))
	for k, c := range s.Clients {
		if err != nil {
			parts[k] = fmt.Sprintf("N(%.4g, %.4g)", c.Mean, c.Var)
			continue
		}
		parts[k] = fmt.Sprintf("N(%.4g, %.4g) w=%.3g", c.Mean, c.Var, w[k])
	}
	return fmt.Sprintf("%s; rule: %s", strings.Join(parts, ", "), ChoiceLabel(s.Rule))
}
