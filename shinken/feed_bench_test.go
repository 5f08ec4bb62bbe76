package shinken_test

import (
	"sync"
	"testing"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/shinkentest"
)

// BenchmarkFeed is one key action's round trip (send, inject, settle, ack)
// without a feed, with a subscriber that keeps up (reading every event, or
// only the actions), and with one that never reads: the stalled subscriber
// must cost the action nothing.
func BenchmarkFeed(b *testing.B) {
	for _, mode := range []string{"none", "drained", "drained-actions", "stalled"} {
		b.Run(mode, func(b *testing.B) {
			var feed *shinken.Feed
			var wg sync.WaitGroup
			if mode != "none" {
				feed = shinken.NewFeed()
				var kinds []shinken.EventKind
				if mode == "drained-actions" {
					kinds = []shinken.EventKind{shinken.EventAction}
				}
				sub := feed.Subscribe(16, kinds...)
				defer func() { sub.Close(); wg.Wait() }()
				if mode != "stalled" {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range sub.Events() {
						}
					}()
				}
			}
			c := shinkentest.Serve(b, headless.New(nil), &shinken.RuntimeOptions{Feed: feed})
			ctx := b.Context()
			b.ResetTimer()
			for b.Loop() {
				if err := c.Key(ctx, "a"); err != nil {
					b.Fatal(err)
				}
			}
			if feed != nil {
				b.ReportMetric(float64(feed.Lost())/float64(b.N), "lost/op")
			}
		})
	}
}
