package shinken

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"shinken.dev/go/shinken/aci"
)

// The session feed.
//
// A [Feed] publishes what happens in every session of a Runtime: each
// action with its outcome, ack and settle times, each observation's
// revision and size, each exec run, each takeover, and whatever the program
// itself reports (its plugins' decisions, say). A program sets
// [RuntimeOptions.Feed] and subscribes; a person's page, a recorder or a
// metrics exporter each hold a [Subscription].
//
// Publishing never waits for a subscriber: each subscription has a bounded
// buffer, and an event that finds it full is dropped for that subscriber
// and counted ([Subscription.Lost]). A stalled reader loses events; it
// never delays an action.

// FeedKind says what an [Event] of a [Feed] reports.
type FeedKind string

// Feed event kinds.
const (
	// FeedAction: an action was answered (acked, or refused).
	FeedAction FeedKind = "action"
	// FeedObservation: a structured observation was sent.
	FeedObservation FeedKind = "observation"
	// FeedExec: a command run by exec ended.
	FeedExec FeedKind = "exec"
	// FeedTakeover: a person took the input over, or handed it back.
	FeedTakeover FeedKind = "takeover"
	// FeedDecision: the program reports a decision (a plugin allowed or
	// refused something); the Runtime publishes none itself.
	FeedDecision FeedKind = "decision"
)

// An Event is one thing that happened in a session. Fields that do not
// apply to its Kind are zero. Its JSON form is what a page receives.
type Event struct {
	// Seq numbers the events of one Feed from 1, in publishing order.
	Seq  uint64    `json:"seq"`
	Kind FeedKind  `json:"kind"`
	Time time.Time `json:"time"`
	// Session names the connection ("s1", "s2"...); Client is the name
	// its hello gave.
	Session string `json:"session,omitempty"`
	Client  string `json:"client,omitempty"`
	CallID  string `json:"call_id,omitempty"`
	Verb    string `json:"verb,omitempty"`
	// Target describes the action's target: "e12", "px 640,400",
	// "norm 0.5,0.5"; empty when it has none.
	Target string `json:"target,omitempty"`
	// OK and Error are the outcome of an action or an exec; Error holds
	// the wire error string.
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// AckMS is the time from the action's arrival to its answer, in
	// milliseconds; it includes SettleMS.
	AckMS float64 `json:"ack_ms,omitempty"`
	// SettleMS and Settle say how long the action's settle took and how it
	// ended (see [SettleOutcome]), for the mutating verbs that settle.
	SettleMS float64       `json:"settle_ms,omitempty"`
	Settle   SettleOutcome `json:"settle,omitempty"`
	// Revision, Nodes and Bytes describe an observation: its tree
	// revision, node count and tree_text size in bytes. TreeText is the
	// text itself; whoever forwards events to a page may drop it.
	Revision int    `json:"revision,omitempty"`
	Nodes    int    `json:"nodes,omitempty"`
	Bytes    int    `json:"bytes,omitempty"`
	TreeText string `json:"tree_text,omitempty"`
	// Argv (or Shell) and ExitCode describe an exec run; ExitCode is nil
	// when the process did not exit by itself (killed, timed out, never
	// started).
	Argv     []string `json:"argv,omitempty"`
	Shell    string   `json:"shell,omitempty"`
	ExitCode *int     `json:"exit_code,omitempty"`
	// Held and By describe a takeover: whether input is now held by a
	// person, and who.
	Held bool   `json:"held,omitempty"`
	By   string `json:"by,omitempty"`
	// Detail is free text: a decision's rule, a plugin's reason.
	Detail string `json:"detail,omitempty"`
}

// A Feed fans events out to subscribers without ever blocking the
// publisher. The zero value is not usable; call [NewFeed]. A Feed is safe
// for concurrent use, and may serve several Runtimes.
type Feed struct {
	seq  atomic.Uint64
	lost atomic.Uint64

	mu   sync.RWMutex
	subs map[*Subscription]struct{}
}

// NewFeed returns a Feed with no subscribers.
func NewFeed() *Feed { return &Feed{subs: map[*Subscription]struct{}{}} }

// DefaultFeedBuffer is the buffer of a subscription made with a buffer of
// zero or less.
const DefaultFeedBuffer = 256

// A Subscription receives a Feed's events from the moment it was made.
type Subscription struct {
	f    *Feed
	c    chan Event
	lost atomic.Uint64
	once sync.Once
}

// Subscribe returns a subscription buffering up to buffer events (default
// [DefaultFeedBuffer]). Read its [Subscription.Events]; close it when done.
func (f *Feed) Subscribe(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultFeedBuffer
	}
	s := &Subscription{f: f, c: make(chan Event, buffer)}
	f.mu.Lock()
	f.subs[s] = struct{}{}
	f.mu.Unlock()
	return s
}

// Events is the channel of events. It is closed by [Subscription.Close].
func (s *Subscription) Events() <-chan Event { return s.c }

// Lost counts the events dropped for this subscriber because its buffer
// was full.
func (s *Subscription) Lost() uint64 { return s.lost.Load() }

// Close ends the subscription and closes its channel. It is safe to call
// more than once.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.f.mu.Lock()
		delete(s.f.subs, s)
		s.f.mu.Unlock()
		close(s.c)
	})
}

// Lost counts the events dropped, all subscribers together.
func (f *Feed) Lost() uint64 { return f.lost.Load() }

// Publish numbers e, stamps it with the time when it has none, and offers
// it to every subscriber. It never waits: a subscriber whose buffer is full
// loses the event, counted.
func (f *Feed) Publish(e Event) {
	if f == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	// Numbered under the read lock, so each subscriber sees Seq rise.
	e.Seq = f.seq.Add(1)
	for s := range f.subs {
		select {
		case s.c <- e:
		default:
			s.lost.Add(1)
			f.lost.Add(1)
		}
	}
}

// describeTarget renders a target for [Event.Target].
func describeTarget(t *aci.Target) string {
	if t == nil {
		return ""
	}
	switch t.Kind {
	case aci.TargetElementRef:
		return t.Ref
	case aci.TargetPointPx, aci.TargetPointNorm:
		if t.X != nil && t.Y != nil {
			kind := "px"
			if t.Kind == aci.TargetPointNorm {
				kind = "norm"
			}
			return fmt.Sprintf("%s %g,%g", kind, *t.X, *t.Y)
		}
	}
	return string(t.Kind)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// publish sends e to the runtime's feed, if it has one, stamped with the
// session.
func (c *conn) publish(e Event) {
	f := c.rt.opts.Feed
	if f == nil {
		return
	}
	e.Session, e.Client = c.id, c.client
	f.Publish(e)
}

// feedAction publishes the outcome of an action.
// answered is when the ack went out; zero means now.
func (c *conn) feedAction(m *aci.ActionMsg, start, answered time.Time, err error) {
	if c.rt.opts.Feed == nil {
		return
	}
	a := &m.Action
	e := Event{Kind: FeedAction, CallID: m.CallID, Verb: string(a.Verb), Target: describeTarget(a.Target),
		OK: err == nil}
	if answered.IsZero() {
		answered = time.Now()
	}
	e.AckMS = ms(answered.Sub(start))
	if err != nil {
		e.Error = aci.WireError(err)
	}
	if a.Verb.Mutating() && c.settleRep.Outcome != "" {
		e.SettleMS, e.Settle = ms(c.settleRep.Took), c.settleRep.Outcome
	}
	c.publish(e)
}

// feedObservation publishes a structured observation.
func (c *conn) feedObservation(obs *aci.Observation) {
	if c.rt.opts.Feed == nil {
		return
	}
	e := Event{Kind: FeedObservation, CallID: obs.CallID, Verb: string(aci.VerbObserve), OK: true,
		Revision: obs.Revision, Bytes: len(obs.TreeText), TreeText: obs.TreeText}
	if obs.NodeCount != nil {
		e.Nodes = *obs.NodeCount
	}
	c.publish(e)
}

// feedExec publishes the end of an exec run.
func (c *conn) feedExec(callID string, a *aci.Action, start time.Time, code *int, err error) {
	if c.rt.opts.Feed == nil {
		return
	}
	e := Event{Kind: FeedExec, CallID: callID, Verb: string(aci.VerbExec), Argv: a.Argv,
		ExitCode: code, OK: err == nil && code != nil && *code == 0, AckMS: ms(time.Since(start))}
	if a.Shell != nil {
		e.Shell = *a.Shell
	}
	if err != nil {
		e.Error = aci.WireError(err)
	}
	c.publish(e)
}
