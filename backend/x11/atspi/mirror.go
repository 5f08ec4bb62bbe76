package atspi

import (
	"image"
	"slices"
	"time"
)

// The mirror: for toolkits whose events report every change of structure,
// names, states and text (GTK 3, Gecko, Chromium: what screen readers rely
// on), a repeated walk starts from the nodes of the last complete walk and
// reads again only what the events since then name:
//
//   - ChildrenChanged on a node: its whole subtree is read again;
//   - StateChanged, TextChanged, BoundsChanged, PropertyChange (name,
//     description, role) on a node: its role, name, description, states,
//     parent and child count; a child count that no longer matches makes
//     its subtree read again, a parent that changed both parents'
//     subtrees;
//   - any event on a node: the same for each of its ancestors, and a
//     ChildrenChanged for the node itself, whose names may come from
//     their content (Gecko renames a button whose label changed with no
//     event for the button);
//   - PropertyChange accessible-parent on a node: the subtrees of its old
//     parent and of the nearest ancestor of its new place that the mirror
//     holds are read again;
//   - Cache.RemoveAccessible of a node (GTK closes a window so, with no
//     object event for it): its parent's subtree is read again; a
//     Cache.AddAccessible counts as a ChildrenChanged on the node;
//   - an event naming a node the mirror lacks: the subtree of its nearest
//     ancestor in the mirror is read again (Chromium attaches a loaded
//     page without a ChildrenChanged);
//   - more than maxRecorded events, more than maxUnknown nodes to place, a
//     failed walk or a missed barrier: the whole tree is read again.
//
// What the applications do not report is revalidated on every walk, in
// the same batch of calls as the reads above (checkSentinels):
//
//   - the text of editable fields and the value of nodes with a Value;
//   - after any event, the states of "transient" nodes, which the toolkit
//     computes when asked (GTK 3's tree-view cells: a row that loses the
//     selection or the cursor sends no event for its cells, though the
//     row that gains them does), and of focused nodes (Gecko sends no
//     focus loss when the focus enters an iframe, only the focus gain);
//   - the list of top-level windows and their states (GTK may close one
//     with no event on the application), and their extents (a window manager moves them
//     without an event) and, for every container on screen, of the
//     deepest node of its first-child chain. Neither browser reports
//     scrolling, and GTK turns rows scrolled into view "showing" without
//     an event; a container scrolls all its children together, so a
//     scroll anywhere moves one of these nodes. One found moved, or a
//     scroll bar whose value changed, makes the walk read the tree whole;
//   - in a browser, the states of the nodes a scroll takes out of view or
//     brings back into it: a node showing that lies outside its parent,
//     and the hidden children at the edges of what a container shows
//     (hiddenEdges). A browser turns them hidden or showing some time
//     after the scroll, with no event; one that turned makes the walk
//     read the tree whole.
//
// With no event and nothing moved, every extent is kept. After events,
// extents are read as without a mirror: GTK 3's where its events say
// (memo.go), a browser's all, since a browser reports no layout change.
// A change no event reports and no sentinel sees (a browser's layout
// shifting the later siblings of a node, with no event, no scroll and no
// change of a container's first child) is seen at the next event of the
// application, or at the first walk after browserGeomAge (a browser's
// extents are not reused longer than that). Whatever else a browser
// leaves unreported is bounded by browserTreeAge: past it, its tree is
// read whole. Other toolkits (Qt) are read whole on every walk.
// [Options.NoCache] turns the mirror off.

// mirrorOf returns the nodes of a walk as the mirror keeps them: copies,
// with their kept children in order, named before any label named them.
func mirrorOf(order []*rec, kids map[string][]*rec) map[string]*rec {
	m := make(map[string]*rec, len(order))
	for _, r := range order {
		c := *r
		c.kids = make([]string, len(kids[r.path]))
		for i, k := range kids[r.path] {
			c.kids[i] = k.path
		}
		c.kidsKnown = true
		c.childCount = int32(len(c.kids))
		if c.listed == nil {
			c.listed = c.kids
		}
		c.name = r.rawName
		m[r.path] = &c
	}
	return m
}

// fromMirror seeds the walk with the mirror, patched where the events
// since the last walk say it changed, and queues the calls that read the
// changed nodes again. It returns false when the mirror cannot be used.
func (w *walk) fromMirror() bool {
	last := w.m.last
	if w.noCache || !w.m.events || last == nil || last[pathRoot] == nil || w.ev.allDirty {
		return false
	}
	if w.m.browser && (time.Since(w.m.readAt) > browserTreeAge || time.Since(w.m.navAt) < w.m.patience(browserNavAge)) {
		return false
	}
	w.mirrored = true
	for p, o := range last {
		r := *o
		r.mirrored, r.base = true, true
		r.prevBBox, r.prevKnown = o.bbox, o.bboxKnown
		r.bbox, r.bboxKnown = image.Rectangle{}, false
		w.recs[p] = &r
	}
	for p := range w.ev.kidsDirty {
		if r := w.recs[p]; r != nil {
			w.forgetKids(r)
		}
	}
	// A node the toolkit's cache dropped leaves its parent, whose subtree
	// is read again.
	for p := range w.ev.removed {
		if r := w.recs[p]; r != nil {
			if parent := w.recs[r.parent]; parent != nil {
				w.forgetKids(parent)
			}
			delete(w.recs, p)
		}
	}
	// A node that changed parents leaves its old parent, whose subtree is
	// read again, for a new one that attach finds.
	for p := range w.ev.parentDirty {
		if r := w.recs[p]; r != nil {
			if old := w.recs[r.parent]; old != nil {
				w.forgetKids(old)
			}
			delete(w.recs, p)
		}
	}
	stale := func(set map[string]bool) {
		for p := range set {
			if r := w.recs[p]; r != nil && r.mirrored {
				w.refresh(r)
			}
		}
	}
	// A browser's node read while its page loaded may have answered with
	// no interfaces: it is read again until it has some.
	if w.m.browser {
		for _, r := range w.recs {
			if r.mirrored && r.ifs&hasComponent == 0 && r.path != pathRoot {
				w.refresh(r)
			}
		}
	}
	stale(w.ev.baseDirty)
	stale(w.ev.textDirty)
	stale(w.ev.roleDirty)
	w.refreshAncestors(last)
	w.checkSentinels()
	// A node the mirror lacks that an event names was added where no
	// ChildrenChanged said (Chromium attaches a loaded page so): its
	// nearest ancestor in the mirror has its subtree read again.
	unknown := 0
	for p := range w.ev.touched {
		// A node of the mirror dropped above is read again with its
		// parent's subtree.
		if w.recs[p] == nil && !w.ev.removed[p] && (last[p] == nil || w.ev.parentDirty[p]) {
			if unknown++; unknown > maxUnknown {
				w.lost = true
				break
			}
			w.attach(p, 0)
		}
	}
	return true
}

// refreshAncestors reads again the ancestors of every node an event
// named: a node named after its content (a button after its label, a tab
// after its page's title) changes its name when that content changes, and
// Gecko sends no name change for it, in a page or in an iframe.
func (w *walk) refreshAncestors(last map[string]*rec) {
	done := map[string]bool{pathRoot: true}
	again := func(p string) {
		done[p] = true
		// base still set: the node's description is the mirror's (its
		// children may have been forgotten), not yet asked again.
		if r := w.recs[p]; r != nil && r.base {
			w.refresh(r)
		}
	}
	for p := range w.ev.kidsDirty {
		if !done[p] {
			again(p)
		}
	}
	for p := range w.ev.touched {
		o := last[p]
		for o != nil && !done[o.parent] && o.parent != "" {
			again(o.parent)
			o = last[o.parent]
		}
	}
}

// maxUnknown bounds the nodes outside the mirror whose place a walk looks
// for; past it, and past maxHops ancestors, the tree is read again whole.
const (
	maxUnknown = 64
	maxHops    = 16
)

// attach finds the nearest ancestor of path that the walk holds and makes
// its subtree read again. A node with no parent is not in the tree.
func (w *walk) attach(path string, hops int) {
	if w.climbed == nil {
		w.climbed = map[string]bool{}
	}
	if w.climbed[path] {
		return
	}
	w.climbed[path] = true
	w.p.call(getProperty(w.dest, path, ifAccessible, "Parent"), func(m *message, err error) {
		if err != nil {
			return // gone
		}
		d, err := expect(m, "v")
		if err != nil || readVariant(d) != "(so)" {
			return
		}
		bus, parent := d.ref()
		if d.err != nil || bus != w.bus || parent == pathNull || parent == path {
			return
		}
		if r := w.recs[parent]; r != nil {
			if r.kidsKnown {
				w.forgetKids(r)
			}
			return
		}
		if hops >= maxHops {
			w.lost = true
			return
		}
		w.attach(parent, hops+1)
	})
}

// forgetKids drops r's descendants from the walk, so that expand reads
// its subtree again.
func (w *walk) forgetKids(r *rec) {
	var drop func(p string)
	drop = func(p string) {
		k := w.recs[p]
		if k == nil || !k.mirrored {
			return
		}
		delete(w.recs, p)
		for _, c := range k.kids {
			drop(c)
		}
	}
	for _, c := range r.kids {
		drop(c)
	}
	r.kids, r.kidsKnown, r.childCount, r.mirrored, r.listed = nil, false, -1, false, nil
}

// refresh queues the calls that read r's role, name, description, states,
// parent and child count again; a node that no longer answers is left
// out. A node found under another parent (GTK moves a widget with no
// event for it) has both parents' subtrees read again.
func (w *walk) refresh(r *rec) {
	old := r.parent
	r.mirrored, r.base, r.parent = false, false, ""
	w.fetchBase(r, func() {
		if r.parent == "" {
			r.parent = old
		}
		if r.parent != old {
			if o := w.recs[old]; o != nil {
				w.forgetKids(o)
			}
			if n := w.recs[r.parent]; n != nil {
				if n.kidsKnown {
					w.forgetKids(n)
				}
			} else {
				w.attach(r.path, 0)
			}
		}
		if r.kidsKnown && (int(r.childCount) != len(r.kids) || r.states.has(stateManagesDescendants)) {
			w.forgetKids(r)
		}
	})
}

// checkSentinels queues the reads that catch what no event reports: the
// list of top-level windows and their states, the extents of the top-level windows and of one chain leaf per container on
// screen (see the comment at the top of this file), and the values of
// editable fields and of nodes with a Value. A sentinel that moved, or a
// scroll bar whose value changed, means content moved (and, in GTK, rows
// came on or off screen without a state event): the walk then reads the
// tree again whole.
func (w *walk) checkSentinels() {
	sentinels := sentinelsOf(w.recs, func(r *rec) bool {
		return r.mirrored && r.ifs&hasComponent != 0 && r.prevKnown && !r.prevBBox.Empty() && r.states.has(stateShowing)
	})
	// The top-level windows: a window that closed may leave no event.
	if root := w.recs[pathRoot]; root != nil && root.kidsKnown {
		want := root.listed
		w.p.call(call(w.dest, pathRoot, ifAccessible, "GetChildren"), func(m *message, err error) {
			var d *decoder
			if err == nil {
				d, err = expect(m, "a(so)")
			}
			if err != nil {
				w.lost = true
				return
			}
			var kids []string
			readRefs(d, w.bus, func(p string) { kids = append(kids, p) })
			if d.err != nil || !slices.Equal(kids, want) {
				w.lost = true
			}
		})
		// And their states: GTK hides a closed window with no event.
		for _, p := range root.kids {
			r := w.recs[p]
			if r == nil || !r.mirrored {
				continue // read again above
			}
			was := r.states
			w.p.call(call(w.dest, p, ifAccessible, "GetState"), func(m *message, err error) {
				var d *decoder
				if err == nil {
					d, err = expect(m, "au")
				}
				if err != nil {
					w.lost = true
					return
				}
				if now := readStates(d); d.err != nil || now != was {
					w.lost = true
				}
			})
		}
	}
	for s := range sentinels {
		w.p.call(callUint(w.dest, s.path, ifComponent, "GetExtents", coordTypeScreen), func(m *message, err error) {
			if err != nil {
				w.lost = true
			} else if d, err := expect(m, "(iiii)"); err != nil {
				w.lost = true
			} else if b, _ := readExtents(d); d.err != nil || b != s.prevBBox {
				w.lost = true
			}
		})
	}
	for _, r := range w.recs {
		if w.m.browser && r.path != pathRoot {
			// A browser shows again, as silently, the nodes a scroll
			// brings back: those at the edges of what shows are read
			// again.
			for _, k := range hiddenEdges(w.recs, r) {
				w.recheckStates(k)
			}
		}
		if !r.mirrored {
			continue
		}
		if w.m.browser && scrolledOut(w.recs, r) {
			// A browser turns a node scrolled out of its container hidden
			// (no "showing", no extents) some time after the scroll, and
			// says nothing: its states are read again until it does.
			w.recheckStates(r)
		}
		switch {
		case r.ifs&hasValue != 0:
			old := r.value
			r.value = ""
			w.p.call(getProperty(w.dest, r.path, ifValue, "CurrentValue"), func(m *message, err error) {
				if err == nil {
					if d, err := expect(m, "v"); err == nil {
						if v, ok := readVariantFloat(d); ok {
							r.value = formatNumber(v)
						}
					}
				}
				if r.role == roleScrollBar && r.value != old {
					w.lost = true
				}
			})
		case r.states.has(stateEditable) && r.ifs&(hasEditableText|hasText) != 0:
			w.readText(r)
		case isDocument(r):
			// A same-document navigation (an anchor, history.pushState)
			// changes the URL with no event for the document, and the
			// browser's chrome (its location bar's description, its
			// history buttons) with none it always sends: a URL that
			// changed makes the walk read the tree whole.
			old := r.value
			w.readDocURL(r, func() {
				if r.value != old {
					w.lost = true
				}
			})
		}
		if w.ev.anyEvent && (r.states.has(stateTransient) || r.states.has(stateFocused)) {
			w.recheckStates(r)
		}
	}
}

// scrolledOut reports whether r, in the mirror, is showing and yet lies
// wholly outside its parent's extents: scrolled out of a container that
// the browser has not yet told it left.
func scrolledOut(recs map[string]*rec, r *rec) bool {
	if !r.states.has(stateShowing) || !r.prevKnown || r.prevBBox.Empty() {
		return false
	}
	p := recs[r.parent]
	if p == nil || !p.prevKnown || p.prevBBox.Empty() {
		return false
	}
	return !r.prevBBox.Overlaps(p.prevBBox)
}

// hiddenEdges returns the children of r, in the mirror, that a scroll of
// r's content brings into view first: r showing, the children hidden
// next to a showing sibling, or, when no child shows, the first and the
// last child if hidden. A browser turns a node scrolled back into its
// container showing some time after the scroll, with no event; by the
// time it shows any of them, it shows one of these.
func hiddenEdges(recs map[string]*rec, r *rec) []*rec {
	if !r.states.has(stateShowing) || !r.kidsKnown || len(r.kids) == 0 {
		return nil
	}
	kids := make([]*rec, len(r.kids))
	anyShowing := false
	for i, p := range r.kids {
		kids[i] = recs[p]
		anyShowing = anyShowing || kids[i] != nil && kids[i].states.has(stateShowing)
	}
	showing := func(i int) bool {
		return i >= 0 && i < len(kids) && kids[i] != nil && kids[i].states.has(stateShowing)
	}
	var out []*rec
	for i, k := range kids {
		if k == nil || !k.mirrored || k.states.has(stateShowing) {
			continue
		}
		edge := showing(i-1) || showing(i+1)
		if !anyShowing {
			edge = i == 0 || i == len(kids)-1
		}
		if edge {
			out = append(out, k)
		}
	}
	return out
}

// recheckStates reads again the states of a node the toolkit describes on
// demand, or that may lose a state with no event: GTK 3's tree-view cells
// are "transient", their states computed from the row each time they are
// asked, and a row that loses the selection or the cursor sends no event
// for its cells; Gecko sends no focus loss for a node when the focus goes
// into an iframe's document. A node that turned showing or hidden means
// content scrolled: the tree is read whole.
func (w *walk) recheckStates(r *rec) {
	was := r.states
	w.p.call(call(w.dest, r.path, ifAccessible, "GetState"), func(m *message, err error) {
		var d *decoder
		if err == nil {
			d, err = expect(m, "au")
		}
		if err != nil {
			w.lost = true
			return
		}
		now := readStates(d)
		if d.err != nil || now.has(stateShowing) != was.has(stateShowing) {
			w.lost = true
			return
		}
		r.states = now
	})
}

// sentinelsOf chooses, among the nodes of recs that usable accepts, those
// whose extents move when anything on screen moves: the top-level windows
// and, for every node showing, the deepest node of its first usable
// child's first-child chain (see the comment at the top of this file).
func sentinelsOf(recs map[string]*rec, usable func(r *rec) bool) map[*rec]bool {
	ok := func(r *rec) bool { return r != nil && usable(r) }
	leafOf := map[string]*rec{}
	var chainLeaf func(r *rec) *rec
	chainLeaf = func(r *rec) *rec {
		if l, found := leafOf[r.path]; found {
			return l
		}
		l := r
		leafOf[r.path] = l // a cycle in a broken tree ends here
		for _, p := range r.kids {
			if k := recs[p]; ok(k) {
				l = chainLeaf(k)
				break
			}
		}
		leafOf[r.path] = l
		return l
	}
	sentinels := map[*rec]bool{}
	seen := map[string]bool{}
	var visit func(r *rec)
	visit = func(r *rec) {
		if r == nil || seen[r.path] || !r.states.has(stateShowing) && r.path != pathRoot {
			return
		}
		seen[r.path] = true
		if r.depth == 1 && ok(r) {
			sentinels[r] = true
		}
		for _, p := range r.kids {
			if k := recs[p]; ok(k) {
				sentinels[chainLeaf(k)] = true
				break
			}
		}
		for _, p := range r.kids {
			visit(recs[p])
		}
	}
	visit(recs[pathRoot])
	return sentinels
}

// reuseGeometry gives every node the walk would have read its remembered
// extents.
func (w *walk) reuseGeometry(r *rec) {
	if !r.states.has(stateShowing) && r.depth > 0 {
		return
	}
	if r.ifs&hasComponent != 0 && r.prevKnown {
		r.bbox, r.bboxKnown = r.prevBBox, true
	}
	for _, k := range w.kids[r.path] {
		w.reuseGeometry(k)
	}
}
