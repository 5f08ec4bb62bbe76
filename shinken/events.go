package shinken

import (
	"errors"
	"time"

	"shinken.dev/go/shinken/aci"
)

// The Runtime's events.
//
// A Runtime reports what it does as [Event] values, one family for every
// reader: a [Recorder] set in [RuntimeOptions.Recorder] is called with each
// one, synchronously and losing none (package shinken/metrics keeps
// Prometheus metrics that way), and a [Feed] set in [RuntimeOptions.Feed]
// fans them out to subscribers that may fall behind (a person's page, a
// recording). Both see the same events.

// EventKind says what an [Event] reports; the Event's fields say which
// kinds set them. It is the event's "kind" in JSON.
type EventKind string

// The kinds of Event.
const (
	EventSessionOpened   EventKind = "session_opened"   // a client's hello was accepted
	EventSessionClosed   EventKind = "session_closed"   // a session that was opened has ended
	EventHelloRefused    EventKind = "hello_refused"    // a connection did not become a session
	EventAction          EventKind = "action"           // an action was answered (acked, or refused)
	EventSettle          EventKind = "settle"           // the runtime waited for the UI to be quiet
	EventScreenshot      EventKind = "screenshot"       // a screenshot was encoded and sent
	EventObservation     EventKind = "observation"      // a structured observation was sent
	EventExec            EventKind = "exec"             // a command run by exec ended
	EventScreencastFrame EventKind = "screencast_frame" // a screencast frame was queued
	EventTakeover        EventKind = "takeover"         // a person took the input over, or handed it back
	// EventDecision: the program reports a decision (a plugin allowed or
	// refused something) with [Feed.Publish]; the Runtime reports none.
	EventDecision EventKind = "decision"
)

// An Event is one thing a Runtime did. Fields that do not apply to its Kind
// are zero. Its JSON form is what a page receives and a recording keeps.
type Event struct {
	Seq  uint64    `json:"seq"` // from 1, in a Feed's publishing order; 0 in a Recorder
	Kind EventKind `json:"kind"`
	Time time.Time `json:"time"`
	// Session names the event's connection ("s1"...), Client the name its
	// hello gave; empty for hello_refused, takeover, decision and an input
	// action's settle.
	Session string `json:"session,omitempty"`
	Client  string `json:"client,omitempty"`
	// CallID and Verb: of an action, an input action's settle, an
	// observation, an exec (and the CallID of a screenshot), a decision.
	CallID string   `json:"call_id,omitempty"`
	Verb   aci.Verb `json:"verb,omitempty"`
	Target string   `json:"target,omitempty"` // an action's: "e12", "px 640,400", "norm 0.5,0.5"
	OK     bool     `json:"ok"`               // action, exec, decision
	Error  string   `json:"error,omitempty"`  // the wire error string
	// Outcome in a word: action "ok", the wire error code, or
	// [OutcomeClientClosed]; exec "exited", "signaled", "timed_out" or
	// "spawn_failed"; hello_refused "unauthorized", "bad_hello", "timeout"
	// or "draining"; screenshot its format; screencast_frame "key"/"delta".
	Outcome string `json:"outcome,omitempty"`
	// DurationMS, in milliseconds: an action from its arrival to its answer
	// (a streamed exec's to its exit), a settle's wait, a screenshot's
	// encoding, an observation's capture (settle included), an exec's run.
	DurationMS float64       `json:"duration_ms,omitempty"`
	SettleMS   float64       `json:"settle_ms,omitempty"` // an input action's settle, part of its DurationMS
	Settle     SettleOutcome `json:"settle,omitempty"`    // how a settle, or an action's, ended
	Changes    int           `json:"changes,omitempty"`   // a settle's changes that held it (see SettleReport)
	Ambient    int           `json:"ambient,omitempty"`   // and those it set aside as periodic
	// An observation's revision, node count and tree_text (which whoever
	// forwards events to a page may drop); Bytes is its size, or a
	// screenshot's or a frame's.
	Revision int      `json:"revision,omitempty"`
	Nodes    int      `json:"nodes,omitempty"`
	TreeText string   `json:"tree_text,omitempty"`
	Bytes    int      `json:"bytes,omitempty"`
	Argv     []string `json:"argv,omitempty"` // an exec's command (or its Shell line)
	Shell    string   `json:"shell,omitempty"`
	ExitCode *int     `json:"exit_code,omitempty"` // nil when it did not exit by itself
	Held     bool     `json:"held,omitempty"`      // a takeover: the input is now held by a person
	By       string   `json:"by,omitempty"`        // who took it over, or handed it back
	Detail   string   `json:"detail,omitempty"`    // free text: a decision's rule, a plugin's reason
}

// A Recorder is told every [Event] of a Runtime as it happens, losing none,
// so a program can keep metrics (package shinken/metrics) without the
// Runtime knowing any metrics library. Record is called synchronously from
// the runtime's goroutines, many at once: it must be safe for concurrent
// use, quick, and must not block or call back into the Runtime. An action
// is recorded just after its answer is sent (a client holding an answer may
// read metrics that do not count it yet); once Runtime.Close has returned,
// every event of its sessions has been recorded.
type Recorder interface {
	Record(e Event)
}

// RecorderFunc adapts a function to Recorder.
type RecorderFunc func(e Event)

// Record calls f.
func (f RecorderFunc) Record(e Event) { f(e) }

// emitting reports whether anyone reads the runtime's events.
func (rt *Runtime) emitting() bool { return rt.opts.Recorder != nil || rt.opts.Feed != nil }

// emit stamps e with the time and hands it to the Recorder and the Feed,
// those that are set.
func (rt *Runtime) emit(e Event) {
	if !rt.emitting() {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	if rt.opts.Recorder != nil {
		rt.opts.Recorder.Record(e)
	}
	rt.opts.Feed.Publish(e)
}

// emit is rt.emit, stamped with the session.
func (c *conn) emit(e Event) {
	if !c.rt.emitting() {
		return
	}
	e.Session, e.Client = c.id, c.client
	c.rt.emit(e)
}

// OutcomeClientClosed is the Outcome of an [EventAction] whose client left
// before its answer (never the backend's fault; the runtime's own closing
// is "closed").
const OutcomeClientClosed = "client_closed"

// emitAction reports the answer to action m, which arrived at start and
// was answered at answered (zero: now).
func (c *conn) emitAction(m *aci.ActionMsg, start, answered time.Time, err error) {
	if !c.rt.emitting() {
		return
	}
	a := &m.Action
	if answered.IsZero() {
		answered = time.Now()
	}
	e := Event{Kind: EventAction, CallID: m.CallID, Verb: a.Verb, Target: describeTarget(a.Target),
		OK: err == nil, Outcome: "ok", DurationMS: ms(answered.Sub(start))}
	if err != nil {
		e.Error = aci.WireError(err)
		switch cause := c.closedCause(err); {
		case errors.Is(cause, errClientClosed):
			e.Outcome = OutcomeClientClosed
		default:
			e.Outcome = string(errorCode(cause))
		}
	}
	if a.Verb.Mutating() && c.settleRep.Outcome != "" {
		e.SettleMS, e.Settle = ms(c.settleRep.Took), c.settleRep.Outcome
	}
	c.emit(e)
}

// emitObservation reports a structured observation sent.
func (c *conn) emitObservation(obs *aci.Observation) {
	if !c.rt.emitting() {
		return
	}
	e := Event{Kind: EventObservation, CallID: obs.CallID, Verb: aci.VerbObserve, OK: true,
		Revision: obs.Revision, Bytes: len(obs.TreeText), TreeText: obs.TreeText}
	if obs.NodeCount != nil {
		e.Nodes = *obs.NodeCount
	}
	if obs.CaptureMS != nil {
		e.DurationMS = *obs.CaptureMS
	}
	c.emit(e)
}

// emitExec reports the end of an exec run that started at start, ended as
// outcome says (see EventExec) with code (nil: it did not exit by itself).
func (c *conn) emitExec(callID string, a *aci.Action, start time.Time, outcome string, code *int, err error) {
	if !c.rt.emitting() {
		return
	}
	e := Event{Kind: EventExec, CallID: callID, Verb: aci.VerbExec, Argv: a.Argv, ExitCode: code,
		OK: err == nil && code != nil && *code == 0, Outcome: outcome, DurationMS: ms(time.Since(start))}
	if a.Shell != nil {
		e.Shell = *a.Shell
	}
	if err != nil {
		e.Error = aci.WireError(err)
	}
	c.emit(e)
}

// errorCode is the wire code err travels with.
func errorCode(err error) aci.Code {
	msg := aci.WireError(err)
	for i := 0; i < len(msg); i++ {
		if msg[i] == ':' {
			return aci.Code(msg[:i])
		}
	}
	return aci.Code(msg)
}

// execOutcome names how a command ended, for EventExec.
func execOutcome(st ExitStatus) string {
	switch {
	case st.TimedOut:
		return "timed_out"
	case st.Signal != 0:
		return "signaled"
	}
	return "exited"
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
