package shinken

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"shinken.dev/go/shinken/aci"
)

// A Feed fans a Runtime's events out to subscribers (a person's page, a
// recording), with whatever the program itself publishes (its plugins'
// decisions). Each subscription has a bounded buffer, and an event that
// finds it full is dropped for that subscriber and counted
// ([Subscription.Lost]): a stalled reader loses events, it never delays an
// action. Make one with [NewFeed]; it is safe for concurrent use, and may
// serve several Runtimes.
//
// A Runtime publishes an action's events as it answers it, just after the
// answer is sent (as it tells its [Recorder]): a client that holds an ack
// or a result may find the action's event not yet in the feed. Whoever
// reads the feed after an answer waits for the event with the answer's
// CallID; it comes without a further action.
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

// Close ends the subscription and closes its channel, whose buffered
// events can still be read. It waits for a [Feed.Publish] in progress:
// once it has returned, no event is offered to the subscription and Lost
// is final. It is safe to call more than once.
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
// it to every subscriber. It never waits for a reader: a subscriber whose
// buffer is full loses the event, counted. Events are numbered in the
// order they are offered, so each subscriber sees Seq rise.
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
