package explore

import (
	"fmt"
	"strconv"
	"strings"

	"fedbayes.dev/fedbayes/aggregate"
)

// MessageKind says why the page sent a Message.
type MessageKind byte

// The kinds of message the live explorer's page sends. Every kind carries the whole control state
// and its sequence number, so that a heartbeat also repairs a change that was lost on the way.
const (
	// Change: a control moved (the sequence number grew).
	Change MessageKind = 'c'
	// Beat: the page is open and visible (sent every heartbeatEvery).
	Beat MessageKind = 'b'
	// Hidden: the page is open but hidden (a background tab, whose timers the browser slows down).
	Hidden MessageKind = 'h'
	// Bye: the page is being closed or reloaded.
	Bye MessageKind = 'x'
	// StopClicked: the Stop button was clicked.
	StopClicked MessageKind = 's'
)

// messageFields is the number of comma-separated fields of a message: the kind, the sequence
// number, the clients and rule selector indices, and the mean, variance and weight slider
// positions of every client slot.
const messageFields = 4 + 3*MaxClients

// Message is one message of the live explorer's page: a kind, the sequence number of the control
// state (it grows by one on each change of a control in the page; the newest state wins, whatever
// order GoNB delivers the messages in) and the control state itself.
type Message struct {
	Kind     MessageKind
	Seq      int64
	Controls Controls
}

// ParseMessage reads a message of the explorer's page: "kind,seq,clients,rule,mean×5,var×5,weight×5",
// with clients the index of the clients selector (K = MinClients + index), rule an index into
// choices and the slider positions of the five client slots. Every position is checked against its
// slider's range.
func ParseMessage(s string, choices []aggregate.Rule) (Message, error) {
	f := strings.Split(s, ",")
	if len(f) != messageFields {
		return Message{}, fmt.Errorf("explore: page message has %d fields, want %d: %.80q", len(f), messageFields, s)
	}
	var m Message
	if len(f[0]) != 1 {
		return Message{}, fmt.Errorf("explore: page message kind %q is not one letter", f[0])
	}
	m.Kind = MessageKind(f[0][0])
	switch m.Kind {
	case Change, Beat, Hidden, Bye, StopClicked:
	default:
		return Message{}, fmt.Errorf("explore: unknown page message kind %q", f[0])
	}
	seq, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || seq < 0 {
		return Message{}, fmt.Errorf("explore: page message sequence number %q is not an integer >= 0", f[1])
	}
	m.Seq = seq
	nums := make([]int, len(f)-2)
	for i, x := range f[2:] {
		if nums[i], err = strconv.Atoi(x); err != nil {
			return Message{}, fmt.Errorf("explore: page message field %d (%q) is not an integer", i+3, x)
		}
	}
	events := []Event{{Widget: ClientsSelect, Value: nums[0]}, {Widget: RuleSelect, Value: nums[1]}}
	for i, w := range []Widget{MeanSlider, VarSlider, WeightSlider} {
		for k := range MaxClients {
			events = append(events, Event{Widget: w, Client: k, Value: nums[2+i*MaxClients+k]})
		}
	}
	for _, ev := range events {
		if m.Controls, err = m.Controls.Apply(ev, choices); err != nil {
			return Message{}, err
		}
	}
	return m, nil
}

// Encode returns the body of a message for c without its kind and sequence number, as
// ParseMessage reads it: the clients and rule selector indices, then the slider positions. It is
// also the data-controls attribute of the live table, so that a check can compare what the table
// shows with the page's controls. It fails when c.Rule is not one of choices.
func (c Controls) Encode(choices []aggregate.Rule) (string, error) {
	rule := -1
	for i, r := range choices {
		if r == c.Rule {
			rule = i
		}
	}
	if rule < 0 {
		return "", fmt.Errorf("explore: rule %q is not one of the selector's choices", c.Rule)
	}
	parts := []string{strconv.Itoa(c.Clients - MinClients), strconv.Itoa(rule)}
	for _, a := range [][MaxClients]int{c.Mean, c.Var, c.Weight} {
		for _, p := range a {
			parts = append(parts, strconv.Itoa(p))
		}
	}
	return strings.Join(parts, ","), nil
}

// Labels returns the value of every position of the scale as the explorer's table prints it (4
// significant digits), indexed by position - Min: the page shows them beside each slider.
func (s Scale) Labels() []string {
	out := make([]string, 0, s.Max-s.Min+1)
	for p := s.Min; p <= s.Max; p++ {
		v, _ := s.Value(p)
		out = append(out, num(v))
	}
	return out
}
