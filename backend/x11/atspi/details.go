package atspi

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// browserGeomAge bounds how long a browser's extents are reused when no
// event came: a browser lays a page out with no event for it (a page that
// finished its layout after the walk that read it, content that moved
// under no container's first child), so past this age a walk reads its
// extents again even when nothing says they changed.
const browserGeomAge = 500 * time.Millisecond

// browserTreeAge bounds how long a browser's mirror is patched by events
// alone: Firefox was seen to leave a page read mid-load (controls without
// their names, texts not yet there) with no event for what came after,
// so past this age a walk reads the tree whole again.
const browserTreeAge = 2 * time.Second

// browserNavAge bounds the doubt a navigation (a document's URL changed)
// leaves: Chromium updates its chrome for the new URL (the location bar's
// security chip) a moment after the page's URL, with no event for it, so
// for this long after a walk saw a URL change, every walk reads the tree
// whole. It is the window of an idle machine: patience lengthens it by
// the browser's measured lag.
const browserNavAge = 500 * time.Millisecond

// lagScale is how many of an application's answer times (its lag, a
// Peer.Ping's round trip through its main loop, measured at each walk) a
// browser is given beyond a window in which it catches up with no event
// to say so. On a busy machine each step of its catching up (a renderer's
// message, a turn of its main loop, a repaint) is late as its answer to
// us is: a fraction of a millisecond at rest, which leaves a window as it
// is, and tens of milliseconds on two cores shared with a build, which
// stretches it to seconds.
const lagScale = 100

// maxLag bounds the lag that stretches a window, and the walks' own
// limits (Client.appTimeout): an application that takes longer than this
// to answer a ping is hung, not busy.
const maxLag = 100 * time.Millisecond

// noteLag records one measure of the application's answer time. A
// shorter measure lowers the lag by a quarter at most, so one quick
// answer on a busy machine does not shrink the windows at once.
func (m *memo) noteLag(rtt time.Duration) {
	rtt = min(rtt, maxLag)
	old := time.Duration(m.lag.Load())
	m.lag.Store(int64(max(rtt, old-old/4)))
}

// patience is window d of waiting for the application, lengthened by its
// measured lag.
func (m *memo) patience(d time.Duration) time.Duration {
	return d + lagScale*time.Duration(m.lag.Load())
}

// This file holds phase 4 of a walk: what completes the nodes kept in the
// tree, and what the memo keeps of them for the next walk.

// details queues the calls that complete the kept nodes.
func (w *walk) details(order []*rec) {
	// Scroll bars whose value changed moved their parent's content.
	for _, r := range order {
		if w.ev.valueChanged[r.path] && r.role == roleScrollBar && r.parent != "" {
			if w.moved == nil {
				w.moved = map[string]bool{}
			}
			w.moved[r.parent] = true
		}
	}
	switch {
	case len(order) == 0:
	case w.mirrored && !w.ev.anyEvent && !(w.m.browser && time.Since(w.m.geomAt) > browserGeomAge):
		// The sentinels found nothing moved.
		w.reuseGeometry(order[0])
	default:
		if w.m.browser {
			w.m.geomAt = time.Now()
		}
		w.geometry(order[0], false, false)
	}
	for _, r := range order {
		if !r.mirrored {
			r.rawName = r.name
		}
		if r.ifs&hasAction != 0 && !r.mirrored {
			w.fetchActions(r)
		}
		if r.name == "" && namedByLabel[roleName(r.role)] {
			if l := w.recs[r.labelPath]; r.mirrored && r.labelChecked && (r.labelPath == "" || l != nil && l.base) {
				if l != nil {
					r.name = l.name
				}
			} else {
				w.labelledBy(r)
			}
		}
		editable := r.states.has(stateEditable)
		switch {
		case r.mirrored:
			// Unchanged since the mirror, or read with the sentinels.
		case r.ifs&hasValue != 0:
			r.value = ""
			w.p.call(getProperty(w.dest, r.path, ifValue, "CurrentValue"), func(m *message, err error) {
				if err != nil {
					return
				}
				if d, err := expect(m, "v"); err == nil {
					if v, ok := readVariantFloat(d); ok {
						r.value = formatNumber(v)
					}
				}
			})
		case isDocument(r) && !editable:
			// Before its text: Gecko gives a page EditableText, whose
			// text is placeholders for the objects it holds.
			w.readDocURL(r, nil)
		case r.ifs&hasEditableText != 0 || editable && r.ifs&hasText != 0:
			w.readText(r)
		}
	}
}

// isDocument reports whether r is a browser's document (a page or a
// frame's), whose value is the URL it shows.
func isDocument(r *rec) bool {
	return r.ifs&hasDocument != 0 && (r.role == roleDocumentWeb || r.role == roleDocumentFrame)
}

// readDocURL queues the read of r's document URL as its value: the
// Document attributes carry it, as "DocURL" in Gecko and as "URI" in
// Chromium (which answers GetAttributeValue("DocURL") with ""), so one
// GetAttributes call serves both. The value stays empty when the read
// fails, the document has no URL, or its URL is longer than a value may
// be (maxValueBytes). then, when not nil, runs after the read.
func (w *walk) readDocURL(r *rec, then func()) {
	r.value = ""
	w.p.call(call(w.dest, r.path, ifDocument, "GetAttributes"), func(m *message, err error) {
		if then != nil {
			defer then()
		}
		if err != nil {
			return
		}
		d, err := expect(m, "a{ss}")
		if err != nil {
			return
		}
		// A URL cut short would name another page: one too long for a
		// value (a large data: URL) is left out.
		if url := readDocURL(d); d.err == nil && len(url) <= maxValueBytes {
			r.value = url
		}
	})
}

// geometry reads r's extents, reusing remembered ones where nothing says
// they changed, then its children's. Nothing under a node that is not
// showing is on screen, so nothing there is asked. A node with no area
// still has its children read: popups and menus hang under zero-size
// parents (Firefox's open <select> options under its combo box).
//
// An event about a node (BoundsChanged, ChildrenChanged, a geometric
// StateChanged) makes the walk read that node again, and its subtree too
// only if the node did move or its children changed: GTK reports every
// allocation, even an unchanged one, and a child widget that moves
// reports its own, but a child that is no widget (a notebook's tab)
// reports nothing when its siblings change. stale says an
// ancestor moved; read says r's bbox was already read as a sentinel.
func (w *walk) geometry(r *rec, stale, read bool) {
	if !r.states.has(stateShowing) && r.depth > 0 {
		return
	}
	stale = stale || w.ev.allDirty || w.moved[r.path]
	dirty := w.ev.geomDirty[r.path]
	// A child added or removed lays its siblings out again, and not all
	// of them are widgets that report it (GTK's notebook tabs).
	relaid := w.ev.kidsDirty[r.path]
	k := w.old(r.path)
	descend := func(stale bool) {
		kids := w.kids[r.path]
		if !stale && len(kids) > 0 && w.m.geometry && scrolls(r) {
			// Scrolled content moves without telling: read the first
			// remembered child again and trust the rest only if it stayed.
			for _, s := range kids {
				ks := w.old(s.path)
				if s.ifs&hasComponent == 0 || !s.states.has(stateShowing) || ks == nil || !ks.haveBBox || ks.parent != r.path {
					continue
				}
				w.extents(s, func() {
					moved := s.bbox != ks.bbox
					for _, kid := range kids {
						w.geometry(kid, moved, kid == s)
					}
				})
				return
			}
		}
		for _, kid := range kids {
			w.geometry(kid, stale, false)
		}
	}
	switch {
	case read:
		descend(stale)
	case r.ifs&hasComponent == 0:
		descend(stale)
	case w.m.geometry && !stale && !dirty && r.depth > 1 && k != nil && k.haveBBox && k.parent == r.parent:
		// Top-level windows (depth 1) are always read: a window manager
		// moves them without any event.
		r.bbox, r.bboxKnown = k.bbox, true
		descend(relaid)
	default:
		w.extents(r, func() {
			moved := k == nil || !k.haveBBox || k.bbox != r.bbox
			descend(stale || moved || relaid)
		})
	}
}

// scrolls reports whether r's children may move on screen without any
// event: scrolled panes, viewports and views that manage their rows.
// readText queues the read of r's whole text as its value (clipped);
// the value stays empty when the read fails.
func (w *walk) readText(r *rec) {
	r.value = ""
	w.p.call(getText(w.dest, r.path), func(m *message, err error) {
		if err != nil {
			return
		}
		if d, err := expect(m, "s"); err == nil {
			if s := d.str(); d.err == nil {
				r.value = clip(s, maxValueBytes)
			}
		}
	})
}

func scrolls(r *rec) bool {
	return r.role == roleScrollPane || r.role == roleViewport || r.states.has(stateManagesDescendants)
}

// extents reads r's extents, then runs then.
func (w *walk) extents(r *rec, then func()) {
	w.p.call(callUint(w.dest, r.path, ifComponent, "GetExtents", coordTypeScreen), func(m *message, err error) {
		if err == nil {
			if d, err := expect(m, "(iiii)"); err == nil {
				r.bbox, _ = readExtents(d)
				r.bboxKnown = d.err == nil
			}
		}
		then()
	})
}

// fetchActions names r's actions. GetActions gives the count and the
// localised names in one call; machine names (what an agent invokes) cost
// one GetName call per action, so they are asked of one node per distinct
// localised list and shared with every node that has the same list. A
// toolkit whose GetActions is not safe to ask (memo.actionsOneByOne) is
// asked its count and names only.
func (w *walk) fetchActions(r *rec) {
	// An empty list is asked again: browsers fill a loading page's
	// actions in after its nodes appear. A toolkit whose actions follow
	// the layout is asked again whenever the node is read again.
	if k := w.old(r.path); k != nil && k.haveActions && len(k.actions) > 0 && !w.m.actionsFollowLayout {
		r.actions, r.haveActs = k.actions, true
		return
	}
	if w.m.actionsOneByOne {
		w.actionsByName(r)
		return
	}
	w.p.call(call(w.dest, r.path, ifAction, "GetActions"), func(m *message, err error) {
		if err != nil {
			w.actionsByName(r)
			return
		}
		d, err := expect(m, "a(sss)")
		if err != nil {
			w.actionsByName(r)
			return
		}
		var local []string
		end := d.array(8)
		for d.off < end && d.err == nil && len(local) < maxActions {
			d.align(8)
			local = append(local, d.str())
			d.str()
			d.str()
		}
		if d.err != nil {
			w.actionsByName(r)
			return
		}
		if len(local) == 0 {
			r.haveActs = true
			return
		}
		key := strings.Join(local, "\x00")
		if names, ok := w.m.actionNames[key]; ok && !w.noCache {
			r.actions, r.haveActs = names, true
			return
		}
		if w.actionWait == nil {
			w.actionWait = map[string][]*rec{}
		}
		waiting, asked := w.actionWait[key]
		w.actionWait[key] = append(waiting, r)
		if asked {
			return
		}
		w.nameActions(r, len(local), func(names []string, ok bool) {
			if ok {
				if w.m.actionNames == nil {
					w.m.actionNames = map[string][]string{}
				}
				w.m.actionNames[key] = names
			}
			for _, o := range w.actionWait[key] {
				o.actions, o.haveActs = names, ok
			}
			delete(w.actionWait, key)
		})
	})
}

// actionsByName names r's actions one call each, for toolkits without
// GetActions or whose GetActions is not safe to ask.
func (w *walk) actionsByName(r *rec) {
	w.p.call(getProperty(w.dest, r.path, ifAction, "NActions"), func(m *message, err error) {
		if err != nil {
			return
		}
		d, err := expect(m, "v")
		if err != nil {
			return
		}
		n, ok := readVariantInt(d)
		if !ok || n <= 0 {
			r.haveActs = ok
			return
		}
		w.nameActions(r, int(n), func(names []string, ok bool) { r.actions, r.haveActs = names, ok })
	})
}

// nameActions asks r for the machine names of its first n actions.
func (w *walk) nameActions(r *rec, n int, then func(names []string, ok bool)) {
	names := make([]string, min(n, maxActions))
	left, ok := len(names), true
	if left == 0 {
		then(names, ok)
		return
	}
	for i := range names {
		w.p.call(callInt(w.dest, r.path, ifAction, "GetName", int32(i)), func(m *message, err error) {
			if err == nil {
				var d *decoder
				if d, err = expect(m, "s"); err == nil {
					names[i] = d.str()
				}
			}
			ok = ok && err == nil
			left--
			if left == 0 {
				then(names, ok)
			}
		})
	}
}

// remember replaces the memo's nodes and mirror with what this walk
// learned.
func (w *walk) remember(order []*rec) {
	w.m.last = nil
	if w.noCache {
		return
	}
	if w.m.events && !w.cutBudget && !w.cutDepth {
		if !w.mirrored {
			w.m.readAt = time.Now()
		}
		w.m.last = mirrorOf(order, w.kids)
		if root := w.m.last[pathRoot]; root != nil && w.rootListed != nil {
			root.listed = w.rootListed
		}
	}
	if w.m.browser {
		var urls []string
		for _, r := range order {
			// The pages on screen: a tab opened behind is no navigation.
			if isDocument(r) && r.states.has(stateShowing) {
				urls = append(urls, r.value)
			}
		}
		if w.m.urlsKnown && !slices.Equal(urls, w.m.urls) {
			w.m.navAt = time.Now()
		}
		w.m.urls, w.m.urlsKnown = urls, true
	}
	nodes := make(map[string]*known, len(order))
	for _, r := range order {
		nodes[r.path] = &known{
			parent:      r.parent,
			role:        r.role,
			ifs:         r.ifs,
			haveRole:    true,
			bbox:        r.bbox,
			haveBBox:    r.bboxKnown,
			actions:     r.actions,
			haveActions: r.haveActs,
		}
	}
	w.m.nodes = nodes
}

// formatNumber renders a Value the way a person would read it: 5, not 5.000000.
func formatNumber(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}
