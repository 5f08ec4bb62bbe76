package settled

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// unsettled hides the backend's Settler: a runtime serving it acks as soon
// as the input is injected, as runtimes did before settling, which is what
// an agent that waits by itself works against.
type unsettled struct {
	shinken.Capturer
	shinken.Injector
	shinken.A11y
	shinken.PointerReporter
}

// naiveClient serves r's desktop through a second runtime that does not
// settle, and returns a client on it.
func (r *rig) naiveClient() *client.Client {
	r.t.Helper()
	return schematest.Serve(r.t, unsettled{r.desk, r.desk, r.desk, r.desk}, &shinken.RuntimeOptions{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// naiveWait is what an agent without settled actions does: take
// screenshots until two in a row match. It returns the last one.
func naiveWait(ctx context.Context, c *client.Client) (*client.Shot, error) {
	prev, err := c.Screenshot(ctx, nil)
	if err != nil {
		return nil, err
	}
	for {
		s, err := c.Screenshot(ctx, nil)
		if err != nil {
			return nil, err
		}
		if s.Hash == prev.Hash {
			return s, nil
		}
		prev = s
	}
}

// stillScreen returns a screenshot once two taken a quarter of a second
// apart match: the screen has caught up with the tree (setup between
// measured turns, never between an action and its check).
func stillScreen(r *rig) (*client.Shot, error) {
	prev, err := r.c.Screenshot(r.ctx, nil)
	if err != nil {
		return nil, err
	}
	for {
		time.Sleep(250 * time.Millisecond) // setup between measured turns
		s, err := r.c.Screenshot(r.ctx, nil)
		if err != nil {
			return nil, err
		}
		if s.Hash == prev.Hash {
			return s, nil
		}
		prev = s
	}
}

// fixedSleep is the best-known demo's wait before each screenshot.
const fixedSleep = 2 * time.Second

// BenchmarkSettle measures, per scenario and side by side in one run, what
// knowing that an action's effects are visible costs: the settle (the
// runtime's ack waits for it) against a naive loop that screenshots until
// two frames match, and against a fixed 2 s sleep, whose cost is its
// length. Each iteration acts once each way and checks, with the very
// next screenshot, that the action shows (stale otherwise).
func BenchmarkSettle(b *testing.B) {
	fixture := func(b *testing.B) *rig {
		r := newRig(b, false)
		python := atspitest.Python(b, "gi")
		_, file, _, _ := runtime.Caller(0)
		r.sess.Launch(b, python, filepath.Join(filepath.Dir(file), "..", "atspi", "testdata", "fixture.py"), "settle-bench")
		return r
	}
	b.Run("gtk-button", func(b *testing.B) {
		r := fixture(b)
		_, button := r.waitElement("push button", "Press me")
		clicks := 0
		benchScenario(b, r, func(c *client.Client) error {
			clicks++
			return c.Click(r.ctx, aci.Px(button.BBox[0]+button.BBox[2]/2, button.BBox[1]+button.BBox[3]/2))
		}, func(o *aci.Observation) bool {
			return find(o, "label", strconv.Itoa(clicks)) != nil
		})
	})
	b.Run("gtk-keypress", func(b *testing.B) {
		r := fixture(b)
		_, entry := r.waitElement("text", "")
		r.clickAt(entry)
		n, text := 0, ""
		benchScenario(b, r, func(c *client.Client) error {
			n++
			if n%10 == 0 {
				// Keep the text inside the field: once it scrolls, a
				// key can leave the same pixels.
				if err := c.Key(r.ctx, "ctrl+a BackSpace"); err != nil {
					return err
				}
				text = ""
			}
			k := string(rune('a' + n%26))
			text += k
			return c.Key(r.ctx, k)
		}, func(o *aci.Observation) bool {
			e := find(o, "text", "")
			return e != nil && e.Value == text
		})
	})
	for _, version := range []string{"5", "6"} {
		b.Run("qt"+version+"-checkbox", func(b *testing.B) {
			r := qtForm(b, version)
			_, box := r.waitElement("check box", "Subscribe")
			checked := has(box.States, "checked")
			benchScenario(b, r, func(c *client.Client) error {
				checked = !checked
				return c.Click(r.ctx, aci.Px(box.BBox[0]+box.BBox[2]/2, box.BBox[1]+box.BBox[3]/2))
			}, func(o *aci.Observation) bool {
				e := find(o, "check box", "Subscribe")
				return e != nil && has(e.States, "checked") == checked
			})
		})
	}
	browsers := []struct {
		name string
		open func(testing.TB) *rig
	}{{"chromium", chromium}, {"firefox", firefox}}
	for _, br := range browsers {
		b.Run(br.name+"-checkbox", func(b *testing.B) {
			r := br.open(b)
			_, box := r.waitElement("check box", "Accept the terms")
			checked := has(box.States, "checked")
			benchScenario(b, r, func(c *client.Client) error {
				checked = !checked
				return c.Click(r.ctx, aci.Px(box.BBox[0]+box.BBox[2]/2, box.BBox[1]+box.BBox[3]/2))
			}, func(o *aci.Observation) bool {
				e := find(o, "check box", "Accept the terms")
				return e != nil && has(e.States, "checked") == checked
			})
		})
		b.Run(br.name+"-link", func(b *testing.B) {
			r := br.open(b)
			// Setup: the two links' places, from a trip to page B and back.
			_, toB := r.waitElement("link", "Go to page B")
			r.clickAt(toB)
			_, toA := r.waitElement("link", "Back to page A")
			r.clickAt(toA)
			r.waitElement("link", "Go to page B")
			onB := false
			benchScenario(b, r, func(c *client.Client) error {
				link := toB
				if onB {
					link = toA
				}
				onB = !onB
				return c.Click(r.ctx, aci.Px(link.BBox[0]+link.BBox[2]/2, link.BBox[1]+link.BBox[3]/2))
			}, func(o *aci.Observation) bool {
				heading := "Page A"
				if onB {
					heading = "Page B"
				}
				return find(o, "heading", heading) != nil
			})
		})
	}
}

// benchScenario runs act through the settling runtime and through the
// naive one in turn. shows reports whether an observation shows every
// action so far: after the naive turn it is polled (setup, untimed) so
// that each settled turn starts from a screen that shows the past.
func benchScenario(b *testing.B, r *rig, act func(c *client.Client) error, shows func(*aci.Observation) bool) {
	naive := r.naiveClient()
	var settled, looped []time.Duration
	staleSettled, staleTree, staleNaive := 0, 0, 0
	last, err := naiveWait(r.ctx, r.c)
	if err != nil {
		b.Fatal(err)
	}
	r.takeSettles()
	b.ResetTimer()
	for range b.N {
		// Settled: the ack comes once the UI is quiet; its report says
		// how long that took.
		if err := act(r.c); err != nil {
			b.Fatal(err)
		}
		s := r.shot()
		ss := r.takeSettles()
		if len(ss) == 0 {
			b.Fatal("no settle reported")
		}
		for _, x := range ss {
			settled = append(settled, took(x))
		}
		if s.Hash == last.Hash {
			staleSettled++
		} else if !shows(r.observe()) {
			staleTree++
		}
		r.takeSettles()
		last = s

		// Naive: acked at once, then screenshots until two match.
		t0 := time.Now()
		if err := act(naive); err != nil {
			b.Fatal(err)
		}
		s, err := naiveWait(r.ctx, naive)
		if err != nil {
			b.Fatal(err)
		}
		looped = append(looped, time.Since(t0))
		if s.Hash == last.Hash {
			staleNaive++
		}
		// The naive wait may have ended before the UI did: wait, untimed,
		// until the tree shows the action and the screen is still, so the
		// next settled action is judged against what the screen shows. A
		// browser's tree can show a change before its pixels do, so still
		// means the same pixels a while apart, not two frames in a row.
		b.StopTimer()
		for !shows(r.observe()) {
			time.Sleep(10 * time.Millisecond) // setup between measured turns
		}
		if last, err = stillScreen(r); err != nil {
			b.Fatal(err)
		}
		r.takeSettles()
		b.StartTimer()
	}
	b.StopTimer()
	p := func(d []time.Duration, q int) time.Duration {
		slices.Sort(d)
		return d[min(len(d)-1, len(d)*q/100)]
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	sp50, sp95, np50, np95 := p(settled, 50), p(settled, 95), p(looped, 50), p(looped, 95)
	b.ReportMetric(ms(sp50), "settle-p50-ms")
	b.ReportMetric(ms(sp95), "settle-p95-ms")
	b.ReportMetric(ms(np50), "naive-p50-ms")
	b.ReportMetric(ms(np95), "naive-p95-ms")
	b.ReportMetric(float64(np50)/float64(sp50), "naive/settle-p50")
	b.ReportMetric(float64(fixedSleep)/float64(sp50), "sleep2s/settle-p50")
	b.ReportMetric(float64(staleSettled), "stale-settled")
	b.ReportMetric(float64(staleTree), "stale-settled-tree")
	b.ReportMetric(float64(staleNaive), "stale-naive")
	b.Logf("N=%d settled p50 %v p95 %v stale %d (screenshot) %d (tree); naive p50 %v p95 %v stale %d (screenshot)",
		b.N, sp50, sp95, staleSettled, staleTree, np50, np95, staleNaive)
}
