package shinken

import (
	"errors"
	"time"

	"shinken.dev/go/shinken/aci"
)

// A Recorder is told what a Runtime does, so a program can keep metrics of
// it (package shinken/metrics keeps Prometheus ones) without the Runtime
// knowing any metrics library. Set it in RuntimeOptions.Recorder.
//
// Record is called synchronously from the runtime's goroutines, many at
// once: it must be safe for concurrent use, quick, and must not block or
// call back into the Runtime. The RuntimeEvent is a value; Record may keep
// it.
//
// An action is recorded as its call ends, just after its answer is sent:
// a client holding an answer may read metrics that do not count that
// action yet. Once Runtime.Close has returned, every event of its
// sessions has been recorded.
type Recorder interface {
	Record(e RuntimeEvent)
}

// RecorderFunc adapts a function to Recorder.
type RecorderFunc func(e RuntimeEvent)

// Record calls f.
func (f RecorderFunc) Record(e RuntimeEvent) { f(e) }

// EventKind says what a RuntimeEvent reports, and so which of its fields
// are set.
type EventKind uint8

// The kinds of RuntimeEvent, with the fields each sets.
const (
	// EventSessionOpened: a client's hello was accepted.
	EventSessionOpened EventKind = iota + 1
	// EventSessionClosed: a session that was opened has ended.
	EventSessionClosed
	// EventHelloRefused: a connection did not become a session. Outcome
	// is why: "unauthorized", "bad_hello", "timeout" or "draining".
	EventHelloRefused
	// EventAction: an action was answered. Verb, Outcome ("ok", the
	// wire error code, or OutcomeClientClosed), Duration (from the start
	// of its handling to its reply; for a streamed exec, to its exit).
	EventAction
	// EventSettle: the runtime waited for the UI to be quiet: after an
	// input action, before its ack (Verb, Outcome the SettleOutcome), or
	// for an observation's settle_ms (no Verb). Duration is the wait.
	EventSettle
	// EventScreenshot: a screenshot was encoded and sent. Bytes is the
	// image's size, Duration the encoding time, Outcome the format.
	EventScreenshot
	// EventObserve: an accessibility snapshot was taken. Duration is the
	// capture time (settle included), Nodes the node count.
	EventObserve
	// EventExec: a command ran. Outcome is "exited", "signaled",
	// "timed_out" or "spawn_failed"; Duration its run time.
	EventExec
	// EventScreencastFrame: a screencast frame was queued. Bytes is the
	// message's size, Outcome "key" or "delta".
	EventScreencastFrame
)

// A RuntimeEvent is one thing a Runtime did; see EventKind for the fields
// each kind sets.
type RuntimeEvent struct {
	Kind     EventKind
	Verb     aci.Verb
	Outcome  string
	Duration time.Duration
	Bytes    int
	Nodes    int
}

// record hands e to the Recorder, if there is one.
func (rt *Runtime) record(e RuntimeEvent) {
	if rt.opts.Recorder != nil {
		rt.opts.Recorder.Record(e)
	}
}

// OutcomeClientClosed is the Outcome of an EventAction whose client left
// (closed the connection, or lost it) before the action was answered: the
// action failed because its session ended, not by the backend's fault. An
// action cut short by the runtime's own closing has the outcome "closed".
const OutcomeClientClosed = "client_closed"

// recordAction records the answer to an action that started at start.
func (rt *Runtime) recordAction(v aci.Verb, start time.Time, err error) {
	if rt.opts.Recorder == nil {
		return
	}
	outcome := "ok"
	switch {
	case errors.Is(err, errClientClosed):
		outcome = OutcomeClientClosed
	case err != nil:
		outcome = string(errorCode(err))
	}
	rt.record(RuntimeEvent{Kind: EventAction, Verb: v, Outcome: outcome, Duration: time.Since(start)})
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
