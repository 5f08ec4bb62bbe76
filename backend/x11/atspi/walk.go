package atspi

import (
	"cmp"
	"context"
	"fmt"
	"image"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"

	"shinken.dev/go/shinken"
)

// A walk reads one application's tree over one connection. It runs in
// phases, each a pipeline of calls whose callbacks queue the next calls:
//
//  1. structure from the toolkit's cache (Cache.GetItems: role, name,
//     states, parent, interfaces of every cached node in one call);
//  2. the parts the cache lacks (descendants of nodes that manage their own,
//     or an app with no cache at all): Collection.GetMatches returns a
//     subtree's references in pre-order in one call, and each new node costs
//     two to four pipelined calls (states and Accessible properties; role
//     and interfaces unless the memo has them); without Collection,
//     GetChildren level by level;
//  3. assembly in pre-order under the node budget and the depth cap;
//  4. the details of the nodes kept: extents of the nodes on screen (from
//     the top down, so that nothing under a hidden node is asked), action
//     names, values and editable text.
type walk struct {
	p    *pipeline
	bus  string // the application's unique bus name
	dest string // destination for calls; "" on a peer-to-peer connection

	recs     map[string]*rec
	seq      int
	maxNodes int
	maxDepth int

	// m is the application's memo; ev the events since its last walk.
	m       *memo
	ev      memoEvents
	noCache bool
	// barrier waits until the events the application sent before the walk
	// began are recorded, and returns them.
	barrier func() memoEvents

	// discovered counts nodes found by GetChildren expansion, to stop it at
	// the budget.
	discovered int
	cutBudget  bool
	cutDepth   bool

	// firstErr is the first error a node's description met; it explains a
	// root that cannot be read.
	firstErr error

	// kids lists the children of each kept node, for the top-down pass.
	kids map[string][]*rec
	// moved holds nodes whose whole subtree moved (a scroll bar's parent).
	moved map[string]bool
	// actionWait holds nodes waiting for a representative to name the
	// actions of their localised action list.
	actionWait map[string][]*rec

	// mirrored says the walk started from the mirror (mirror.go); lost
	// that the mirror could not be patched; climbed the nodes attach
	// asked about.
	mirrored bool
	lost     bool
	climbed  map[string]bool
	// rootListed is the root's child list as a full walk read it.
	rootListed []string

	// afterStructure runs between phases 3 and 4; tests use it to kill an
	// application mid-walk.
	afterStructure func(bus string)
}

// A rec is what a walk knows about one node.
type rec struct {
	path       string
	parent     string // "" for the root or when unknown
	key        int    // order among siblings
	childCount int32  // -1 when unknown
	kids       []string
	kidsKnown  bool // kids is the authoritative child list
	ifs        ifaceSet
	role       uint32
	name, desc string
	states     stateSet
	base       bool // role, name, states and interfaces are known
	fromCache  bool
	depth      int // in the tree; for GetChildren expansion, before assembly

	bbox      image.Rectangle
	bboxKnown bool // bbox was read or reused this walk
	actions   []string
	haveActs  bool
	value     string

	// rawName is the name before a label named the node.
	rawName string
	// labelChecked says the node's relations were read; labelPath is the
	// label they name, "" if none.
	labelChecked bool
	labelPath    string
	// listed is the node's child list as the application last gave it,
	// nodes the walk could not describe included.
	listed []string
	// mirrored says the node comes from the mirror unchanged; prevBBox and
	// prevKnown are its extents there.
	mirrored  bool
	prevBBox  image.Rectangle
	prevKnown bool
}

// appTree is one application's part of a snapshot.
type appTree struct {
	bus   string
	name  string
	nodes []shinken.Node
	cuts  []string // why the walk was cut short
}

func newWalk(p *pipeline, bus, dest string, maxNodes, maxDepth int, m *memo) *walk {
	return &walk{p: p, bus: bus, dest: dest, recs: map[string]*rec{}, maxNodes: maxNodes, maxDepth: maxDepth, m: m}
}

func (w *walk) rec(path string) *rec {
	r := w.recs[path]
	if r == nil {
		r = &rec{path: path, childCount: -1, key: -1}
		w.recs[path] = r
	}
	return r
}

// old returns what the memo knows of path, or nil.
func (w *walk) old(path string) *known {
	if w.noCache {
		return nil
	}
	return w.m.nodes[path]
}

// run performs the four phases.
func (w *walk) run() (*appTree, error) {
	// Phase 1: the mirror of the last walk where the toolkit's events keep
	// it true, else the cache, if the toolkit keeps one, and once per
	// application which toolkit it is.
	//
	// The events are taken before anything is read: an event that comes
	// while the walk reads is kept for the next walk, which a mirror
	// built from reads older than the event then corrects.
	if w.barrier != nil {
		w.ev = w.barrier()
	}
	if w.m.events && w.m.last != nil && !w.noCache && w.fromMirror() {
		if err := w.p.run(); err != nil {
			return nil, err
		}
		if w.lost {
			w.mirrored, w.lost = false, false
			clear(w.recs)
		}
	}
	if !w.mirrored {
		w.p.call(call(w.dest, pathCache, ifCache, "GetItems"), func(m *message, err error) {
			if err == nil {
				w.addCacheItems(m)
			}
		})
		if w.m.events {
			// The application's windows as it lists them, for the mirror's
			// sentinels: some it lists, the walk cannot describe.
			w.p.call(call(w.dest, pathRoot, ifAccessible, "GetChildren"), func(m *message, err error) {
				if err != nil {
					return
				}
				if d, err := expect(m, "a(so)"); err == nil {
					var kids []string
					readRefs(d, w.bus, func(p string) { kids = append(kids, p) })
					if d.err == nil {
						w.rootListed = kids
					}
				}
			})
		}
	}
	if !w.m.toolkitKnown {
		// Two Gets, not GetAll: GTK's bridge fails GetAll on Application.
		var toolkit, version string
		left := 2
		got := func(dst *string) func(*message, error) {
			return func(m *message, err error) {
				if err == nil {
					if d, err := expect(m, "v"); err == nil && readVariant(d) == "s" {
						*dst = d.str()
					}
				}
				if left--; left == 0 {
					w.m.toolkitKnown = true
					// GTK 3 reports every allocation change (BoundsChanged)
					// and every state change; others are not trusted to.
					w.m.geometry = strings.EqualFold(toolkit, "gtk") && strings.HasPrefix(version, "3.")
					w.m.oneByOne = strings.EqualFold(toolkit, "qt")
					w.m.browser = strings.EqualFold(toolkit, "gecko") || strings.EqualFold(toolkit, "chromium")
					w.m.actionsOneByOne = strings.EqualFold(toolkit, "gecko")
					w.m.actionsFollowLayout = strings.EqualFold(toolkit, "chromium")
					w.m.events = w.m.geometry || w.m.browser
				}
			}
		}
		w.p.call(getProperty(w.dest, pathRoot, ifApplication, "ToolkitName"), got(&toolkit))
		w.p.call(getProperty(w.dest, pathRoot, ifApplication, "Version"), got(&version))
	}
	if err := w.p.run(); err != nil {
		return nil, err
	}
	root := w.recs[pathRoot]
	if root == nil || !root.base {
		root = w.rec(pathRoot)
		w.fetchBase(root, nil)
		if err := w.p.run(); err != nil {
			return nil, err
		}
		if !root.base {
			return nil, fmt.Errorf("atspi: %s has no readable root: %w", w.bus, w.firstErr)
		}
	}
	root.parent = ""

	// Phase 2: expand what the cache does not cover.
	w.expand(root)
	if err := w.p.run(); err != nil {
		return nil, err
	}

	// Phase 3: assemble.
	order := w.assemble(root)

	if w.afterStructure != nil {
		w.afterStructure(w.bus)
	}

	// Phase 4: details of the nodes kept.
	w.details(order)
	if err := w.p.run(); err != nil {
		return nil, err
	}
	w.remember(order)
	w.nameBesideLabels(order)

	t := &appTree{bus: w.bus, name: root.name}
	index := make(map[string]int, len(order))
	t.nodes = make([]shinken.Node, 0, len(order))
	for i, r := range order {
		parent := -1
		if i > 0 {
			parent = index[r.parent]
		}
		index[r.path] = i
		t.nodes = append(t.nodes, shinken.Node{
			ID:          w.bus + ":" + r.path,
			Parent:      parent,
			Depth:       r.depth,
			Role:        roleName(r.role),
			Name:        r.name,
			Description: r.desc,
			Value:       r.value,
			States:      r.states.names(),
			Actions:     slices.Clone(r.actions), // shared with the memo and other nodes
			BBox:        r.bbox,
			Focused:     r.states.has(stateFocused),
			Provenance:  map[string]any{"bus": w.bus, "path": r.path},
		})
	}
	if w.cutBudget {
		t.cuts = append(t.cuts, "node budget of "+strconv.Itoa(w.maxNodes)+" reached")
	}
	if w.cutDepth {
		t.cuts = append(t.cuts, "depth cap of "+strconv.Itoa(w.maxDepth)+" reached")
	}
	return t, nil
}

// addCacheItems records the reply of Cache.GetItems. Toolkits disagree on
// its shape: GTK's bridge sends (self, app, parent, index in parent, child
// count, interfaces, name, role, description, states), Qt and older bridges
// send the child list instead of index and count.
func (w *walk) addCacheItems(m *message) {
	var withKids bool
	switch m.sig {
	case "a((so)(so)(so)iiassusau)":
	case "a((so)(so)(so)a(so)assusau)":
		withKids = true
	default:
		return
	}
	d := &m.body
	end := d.array(8)
	for d.off < end && d.err == nil {
		d.align(8)
		selfBus, self := d.ref()
		d.ref() // application
		parentBus, parent := d.ref()
		index, count := int32(-1), int32(-1)
		var kids []string
		if withKids {
			readRefs(d, w.bus, func(p string) { kids = append(kids, p) })
		} else {
			index, count = d.i32(), d.i32()
		}
		ifs := readIfaces(d)
		name := d.str()
		role := d.u32()
		desc := d.str()
		states := readStates(d)
		if d.err != nil || selfBus != w.bus {
			continue
		}
		r := w.rec(self)
		r.fromCache, r.base = true, true
		r.ifs, r.name, r.role, r.desc, r.states = ifs, name, role, desc, states
		r.key, r.childCount = int(index), count
		if parentBus == w.bus && parent != pathNull && parent != self {
			r.parent = parent
		}
		if withKids {
			r.kids, r.kidsKnown, r.listed = kids, true, kids
			r.childCount = int32(len(kids))
		}
	}
	if d.err != nil {
		// A half-read cache is worse than none: the walk falls back to
		// asking every node.
		clear(w.recs)
	}
}

// fetchBase queues the calls that describe a node the cache lacks: states
// and Accessible properties always, role and interfaces unless the memo
// has them. then runs once all succeeded.
func (w *walk) fetchBase(r *rec, then func()) {
	k := w.old(r.path)
	// Interfaces are fixed for an object's life, but a browser's proxy for
	// a page node being loaded can first answer with none: a remembered
	// node without Component is read again.
	useMemo := k != nil && k.haveRole && k.ifs&hasComponent != 0 && !w.ev.allDirty && !w.ev.roleDirty[r.path]
	left, failed := 4, false
	if useMemo {
		left = 2
		r.role, r.ifs = k.role, k.ifs
	}
	done := func(err error) {
		if err != nil {
			failed = true
			if w.firstErr == nil {
				w.firstErr = err
			}
		}
		left--
		if left == 0 && !failed {
			r.base = true
			if then != nil {
				then()
			}
		}
	}
	w.p.call(call(w.dest, r.path, ifAccessible, "GetState"), func(m *message, err error) {
		if err == nil {
			var d *decoder
			if d, err = expect(m, "au"); err == nil {
				r.states = readStates(d)
				err = d.err
			}
		}
		done(err)
	})
	setParent := func(bus, parent string) {
		if bus == w.bus && parent != pathNull && parent != r.path && r.parent == "" {
			r.parent = parent
		}
	}
	if w.m.oneByOne {
		left += 3
		get := func(prop, sig string, read func(d *decoder)) {
			w.p.call(getProperty(w.dest, r.path, ifAccessible, prop), func(m *message, err error) {
				if err == nil {
					var d *decoder
					if d, err = expect(m, "v"); err == nil {
						if got := readVariant(d); got == sig {
							read(d)
						}
						err = d.err
					}
				}
				done(err)
			})
		}
		get("Name", "s", func(d *decoder) { r.name = d.str() })
		get("Description", "s", func(d *decoder) { r.desc = d.str() })
		get("ChildCount", "i", func(d *decoder) { r.childCount = d.i32() })
		get("Parent", "(so)", func(d *decoder) { setParent(d.ref()) })
	} else {
		w.p.call(getAllProperties(w.dest, r.path, ifAccessible), func(m *message, err error) {
			if err == nil {
				var d *decoder
				if d, err = expect(m, "a{sv}"); err == nil {
					p := readAccessibleProps(d)
					if err = d.err; err == nil {
						r.name, r.desc, r.childCount = p.name, p.desc, p.childCount
						setParent(p.parentBus, p.parent)
					}
				}
			}
			done(err)
		})
	}
	if useMemo {
		return
	}
	w.p.call(call(w.dest, r.path, ifAccessible, "GetRole"), func(m *message, err error) {
		if err == nil {
			var d *decoder
			if d, err = expect(m, "u"); err == nil {
				r.role = d.u32()
				err = d.err
			}
		}
		done(err)
	})
	w.p.call(call(w.dest, r.path, ifAccessible, "GetInterfaces"), func(m *message, err error) {
		if err == nil {
			var d *decoder
			if d, err = expect(m, "as"); err == nil {
				r.ifs = readIfaces(d)
				err = d.err
			}
		}
		done(err)
	})
}

// expand walks the known structure from root and queues the calls that
// fetch what it lacks: the subtrees of nodes whose children the cache does
// not hold, and the exact child order where the cache leaves it unclear.
func (w *walk) expand(root *rec) {
	byParent := w.children()
	type item struct {
		r     *rec
		depth int
	}
	stack := []item{{root, 0}}
	seen := map[string]bool{}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		r := it.r
		if seen[r.path] || it.depth >= w.maxDepth {
			continue
		}
		seen[r.path] = true
		kids := byParent[r.path]
		if r.kidsKnown {
			kids = kids[:0:0]
			for _, p := range r.kids {
				if k := w.recs[p]; k != nil {
					kids = append(kids, k)
				}
			}
		}
		// A node of the mirror holds its children until an event says
		// otherwise, even one that manages them.
		manages := r.states.has(stateManagesDescendants) && !r.mirrored
		complete := r.childCount >= 0 && int(r.childCount) == len(kids) && !manages
		switch {
		case r.childCount == 0 && !manages:
			continue
		case !complete && r.ifs&hasCollection != 0:
			w.matchSubtree(r, it.depth)
			continue
		case !complete:
			w.discovered += len(kids)
			w.childrenOf(r, it.depth)
			continue
		case !r.kidsKnown && ambiguous(kids):
			w.orderChildren(r)
		}
		for _, k := range kids {
			stack = append(stack, item{k, it.depth + 1})
		}
	}
}

// ambiguous reports whether cached siblings lack distinct indexes, as GTK's
// scroll bars do (index -1), so their order must be asked for.
func ambiguous(kids []*rec) bool {
	seen := make(map[int]bool, len(kids))
	for _, k := range kids {
		if k.key < 0 || seen[k.key] {
			return true
		}
		seen[k.key] = true
	}
	return false
}

// orderChildren asks for r's children to learn their exact order.
func (w *walk) orderChildren(r *rec) {
	w.p.call(call(w.dest, r.path, ifAccessible, "GetChildren"), func(m *message, err error) {
		if err != nil {
			return
		}
		d, err := expect(m, "a(so)")
		if err != nil {
			return
		}
		var kids []string
		readRefs(d, w.bus, func(p string) { kids = append(kids, p) })
		if d.err == nil {
			r.kids, r.kidsKnown, r.listed = kids, true, kids
		}
	})
}

// matchSubtree fetches every descendant of r with one GetMatches call, then
// describes the ones the cache lacks. The reply is in pre-order, which
// gives siblings their order. A Collection that fails leaves the subtree
// to GetChildren.
func (w *walk) matchSubtree(r *rec, depth int) {
	w.p.call(getMatchesAll(w.dest, r.path, int32(w.maxNodes+1)), func(m *message, err error) {
		var d *decoder
		if err == nil {
			d, err = expect(m, "a(so)")
		}
		if err != nil {
			w.childrenOf(r, depth)
			return
		}
		readRefs(d, w.bus, func(p string) {
			w.seq++
			k := w.rec(p)
			// A cached index may be stale next to uncached siblings; the
			// pre-order position is not.
			k.key = w.seq
			if !k.base {
				w.fetchBase(k, nil)
			}
		})
	})
}

// childrenOf expands r level by level with GetChildren, for toolkits that
// offer no Collection.
func (w *walk) childrenOf(r *rec, depth int) {
	w.p.call(call(w.dest, r.path, ifAccessible, "GetChildren"), func(m *message, err error) {
		if err != nil {
			return
		}
		d, err := expect(m, "a(so)")
		if err != nil {
			return
		}
		var kids []string
		readRefs(d, w.bus, func(p string) { kids = append(kids, p) })
		if d.err != nil {
			return
		}
		r.kids, r.kidsKnown, r.listed = kids, true, kids
		for i, p := range kids {
			if w.discovered > w.maxNodes {
				w.cutBudget = true
				return
			}
			k := w.rec(p)
			if k.base {
				continue
			}
			w.discovered++
			k.key, k.parent, k.depth = i, r.path, depth+1
			w.fetchBase(k, func() {
				k.parent = r.path
				if k.childCount != 0 || k.states.has(stateManagesDescendants) {
					if k.depth >= w.maxDepth {
						w.cutDepth = true
						return
					}
					w.childrenOf(k, k.depth)
				}
			})
		}
	})
}

// children groups the described nodes by parent, siblings in order.
func (w *walk) children() map[string][]*rec {
	by := map[string][]*rec{}
	for _, r := range w.recs {
		if r.base && r.parent != "" {
			by[r.parent] = append(by[r.parent], r)
		}
	}
	for _, kids := range by {
		slices.SortFunc(kids, func(a, b *rec) int {
			// Unknown positions (-1) go last, then by path for a stable order.
			ka, kb := a.key, b.key
			if ka < 0 {
				ka = int(^uint(0) >> 1)
			}
			if kb < 0 {
				kb = int(^uint(0) >> 1)
			}
			if c := cmp.Compare(ka, kb); c != 0 {
				return c
			}
			return comparePaths(a.path, b.path)
		})
	}
	return by
}

// comparePaths orders object paths, numbers by value: .../7 before .../10.
func comparePaths(a, b string) int {
	ia := strings.LastIndexByte(a, '/')
	ib := strings.LastIndexByte(b, '/')
	na, ea := strconv.Atoi(a[ia+1:])
	nb, eb := strconv.Atoi(b[ib+1:])
	if ea == nil && eb == nil && a[:ia] == b[:ib] {
		return cmp.Compare(na, nb)
	}
	return strings.Compare(a, b)
}

// assemble lays the described nodes out in pre-order from root, within the
// node budget and the depth cap, and records each kept node's children.
func (w *walk) assemble(root *rec) []*rec {
	byParent := w.children()
	w.kids = map[string][]*rec{}
	var order []*rec
	type item struct {
		r     *rec
		depth int
	}
	stack := []item{{root, 0}}
	seen := map[string]bool{}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[it.r.path] {
			continue // a cycle in a broken tree
		}
		if len(order) >= w.maxNodes {
			w.cutBudget = true
			break
		}
		seen[it.r.path] = true
		it.r.depth = it.depth
		order = append(order, it.r)
		if it.depth > 0 {
			w.kids[it.r.parent] = append(w.kids[it.r.parent], it.r)
		}
		kids := byParent[it.r.path]
		if it.r.kidsKnown {
			kids = kids[:0:0]
			for _, p := range it.r.kids {
				if k := w.recs[p]; k != nil && k.base {
					kids = append(kids, k)
				}
			}
		}
		// A defunct node is gone, whatever its parent still lists (Firefox
		// keeps dead nodes among its children for a while): whether a read
		// catches it there must not make two reads differ.
		kids = slices.DeleteFunc(slices.Clone(kids), func(k *rec) bool { return k.states.has(stateDefunct) })
		if len(kids) == 0 {
			continue
		}
		if it.depth >= w.maxDepth {
			w.cutDepth = true
			continue
		}
		for i := len(kids) - 1; i >= 0; i-- {
			k := kids[i]
			k.parent = it.r.path
			stack = append(stack, item{k, it.depth + 1})
		}
	}
	return order
}

// walkApp walks one application under its deadline. pinged says a barrier
// of the same snapshot (its probe) already made the application's events
// up to now recorded.
func (c *Client) walkApp(parent context.Context, a *app, maxNodes, maxDepth int, pinged bool) (*appTree, error) {
	deadline := time.Now().Add(c.appTimeout(a))
	if d, ok := parent.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	ctx, cancel := context.WithDeadline(parent, deadline)
	defer cancel()
	var t *appTree
	err := c.withApp(ctx, a, func(conn *wireConn, dest string) error {
		ping := a.memo.take
		if !pinged {
			ping = c.barrier(ctx, a)
		}
		p := c.pipeline(ctx, a, conn, deadline)
		w := newWalk(p, a.bus, dest, maxNodes, maxDepth, &a.memo)
		w.noCache = c.opts.NoCache
		w.barrier = ping
		w.afterStructure = c.testHookAfterStructure
		var err error
		t, err = w.run()
		if err != nil {
			// Whatever the memo missed while the walk failed is unknown.
			a.memo.dirtyAll()
		}
		return err
	})
	if err != nil && isTimeout(err) && parent.Err() == nil {
		a.markHung(c.opts.HungBackoff)
	}
	return t, err
}

// barrier pings the application through the bus and returns a function
// that waits for the reply and returns the events recorded until then.
// The bus delivers an application's messages in the order it sent them and
// the signal handler records events as they arrive, so every event the
// application sent before it answered is recorded when the reply is in.
func (c *Client) barrier(ctx context.Context, a *app) func() memoEvents {
	sent := time.Now()
	ping := c.bus.Object(a.bus, pathRoot).GoWithContext(ctx, "org.freedesktop.DBus.Peer.Ping", 0, make(chan *dbus.Call, 1))
	return func() memoEvents {
		select {
		case call := <-ping.Done:
			if call.Err != nil {
				a.memo.dirtyAll()
			} else {
				a.memo.noteLag(time.Since(sent))
			}
		case <-ctx.Done():
			a.memo.dirtyAll()
		}
		return a.memo.take()
	}
}
