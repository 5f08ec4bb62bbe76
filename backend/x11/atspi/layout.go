package atspi

import (
	"context"
	"fmt"
	"image"
	"slices"
	"strings"
	"time"
)

// Layout returns where the application of process pid says, now, that
// the nodes lie which move when content at point at scrolls: the extents
// and states of the children of every node its last snapshot placed
// under at (the rows of a scrolled list, the page of a document), else
// of the sentinels its mirror watches (mirror.go), read in one pipelined
// batch. Two layouts differ when something there moved in its tree. It
// returns "" when the Client keeps no mirror of such an application.
//
// A browser reports no scroll, and updates the extents of its tree some
// time after its pixels (Chromium sends a page's new locations from its
// renderer on a timer of its own): the X11 backend compares the layout
// before and after a scroll to know when the tree shows it.
func (c *Client) Layout(ctx context.Context, pid int, at image.Point) (string, error) {
	c.mu.Lock()
	apps := make([]*app, 0, len(c.apps))
	for _, a := range c.apps {
		apps = append(apps, a)
	}
	c.mu.Unlock()
	for _, a := range apps {
		if pid <= 0 || c.pidOf(ctx, a) != pid {
			continue
		}
		deadline := time.Now().Add(c.appTimeout(a))
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		var out string
		err := c.withApp(ctx, a, func(conn *wireConn, dest string) error {
			last := a.memo.last // walks replace it holding the app, as we do
			if last == nil {
				return nil
			}
			placed := func(r *rec) bool {
				return r.ifs&hasComponent != 0 && r.bboxKnown && !r.bbox.Empty() && r.states.has(stateShowing)
			}
			var paths []string
			for _, r := range last {
				if r.depth > 1 && placed(r) && at.In(r.bbox) {
					paths = append(paths, r.kids...)
				}
			}
			if len(paths) == 0 {
				for r := range sentinelsOf(last, placed) {
					paths = append(paths, r.path)
				}
			}
			slices.Sort(paths)
			paths = slices.Compact(paths)
			boxes := make([]image.Rectangle, len(paths))
			states := make([]stateSet, len(paths))
			p := c.pipeline(ctx, a, conn, deadline)
			var sent time.Time
			for i, path := range paths {
				p.call(call(dest, path, ifAccessible, "GetState"), func(m *message, err error) {
					if i == 0 && err == nil {
						// The first answer is one round trip through the
						// application's main loop: its lag, now.
						a.memo.noteLag(time.Since(sent))
					}
					if err == nil {
						if d, err := expect(m, "au"); err == nil {
							states[i] = readStates(d)
						}
					}
				})
				p.call(callUint(dest, path, ifComponent, "GetExtents", coordTypeScreen), func(m *message, err error) {
					if err != nil {
						return // gone: its empty box is a change too
					}
					if d, err := expect(m, "(iiii)"); err == nil {
						boxes[i], _ = readExtents(d)
					}
				})
			}
			sent = time.Now()
			if err := p.run(); err != nil {
				return err
			}
			var b strings.Builder
			for i, path := range paths {
				fmt.Fprintf(&b, "%s %v %v\n", path, boxes[i], states[i])
			}
			out = b.String()
			return nil
		})
		return out, err
	}
	return "", nil
}

// Patience returns d, a wait for the application of process pid to catch
// up with no event to say so, lengthened by its lag (its main loop's answer
// time when walks and layouts last measured it): d itself on an idle
// machine, or for an application the Client has not walked.
func (c *Client) Patience(pid int, d time.Duration) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range c.apps {
		a.mu.Lock()
		same := a.pid == pid
		a.mu.Unlock()
		if same && pid > 0 {
			return a.memo.patience(d)
		}
	}
	return d
}
