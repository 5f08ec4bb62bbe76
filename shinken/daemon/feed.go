package daemon

// Every use of the shinken event model (Feed, Event) by the daemon, but
// the page's forwarding of events (inspect.go) and the recording
// (record.go), is in this file.

import (
	"context"

	"shinken.dev/go/shinken"
)

// reportDecisions wraps an Authorizer so that each of its decisions is
// published in the feed, for the page's timeline and the recording.
func reportDecisions(a shinken.Authorizer, feed *shinken.Feed) shinken.Authorizer {
	return shinken.AuthorizerFunc(func(ctx context.Context, req shinken.AuthRequest) error {
		err := a.Authorize(ctx, req)
		e := shinken.Event{Kind: shinken.FeedDecision, Verb: string(req.Verb), OK: err == nil, Detail: "allowed"}
		if err != nil {
			e.Detail = err.Error()
		}
		feed.Publish(e)
		return err
	})
}
