package shinken

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"shinken.dev/go/shinken/aci"
)

// A Feed fans a Runtime's events out to subscribers (a page, a recording)
// with what the program publishes (its plugins' decisions). An event that
// finds a subscription's buffer full is dropped for it, counted
// ([Subscription.Lost]): a stalled reader never delays an action. An
// action's events come just after its answer is sent: who reads after an
// answer waits for the event with its CallID. Make one with [NewFeed]; it
// is safe for concurrent use, and may serve several Runtimes.
type Feed struct {
	lost atomic.Uint64

	// mu is held to publish, so that events are numbered and offered in
	// one order (two publishers under a shared lock could offer Seq 6
	// before 5), and to change subs.
	mu   sync.Mutex
	seq  uint64
	subs map[*Subscription]struct{}
}

// NewFeed returns a Feed with no subscribers.
func NewFeed() *Feed { return &Feed{subs: map[*Subscription]struct{}{}} }

// defaultFeedBuffer is the buffer of a subscription made with a buffer of
// zero or less.
const defaultFeedBuffer = 256

// A Subscription receives a Feed's events from the moment it was made.
type Subscription struct {
	f     *Feed
	c     chan Event
	kinds []EventKind // nil: every kind
	lost  atomic.Uint64
	once  sync.Once
}

// Subscribe returns a subscription to the events of the given kinds (none:
// every kind), buffering up to buffer of them (default 256). Read its [Subscription.Events]; close it when done.
func (f *Feed) Subscribe(buffer int, kinds ...EventKind) *Subscription {
	if buffer <= 0 {
		buffer = defaultFeedBuffer
	}
	s := &Subscription{f: f, c: make(chan Event, buffer), kinds: slices.Clone(kinds)}
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

// Close ends the subscription once a Publish under way is done (Lost is
// then final), and closes its channel. It is safe to call more than once.
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
// it to every subscriber, each seeing Seq rise. It never waits for a
// reader: a subscriber whose buffer is full loses the event, counted.
func (f *Feed) Publish(e Event) {
	if f == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	e.Seq = f.seq
	for s := range f.subs {
		if s.kinds != nil && !slices.Contains(s.kinds, e.Kind) {
			continue
		}
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
