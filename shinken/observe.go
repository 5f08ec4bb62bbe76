package shinken

import (
	"context"
	"errors"
	"image"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"shinken.dev/go/shinken/aci"
)

// Settle limits: settle_ms is clamped to maxSettle, and the whole wait for a
// quiet UI never exceeds maxSettleTotal, however busy the UI stays.
const (
	maxSettle      = 2 * time.Second
	maxSettleTotal = 5 * time.Second
)

// An Observer is one session's observation engine: stable e<N> refs bound
// to node identities, tree_text, and diffs against the previous revision.
// The Runtime keeps one per connection. It is safe for concurrent use.
type Observer struct {
	a11y     A11y
	watcher  ChangeWatcher
	capturer Capturer
	windows  Windows             // may be nil
	onSettle func(time.Duration) // told how long each settle waited; may be nil

	mu       sync.Mutex
	next     int                  // last minted ref number
	refOf    map[string]*refEntry // backend node ID -> its ref
	byRef    map[int]*refEntry    // ref number -> entry
	gen      uint64               // snapshot generation
	revision int
	shown    []*refEntry // the previous revision's visible elements, in order
	// partial says the last revision rendered a subtree: it is no baseline
	// for a diff.
	partial bool
}

// A refEntry binds one live backend node to its ref, and remembers how the
// previous revision rendered it, so a diff needs no map of lines.
type refEntry struct {
	n    int
	id   string
	root string // the ID of the node's top-level ancestor (its window)
	// parent is the node's parent in the last snapshot that saw it.
	parent *refEntry
	gen    uint64 // the last snapshot that saw the node
	bbox   image.Rectangle
	line   string // its line in revision shownAt
	shown  int    // the last revision that rendered a line for it
}

// NewObserver returns an engine over b's A11y (and its ChangeWatcher and
// Capturer, when it has them). Without A11y every call fails with
// a11y_unavailable.
func NewObserver(b Backend) *Observer {
	o := &Observer{refOf: map[string]*refEntry{}, byRef: map[int]*refEntry{}}
	o.a11y, _ = b.(A11y)
	o.windows, _ = b.(Windows)
	o.watcher, _ = b.(ChangeWatcher)
	o.capturer, _ = b.(Capturer)
	return o
}

func refName(n int) string { return "e" + strconv.Itoa(n) }

func parseRef(ref string) (int, bool) {
	s, ok := strings.CutPrefix(ref, "e")
	if !ok || s == "" || s[0] == '0' {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

// ObserveOptions tune one structured observation.
type ObserveOptions struct {
	Diff     bool          // render against the previous revision
	Settle   time.Duration // wait for this much quiet first
	Desktop  bool          // every application, not just the active one
	MaxNodes int           // 0: the backend's default budget
	// Subtree, when set to a ref, renders only that element and its
	// descendants, with nothing left out as hidden. It takes no diff.
	Subtree string
	// Window (a [Windows] id) or ActiveWindow renders only that top-level
	// window's subtree, whichever application owns it ([Node].Window
	// marks it), with the refs of the unscoped view and no diff.
	Window       uint64
	ActiveWindow bool
}

// snapshot takes a snapshot and binds refs: surviving nodes keep theirs,
// new nodes get fresh ones, and refs of vanished nodes are evicted for good.
// It returns the tree and each node's entry. o.mu must be held.
func (o *Observer) snapshot(ctx context.Context, desktop bool) (*Tree, []*refEntry, error) {
	if o.a11y == nil {
		return nil, nil, aci.Errorf(aci.CodeA11yUnavailable, "the backend has no accessibility tree")
	}
	scope := TreeActiveApp
	if desktop {
		scope = TreeDesktop
	}
	t, err := o.a11y.Snapshot(ctx, SnapshotOptions{Scope: scope})
	if err != nil {
		var e *aci.Error
		if !errors.As(err, &e) {
			err = &aci.Error{Code: aci.CodeA11yUnavailable, Detail: err.Error(), Err: err}
		}
		return nil, nil, err
	}
	o.gen++
	entries := make([]*refEntry, len(t.Nodes))
	for i := range t.Nodes {
		n := &t.Nodes[i]
		e := o.refOf[n.ID]
		if e == nil {
			o.next++
			e = &refEntry{n: o.next, id: n.ID}
			o.refOf[n.ID] = e
			o.byRef[e.n] = e
		}
		e.gen = o.gen
		e.bbox = n.BBox
		if n.Parent >= 0 && n.Parent < i {
			e.root = entries[n.Parent].root
			e.parent = entries[n.Parent]
		} else {
			e.root = n.ID
			e.parent = nil
		}
		entries[i] = e
	}
	// A truncated walk proves nothing about the nodes it did not reach. A
	// whole-desktop snapshot proves every unseen node gone; an active-app
	// snapshot, only the unseen nodes under the windows it covered. A
	// window that vanished whole is found gone by the next desktop
	// snapshot, or by the backend answering stale.
	if !t.Truncated {
		covered := map[string]bool{}
		for _, e := range entries {
			covered[e.root] = true
		}
		for id, e := range o.refOf {
			if e.gen != o.gen && (desktop || covered[e.root]) {
				delete(o.refOf, id)
				delete(o.byRef, e.n)
			}
		}
	}
	return t, entries, nil
}

// settle waits until the backend has reported no change for d, or until
// the hard cap.
func (o *Observer) settle(ctx context.Context, d time.Duration) {
	if d <= 0 || o.watcher == nil {
		return
	}
	if o.onSettle != nil {
		start := time.Now()
		defer func() { o.onSettle(time.Since(start)) }()
	}
	d = min(d, maxSettle)
	ctx, cancel := context.WithTimeout(ctx, maxSettleTotal)
	defer cancel()
	changes := o.watcher.Watch(ctx)
	quiet := time.NewTimer(d)
	defer quiet.Stop()
	for {
		select {
		case <-quiet.C:
			return
		case <-ctx.Done():
			return
		case _, ok := <-changes:
			if !ok {
				return
			}
			quiet.Reset(d)
		}
	}
}

// Observe takes a structured observation: settles, snapshots, binds refs and
// renders. The returned Observation has no obs_id or cause; the Runtime
// adds them.
func (o *Observer) Observe(ctx context.Context, opts ObserveOptions) (*aci.Observation, error) {
	start := time.Now()
	o.settle(ctx, opts.Settle)
	scoped := opts.Window != 0 || opts.ActiveWindow
	if scoped && (opts.Diff || opts.Subtree != "") {
		return nil, aci.Errorf(aci.CodeInvalidAction, "observe of a window renders it whole: diff and an element_ref target are not accepted with a window scope")
	}
	var win Window
	if scoped {
		var err error
		if win, err = o.window(ctx, opts); err != nil {
			return nil, err
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	t, entries, err := o.snapshot(ctx, opts.Desktop)
	if err != nil {
		return nil, err
	}
	if !opts.Desktop && (scoped && windowNode(t, win.ID) < 0 || opts.Subtree != "" && !o.holds(entries, opts.Subtree)) {
		// Not in the active application: another's window or element.
		if t, entries, err = o.snapshot(ctx, true); err != nil {
			return nil, err
		}
	}
	var common *[]string
	switch {
	case opts.Subtree != "":
		all := commonActions(t, nil)
		common = &all
		if opts.Diff {
			return nil, aci.Errorf(aci.CodeInvalidAction, "observe of an element's subtree renders it whole: diff is not accepted with a target")
		}
		if t, entries, err = subtree(t, entries, o, opts.Subtree); err != nil {
			return nil, err
		}
	case scoped:
		i := windowNode(t, win.ID)
		if i < 0 {
			return nil, aci.Errorf(aci.CodeA11yUnavailable, "window %d (%q) is not in the accessibility tree: its application exposes none, or the backend cannot tell its windows apart", win.ID, win.Title)
		}
		all := commonActions(t, nil)
		common = &all
		t, entries = cutAt(t, entries, i)
	}
	partial := opts.Subtree != "" || scoped
	o.revision++
	diff := opts.Diff && o.revision > 1 && !o.partial
	r := render(t, entries, o.shown, o.revision, diff, partial, common)
	obs := &aci.Observation{Revision: o.revision, Tree: "full", TreeText: r.full}
	if r.diff != "" {
		obs.Tree, obs.TreeText, obs.DiffOf = "diff", r.diff, o.revision-1
	}
	o.shown, o.partial = r.shown, partial
	obs.Elements = make([]aci.Element, len(t.Nodes))
	for i := range t.Nodes {
		obs.Elements[i] = element(t, entries, i)
		if t.Nodes[i].Focused {
			obs.Focus = obs.Elements[i].Ref
		}
	}
	if diff {
		delta := &aci.ElementDelta{}
		for _, i := range r.added {
			delta.Added = append(delta.Added, obs.Elements[i])
		}
		for _, i := range r.changed {
			delta.Changed = append(delta.Changed, obs.Elements[i])
		}
		for _, n := range r.removed {
			delta.Removed = append(delta.Removed, refName(n))
		}
		obs.Delta = delta
	}
	count := len(t.Nodes)
	obs.NodeCount = &count
	ms := float64(time.Since(start).Microseconds()) / 1000
	obs.CaptureMS = &ms
	return obs, nil
}

// element is node i of t as the wire carries it.
func element(t *Tree, entries []*refEntry, i int) aci.Element {
	n := &t.Nodes[i]
	return aci.Element{
		Ref: refName(entries[i].n), Role: n.Role, Name: n.Name, Description: n.Description, Value: n.Value,
		States: n.States, Actions: n.Actions, Focused: n.Focused, Source: t.Source, Provenance: n.Provenance,
		BBox: []float64{float64(n.BBox.Min.X), float64(n.BBox.Min.Y), float64(n.BBox.Dx()), float64(n.BBox.Dy())},
	}
}

// subtree cuts t down to the element ref and its descendants. o.mu must be
// held.
func subtree(t *Tree, entries []*refEntry, o *Observer, ref string) (*Tree, []*refEntry, error) {
	e, err := o.lookup(ref)
	if err != nil {
		return nil, nil, err
	}
	root := slices.Index(entries, e)
	if root < 0 {
		return nil, nil, aci.Errorf(aci.CodeStaleElementRef, "%s is not in the tree now: observe again", ref)
	}
	sub, subEntries := cutAt(t, entries, root)
	return sub, subEntries, nil
}

// holds reports whether entries holds ref's element. o.mu must be held.
func (o *Observer) holds(entries []*refEntry, ref string) bool {
	e, err := o.lookup(ref)
	return err != nil || slices.Contains(entries, e) // an unknown ref fails in subtree
}

// window returns the window an observe is scoped to, from the backend's
// list: the one with opts.Window's id, or the active one.
func (o *Observer) window(ctx context.Context, opts ObserveOptions) (Window, error) {
	if o.windows == nil {
		return Window{}, aci.Errorf(aci.CodeUnsupported, "observe scoped to a window needs a backend that lists its windows; this one does not")
	}
	ws, err := o.windows.Windows(ctx)
	if err != nil {
		var e *aci.Error
		if !errors.As(err, &e) {
			err = &aci.Error{Code: aci.CodeBackend, Detail: "listing the windows: " + err.Error(), Err: err}
		}
		return Window{}, err
	}
	for _, w := range ws {
		if opts.Window != 0 && w.ID == opts.Window || opts.Window == 0 && w.Active {
			return w, nil
		}
	}
	if opts.Window == 0 {
		return Window{}, aci.Errorf(aci.CodeNoSuchWindow, "no window is active")
	}
	return Window{}, aci.Errorf(aci.CodeNoSuchWindow, "no window has id %d (the trailer of tree_text lists the others with their window_id)", opts.Window)
}

// windowNode returns the index of the node of t that is window id, or -1.
func windowNode(t *Tree, id uint64) int {
	for i := range t.Nodes {
		if t.Nodes[i].Window == id {
			return i
		}
	}
	return -1
}

// cutAt returns the subtree of t rooted at node root, and its entries.
func cutAt(t *Tree, entries []*refEntry, root int) (*Tree, []*refEntry) {
	end := root + 1
	for end < len(t.Nodes) && t.Nodes[end].Depth > t.Nodes[root].Depth {
		end++
	}
	sub := &Tree{App: t.App, Window: t.Window, Source: t.Source, Truncated: t.Truncated, TruncatedWhy: t.TruncatedWhy}
	sub.Nodes = slices.Clone(t.Nodes[root:end])
	for i := range sub.Nodes {
		sub.Nodes[i].Parent -= root
		if i == 0 {
			sub.Nodes[i].Parent = -1
		}
	}
	return sub, entries[root:end]
}

func (c *conn) observe(callID string, a *aci.Action) error {
	if a.Structured != nil && !*a.Structured {
		return aci.Errorf(aci.CodeInvalidAction, "observe is the structured verb: structured=false is not accepted; use screenshot for pixels")
	}
	opts := ObserveOptions{Desktop: a.Scope == aci.ScopeScreen, ActiveWindow: a.Scope == aci.ScopeActiveWindow}
	if id, ok := a.Scope.WindowID(); ok {
		if id == 0 {
			return aci.Errorf(aci.CodeInvalidAction, "scope window:0 names no window")
		}
		opts.Window = id
	}
	if a.Diff != nil {
		opts.Diff = *a.Diff
	}
	if a.SettleMS != nil {
		opts.Settle = millis(*a.SettleMS, maxSettle)
	}
	if a.Target != nil {
		if a.Target.Kind != aci.TargetElementRef {
			return aci.Errorf(aci.CodeInvalidAction, "observe takes an element_ref target (the subtree to render whole), not %s", a.Target.Kind)
		}
		opts.Subtree = a.Target.Ref
	}
	obs, err := c.obs.Observe(c.ctx, opts)
	if err != nil {
		return err
	}
	obs.ObsID = c.rt.nextObsID()
	obs.CallID = callID
	c.send(obs)
	c.emitObservation(obs)
	return nil
}

// lookup returns the entry of a ref, or a stale_element_ref error. o.mu
// must be held.
func (o *Observer) lookup(ref string) (*refEntry, error) {
	n, ok := parseRef(ref)
	if !ok {
		return nil, aci.Errorf(aci.CodeInvalidAction, "%q is not an element ref (e<N>)", ref)
	}
	e, ok := o.byRef[n]
	if !ok {
		return nil, aci.Errorf(aci.CodeStaleElementRef, "%s is gone or was never observed in this session: observe again", ref)
	}
	return e, nil
}

// center returns the centre of the visible part of ref's element. A
// backend that is a Locator says where the element is now (scrolled into
// view, clipped to its window and viewports); otherwise a fresh snapshot
// does, so that a moved element is clicked where it is now.
func (o *Observer) center(ctx context.Context, ref string) (image.Point, error) {
	o.mu.Lock()
	e, err := o.lookup(ref)
	if err != nil {
		o.mu.Unlock()
		return image.Point{}, err
	}
	if loc, ok := o.a11y.(Locator); ok {
		var ancestors []string
		for a := e.parent; a != nil && len(ancestors) < maxAncestors; a = a.parent {
			ancestors = append(ancestors, a.id)
		}
		o.mu.Unlock()
		box, err := loc.Locate(ctx, e.id, ancestors)
		if err != nil {
			if errors.Is(err, aci.ErrStaleElementRef) {
				o.forget(e)
				return image.Point{}, aci.Errorf(aci.CodeStaleElementRef, "%s is gone: observe again", ref)
			}
			return image.Point{}, refErr(err, e.id, ref)
		}
		return o.visibleCenter(ctx, ref, box)
	}
	defer o.mu.Unlock()
	if _, _, err := o.snapshot(ctx, false); err != nil {
		return image.Point{}, err
	}
	if e, err = o.lookup(ref); err != nil {
		return image.Point{}, err
	}
	if e.gen != o.gen {
		// Not in the active application: its last known place.
		if _, _, err := o.snapshot(ctx, true); err != nil {
			return image.Point{}, err
		}
		if e, err = o.lookup(ref); err != nil {
			return image.Point{}, err
		}
	}
	return o.visibleCenter(ctx, ref, e.bbox)
}

// maxAncestors bounds the ancestors handed to a Locator.
const maxAncestors = 64

// visibleCenter clips box to the screen and returns its centre.
func (o *Observer) visibleCenter(ctx context.Context, ref string, box image.Rectangle) (image.Point, error) {
	if o.capturer != nil {
		if d, err := o.capturer.Display(ctx); err == nil {
			box = box.Intersect(image.Rect(0, 0, d.W, d.H))
		}
	}
	if box.Empty() {
		return image.Point{}, aci.Errorf(aci.CodeElementNotActionable, "%s has no visible part on the screen, even scrolled into view", ref)
	}
	return image.Pt((box.Min.X+box.Max.X)/2, (box.Min.Y+box.Max.Y)/2), nil
}

// forget evicts e's ref for good.
func (o *Observer) forget(e *refEntry) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.refOf[e.id] == e {
		delete(o.refOf, e.id)
		delete(o.byRef, e.n)
	}
}

// do performs an element operation on a ref target.
func (o *Observer) do(ctx context.Context, t *aci.Target, act ElementAction) error {
	if t.Kind != aci.TargetElementRef {
		return aci.Errorf(aci.CodeInvalidAction, "invoke_action and set_value need an element_ref target, not %s", t.Kind)
	}
	if o.a11y == nil {
		return aci.Errorf(aci.CodeA11yUnavailable, "the backend has no accessibility tree")
	}
	o.mu.Lock()
	e, err := o.lookup(t.Ref)
	o.mu.Unlock()
	if err != nil {
		return err
	}
	if err := o.a11y.Perform(ctx, e.id, act); err != nil {
		if errors.Is(err, aci.ErrStaleElementRef) {
			o.forget(e)
			return aci.Errorf(aci.CodeStaleElementRef, "%s is gone: observe again", t.Ref)
		}
		return refErr(err, e.id, t.Ref)
	}
	return nil
}
