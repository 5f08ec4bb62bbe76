package atspi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// parallelApps bounds how many applications are read at once.
const parallelApps = 8

// Snapshot implements [shinken.A11y]. TreeActiveApp reads the application
// that owns the active window and lists the other applications' window
// titles in Tree.Others; TreeDesktop reads every application, in the
// registry's order, each under its own root. An application that hangs or
// dies during the walk is left out and the tree is marked truncated; the
// others are still returned. Only the accessibility bus itself failing is
// an error (wrapping [aci.ErrA11yUnavailable]).
func (c *Client) Snapshot(ctx context.Context, opts shinken.SnapshotOptions) (*shinken.Tree, error) {
	if c.closed() {
		return nil, errClientClosed
	}
	maxNodes, maxDepth := opts.MaxNodes, opts.MaxDepth
	if maxNodes <= 0 {
		maxNodes = c.opts.MaxNodes
	}
	if maxDepth <= 0 {
		maxDepth = c.opts.MaxDepth
	}
	apps, err := c.listApps(ctx)
	if err != nil {
		return nil, err
	}
	tree := &shinken.Tree{Source: aci.SourceATSPI}
	var cuts []string
	if opts.Scope == shinken.TreeDesktop {
		cuts = c.snapshotDesktop(ctx, tree, apps, maxNodes, maxDepth)
	} else {
		cuts = c.snapshotActive(ctx, tree, apps, maxNodes, maxDepth)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.closed() {
		return nil, errClientClosed
	}
	if len(cuts) > 0 {
		tree.Truncated = true
		var seen []string
		for _, c := range cuts {
			if !slices.Contains(seen, c) {
				seen = append(seen, c)
			}
		}
		tree.TruncatedWhy = strings.Join(seen, "; ")
	}
	return tree, nil
}

// snapshotDesktop walks every application into tree and returns the
// reasons it is incomplete.
func (c *Client) snapshotDesktop(ctx context.Context, tree *shinken.Tree, apps []*app, maxNodes, maxDepth int) []string {
	var windows []shinken.Window
	var windowsErr error
	if c.opts.Windows != nil {
		windows, windowsErr = c.opts.Windows(ctx)
	}
	results := make([]walkResult, len(apps))
	c.each(ctx, apps, func(i int, a *app) {
		if a.hung() {
			results[i].err = errSkippedHung
			return
		}
		results[i].t, results[i].err = c.walkApp(ctx, a, maxNodes, maxDepth, false)
	})
	var cuts []string
	for i, r := range results {
		switch {
		case r.err != nil:
			if why := skipReason(apps[i], r.err, c.opts); why != "" {
				cuts = append(cuts, why)
			}
		case r.t != nil: // nil when ctx ended before the app's turn
			cuts = append(cuts, addNodes(tree, r.t, maxNodes)...)
		}
	}
	if c.opts.Windows != nil && windowsErr == nil {
		c.markWindows(ctx, tree, windows, apps)
	}
	return cuts
}

// snapshotActive looks at every application's windows, walks the one with
// the active window into tree, lists the others' showing windows in
// tree.Others, and returns the reasons the tree is incomplete.
func (c *Client) snapshotActive(ctx context.Context, tree *shinken.Tree, apps []*app, maxNodes, maxDepth int) []string {
	// The window list is read from the display while the applications
	// are probed.
	var windows []shinken.Window
	var windowsErr error
	listed := make(chan struct{})
	if c.opts.Windows != nil {
		go func() {
			defer close(listed)
			windows, windowsErr = c.opts.Windows(ctx)
		}()
	} else {
		close(listed)
	}
	defer func() { <-listed }()
	probes := make([]probe, len(apps))
	c.each(ctx, apps, func(i int, a *app) { probes[i] = c.probeApp(ctx, a) })
	if ctx.Err() != nil {
		return nil
	}
	pick := c.choose(ctx, apps, probes)
	var cuts []string
	for i, p := range probes {
		if p.err != nil {
			if why := skipReason(apps[i], p.err, c.opts); why != "" {
				cuts = append(cuts, why)
			}
			continue
		}
		if i == pick {
			continue
		}
		for _, w := range p.windows {
			if w.title != "" && w.showing {
				tree.Others = append(tree.Others, w.title)
			}
		}
	}
	named := func() {
		<-listed
		if c.opts.Windows != nil && windowsErr == nil {
			c.nameWindows(ctx, tree, windows, apps, pick)
		}
	}
	marked := func() {
		if c.opts.Windows != nil && windowsErr == nil {
			c.markWindows(ctx, tree, windows, apps)
		}
	}
	if pick < 0 {
		named()
		return cuts
	}
	tree.Window = probes[pick].title()
	t, err := c.walkApp(ctx, apps[pick], maxNodes, maxDepth, probes[pick].pinged)
	if err != nil {
		named()
		if why := skipReason(apps[pick], err, c.opts); why != "" {
			cuts = append(cuts, why)
		}
		return cuts
	}
	if probes[pick].pinged {
		// The windows came from the mirror; the walk read them again.
		tree.Window = windowsOf(t).title()
	}
	named()
	tree.App = t.name
	cuts = append(cuts, addNodes(tree, t, maxNodes)...)
	marked()
	return cuts
}

// windowsOf returns the top-level windows of an application's tree.
func windowsOf(t *appTree) probe {
	var p probe
	for _, n := range t.nodes {
		if n.Depth == 1 {
			p.windows = append(p.windows, window{title: n.Name, active: slices.Contains(n.States, "active"), showing: slices.Contains(n.States, "showing")})
		}
	}
	return p
}

type walkResult struct {
	t   *appTree
	err error
}

// errSkippedHung stands for an application skipped because it timed out
// recently.
var errSkippedHung = errors.New("atspi: application skipped after a recent timeout")

// each runs fn for every app, parallelApps at a time, and waits.
func (c *Client) each(ctx context.Context, apps []*app, fn func(i int, a *app)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallelApps)
	for i, a := range apps {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fn(i, a)
		}()
	}
	wg.Wait()
}

// addNodes appends an application's nodes to tree within the node budget
// and returns the reasons its part was cut. A pre-order prefix is still a
// tree, so the budget simply cuts the tail.
func addNodes(tree *shinken.Tree, t *appTree, maxNodes int) []string {
	cuts := slices.Clone(t.cuts)
	room := maxNodes - len(tree.Nodes)
	nodes := t.nodes
	if len(nodes) > room {
		nodes = nodes[:max(room, 0)]
		cuts = append(cuts, fmt.Sprintf("node budget of %d reached", maxNodes))
	}
	base := len(tree.Nodes)
	for _, n := range nodes {
		if n.Parent >= 0 {
			n.Parent += base
		}
		tree.Nodes = append(tree.Nodes, n)
	}
	return cuts
}

// skipReason says why an application is missing from a snapshot, or ""
// when it simply quit before it could be read.
func skipReason(a *app, err error, o Options) string {
	var ce *CallError
	switch {
	case errors.Is(err, errSkippedHung):
		return fmt.Sprintf("application %s skipped: it did not answer within %v recently", a.bus, o.CallTimeout)
	case errors.As(err, &ce) && ce.gone(), errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ECONNREFUSED):
		return ""
	case isTimeout(err):
		return fmt.Sprintf("application %s skipped: no answer within its timeout", a.bus)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE):
		return fmt.Sprintf("application %s skipped: it quit during the walk", a.bus)
	}
	return fmt.Sprintf("application %s skipped: %v", a.bus, err)
}

// window describes a top-level window of an application.
type window struct {
	title   string
	active  bool
	showing bool
}

// A probe is what a quick look at an application's top-level windows saw.
type probe struct {
	windows []window
	err     error
	// pinged says the windows come from the mirror, after a barrier.
	pinged bool
}

// title names the window a TreeActiveApp snapshot is rooted at: the active
// one, else the first showing one, else the first.
func (p probe) title() string {
	for _, w := range p.windows {
		if w.active {
			return w.title
		}
	}
	for _, w := range p.windows {
		if w.showing {
			return w.title
		}
	}
	if len(p.windows) > 0 {
		return p.windows[0].title
	}
	return ""
}

// probeApp reads an application's top-level windows: their titles and
// states, in two round trips, or one and a barrier (in parallel) when the
// application's mirror holds them.
func (c *Client) probeApp(parent context.Context, a *app) probe {
	if a.hung() {
		return probe{err: errSkippedHung}
	}
	deadline := time.Now().Add(c.appTimeout(a))
	ctx, cancel := context.WithDeadline(parent, deadline)
	defer cancel()
	// An application with a mirror is pinged while its windows are listed:
	// once every event it sent before is recorded, the mirror gives the
	// windows' titles and states unless an event named them.
	var ping *dbus.Call
	sent := time.Now()
	if !c.opts.NoCache {
		ping = c.bus.Object(a.bus, pathRoot).GoWithContext(ctx, "org.freedesktop.DBus.Peer.Ping", 0, make(chan *dbus.Call, 1))
	}
	var pr probe
	err := c.withApp(ctx, a, func(conn *wireConn, dest string) error {
		p := c.pipeline(ctx, a, conn, deadline)
		var paths []string
		var firstErr error
		p.call(call(dest, pathRoot, ifAccessible, "GetChildren"), func(m *message, err error) {
			var d *decoder
			if err == nil {
				d, err = expect(m, "a(so)")
			}
			if err != nil {
				firstErr = err
				return
			}
			readRefs(d, a.bus, func(p string) { paths = append(paths, p) })
		})
		if err := p.run(); err != nil {
			return err
		}
		if firstErr != nil {
			return firstErr
		}
		if ping != nil && c.windowsFromMirror(ctx, a, ping, sent, paths, &pr) {
			return nil
		}
		pr.windows = make([]window, len(paths))
		for i, path := range paths {
			w := &pr.windows[i]
			p.call(call(dest, path, ifAccessible, "GetState"), func(m *message, err error) {
				if err != nil {
					return
				}
				if d, err := expect(m, "au"); err == nil {
					s := readStates(d)
					w.active, w.showing = s.has(stateActive), s.has(stateShowing)
				}
			})
			p.call(getProperty(dest, path, ifAccessible, "Name"), func(m *message, err error) {
				if err != nil {
					return
				}
				if d, err := expect(m, "v"); err == nil && readVariant(d) == "s" {
					w.title = d.str()
				}
			})
		}
		err := p.run()
		if err == nil {
			probed := make(map[string]window, len(paths))
			for i, path := range paths {
				probed[path] = pr.windows[i]
			}
			a.memo.probed = probed
		}
		return err
	})
	if err != nil && isTimeout(err) && parent.Err() == nil {
		a.markHung(c.opts.HungBackoff)
	}
	pr.err = err
	return pr
}

// choose picks the application of the active window: the one whose process
// ActivePID names, else the one with a window in state "active", else the
// last one with a showing window (the registry lists applications in the
// order they started). It returns -1 when no application shows a window.
func (c *Client) choose(ctx context.Context, apps []*app, probes []probe) int {
	if c.opts.ActivePID != nil {
		if pid, err := c.opts.ActivePID(ctx); err == nil && pid > 0 {
			for i, a := range apps {
				if probes[i].err == nil && c.pidOf(ctx, a) == pid {
					return i
				}
			}
		}
	}
	for i, p := range probes {
		if p.err == nil && slices.ContainsFunc(p.windows, func(w window) bool { return w.active }) {
			return i
		}
	}
	pick := -1
	for i, p := range probes {
		if p.err == nil && slices.ContainsFunc(p.windows, func(w window) bool { return w.showing }) {
			pick = i
		}
	}
	return pick
}

// pidOf returns the process id behind an application's bus name, 0 when
// the bus will not say.
func (c *Client) pidOf(ctx context.Context, a *app) int {
	a.mu.Lock()
	pid := a.pid
	a.mu.Unlock()
	if pid != 0 {
		return pid
	}
	var p uint32
	err := c.bus.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetConnectionUnixProcessID", 0, a.bus).Store(&p)
	if err != nil {
		return 0
	}
	a.mu.Lock()
	a.pid = int(p)
	a.mu.Unlock()
	return int(p)
}

// nameWindows completes tree's window names from the display's windows
// (Options.Windows): the title of the picked application's window when
// AT-SPI gives it none, and every other window in OtherWindows. pick is -1
// when no application was picked.
func (c *Client) nameWindows(ctx context.Context, tree *shinken.Tree, windows []shinken.Window, apps []*app, pick int) {
	pid := 0
	if pick >= 0 {
		pid = c.pidOf(ctx, apps[pick])
	}
	mine := func(w shinken.Window) bool {
		if pick < 0 {
			return false
		}
		if pid > 0 && w.PID > 0 {
			return w.PID == pid
		}
		return w.Title != "" && w.Title == tree.Window
	}
	if pick >= 0 && tree.Window == "" {
		// The active window of the application, else its first.
		for _, w := range windows {
			if mine(w) && w.Title != "" && (w.Active || tree.Window == "") {
				tree.Window = w.Title
			}
		}
	}
	var others []shinken.Window
	for _, w := range windows {
		if !mine(w) {
			others = append(others, w)
		}
	}
	tree.OtherWindows = others
	tree.Others = tree.Others[:0]
	for _, w := range others {
		tree.Others = append(tree.Others, w.Title)
	}
}

// windowsFromMirror fills pr with the application's top-level windows
// from its mirror, once ping (sent at sent) is answered, when the windows are those the
// mirror holds (paths, just listed) and no event since the last walk
// named them; it returns false when it cannot tell. The caller holds the
// app.
func (c *Client) windowsFromMirror(ctx context.Context, a *app, ping *dbus.Call, sent time.Time, paths []string, pr *probe) bool {
	m := &a.memo
	root := m.last[pathRoot]
	if !m.events || root == nil || !slices.Equal(root.listed, paths) {
		return false
	}
	select {
	case call := <-ping.Done:
		if call.Err != nil {
			return false
		}
		m.noteLag(time.Since(sent)) // at most the listing's round trip late
	case <-ctx.Done():
		return false
	}
	m.mu.Lock()
	clean := !m.allDirty && !m.kidsDirty[pathRoot]
	for _, p := range paths {
		clean = clean && !m.touched[p]
	}
	m.mu.Unlock()
	if !clean {
		return false
	}
	pr.pinged = true
	pr.windows = make([]window, 0, len(paths))
	for _, p := range paths {
		if r := m.last[p]; r != nil {
			pr.windows = append(pr.windows, window{title: r.rawName, active: r.states.has(stateActive), showing: r.states.has(stateShowing)})
		} else if w, ok := m.probed[p]; ok {
			// A window the walk could not describe, as last probed.
			pr.windows = append(pr.windows, w)
		} else {
			return false
		}
	}
	return true
}

// markWindows sets Node.Window on the top-level windows of tree (the
// children of an application's root) that are windows of the display: a
// window of the same process, of the same title when both have one, the
// one whose box overlaps the node's most. Each window marks one node.
func (c *Client) markWindows(ctx context.Context, tree *shinken.Tree, windows []shinken.Window, apps []*app) {
	pids := map[string]int{}
	for _, a := range apps {
		pids[a.bus] = c.pidOf(ctx, a)
	}
	type pair struct {
		node, win int
		score     int64
	}
	var pairs []pair
	for i := range tree.Nodes {
		n := &tree.Nodes[i]
		if n.Depth != 1 {
			continue
		}
		bus, _, ok := parseID(n.ID)
		if !ok {
			continue
		}
		pid := pids[bus]
		for j, w := range windows {
			if pid > 0 && w.PID > 0 && pid != w.PID {
				continue
			}
			in := n.BBox.Intersect(w.BBox)
			score := int64(in.Dx()) * int64(in.Dy())
			if n.Name != "" && n.Name == w.Title {
				score += 1 << 40
			} else if n.Name != "" && w.Title != "" {
				continue
			}
			if score > 0 {
				pairs = append(pairs, pair{i, j, score})
			}
		}
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(b.score, a.score) })
	nodeDone, winDone := map[int]bool{}, map[int]bool{}
	for _, p := range pairs {
		if !nodeDone[p.node] && !winDone[p.win] {
			nodeDone[p.node], winDone[p.win] = true, true
			tree.Nodes[p.node].Window = windows[p.win].ID
		}
	}
}
