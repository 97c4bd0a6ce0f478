package explore

import (
	"context"
	"fmt"
	"html"
	"strings"
	"sync"
	"time"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/plots"
	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/comms"
	"github.com/janpfeifer/gonb/gonbui/dom"
	"github.com/janpfeifer/gonb/gonbui/protocol"
	"github.com/janpfeifer/gonb/gonbui/widgets"
)

// Mode says whether Run builds live widgets.
type Mode int

const (
	// Auto (the default) is Live inside a GoNB notebook and Static outside one. It does not depend
	// on the notebooks' budget or fast mode: a headless run (nbconvert, `make test`) tries Live,
	// gets no answer from a front end within Options.ConnectTimeout and says so under the chart.
	Auto Mode = iota
	// Static renders the state once (chart and table) and returns.
	Static
	// Live renders the state, builds the widgets and redraws on each change until the Stop button,
	// the context, Options.MaxDuration or the page going away (no heartbeat for
	// Options.PageTimeout) ends it. When no front end answers within Options.ConnectTimeout
	// (nbconvert has none), it keeps the initial drawing and says so.
	Live
)

// Default limits of a live explorer.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultMaxDuration    = 30 * time.Minute
	// DefaultPageTimeout is long enough for a background browser tab, whose timers the browser may
	// slow down to one a minute.
	DefaultPageTimeout = 90 * time.Second
	// heartbeatEvery is how often the page tells the kernel it is still open.
	heartbeatEvery = 5 * time.Second
)

// Options configures Run. The zero value is Auto with the default limits.
type Options struct {
	// Mode chooses static or live (Auto: see Auto).
	Mode Mode
	// ConnectTimeout bounds the wait for the front end to answer the first widget (0: 10 s).
	ConnectTimeout time.Duration
	// MaxDuration ends a live explorer after this long, so that a forgotten cell frees the kernel
	// (0: 30 min).
	MaxDuration time.Duration
	// PageTimeout ends a live explorer when the page has sent no heartbeat for this long (it was
	// closed or reloaded), so that the kernel does not stay busy (0: 90 s).
	PageTimeout time.Duration
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
// sliders (ControlsOf), the chart and table are shown, then a panel of widgets (number of clients,
// rule, mean, variance and weight per client, Stop); each change redraws the chart (plots.Update)
// and the table in place. When the explorer ends, the panel is replaced by a line with the final
// state, so a saved notebook shows what was last drawn. Outside a notebook, Static only computes.
func Run(ctx context.Context, s State, opt Options) (final State, err error) {
	defer func() {
		if r := recover(); r != nil { // GoNB widgets panic on misuse
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
	if opt.ConnectTimeout <= 0 {
		opt.ConnectTimeout = DefaultConnectTimeout
	}
	if opt.MaxDuration <= 0 {
		opt.MaxDuration = DefaultMaxDuration
	}
	if opt.PageTimeout <= 0 {
		opt.PageTimeout = DefaultPageTimeout
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

// live is the state of a running live explorer.
type live struct {
	previous *aggregate.Gaussian
	seed     int64
	choices  []aggregate.Rule
	chartID  string
	tableID  string
	panelID  string
	rowIDs   [MaxClients]string
	beatAddr string

	mu       sync.Mutex
	controls Controls
	events   map[string]Event // widget address -> the event its values make
	applyErr error
	dirty    chan struct{}
	beat     chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	subs     []comms.SubscriptionId
}

func newLive(s State, c Controls) *live {
	l := &live{
		previous: s.Previous, seed: s.Seed, choices: RuleChoices(s), controls: c,
		chartID: "fedbayes-explorer-chart-" + gonbui.UniqueId(),
		tableID: "fedbayes-explorer-table-" + gonbui.UniqueId(),
		panelID: "fedbayes-explorer-panel-" + gonbui.UniqueId(),
		events:  map[string]Event{},
		dirty:   make(chan struct{}, 1),
		beat:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
	}
	l.beatAddr = "/fedbayes/explorer/" + l.panelID + "/heartbeat"
	return l
}

func runLive(ctx context.Context, s State, opt Options) (State, error) {
	c, err := ControlsOf(s)
	if err != nil {
		return s, err
	}
	l := newLive(s, c)
	shown, err := l.draw(c)
	if err != nil {
		return s, err
	}
	gonbui.UpdateHTML(l.panelID, l.panelHTML(opt))
	// Values are applied in the order GoNB reads them from the front end: its own dispatcher calls
	// each subscriber in a new goroutine, so under fast key presses a stale value could land last.
	orig := gonbui.OnCommValueUpdate
	gonbui.OnCommValueUpdate = func(m *protocol.CommValue) {
		if m != nil && !m.Request {
			l.receive(m.Address, m.Value)
		}
		if orig != nil {
			orig(m)
		}
	}
	defer func() { gonbui.OnCommValueUpdate = orig }()
	first, ready := make(chan struct{}), make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ready <- fmt.Errorf("explore: building the widgets: %v", r)
			}
		}()
		ready <- l.buildWidgets(c, first)
	}()
	timeout := time.NewTimer(opt.ConnectTimeout)
	defer timeout.Stop()
	deadline := time.NewTimer(opt.MaxDuration)
	defer deadline.Stop()
	select {
	case <-first:
	case err := <-ready:
		if err != nil {
			return shown, err
		}
	case <-timeout.C:
		// No front end ran the widgets' scripts (headless run): keep the initial drawing.
		gonbui.UpdateHTML(l.panelID, noteHTML(HeadlessNote(opt.ConnectTimeout)))
		gonbui.Sync()
		fmt.Println(HeadlessNote(opt.ConnectTimeout))
		return shown, gonbui.Error()
	case <-ctx.Done():
		gonbui.UpdateHTML(l.panelID, "")
		gonbui.Sync()
		return shown, nil
	}
	// The front end answered: the other widgets follow (each waits for its own answer).
	select {
	case err := <-ready:
		if err != nil {
			return shown, err
		}
	case <-deadline.C:
		gonbui.UpdateHTML(l.panelID, noteHTML("The front end stopped answering while the widgets were built."))
		gonbui.Sync()
		return shown, fmt.Errorf("explore: the front end stopped answering while the widgets were built")
	case <-ctx.Done():
		gonbui.UpdateHTML(l.panelID, "")
		gonbui.Sync()
		return shown, nil
	}
	defer func() {
		for _, id := range l.subs {
			comms.Unsubscribe(id)
		}
	}()
	l.setRowOpacity(c.Clients)
	l.startHeartbeat()
	lastBeat := time.Now()
	watch := time.NewTicker(time.Second)
	defer watch.Stop()
	redraw := func() {
		l.mu.Lock()
		cur, applyErr := l.controls, l.applyErr
		l.applyErr = nil
		l.mu.Unlock()
		if applyErr != nil {
			gonbui.UpdateHTML(l.tableID, ErrorHTML(applyErr))
			return
		}
		if cur.Clients != c.Clients {
			l.setRowOpacity(cur.Clients)
		}
		c = cur
		if st, err := l.draw(c); err == nil {
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
		case <-l.stop:
			why = "stopped"
		case <-l.beat:
			lastBeat = time.Now()
		case now := <-watch.C:
			if gone := now.Sub(lastBeat); gone > opt.PageTimeout {
				why = fmt.Sprintf("stopped: the page sent no heartbeat for %s (closed or reloaded), so the kernel was released", gone.Round(time.Second))
			}
		case <-l.dirty:
			redraw()
		}
	}
	// A change that arrived with the Stop is drawn too: the final drawing matches the controls.
	l.mu.Lock()
	cur := l.controls
	l.mu.Unlock()
	if cur != c {
		redraw()
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

// HeadlessNote is what a live explorer says when no front end answered within timeout.
func HeadlessNote(timeout time.Duration) string {
	return fmt.Sprintf("The explorer is not live here: no front end answered within %s (headless run, "+
		"such as nbconvert or make test). It shows its initial state only; open the notebook in "+
		"Jupyter to move the sliders.", timeout)
}

// receive handles one value from the front end, synchronously and in arrival order: a widget's
// value updates the controls and marks them dirty (one pending redraw at most), a heartbeat marks
// the page alive. Other addresses are ignored.
func (l *live) receive(address string, value any) {
	if address == l.beatAddr {
		select {
		case l.beat <- struct{}{}:
		default:
		}
		return
	}
	l.mu.Lock()
	ev, ok := l.events[address]
	if !ok {
		l.mu.Unlock()
		return
	}
	v, err := comms.ConvertTo[int](value)
	if err == nil {
		ev.Value = v
		var c Controls
		if c, err = l.controls.Apply(ev, l.choices); err == nil {
			l.controls = c
		}
	}
	if err != nil {
		l.applyErr = err
	}
	l.mu.Unlock()
	select {
	case l.dirty <- struct{}{}:
	default:
	}
}

// startHeartbeat makes the page send a value every heartbeatEvery while the panel is in it.
func (l *live) startHeartbeat() {
	dom.TransientJavascript(fmt.Sprintf(`(function(){
  var id=%q, addr=%q, n=0;
  var t=setInterval(function(){
    if (!document.getElementById(id) || !globalThis.gonb_comm) { clearInterval(t); return; }
    globalThis.gonb_comm.send(addr, ++n);
  }, %d);
})();`, l.rowIDs[0], l.beatAddr, heartbeatEvery.Milliseconds()))
}

// draw renders the controls' state into the chart and table blocks; an invalid state shows its
// error in the table and keeps the last chart.
func (l *live) draw(c Controls) (State, error) {
	st, err := c.State(l.previous, l.seed)
	var v View
	if err == nil {
		v, err = Render(st)
	}
	if err != nil {
		gonbui.UpdateHTML(l.tableID, ErrorHTML(err))
		return st, err
	}
	if err := plots.Update(l.chartID, v.Chart); err != nil {
		return st, err
	}
	gonbui.UpdateHTML(l.tableID, v.Table)
	return st, gonbui.Error()
}

func (l *live) slotID(what string, k int) string {
	return fmt.Sprintf("%s-%s-%d", l.panelID, what, k)
}

// panelHTML is the layout the widgets are appended to: one row per client slot.
func (l *live) panelHTML(opt Options) string {
	var b strings.Builder
	cell := `padding:2px 6px;font:13px sans-serif`
	fmt.Fprintf(&b, `<div style="%s">clients <span id="%s"></span> &nbsp; rule <span id="%s"></span> &nbsp; <span id="%s"></span></div>`+"\n",
		cell, l.slotID("clients", 0), l.slotID("rule", 0), l.slotID("stop", 0))
	b.WriteString(`<table style="border-collapse:collapse">` + "\n")
	fmt.Fprintf(&b, `<tr><th style="%s"></th><th style="%s">mean μ ∈ [-5, 5]</th><th style="%s">variance σ² ∈ [2⁻⁷, 2⁷] (log)</th><th style="%s">weight (relative)</th></tr>`+"\n",
		cell, cell, cell, cell)
	for k := range MaxClients {
		l.rowIDs[k] = l.slotID("row", k)
		fmt.Fprintf(&b, `<tr id="%s"><td style="%s">client %d</td><td id="%s" style="%s"></td><td id="%s" style="%s"></td><td id="%s" style="%s"></td></tr>`+"\n",
			l.rowIDs[k], cell, k+1, l.slotID("mean", k), cell, l.slotID("var", k), cell, l.slotID("weight", k), cell)
	}
	b.WriteString("</table>\n")
	fmt.Fprintf(&b, `<div style="font:12px sans-serif;color:#666">The kernel runs this explorer until Stop, for at most %s, or until about %s after this page is closed or reloaded; other cells wait until then.</div>`+"\n",
		opt.MaxDuration, opt.PageTimeout)
	return b.String()
}

// buildWidgets creates every widget in the panel (each Done waits for the front end), closing
// first once the first widget has answered, and subscribes to their values.
func (l *live) buildWidgets(c Controls, first chan<- struct{}) error {
	labels := make([]string, 0, MaxClients-MinClients+1)
	for k := MinClients; k <= MaxClients; k++ {
		labels = append(labels, fmt.Sprint(k))
	}
	clients := widgets.Select(labels).SetDefault(c.Clients - MinClients).AppendTo(l.slotID("clients", 0)).Done()
	close(first)
	l.listen(clients.Address(), Event{Widget: ClientsSelect})
	ruleLabels := make([]string, len(l.choices))
	ruleIdx := 0
	for i, r := range l.choices {
		ruleLabels[i] = ChoiceLabel(r)
		if r == c.Rule {
			ruleIdx = i
		}
	}
	rule := widgets.Select(ruleLabels).SetDefault(ruleIdx).AppendTo(l.slotID("rule", 0)).Done()
	l.listen(rule.Address(), Event{Widget: RuleSelect})
	for k := range MaxClients {
		for _, sl := range []struct {
			w   Widget
			sc  Scale
			pos int
			id  string
		}{
			{MeanSlider, MeanScale, c.Mean[k], "mean"},
			{VarSlider, VarScale, c.Var[k], "var"},
			{WeightSlider, WeightScale, c.Weight[k], "weight"},
		} {
			w := widgets.Slider(sl.sc.Min, sl.sc.Max, sl.pos).AppendTo(l.slotID(sl.id, k)).Done()
			l.listen(w.Address(), Event{Widget: sl.w, Client: k})
		}
	}
	stop := widgets.Button("Stop").AppendTo(l.slotID("stop", 0)).Done()
	l.subs = append(l.subs, comms.Subscribe(stop.Address(), func(_ string, _ int) {
		l.stopOnce.Do(func() { close(l.stop) })
	}))
	return gonbui.Error()
}

// listen registers a widget's address: its values reach receive through the hook installed by
// runLive, in arrival order.
func (l *live) listen(address string, ev Event) {
	l.mu.Lock()
	l.events[address] = ev
	l.mu.Unlock()
}

// setRowOpacity greys out the client slots beyond the first k.
func (l *live) setRowOpacity(k int) {
	var b strings.Builder
	for i, id := range l.rowIDs {
		op := "1"
		if i >= k {
			op = "0.35"
		}
		fmt.Fprintf(&b, "(function(){var e=document.getElementById(%q); if (e) e.style.opacity=%q;})();\n", id, op)
	}
	dom.TransientJavascript(b.String())
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
