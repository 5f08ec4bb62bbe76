package atspi

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"image"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"shinken.dev/go/backend/x11/atspi/atspitest"
)

// The walk's paths that GTK 3 does not take (no toolkit cache, Qt's cache
// shape, no Collection: GetChildren level by level, as GTK 4 needs) are
// checked against a fake application written with godbus, reached through
// a private bus.

// privateBus starts a dbus-daemon for t and returns its address.
func privateBus(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		atspitest.Missing(t, "dbus-daemon")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--nosyslog",
		"--address=unix:dir="+t.TempDir(), "--print-address=3")
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	return strings.TrimSpace(line)
}

// A fakeNode is one node of the fake application.
type fakeNode struct {
	path    string
	role    uint32
	name    string
	states  []int
	ifaces  []string
	bbox    [4]int32
	actions []string
	kids    []*fakeNode
	parent  *fakeNode
	broken  bool // every call on it fails
}

type fakeApp struct {
	bus        string
	root       *fakeNode
	nodes      map[string]*fakeNode
	cached     map[string]bool // the nodes the toolkit cache serves
	cache      string          // "", "gtk" or "qt"
	collection bool
	// brokenCollection makes GetMatches fail, as some toolkits' does.
	brokenCollection bool
	// toolkit is the ToolkitName it reports ("fake" when empty).
	toolkit string
	// getActions counts the GetActions calls it answered.
	getActions atomic.Int32
	// actionsMu guards the nodes' actions, which a test may change while
	// the application serves.
	actionsMu sync.Mutex
}

type fakeRef struct {
	Bus  string
	Path dbus.ObjectPath
}

func (a *fakeApp) ref(n *fakeNode) fakeRef {
	if n == nil {
		return fakeRef{a.bus, pathNull}
	}
	return fakeRef{a.bus, dbus.ObjectPath(n.path)}
}

func (n *fakeNode) stateSet() []uint32 {
	var s stateSet
	for _, st := range n.states {
		s[st/32] |= 1 << (st % 32)
	}
	return s[:]
}

var errGone = dbus.NewError("org.freedesktop.DBus.Error.UnknownObject", []any{"gone"})

// fakeAccessible serves org.a11y.atspi.Accessible for one node.
type fakeAccessible struct {
	a *fakeApp
	n *fakeNode
}

func (f fakeAccessible) GetRole() (uint32, *dbus.Error) {
	if f.n.broken {
		return 0, errGone
	}
	return f.n.role, nil
}

func (f fakeAccessible) GetState() ([]uint32, *dbus.Error) {
	if f.n.broken {
		return nil, errGone
	}
	return f.n.stateSet(), nil
}

func (f fakeAccessible) GetInterfaces() ([]string, *dbus.Error) {
	return append([]string{ifAccessible}, f.n.ifaces...), nil
}

func (f fakeAccessible) GetChildren() ([]fakeRef, *dbus.Error) {
	var out []fakeRef
	for _, k := range f.n.kids {
		out = append(out, f.a.ref(k))
	}
	return out, nil
}

// fakeProps serves org.freedesktop.DBus.Properties.
type fakeProps struct{ fakeAccessible }

func (f fakeProps) GetAll(iface string) (map[string]dbus.Variant, *dbus.Error) {
	if f.n.broken {
		return nil, errGone
	}
	return map[string]dbus.Variant{
		"Name": dbus.MakeVariant(f.n.name), "Description": dbus.MakeVariant(""),
		"Parent": dbus.MakeVariant(f.a.ref(f.n.parent)), "ChildCount": dbus.MakeVariant(int32(len(f.n.kids))),
		"Locale": dbus.MakeVariant("C"),
	}, nil
}

func (f fakeProps) Get(iface, prop string) (dbus.Variant, *dbus.Error) {
	switch prop {
	case "ToolkitName":
		return dbus.MakeVariant(cmp.Or(f.a.toolkit, "fake")), nil
	case "Version":
		return dbus.MakeVariant("1.0"), nil
	case "NActions":
		f.a.actionsMu.Lock()
		defer f.a.actionsMu.Unlock()
		return dbus.MakeVariant(int32(len(f.n.actions))), nil
	case "Name":
		return dbus.MakeVariant(f.n.name), nil
	}
	return dbus.Variant{}, dbus.NewError("org.freedesktop.DBus.Error.UnknownProperty", []any{prop})
}

type fakeComponent struct{ fakeAccessible }

func (f fakeComponent) GetExtents(coord uint32) (struct{ X, Y, W, H int32 }, *dbus.Error) {
	b := f.n.bbox
	return struct{ X, Y, W, H int32 }{b[0], b[1], b[2], b[3]}, nil
}

type fakeAction struct{ fakeAccessible }

func (f fakeAction) GetActions() ([]struct{ Name, Desc, Key string }, *dbus.Error) {
	f.a.getActions.Add(1)
	f.a.actionsMu.Lock()
	defer f.a.actionsMu.Unlock()
	var out []struct{ Name, Desc, Key string }
	for _, a := range f.n.actions {
		out = append(out, struct{ Name, Desc, Key string }{strings.ToUpper(a), "", ""}) // "localised"
	}
	return out, nil
}

func (f fakeAction) GetName(i int32) (string, *dbus.Error) {
	f.a.actionsMu.Lock()
	defer f.a.actionsMu.Unlock()
	if i < 0 || int(i) >= len(f.n.actions) {
		return "", dbus.NewError("org.freedesktop.DBus.Error.InvalidArgs", []any{"no such action"})
	}
	return f.n.actions[i], nil
}

type matchRule struct {
	States     []int32
	StateMatch int32
	Attrs      map[string]string
	AttrMatch  int32
	Roles      []int32
	RoleMatch  int32
	Ifaces     []string
	IfaceMatch int32
	Invert     bool
}

type fakeCollection struct{ fakeAccessible }

func (f fakeCollection) GetMatches(rule matchRule, sortBy uint32, count int32, traverse bool) ([]fakeRef, *dbus.Error) {
	if f.a.brokenCollection {
		return nil, dbus.NewError("org.freedesktop.DBus.Error.NotSupported", []any{"no"})
	}
	var out []fakeRef
	var visit func(n *fakeNode)
	visit = func(n *fakeNode) {
		for _, k := range n.kids {
			if count > 0 && int32(len(out)) >= count {
				return
			}
			out = append(out, f.a.ref(k))
			visit(k)
		}
	}
	visit(f.n)
	return out, nil
}

type gtkCacheItem struct {
	Self, App, Parent fakeRef
	Index, Count      int32
	Ifaces            []string
	Name              string
	Role              uint32
	Desc              string
	States            []uint32
}

type qtCacheItem struct {
	Self, App, Parent fakeRef
	Kids              []fakeRef
	Ifaces            []string
	Name              string
	Role              uint32
	Desc              string
	States            []uint32
}

type fakeGtkCache struct{ a *fakeApp }

func (c fakeGtkCache) GetItems() ([]gtkCacheItem, *dbus.Error) {
	var out []gtkCacheItem
	for _, n := range c.a.nodes {
		if !c.a.cached[n.path] {
			continue
		}
		index := int32(-1)
		if n.parent != nil {
			for i, k := range n.parent.kids {
				if k == n {
					index = int32(i)
				}
			}
		}
		out = append(out, gtkCacheItem{c.a.ref(n), c.a.ref(c.a.root), c.a.ref(n.parent), index, int32(len(n.kids)),
			append([]string{ifAccessible}, n.ifaces...), n.name, n.role, "", n.stateSet()})
	}
	return out, nil
}

type fakeQtCache struct{ a *fakeApp }

func (c fakeQtCache) GetItems() ([]qtCacheItem, *dbus.Error) {
	var out []qtCacheItem
	for _, n := range c.a.nodes {
		if !c.a.cached[n.path] {
			continue
		}
		var kids []fakeRef
		for _, k := range n.kids {
			kids = append(kids, c.a.ref(k))
		}
		out = append(out, qtCacheItem{c.a.ref(n), c.a.ref(c.a.root), c.a.ref(n.parent), kids,
			append([]string{ifAccessible}, n.ifaces...), n.name, n.role, "", n.stateSet()})
	}
	return out, nil
}

// serve connects the fake application to the bus and exports its nodes.
func (a *fakeApp) serve(t *testing.T, bus string) {
	t.Helper()
	conn, err := dbus.Connect(bus)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	a.bus = conn.Names()[0]
	for _, n := range a.nodes {
		acc := fakeAccessible{a, n}
		p := dbus.ObjectPath(n.path)
		for iface, v := range map[string]any{ifAccessible: acc, ifProperties: fakeProps{acc}} {
			if err := conn.Export(v, p, iface); err != nil {
				t.Fatal(err)
			}
		}
		for _, iface := range n.ifaces {
			var v any
			switch iface {
			case ifComponent:
				v = fakeComponent{acc}
			case ifAction:
				v = fakeAction{acc}
			case ifCollection:
				v = fakeCollection{acc}
			default:
				continue
			}
			if err := conn.Export(v, p, iface); err != nil {
				t.Fatal(err)
			}
		}
	}
	switch a.cache {
	case "gtk":
		conn.Export(fakeGtkCache{a}, pathCache, ifCache)
	case "qt":
		conn.Export(fakeQtCache{a}, pathCache, ifCache)
	}
}

// newFakeApp builds, with the given cache shape and Collection support:
//
//	application "fake"
//	  frame "Main"
//	    panel
//	      push button "Go" (click, press)
//	      label "Hello"
//	    list (manages descendants)
//	      list item "one"
//	        label "deep"
//	      list item "two" (broken: every call fails)
//	      list item "three"
func newFakeApp(cache string, collection bool) *fakeApp {
	a := &fakeApp{nodes: map[string]*fakeNode{}, cache: cache, collection: collection}
	id := 0
	add := func(parent *fakeNode, role uint32, name string, states []int, ifaces ...string) *fakeNode {
		path := pathRoot
		if parent != nil {
			id++
			path = fmt.Sprintf("/org/a11y/atspi/accessible/%d", id)
		}
		if collection {
			ifaces = append(ifaces, ifCollection)
		}
		n := &fakeNode{path: path, role: role, name: name, states: states, ifaces: ifaces,
			parent: parent, bbox: [4]int32{10 * int32(id), 5 * int32(id), 20, 10}}
		if parent != nil {
			parent.kids = append(parent.kids, n)
		}
		a.nodes[path] = n
		return n
	}
	showing := []int{stateShowing}
	a.root = add(nil, 75, "fake", nil)
	frame := add(a.root, 23, "Main", []int{stateShowing, stateActive}, ifComponent)
	panel := add(frame, 39, "", showing, ifComponent)
	button := add(panel, 43, "Go", showing, ifComponent, ifAction)
	button.actions = []string{"click", "press"}
	add(panel, 29, "Hello", showing, ifComponent)
	list := add(frame, 31, "", []int{stateShowing, stateManagesDescendants}, ifComponent)
	one := add(list, 32, "one", showing, ifComponent)
	add(one, 29, "deep", showing, ifComponent)
	add(list, 32, "two", showing, ifComponent).broken = true
	add(list, 32, "three", showing, ifComponent)
	// Toolkit caches leave out what a node that manages its descendants
	// holds.
	a.cached = map[string]bool{}
	for path := range a.nodes {
		a.cached[path] = true
	}
	for _, k := range list.kids {
		delete(a.cached, k.path)
		for _, kk := range k.kids {
			delete(a.cached, kk.path)
		}
	}
	return a
}

func TestFakeApplications(t *testing.T) {
	bus := privateBus(t)
	want := []string{
		"0 application fake",
		"1 frame Main [10 5 30 15] active,showing",
		"2 panel  [20 10 40 20] showing",
		"3 push button Go [30 15 50 25] showing click,press",
		"3 label Hello [40 20 60 30] showing",
		"2 list  [50 25 70 35] showing,manages descendants",
		"3 list item one [60 30 80 40] showing",
		"4 label deep [70 35 90 45] showing",
		"3 list item three [90 45 110 55] showing",
	}
	for _, tc := range []struct {
		cache      string
		collection bool
		broken     bool // Collection advertised but failing
	}{{"", true, false}, {"", false, false}, {"gtk", true, false}, {"qt", true, false}, {"gtk", false, false},
		{"", true, true}, {"gtk", true, true}} {
		t.Run(fmt.Sprintf("cache=%q,collection=%v,broken=%v", tc.cache, tc.collection, tc.broken), func(t *testing.T) {
			a := newFakeApp(tc.cache, tc.collection)
			a.brokenCollection = tc.broken
			a.serve(t, bus)
			tree := fakeWalk(t, bus, a.bus, 100, 10)
			if got := describe(tree); !reflect.DeepEqual(got, want) {
				t.Fatalf("walk:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// Budgets and caps cut the same tree. GetMatches lists a subtree
			// in pre-order, so a budget keeps a prefix; GetChildren goes level
			// by level, so a budget keeps the top levels.
			cutTree := fakeWalk(t, bus, a.bus, 4, 10)
			if !strings.Contains(strings.Join(cutTree.cuts, ";"), "node budget") {
				t.Fatalf("budget of 4: cuts %q", cutTree.cuts)
			}
			cut := describe(cutTree)
			bfs := !tc.collection || tc.broken
			if !bfs && !reflect.DeepEqual(cut, want[:4]) || bfs && (len(cut) != 4 || !reflect.DeepEqual(cut[:3], want[:3])) {
				t.Fatalf("budget of 4:\n%s", strings.Join(cut, "\n"))
			}
			for _, line := range cut {
				if !slices.Contains(want, line) {
					t.Fatalf("budget of 4: %q is not in the full tree", line)
				}
			}
			capped := fakeWalk(t, bus, a.bus, 100, 2)
			if got := describe(capped); !reflect.DeepEqual(got, []string{want[0], want[1], want[2], want[5]}) ||
				!strings.Contains(strings.Join(capped.cuts, ";"), "depth cap") {
				t.Fatalf("depth cap of 2 (cuts %q):\n%s", capped.cuts, strings.Join(got, "\n"))
			}
		})
	}
}

// TestGeckoActionsOneByOne: a Gecko application is never asked GetActions
// (its bridge computes every action's key binding for it, and Firefox
// aborted on one that was not UTF-8, read from a neterror page in a tab
// behind); its actions are still named, by NActions and GetName. Another
// toolkit is asked GetActions.
func TestGeckoActionsOneByOne(t *testing.T) {
	bus := privateBus(t)
	for _, toolkit := range []string{"Gecko", "gtk"} {
		a := newFakeApp("", true)
		a.toolkit = toolkit
		a.serve(t, bus)
		tree := fakeWalk(t, bus, a.bus, 100, 10)
		if got := describe(tree); !slices.Contains(got, "3 push button Go [30 15 50 25] showing click,press") {
			t.Fatalf("%s: walk:\n%s", toolkit, strings.Join(got, "\n"))
		}
		if n := a.getActions.Load(); toolkit == "Gecko" && n != 0 || toolkit != "Gecko" && n == 0 {
			t.Errorf("%s: GetActions asked %d times", toolkit, n)
		}
	}
}

// TestChromiumActionsFollowLayout: Chromium offers a node's scroll actions
// once its content overflows it, with no event to say so. A node the walk
// reads again is asked its actions again, where another toolkit's are kept
// from the first read.
func TestChromiumActionsFollowLayout(t *testing.T) {
	bus := privateBus(t)
	for _, toolkit := range []string{"Chromium", "gtk"} {
		a := newFakeApp("", true)
		a.toolkit = toolkit
		a.serve(t, bus)
		m := &memo{}
		before := describe(fakeWalkMemo(t, bus, a.bus, m))
		if !slices.Contains(before, "3 push button Go [30 15 50 25] showing click,press") {
			t.Fatalf("%s: first walk:\n%s", toolkit, strings.Join(before, "\n"))
		}
		button := a.nodes["/org/a11y/atspi/accessible/3"]
		a.actionsMu.Lock()
		button.actions = []string{"click", "press", "scrollDown"}
		a.actionsMu.Unlock()
		m.dirtyAll() // the whole tree read again, as a browser's is every browserTreeAge
		after := describe(fakeWalkMemo(t, bus, a.bus, m))
		want := "3 push button Go [30 15 50 25] showing click,press"
		if toolkit == "Chromium" {
			want += ",scrollDown"
		}
		if !slices.Contains(after, want) {
			t.Errorf("%s: want %q after the layout changed; walk:\n%s", toolkit, want, strings.Join(after, "\n"))
		}
	}
}

// fakeWalk walks the fake application through the bus.
func fakeWalk(t *testing.T, bus, name string, maxNodes, maxDepth int) *appTree {
	t.Helper()
	return walkFake(t, bus, name, maxNodes, maxDepth, &memo{}, false)
}

// fakeWalkMemo walks the fake application with m, the events recorded
// since the last walk taken first, as the client's walks do.
func fakeWalkMemo(t *testing.T, bus, name string, m *memo) *appTree {
	t.Helper()
	return walkFake(t, bus, name, 100, 10, m, true)
}

// walkFake walks the fake application with memo m, taking the events it
// recorded first when barrier is set.
func walkFake(t *testing.T, bus, name string, maxNodes, maxDepth int, m *memo, barrier bool) *appTree {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := dialWire(ctx, bus, true)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.c.Close()
	p := newPipeline(ctx, conn, time.Now().Add(10*time.Second), 5*time.Second, 16)
	w := newWalk(p, name, name, maxNodes, maxDepth, m)
	if barrier {
		w.barrier = m.take
	}
	tree, err := w.run()
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// describe renders a walked tree as lines: depth, role, name, bbox,
// states, actions; and checks the parent links.
func describe(t *appTree) []string {
	var out []string
	for i, n := range t.nodes {
		if i > 0 && (n.Parent < 0 || t.nodes[n.Parent].Depth != n.Depth-1) {
			return []string{fmt.Sprintf("node %d has a bad parent %d", i, n.Parent)}
		}
		line := fmt.Sprintf("%d %s %s", n.Depth, n.Role, n.Name)
		if n.BBox != (image.Rectangle{}) {
			line += fmt.Sprintf(" [%d %d %d %d]", n.BBox.Min.X, n.BBox.Min.Y, n.BBox.Max.X, n.BBox.Max.Y)
		}
		if len(n.States) > 0 {
			line += " " + strings.Join(n.States, ",")
		}
		if len(n.Actions) > 0 {
			line += " " + strings.Join(n.Actions, ",")
		}
		out = append(out, line)
	}
	return out
}
