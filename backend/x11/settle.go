package x11

import (
	"context"
	"fmt"
	"image"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/damage"
	"github.com/jezek/xgb/xproto"

	"shinken.dev/go/backend/x11/atspi"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// Settling: knowing that the UI has handled the input.
//
// A Backend implements [shinken.Settler], which the Runtime calls after each
// input action, before it acks. Settle waits, in order, for:
//
//  1. the server: a ClientMessage sent to our own window comes back
//     through the event loop, so the server has processed every XTest event
//     sent before it and the event loop has seen every DAMAGE event the
//     server reported until then;
//  2. after a button or a key, the window manager, which moves the input
//     focus on a click and binds keys: it is asked for our window's frame
//     extents (_NET_REQUEST_FRAME_EXTENTS), and answers once it has handled
//     the events before (not after typed text: a window manager handles a
//     keyboard remapping slowly, 50 to 170 ms for openbox);
//  3. the applications that got the input: the window under the pointer
//     and the active window are sent a _NET_WM_PING (when they take it),
//     and toolkits answer it from their event queue, after the input events
//     queued before it, so a pong says the application dispatched them
//     (GTK, Qt; a browser's pong says its UI process did, its renderer may
//     still be at work, so when a browser's window got the input the quiet
//     window below is [Options.SettleQuietBrowser], default 50 ms);
//  4. a quiet screen and tree: no change for the quiet window
//     ([Options.SettleQuiet], default 30 ms) after the pongs, where a change
//     is a DAMAGE rectangle (from a raw-rectangles DAMAGE object on the
//     root) or, with [Backend.WithAccessibility], any AT-SPI object event
//     (focus and other states, text, children, bounds, caret); and, when a
//     browser got the input, no page on its way: a document that went busy
//     and has not come back, or one replaced by a navigation whose new
//     document has said nothing yet, holds the settle; nor a page whose
//     tree shows a change its pixels do not: a browser reports its tree
//     from one process and paints from another, so after an AT-SPI event
//     that a widget shows (checked, pressed, selected, expanded, text) the
//     settle waits for a DAMAGE rectangle over the browser's window, for
//     up to half a second (a widget scrolled out of view never paints;
//     this bound and the next grow with the browser's lag, as AT-SPI
//     measures it, with [Backend.WithAccessibility]);
//  5. when a browser got the input, its processes at rest: no thread that
//     carries input, frames and trees between them runnable, and none run
//     for 10 ms (see procidle.go), up to half a second (a page whose
//     script never rests). A browser's renderer may not have
//     received the input yet when the quiet window ends, on a loaded
//     machine, and nothing but the scheduler says so.
//
// The Runtime's cap (shinken.RuntimeOptions.SettleCap) bounds the whole
// wait; a page load holds it up to the cap, a click on nothing costs about
// the quiet window.
//
// Periodic change must not hold every action to the cap: a blinking caret,
// a spinner, a progress bar or a playing video keeps damaging the screen.
// Each distinct damage rectangle and each AT-SPI event source (sender,
// object, member, detail) is a source with a history of arrival times. A
// source is ambient, and its changes are counted but wait for nothing,
// when it is small (at most a quarter of the screen, and so are the
// ambient rectangles that changed in the settle, together: a terminal
// redrawing its screen line by line is many small sources, one change over
// most of the screen) and its last four
// arrivals or more came at a steady pace (every interval under 2 s, the
// longest at most 2.5 times the shortest plus 10 ms: a caret's on/off
// beat), or its last three at a frame's pace (every interval under 40 ms:
// a spinner, a toolkit's transition). The pace is learnt from a source's
// arrivals outside earlier settles and inside the current one, and from
// those inside an earlier settle but its first there, which may have been
// the reaction to that settle's input: text typed at a steady rhythm, each
// keystroke settling, never makes its field look periodic, while a
// spinner already turning before the click is known at once, and one that
// the click started is recognised after three frames.

const (
	defaultSettleQuiet  = 30 * time.Millisecond
	defaultBrowserQuiet = 50 * time.Millisecond
	// ambientRun is the number of arrivals at a steady pace that make a
	// source ambient; ambientFrames, when they come at least every
	// frameRun, as an animation's frames do (a toolkit's transition after a
	// click, a spinner), so that one started by the input holds the settle
	// for about three frames.
	ambientRun    = 4
	ambientFrames = 3
	frameRun      = 40 * time.Millisecond
	// paintWait bounds the wait for a browser to paint a change its tree
	// already shows (an element scrolled out of view never paints). It
	// and idleWait are an idle machine's bounds: a browser's measured lag
	// lengthens them (see settleState.patience).
	paintWait  = 500 * time.Millisecond
	paintSlack = 5 * time.Millisecond
	// idleWait bounds the wait for a browser's threads to all sleep (a
	// page running a script without end never does), polled every
	// idlePoll.
	idleWait = 500 * time.Millisecond
	idlePoll = 4 * time.Millisecond
	// frameSpan is how long the threads on a browser's input path must
	// rest: long enough that a message on its way between them shows (a
	// thread woken to carry it runs within it), shorter than a frame at
	// 60 Hz, since a browser's threads wake for frames and timers of their
	// own for a while after the input; a frame waiting for its vsync is
	// the quiet window's and the paint rule's to cover. 20 ms cost
	// Chromium's checkbox click 150 ms p50 instead of 120.
	frameSpan = 10 * time.Millisecond
	// maxPeriod is the longest interval of a periodic source.
	maxPeriod = 2 * time.Second
	// keepHistory bounds the memory of sources and settle windows.
	keepHistory = 10 * time.Second
	maxSources  = 512
	historyLen  = 8
	pastWindows = 32
)

// settleState is the Backend's settle machinery. Its mutex guards
// everything but the fields set at init.
type settleState struct {
	dmg       damage.Damage
	dmgOK     bool
	atom      xproto.Atom // _SHINKEN_SETTLE, the type of our barrier messages
	protocols xproto.Atom // WM_PROTOCOLS
	ping      xproto.Atom // _NET_WM_PING
	extents   xproto.Atom // _NET_REQUEST_FRAME_EXTENTS
	quiet     time.Duration
	// browserQuiet is the quiet window when a browser got the input.
	browserQuiet time.Duration
	area         int // the screen's, in pixels

	mu      sync.Mutex
	sources map[sourceKey]*source
	windows [pastWindows][2]time.Time // earlier settles, [start, end]
	nwin    int
	wake    chan struct{} // signalled on each change, capacity 1
	next    uint32        // barrier and ping ids
	waiting map[uint32]chan struct{}
	pinged  map[uint32]xproto.Window // the window each pending ping went to

	// Documents: see a11yEvent.
	loading               map[string]time.Time
	lastBusy, lastDefunct time.Time
	// lastVisual is the time of the latest AT-SPI event that says a
	// widget changed in a way that shows (see visualEvent).
	lastVisual time.Time
	profiles   map[xproto.Window]windowProfile
	wm         []chan struct{} // closed when the window manager sets our frame extents

	// wmInput says the input since the last settle may concern the window
	// manager: a button or a key, not text typed or a pointer move.
	wmInput atomic.Bool
	// scrolled says the input since the last settle scrolled: its settle
	// waits out the animations it started (see ambient).
	scrolled atomic.Bool

	// lag, when set (by [Backend.WithAccessibility]), lengthens a wait for
	// the application of a process by its measured lag
	// ([atspi.Client.Patience]).
	lag atomic.Pointer[func(pid int, d time.Duration) time.Duration]
}

// patience is d, a bound on waiting for the browsers of processes pids to
// catch up, lengthened by the most lagging one's measured lag: on a loaded
// machine a browser's threads wait for a core, and half a second at rest
// is a few seconds there.
func (st *settleState) patience(pids []int, d time.Duration) time.Duration {
	f := st.lag.Load()
	if f == nil {
		return d
	}
	out := d
	for _, pid := range pids {
		out = max(out, (*f)(pid, d))
	}
	return out
}

// sourceKey names a source of change: a damage rectangle, or an AT-SPI
// event source.
type sourceKey struct {
	rect  image.Rectangle
	event string
}

type source struct {
	at   [historyLen]time.Time // ring of arrival times
	n    int                   // arrivals recorded, ever
	area int
}

func (s *source) push(t time.Time) {
	s.at[s.n%historyLen] = t
	s.n++
}

func (st *settleState) init(b *Backend) {
	st.quiet = b.opts.SettleQuiet
	if st.quiet <= 0 {
		st.quiet = defaultSettleQuiet
	}
	st.browserQuiet = b.opts.SettleQuietBrowser
	if st.browserQuiet <= 0 {
		st.browserQuiet = defaultBrowserQuiet
	}
	st.area = int(b.screen.WidthInPixels) * int(b.screen.HeightInPixels)
	st.sources = map[sourceKey]*source{}
	st.waiting = map[uint32]chan struct{}{}
	st.pinged = map[uint32]xproto.Window{}
	st.loading = map[string]time.Time{}
	st.profiles = map[xproto.Window]windowProfile{}
	st.wake = make(chan struct{}, 1)
	names := []string{"_SHINKEN_SETTLE", "WM_PROTOCOLS", "_NET_WM_PING", "_NET_REQUEST_FRAME_EXTENTS"}
	atoms := []*xproto.Atom{&st.atom, &st.protocols, &st.ping, &st.extents}
	cookies := make([]xproto.InternAtomCookie, len(names))
	for i, n := range names {
		cookies[i] = xproto.InternAtom(b.conn, false, uint16(len(n)), n)
	}
	for i, c := range cookies {
		if r, err := c.Reply(); err == nil {
			*atoms[i] = r.Atom
		}
	}
	// Pongs go to the root with SubstructureNotify|SubstructureRedirect
	// (GTK, the EWMH's words) or StructureNotify|SubstructureRedirect (Qt
	// 5 and 6); selecting both notify masks is how a client other than
	// the window manager sees them. Without StructureNotify no Qt pong
	// came, and every Qt action waited out the settle's cap.
	xproto.ChangeWindowAttributes(b.conn, b.root, xproto.CwEventMask,
		[]uint32{xproto.EventMaskStructureNotify | xproto.EventMaskSubstructureNotify})
	if !b.damage.ok {
		return
	}
	id, err := damage.NewDamageId(b.conn)
	if err != nil {
		return
	}
	// Raw rectangles: one event per drawing, nothing to re-arm, and the
	// rectangle tells a spinner from the rest of the window.
	if damage.CreateChecked(b.conn, id, xproto.Drawable(b.root), damage.ReportLevelRawRectangles).Check() != nil {
		return
	}
	st.dmg, st.dmgOK = id, true
}

// damageEvent takes a notification of our DAMAGE object; it reports false
// for the others.
func (st *settleState) damageEvent(b *Backend, e damage.NotifyEvent) bool {
	if !st.dmgOK || e.Damage != st.dmg {
		return false
	}
	r := image.Rect(int(e.Area.X), int(e.Area.Y), int(e.Area.X)+int(e.Area.Width), int(e.Area.Y)+int(e.Area.Height))
	st.record(sourceKey{rect: r}, r.Dx()*r.Dy(), time.Now())
	return true
}

// a11yEvent records an AT-SPI object event as a change, and follows the
// documents that load: a browser's document that StateChanged "busy" to 1
// is loading until a document of the same application changes back to 0
// (Firefox says so of the new document, Chromium of the same one), and
// one that went "defunct" was replaced by a navigation, whose new document
// has yet to say busy.
func (st *settleState) a11yEvent(e atspi.Event) {
	now := time.Now()
	if e.Member == "StateChanged" {
		switch e.Detail {
		case "busy":
			st.mu.Lock()
			key := e.Sender + "\x00" + e.Path
			if e.Value != 0 {
				if len(st.loading) < maxSources {
					st.loading[key] = now
				}
			} else {
				// The document that finished loading may be a new one, which
				// replaced the one that went busy (Firefox): it ends every
				// load of its application.
				for k := range st.loading {
					if strings.HasPrefix(k, e.Sender+"\x00") {
						delete(st.loading, k)
					}
				}
			}
			st.lastBusy = now
			st.mu.Unlock()
		case "defunct":
			if e.Value != 0 {
				st.mu.Lock()
				st.lastDefunct = now
				st.mu.Unlock()
			}
		}
	}
	if visualEvent(e) {
		st.mu.Lock()
		st.lastVisual = now
		st.mu.Unlock()
	}
	st.record(sourceKey{event: e.Sender + "\x00" + e.Path + "\x00" + e.Member + "\x00" + e.Detail}, 0, now)
}

// visualStates are the states whose change a widget shows on the screen.
var visualStates = []string{"checked", "pressed", "selected", "expanded", "collapsed", "indeterminate"}

// visualEvent reports whether e says that a widget changed in a way it
// must repaint: a state it shows, or its text.
func visualEvent(e atspi.Event) bool {
	switch e.Member {
	case "StateChanged":
		return slices.Contains(visualStates, e.Detail)
	case "TextChanged":
		return e.Detail == "insert" || e.Detail == "delete"
	}
	return false
}

// painted reports whether a DAMAGE rectangle that is not ambient and
// meets one of rects arrived at or after start.
func (st *settleState) painted(start time.Time, rects []image.Rectangle) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	bulk := st.bulk(start, false)
	for k, s := range st.sources {
		if k.event != "" || s.at[(s.n-1)%historyLen].Before(start) {
			continue
		}
		for _, r := range rects {
			if k.rect.Overlaps(r) && !(st.ambient(s, start, false) && !bulk) {
				return true
			}
		}
	}
	return false
}

// unpainted returns the time of the latest visual AT-SPI event at or after
// start when no DAMAGE meeting rects came since, or since shortly before
// (paintSlack: Chromium reports a frame and the tree it shows together,
// and either may reach us first), and the zero time otherwise: the tree
// says a widget changed, the screen does not show it yet. An earlier
// paint does not count: a click's press repaints a widget before its
// release changes it.
func (st *settleState) unpainted(start time.Time, rects []image.Rectangle) time.Time {
	st.mu.Lock()
	t := st.lastVisual
	st.mu.Unlock()
	if t.Before(start) || len(rects) == 0 {
		return time.Time{}
	}
	since := t.Add(-paintSlack)
	if since.Before(start) {
		since = start
	}
	if st.painted(since, rects) {
		return time.Time{}
	}
	return t
}

// navigating reports whether a browser's page is loading, as far as its
// events since start tell: a document went busy and has not come back,
// or one was replaced and its successor has said nothing yet.
func (st *settleState) navigating(start time.Time) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	for k, t := range st.loading {
		if t.Before(start.Add(-keepHistory)) {
			delete(st.loading, k) // a load that never said it ended
			continue
		}
		if !t.Before(start) {
			return true
		}
	}
	return !st.lastDefunct.Before(start) && st.lastBusy.Before(st.lastDefunct)
}

func (st *settleState) record(k sourceKey, area int, t time.Time) {
	st.mu.Lock()
	s := st.sources[k]
	if s == nil {
		if len(st.sources) >= maxSources {
			st.prune(t)
		}
		s = &source{area: area}
		st.sources[k] = s
	}
	s.push(t)
	st.mu.Unlock()
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// prune forgets sources silent for keepHistory, or all of them when that
// is not enough. st.mu must be held.
func (st *settleState) prune(now time.Time) {
	for k, s := range st.sources {
		if now.Sub(s.at[(s.n-1)%historyLen]) > keepHistory {
			delete(st.sources, k)
		}
	}
	if len(st.sources) >= maxSources {
		clear(st.sources)
	}
}

// clientMessage takes our barrier messages and the pongs; it reports false
// for other messages.
func (st *settleState) clientMessage(e xproto.ClientMessageEvent) bool {
	d := e.Data.Data32
	var id uint32
	switch {
	case e.Type == st.atom && e.Format == 32:
		id = d[0]
	case e.Type == st.protocols && e.Format == 32 && xproto.Atom(d[0]) == st.ping:
		id = d[1]
	default:
		return false
	}
	st.release(id)
	return true
}

// release ends the wait for id. st.mu must not be held.
func (st *settleState) release(id uint32) {
	st.mu.Lock()
	ch := st.waiting[id]
	delete(st.waiting, id)
	delete(st.pinged, id)
	st.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// destroyed ends the waits for pongs from w, which is gone.
func (st *settleState) destroyed(w xproto.Window) {
	st.mu.Lock()
	var ids []uint32
	for id, pw := range st.pinged {
		if pw == w {
			ids = append(ids, id)
		}
	}
	delete(st.profiles, w)
	st.mu.Unlock()
	for _, id := range ids {
		st.release(id)
	}
}

// expect registers a reply id. st.mu must not be held.
func (st *settleState) expect() (uint32, chan struct{}) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.next++
	// High ids keep clear of the window manager's own ping serials.
	id := st.next | 1<<31
	ch := make(chan struct{})
	st.waiting[id] = ch
	return id, ch
}

func (st *settleState) forget(ids []uint32) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, id := range ids {
		delete(st.waiting, id)
		delete(st.pinged, id)
	}
}

// barrier sends a message to our own window and returns its channel,
// closed when the event loop sees it.
func (b *Backend) barrier() (uint32, chan struct{}) {
	id, ch := b.settle.expect()
	ev := xproto.ClientMessageEvent{Format: 32, Window: b.win, Type: b.settle.atom,
		Data: xproto.ClientMessageDataUnionData32New([]uint32{id, 0, 0, 0, 0})}
	// An empty event mask sends the event to the window's creator: us.
	xproto.SendEvent(b.conn, false, b.win, 0, string(ev.Bytes()))
	return id, ch
}

// wmBarrier asks the window manager, when it offers that, for our window's
// frame extents, and returns a channel closed when it has set them (nil
// without a window manager that does). A window manager handles its events
// in order, so by then it has handled the input sent before: a click that
// focuses a window has moved the X input focus, which the window manager
// does, not the server.
func (b *Backend) wmBarrier() chan struct{} {
	st := &b.settle
	r, err := xproto.GetProperty(b.conn, false, b.root, b.atoms.netSupported, xproto.AtomAtom, 0, 1024).Reply()
	if err != nil {
		return nil
	}
	supported := false
	for i := 0; i+4 <= len(r.Value); i += 4 {
		supported = supported || xproto.Atom(xgb.Get32(r.Value[i:])) == st.extents
	}
	if !supported {
		return nil
	}
	ch := make(chan struct{})
	st.mu.Lock()
	if len(st.wm) >= 16 {
		// Waits the window manager never answered ended at their cap.
		st.wm = slices.Delete(st.wm, 0, 1)
	}
	st.wm = append(st.wm, ch)
	st.mu.Unlock()
	ev := xproto.ClientMessageEvent{Format: 32, Window: b.win, Type: st.extents,
		Data: xproto.ClientMessageDataUnionData32New([]uint32{0, 0, 0, 0, 0})}
	xproto.SendEvent(b.conn, false, b.root,
		xproto.EventMaskSubstructureNotify|xproto.EventMaskSubstructureRedirect, string(ev.Bytes()))
	return ch
}

// frameExtents takes the window manager's answer to wmBarrier.
func (st *settleState) frameExtents() {
	st.mu.Lock()
	chans := st.wm
	st.wm = nil
	st.mu.Unlock()
	for _, ch := range chans {
		close(ch)
	}
}

// pingTargets returns the windows that got the input and take
// _NET_WM_PING, the client window under the pointer and the active one,
// and those of them that are a web browser's.
func (b *Backend) pingTargets() (out, browsers []xproto.Window) {
	add := func(w xproto.Window) {
		if w == 0 || w == b.root || w == b.win || slices.Contains(out, w) || slices.Contains(browsers, w) {
			return
		}
		p := b.profile(w)
		if p.browser {
			browsers = append(browsers, w)
		}
		if p.ping {
			out = append(out, w)
		}
	}
	if p, err := xproto.QueryPointer(b.conn, b.root).Reply(); err == nil && p.Child != 0 {
		add(b.clientOf(p.Child))
	}
	if w, err := b.activeWindow(); err == nil {
		add(w)
	}
	return out, browsers
}

// rects returns the rectangles of the windows ws on the screen, leaving
// out those gone.
func (b *Backend) rects(ws []xproto.Window) []image.Rectangle {
	cookies := make([]rectCookies, len(ws))
	for i, w := range ws {
		cookies[i] = b.rectRequests(w)
	}
	var out []image.Rectangle
	for _, c := range cookies {
		if r, err := c.rect(); err == nil && !r.Empty() {
			out = append(out, r)
		}
	}
	return out
}

// clientOf returns the client window of a top-level frame: the frame
// itself when it carries WM_STATE, else its first child that does.
func (b *Backend) clientOf(w xproto.Window) xproto.Window {
	has := func(w xproto.Window) bool {
		r, err := xproto.GetProperty(b.conn, false, w, b.atoms.wmState, xproto.GetPropertyTypeAny, 0, 0).Reply()
		return err == nil && r.Type != xproto.AtomNone
	}
	if has(w) {
		return w
	}
	t, err := xproto.QueryTree(b.conn, w).Reply()
	if err != nil {
		return 0
	}
	for _, c := range t.Children {
		if has(c) {
			return c
		}
	}
	return 0
}

// A windowProfile is what the settle needs to know of a window.
type windowProfile struct {
	ping    bool // it lists _NET_WM_PING in WM_PROTOCOLS
	browser bool // a multi-process web browser's (see browserClasses)
	pid     int  // its _NET_WM_PID, when it is a window of this machine
}

// browserClasses are the WM_CLASS classes of web browsers, whose pong
// comes from the process that owns the window while the page is handled
// and painted by another.
var browserClasses = []string{"chromium", "chrome", "google-chrome", "firefox", "firefox-esr", "navigator", "brave-browser", "microsoft-edge"}

// profile returns w's profile, remembering it.
func (b *Backend) profile(w xproto.Window) windowProfile {
	st := &b.settle
	st.mu.Lock()
	p, known := st.profiles[w]
	st.mu.Unlock()
	if known {
		return p
	}
	protocols := xproto.GetProperty(b.conn, false, w, st.protocols, xproto.AtomAtom, 0, 64)
	class := xproto.GetProperty(b.conn, false, w, xproto.AtomWmClass, xproto.AtomString, 0, 64)
	pid := xproto.GetProperty(b.conn, false, w, b.atoms.netWMPID, xproto.AtomCardinal, 0, 1)
	machine := xproto.GetProperty(b.conn, false, w, xproto.AtomWmClientMachine, xproto.AtomString, 0, 64)
	r, err := protocols.Reply()
	c, cerr := class.Reply()
	pr, perr := pid.Reply()
	m, merr := machine.Reply()
	if err != nil || cerr != nil || perr != nil || merr != nil {
		return p // gone: ask again if it shows up again
	}
	// A process id means something here only for a window of this machine.
	if host, err := os.Hostname(); err == nil && string(m.Value) == host && pr.Format == 32 && len(pr.Value) >= 4 {
		p.pid = int(xgb.Get32(pr.Value))
	}
	for i := 0; i+4 <= len(r.Value); i += 4 {
		p.ping = p.ping || xproto.Atom(xgb.Get32(r.Value[i:])) == st.ping
	}
	// WM_CLASS is instance NUL class NUL.
	for _, part := range strings.Split(string(c.Value), "\x00") {
		p.browser = p.browser || slices.Contains(browserClasses, strings.ToLower(part))
	}
	st.mu.Lock()
	if len(st.profiles) > maxSources {
		clear(st.profiles)
	}
	st.profiles[w] = p
	st.mu.Unlock()
	return p
}

// sendPing sends w a _NET_WM_PING and returns its id and channel.
func (b *Backend) sendPing(w xproto.Window) (uint32, chan struct{}) {
	st := &b.settle
	id, ch := st.expect()
	st.mu.Lock()
	st.pinged[id] = w
	st.mu.Unlock()
	// A window destroyed before it answers (a click on its Close button)
	// never will: its DestroyNotify, which this mask brings us, ends the
	// wait instead.
	if xproto.ChangeWindowAttributesChecked(b.conn, w, xproto.CwEventMask, []uint32{xproto.EventMaskStructureNotify}).Check() != nil {
		st.release(id) // gone already
		return id, ch
	}
	ev := xproto.ClientMessageEvent{Format: 32, Window: w, Type: st.protocols,
		Data: xproto.ClientMessageDataUnionData32New([]uint32{uint32(st.ping), id, uint32(w), 0, 0})}
	xproto.SendEvent(b.conn, false, w, 0, string(ev.Bytes()))
	return id, ch
}

// Settle implements [shinken.Settler], as the comment at the top of this
// file describes.
func (b *Backend) Settle(ctx context.Context, start time.Time, limit time.Duration) (shinken.SettleReport, error) {
	var rep shinken.SettleReport
	if err := b.check(ctx); err != nil {
		return rep, err
	}
	deadline := time.Now().Add(limit)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	st := &b.settle
	defer st.endWindow(start)

	// First the server and the window manager, which may move the focus;
	// then the applications that got the input, found after that.
	ids := make([]uint32, 0, 3)
	defer func() { st.forget(ids) }()
	id, ch := b.barrier()
	ids = append(ids, id)
	chans := []chan struct{}{ch}
	if st.wmInput.Swap(false) {
		if wm := b.wmBarrier(); wm != nil {
			chans = append(chans, wm)
		}
	}
	if !wait(ctx, chans) {
		return b.capped(ctx, start)
	}
	chans = chans[:0]
	scroll := st.scrolled.Swap(false)
	targets, browsers := b.pingTargets()
	browser := len(browsers) > 0
	quiet := st.quiet
	for _, w := range targets {
		id, ch := b.sendPing(w)
		ids, chans = append(ids, id), append(chans, ch)
	}
	// While the pongs come: what a browser's settle also waits for.
	var browserRects []image.Rectangle
	var path inputPath // the threads of the browsers' processes that carry the input
	painting, idling := paintWait, idleWait
	if browser {
		quiet = max(quiet, st.browserQuiet)
		browserRects = b.rects(browsers)
		var roots []int
		for _, w := range browsers {
			if pid := b.profile(w).pid; pid > 0 && !slices.Contains(roots, pid) {
				roots = append(roots, pid)
				path.add(pid)
			}
		}
		painting, idling = st.patience(roots, paintWait), st.patience(roots, idleWait)
	}
	// The wait for the browsers' threads to rest: its end, and what they
	// had done when last seen doing something.
	var idleUntil, sampledAt time.Time
	var sample threadsSample
	if len(path.tasks) > 0 {
		sample, _ = path.sample()
	}
	if !wait(ctx, chans) {
		return b.capped(ctx, start)
	}
	handled := time.Now()
	sampledAt = handled
	timer := time.NewTimer(quiet)
	defer timer.Stop()
	for {
		last := st.lastChange(start, scroll)
		base := handled
		if last.After(base) {
			base = last
		}
		quietAt := base.Add(quiet)
		now := time.Now()
		if !now.Before(quietAt) {
			// Quiet by the events seen so far; one more barrier makes sure
			// no DAMAGE the server already reported is still on its way.
			id, ch := b.barrier()
			select {
			case <-ch:
			case <-ctx.Done():
				st.forget([]uint32{id})
				return b.capped(ctx, start)
			}
			if st.lastChange(start, scroll).After(last) {
				continue
			}
			if t := st.unpainted(start, browserRects); !t.IsZero() && time.Since(t) < painting {
				// The page's tree changed, its pixels have not yet: a
				// browser paints from another process than the one that
				// reports the tree.
				timer.Reset(time.Until(t.Add(painting)))
				select {
				case <-st.wake:
				case <-timer.C:
				case <-ctx.Done():
					return b.capped(ctx, start)
				}
				continue
			}
			if len(path.tasks) > 0 {
				now := time.Now()
				if idleUntil.IsZero() {
					idleUntil = now.Add(idling)
				}
				runs, busy := path.sample()
				if !slices.Equal(runs, sample) {
					sample, sampledAt = runs, now
				}
				if (busy || now.Sub(sampledAt) < frameSpan) && now.Before(idleUntil) {
					// A thread of the browser has work, or had some within a
					// frame: the input may still be on its way to the page,
					// or its frame to the screen.
					wait := sampledAt.Add(frameSpan).Sub(now)
					if busy || wait < idlePoll {
						wait = idlePoll
					}
					timer.Reset(wait)
					select {
					case <-st.wake:
					case <-timer.C:
					case <-ctx.Done():
						return b.capped(ctx, start)
					}
					continue
				}
			}
			if browser && st.navigating(start) {
				// Quiet, but a page is on its way: wait for its next
				// change, or the cap.
				select {
				case <-st.wake:
				case <-ctx.Done():
					return b.capped(ctx, start)
				}
				continue
			}
			rep.Outcome = shinken.SettleQuiet
			rep.Changes, rep.Ambient = st.changes(start, scroll)

			return rep, nil
		}
		timer.Reset(quietAt.Sub(now))
		select {
		case <-timer.C:
		case <-st.wake:
		case <-ctx.Done():
			return b.capped(ctx, start)
		}
	}
}

// wait waits for every channel to close; false means ctx ended first.
func wait(ctx context.Context, chans []chan struct{}) bool {
	for _, ch := range chans {
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

func (b *Backend) capped(ctx context.Context, start time.Time) (shinken.SettleReport, error) {
	if b.closed.Load() {
		return shinken.SettleReport{}, fmt.Errorf("%w: x11 backend", aci.ErrClosed)
	}
	if err := context.Cause(ctx); err != context.DeadlineExceeded {
		return shinken.SettleReport{}, err
	}
	rep := shinken.SettleReport{Outcome: shinken.SettleCap}
	rep.Changes, rep.Ambient = b.settle.changes(start, false)
	return rep, nil
}

// endWindow remembers a settle window, so that its arrivals teach no
// source a pace: they were reactions.
func (st *settleState) endWindow(start time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.windows[st.nwin%pastWindows] = [2]time.Time{start, time.Now()}
	st.nwin++
}

// window returns the index of the earlier settle window, begun before
// start, that t fell inside, or -1. st.mu must be held.
func (st *settleState) window(t, start time.Time) int {
	for i := range min(st.nwin, pastWindows) {
		w := st.windows[i]
		if w[0].Before(start) && !t.Before(w[0]) && !t.After(w[1]) {
			return i
		}
	}
	return -1
}

// ambient reports whether s is a small source changing at a steady pace
// (see the top of this file). The pace is judged on its arrivals outside
// earlier settles and in the current one, and on those inside an earlier
// settle but its first there: a source's first change in a settle may be
// the reaction to that settle's input, and text typed at a steady rhythm
// must not look periodic, while an animation keeps changing through a
// settle. After a scroll (scroll), only arrivals outside every settle
// count: a browser scrolls smoothly, a frame every 16 ms for a few hundred
// milliseconds, which the frame-pace rule would take for a spinner and
// ack the scroll before the page shows it; a spinner or a caret that
// changes on its own has shown its pace outside the settles. st.mu must
// be held.
func (st *settleState) ambient(s *source, start time.Time, scroll bool) bool {
	if s.area > st.area/4 {
		return false
	}
	var times [historyLen]time.Time
	k := 0
	var seen [pastWindows]bool
	for i := min(s.n, historyLen) - 1; i >= 0; i-- {
		t := s.at[(s.n-1-i)%historyLen] // oldest first
		if t.Before(start) {
			if w := st.window(t, start); w >= 0 && (scroll || !seen[w]) {
				seen[w] = true
				continue
			}
		} else if scroll {
			continue
		}
		times[k] = t
		k++
	}
	if k < ambientRun {
		return false
	}
	lo, hi := time.Duration(1<<62), time.Duration(0)
	for i := k - 1; i > 0; i-- { // newest first
		d := times[i].Sub(times[i-1])
		if d > maxPeriod {
			break
		}
		lo, hi = min(lo, d), max(hi, d)
		run := ambientRun
		if hi <= frameRun {
			run = ambientFrames
		}
		if k-i >= run-1 && hi <= lo*5/2+10*time.Millisecond {
			return true
		}
	}
	return false
}

// bulk reports whether the damage rectangles that changed at or after
// start and are ambient by their own pace cover, together, more than a
// quarter of the screen: then none of them is set aside. A terminal that
// scrolls faster than it can copy redraws its screen line by line, each
// line a small rectangle repainted at the pace of the output, and a page
// of small tiles may animate all at once; each source alone looks like a
// caret, all of them are a change over most of the screen. st.mu must be
// held.
func (st *settleState) bulk(start time.Time, scroll bool) bool {
	var rects []image.Rectangle
	sum := 0
	for k, s := range st.sources {
		if k.event != "" || s.at[(s.n-1)%historyLen].Before(start) || !st.ambient(s, start, scroll) {
			continue
		}
		rects = append(rects, k.rect)
		sum += s.area
	}
	// The union is at most the sum: a spinner and a caret never need it.
	return sum > st.area/4 && unionArea(rects, st.area/4) > st.area/4
}

// unionArea returns the area the rectangles rs cover together, counting
// once what several of them cover, or, once that passes limit, some area
// over limit.
func unionArea(rs []image.Rectangle, limit int) int {
	xs := make([]int, 0, 2*len(rs))
	for _, r := range rs {
		xs = append(xs, r.Min.X, r.Max.X)
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	area := 0
	spans := make([][2]int, 0, len(rs))
	for i := 0; i+1 < len(xs); i++ {
		x0, x1 := xs[i], xs[i+1]
		spans = spans[:0]
		for _, r := range rs {
			if r.Min.X <= x0 && r.Max.X >= x1 && !r.Empty() {
				spans = append(spans, [2]int{r.Min.Y, r.Max.Y})
			}
		}
		slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
		h, top, bottom := 0, 0, 0
		for j, sp := range spans {
			switch {
			case j == 0:
				top, bottom = sp[0], sp[1]
			case sp[0] > bottom:
				h += bottom - top
				top, bottom = sp[0], sp[1]
			default:
				bottom = max(bottom, sp[1])
			}
		}
		if len(spans) > 0 {
			h += bottom - top
		}
		if area += h * (x1 - x0); area > limit {
			break
		}
	}
	return area
}

// lastChange returns the latest arrival at or after start from a source
// that is not ambient (the zero time when there is none); scroll judges
// ambience as after a scroll (see ambient).
func (st *settleState) lastChange(start time.Time, scroll bool) time.Time {
	st.mu.Lock()
	defer st.mu.Unlock()
	bulk := st.bulk(start, scroll)
	var last time.Time
	for _, s := range st.sources {
		t := s.at[(s.n-1)%historyLen]
		if t.Before(start) || !t.After(last) {
			continue
		}
		if bulk || !st.ambient(s, start, scroll) {
			last = t
		}
	}
	return last
}

// changes counts the arrivals at or after start that held the settle and
// those set aside as ambient.
func (st *settleState) changes(start time.Time, scroll bool) (held, ambient int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	bulk := st.bulk(start, scroll)
	for _, s := range st.sources {
		n := 0
		for i := 0; i < min(s.n, historyLen); i++ {
			if !s.at[(s.n-1-i)%historyLen].Before(start) {
				n++
			}
		}
		if n == 0 {
			continue
		}
		if !bulk && st.ambient(s, start, scroll) {
			ambient += n
		} else {
			held += n
		}
	}
	return held, ambient
}
