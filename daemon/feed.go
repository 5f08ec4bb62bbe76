package daemon

// Every use of the shinken event model (Feed, Event, Subscription) by the
// daemon is in this file, but for record.go's handing of a Subscription to
// record.Record.

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// timelineKinds are the feed events the page and a recording show: the
// session's steps and the trees it observed, not its sessions, settles,
// screenshots or frames.
var timelineKinds = []shinken.EventKind{shinken.EventAction, shinken.EventObservation, shinken.EventExec,
	shinken.EventTakeover, shinken.EventDecision}

// reportDecisions wraps an Authorizer so that each of its decisions is
// published in the feed, for the page's timeline and the recording.
func reportDecisions(a shinken.Authorizer, feed *shinken.Feed) shinken.Authorizer {
	return shinken.AuthorizerFunc(func(ctx context.Context, req shinken.AuthRequest) error {
		err := a.Authorize(ctx, req)
		e := shinken.Event{Kind: shinken.EventDecision, Verb: req.Verb, OK: err == nil, Detail: "allowed"}
		if err != nil {
			e.Detail = err.Error()
		}
		feed.Publish(e)
		return err
	})
}

// forwardEvents sends each event of sub to the page, without its tree
// text, and how many this page lost by reading too slowly, until ctx ends,
// sub closes or send fails.
func forwardEvents(ctx context.Context, sub *shinken.Subscription, send func(map[string]any) error) {
	for {
		select {
		case e, ok := <-sub.Events():
			if !ok {
				return
			}
			e.TreeText = ""
			if send(map[string]any{"type": "event", "event": e, "lost": sub.Lost()}) != nil {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// recordClient names the recorder's own observation in the feed.
const recordClient = "shinken-recording"

// recorded says which feed events a recording keeps: not the page's own
// screencast and observes, which are not the session's.
func recorded(e shinken.Event) bool { return e.Client != "shinken-page" }

// publishFinalTree observes the tree as the session left it and publishes
// it, for the recording's end; and, when the recording's subscription lost
// events, says so in the feed, and so in the file.
func publishFinalTree(s *served, feed *shinken.Feed, sub *shinken.Subscription, log *slog.Logger) {
	if n := sub.Lost(); n > 0 {
		feed.Publish(shinken.Event{Kind: shinken.EventObservation, Client: recordClient, OK: false,
			Error: fmt.Sprintf("internal: the recording lost %d events of the feed", n)})
	}
	_, _, _, d := s.state()
	if _, ok := d.Backend.(shinken.A11y); !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	obs, err := shinken.NewObserver(d.Backend).Observe(ctx, shinken.ObserveOptions{})
	if err != nil {
		log.Warn("recording: the final tree could not be observed", "err", err)
		return
	}
	e := shinken.Event{Kind: shinken.EventObservation, Client: recordClient, Verb: aci.VerbObserve, OK: true,
		Revision: obs.Revision, Bytes: len(obs.TreeText), TreeText: obs.TreeText}
	if obs.NodeCount != nil {
		e.Nodes = *obs.NodeCount
	}
	feed.Publish(e)
}
