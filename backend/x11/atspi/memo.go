package atspi

import (
	"image"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/godbus/dbus/v5"
)

// A memo keeps what earlier walks of one application learned and what
// stays true until an event says otherwise, so that the next walk asks the
// application only for what may have changed. Measured on gtk3-demo, one
// Component.GetExtents costs the application ~60 µs (GTK asks the X server
// where its window is on every call) against ~10 µs for other calls:
// geometry is what a repeated walk most needs to avoid re-reading.
//
// What is kept, and what invalidates it:
//   - interfaces: never change for an object;
//   - role: a PropertyChange "accessible-role" event;
//   - action names: kept for the object's life (toolkits fix them when they
//     create the object);
//   - extents, only for toolkits known to report geometry changes (GTK 3):
//     BoundsChanged, ChildrenChanged and geometric StateChanged events make
//     the walk read the node again, and its subtree if it moved; a scroll
//     bar's value change makes it read its parent's whole subtree; and
//     every walk re-reads, as sentinels, the top-level windows (a window
//     moved by the window manager may report nothing) and the first child
//     of every scrolling container (scrolled content reports nothing). A
//     node found elsewhere than remembered makes its subtree stale.
//
// Names, descriptions, states, values and the structure are read on every
// walk of an application with no mirror (Qt, toolkits not known to report
// their changes): the toolkit cache serves most of them in one call. The
// mirror (mirror.go) keeps them too, for the toolkits whose events do.
type memo struct {
	// nodes is read and replaced by walks only, which hold the app.
	nodes map[string]*known
	// actionNames maps a node's localised action names (GetActions, one
	// call) to its machine names (GetName, one call per action), which
	// one representative node supplies for all the others.
	actionNames map[string][]string
	// geometry says whether extents may be reused: the toolkit reports
	// geometry changes. toolkitKnown says whether it was asked.
	geometry, toolkitKnown bool
	// oneByOne says the bridge has no Properties.GetAll: Qt's reads a
	// second argument GetAll does not have, and answers garbage or crashes.
	oneByOne bool
	// browser says the application is a web browser (Gecko, Chromium).
	browser bool
	// actionsOneByOne says GetActions must not be asked: Gecko's bridge
	// computes every action's key binding for it, and a key binding read
	// from a page still being built (a neterror page in a tab behind) is
	// not always UTF-8: libdbus then aborts the browser. The machine
	// names (GetName, what an agent invokes) are asked one by one.
	actionsOneByOne bool
	// actionsFollowLayout says a node's actions change with the page's
	// layout, with no event to say so: Chromium offers a document's or a
	// section's scroll actions once its content overflows it, which a
	// loaded machine reaches after the node was first read. A node read
	// again is then asked its actions again.
	actionsFollowLayout bool
	// geomAt is when a walk last read a browser's extents rather than
	// reusing them (see browserGeomAge).
	geomAt time.Time
	// readAt is when a walk last read a browser's tree whole (see
	// browserTreeAge).
	readAt time.Time
	// urls are the URLs of a browser's documents on screen as the last
	// walk read them, in tree order, and navAt when a walk last found
	// them changed (see browserNavAge).
	urls      []string
	urlsKnown bool
	navAt     time.Time
	// lag is how long the application took to answer a Peer.Ping through
	// its main loop, as walks and layouts measure it (see noteLag), in
	// nanoseconds: what a browser's windows of doubt grow by (patience).
	lag atomic.Int64

	// events says the toolkit reports every change of structure, names,
	// states and text (GTK 3, Gecko, Chromium): a repeated walk may then
	// start from the mirror of the last one instead of reading the tree.
	events bool
	// last is the mirror: the nodes of the last complete walk, which a
	// repeated walk patches where events say they changed (see mirror.go).
	last map[string]*rec
	// probed holds the windows the last plain probe read, by path, for
	// those the mirror lacks. Probes hold the app.
	probed map[string]window

	// The fields below are written by the event handler.
	mu           sync.Mutex
	geomDirty    map[string]bool // nodes whose extents may have changed
	roleDirty    map[string]bool
	valueChanged map[string]bool // nodes whose value changed (scroll bars matter)
	baseDirty    map[string]bool // nodes whose name, description or states changed
	kidsDirty    map[string]bool // nodes whose children changed
	textDirty    map[string]bool // nodes whose text or value changed
	parentDirty  map[string]bool // nodes whose parent changed
	removed      map[string]bool // nodes the toolkit's cache dropped
	touched      map[string]bool // every node an event named
	anyEvent     bool            // some event came since the last walk
	allDirty     bool
	// walked says a walk took the events: until then there is nothing to
	// invalidate, and an application that is only ever probed must not
	// pile up events.
	walked bool
}

// maxRecorded bounds the events a memo keeps between two walks; past it,
// everything is stale.
const maxRecorded = 4096

// known is what a memo keeps about one node.
type known struct {
	parent   string
	role     uint32
	ifs      ifaceSet
	haveRole bool // role and ifs are known

	bbox     image.Rectangle
	haveBBox bool

	actions     []string
	haveActions bool
}

// memoEvents are the events of one walk: what changed since the last.
type memoEvents struct {
	geomDirty, roleDirty, valueChanged map[string]bool
	baseDirty, kidsDirty, textDirty    map[string]bool
	parentDirty, removed, touched      map[string]bool
	anyEvent, allDirty                 bool
}

// take returns the events recorded so far and starts a new record.
func (m *memo) take() memoEvents {
	m.mu.Lock()
	defer m.mu.Unlock()
	ev := memoEvents{geomDirty: m.geomDirty, roleDirty: m.roleDirty, valueChanged: m.valueChanged,
		baseDirty: m.baseDirty, kidsDirty: m.kidsDirty, textDirty: m.textDirty, parentDirty: m.parentDirty, removed: m.removed, touched: m.touched, anyEvent: m.anyEvent, allDirty: m.allDirty}
	m.clearEvents()
	m.allDirty = false
	m.walked = true
	return ev
}

// clearEvents forgets the events recorded. m.mu must be held.
func (m *memo) clearEvents() {
	m.geomDirty, m.roleDirty, m.valueChanged = nil, nil, nil
	m.baseDirty, m.kidsDirty, m.textDirty, m.parentDirty, m.removed, m.touched, m.anyEvent = nil, nil, nil, nil, nil, nil, false
}

// dirtyAll marks everything stale, when events may have been missed.
func (m *memo) dirtyAll() {
	m.mu.Lock()
	m.allDirty = true
	m.mu.Unlock()
}

// nonGeometricStates are states whose change moves nothing on screen.
var nonGeometricStates = map[string]bool{
	"active": true, "armed": true, "busy": true, "checked": true, "focused": true,
	"indeterminate": true, "pressed": true, "selected": true, "sensitive": true,
	"enabled": true, "visited": true, "invalid entry": true,
}

// record notes one org.a11y.atspi.Event.Object signal from the application.
func (m *memo) record(member, path, kind string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.walked || m.allDirty {
		return
	}
	m.anyEvent = true
	mark := func(set *map[string]bool) {
		if *set == nil {
			*set = map[string]bool{}
		}
		(*set)[path] = true
		if len(*set) > maxRecorded {
			m.clearEvents()
			m.allDirty = true
		}
	}
	mark(&m.touched)
	switch member {
	case "BoundsChanged":
		// GTK maps a new widget with an allocation and no "showing" event:
		// the states are read again too.
		mark(&m.geomDirty)
		mark(&m.baseDirty)
	case "ChildrenChanged":
		mark(&m.geomDirty)
		mark(&m.kidsDirty)
	case "Removed":
		mark(&m.removed)
	case "StateChanged":
		mark(&m.baseDirty)
		// A document read while it loaded (busy) may hold nodes read
		// before their names and children were in place, with no event
		// to come for them (Firefox): the end of the load reads its
		// subtree again.
		if kind == "busy" {
			mark(&m.kidsDirty)
		}
		// Toolkits spell states with dashes ("multi-line"); the table uses
		// spaces.
		if !nonGeometricStates[strings.ReplaceAll(kind, "-", " ")] {
			mark(&m.geomDirty)
		}
	case "TextChanged":
		// A browser's text node is named after its text.
		mark(&m.textDirty)
		mark(&m.baseDirty)
	case "PropertyChange":
		switch kind {
		case "accessible-role":
			mark(&m.roleDirty)
			mark(&m.baseDirty)
		case "accessible-value":
			mark(&m.valueChanged)
			mark(&m.textDirty)
		case "accessible-parent":
			mark(&m.parentDirty)
		default: // name, description, table captions...
			mark(&m.baseDirty)
		}
	}
	// A member this table does not know (VisibleDataChanged,
	// TextCaretMoved...) changes nothing the walk keeps but extents, which
	// anyEvent revalidates.
}

// onSignal is the Client's godbus signal handler. godbus calls it on the
// goroutine that reads the bus, before it delivers any later message, so
// once a call made after an event returns, the event has been recorded:
// that ordering is what makes [Client.barrier] work.
func (c *Client) onSignal(sig *dbus.Signal) {
	if sig.Name == ifCache+".RemoveAccessible" || sig.Name == ifCache+".AddAccessible" {
		c.onCacheSignal(sig)
		return
	}
	iface, member, ok := strings.Cut(sig.Name, ".Event.Object.")
	if !ok || iface != "org.a11y.atspi" {
		return
	}
	if f := c.opts.OnEvent; f != nil {
		detail, _ := firstString(sig.Body)
		f(Event{Sender: sig.Sender, Path: string(sig.Path), Member: member, Detail: detail, Value: secondInt(sig.Body)})
	}
	if watchedSignals[member] {
		c.notify()
	}
	c.mu.Lock()
	a := c.apps[sig.Sender]
	c.mu.Unlock()
	if a == nil {
		return // never walked: nothing remembered to invalidate
	}
	kind := ""
	if len(sig.Body) > 0 {
		kind, _ = sig.Body[0].(string)
	}
	a.memo.record(member, string(sig.Path), kind)
}

// onCacheSignal records a toolkit cache's RemoveAccessible (a node gone:
// GTK removes a closed window from its cache, and sends no object event
// for the window itself) or AddAccessible (a node created) as a change
// of the structure around the node it names.
func (c *Client) onCacheSignal(sig *dbus.Signal) {
	c.mu.Lock()
	a := c.apps[sig.Sender]
	c.mu.Unlock()
	if a == nil || len(sig.Body) == 0 {
		return
	}
	var path string
	switch v := sig.Body[0].(type) {
	case []any: // (so), or the cache item whose first member is one
		if len(v) > 0 {
			if ref, ok := v[0].([]any); ok && len(ref) == 2 {
				v = ref
			}
			if len(v) == 2 {
				if p, ok := v[1].(dbus.ObjectPath); ok {
					path = string(p)
				}
			}
		}
	}
	if path == "" {
		a.memo.dirtyAll()
		return
	}
	a.memo.record("ChildrenChanged", path, "")
	if strings.HasSuffix(sig.Name, ".RemoveAccessible") {
		a.memo.record("Removed", path, "")
	}
}

// signalSink adapts onSignal to godbus's SignalHandler.
type signalSink struct{ c *Client }

func (s signalSink) DeliverSignal(iface, name string, sig *dbus.Signal) { s.c.onSignal(sig) }
