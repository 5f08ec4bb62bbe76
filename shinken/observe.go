package shinken

import (
	"context"
	"errors"
	"image"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Settle limits: settle_ms is clamped to maxSettle, and the whole wait for a
// quiet UI never exceeds maxSettleTotal, however busy the UI stays.
const (
	maxSettle      = 2 * time.Second
	maxSettleTotal = 5 * time.Second
)

// An Observer is the structured-observation engine of one session: it binds
// backend node identities to stable e<N> refs, renders tree_text, and diffs
// it against the session's previous revision. One engine serves every
// backend. The Runtime keeps one per connection; programs that drive a
// backend directly can make their own with NewObserver. An Observer is safe
// for concurrent use.
type Observer struct {
	a11y     A11y
	watcher  ChangeWatcher
	capturer Capturer

	mu       sync.Mutex
	next     int            // last minted ref number
	refOf    map[string]int // backend node ID -> ref number
	idOf     map[int]string // ref number -> backend node ID
	bbox     map[int]image.Rectangle
	revision int
	lines    map[int]string // the previous revision's rendered lines, by ref
	order    []int          // the previous revision's visible refs, in order
}

// NewObserver returns an engine over b's A11y (and its ChangeWatcher and
// Capturer, when it has them). Without A11y every call fails with
// a11y_unavailable.
func NewObserver(b Backend) *Observer {
	o := &Observer{refOf: map[string]int{}, idOf: map[int]string{}, bbox: map[int]image.Rectangle{}}
	o.a11y, _ = b.(A11y)
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
}

// snapshot takes a snapshot and binds refs: surviving nodes keep theirs,
// new nodes get fresh ones, and refs of vanished nodes are evicted for good.
// It returns the tree and each node's ref number. o.mu must be held.
func (o *Observer) snapshot(ctx context.Context, desktop bool) (*Tree, []int, error) {
	if o.a11y == nil {
		return nil, nil, Errorf(CodeA11yUnavailable, "the backend has no accessibility tree")
	}
	scope := TreeActiveApp
	if desktop {
		scope = TreeDesktop
	}
	t, err := o.a11y.Snapshot(ctx, SnapshotOptions{Scope: scope})
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			err = &Error{Code: CodeA11yUnavailable, Detail: err.Error(), Err: err}
		}
		return nil, nil, err
	}
	refs := make([]int, len(t.Nodes))
	live := make(map[string]bool, len(t.Nodes))
	for i := range t.Nodes {
		n := &t.Nodes[i]
		live[n.ID] = true
		r, ok := o.refOf[n.ID]
		if !ok {
			o.next++
			r = o.next
			o.refOf[n.ID] = r
			o.idOf[r] = n.ID
		}
		refs[i] = r
		o.bbox[r] = n.BBox
	}
	// A partial snapshot (another scope, a truncated walk) proves nothing
	// about the nodes it did not reach, so only a whole snapshot evicts.
	if !t.Truncated && !desktop {
		for id, r := range o.refOf {
			if !live[id] {
				delete(o.refOf, id)
				delete(o.idOf, r)
				delete(o.bbox, r)
			}
		}
	}
	return t, refs, nil
}

// settle waits until the backend has reported no change for d, or until
// the hard cap.
func (o *Observer) settle(ctx context.Context, d time.Duration) {
	if d <= 0 || o.watcher == nil {
		return
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
func (o *Observer) Observe(ctx context.Context, opts ObserveOptions) (*Observation, error) {
	start := time.Now()
	o.settle(ctx, opts.Settle)
	o.mu.Lock()
	defer o.mu.Unlock()
	t, refs, err := o.snapshot(ctx, opts.Desktop)
	if err != nil {
		return nil, err
	}
	o.revision++
	r := render(t, refs, o.revision)
	obs := &Observation{Revision: o.revision, Tree: "full", TreeText: r.full}
	if opts.Diff && o.lines != nil {
		if text, ok := renderDiff(r, o.lines, o.order, o.revision-1, o.revision); ok {
			obs.Tree, obs.TreeText, obs.DiffOf = "diff", text, o.revision-1
		}
	}
	o.lines, o.order = r.lines, r.order
	obs.Elements = make([]Element, len(t.Nodes))
	for i := range t.Nodes {
		n := &t.Nodes[i]
		e := Element{
			Ref: refName(refs[i]), Role: n.Role, Name: n.Name, Description: n.Description, Value: n.Value,
			States: n.States, Actions: n.Actions, Focused: n.Focused, Source: t.Source, Provenance: n.Provenance,
			BBox: []float64{float64(n.BBox.Min.X), float64(n.BBox.Min.Y), float64(n.BBox.Dx()), float64(n.BBox.Dy())},
		}
		if n.Focused {
			obs.Focus = e.Ref
		}
		obs.Elements[i] = e
	}
	count := len(t.Nodes)
	obs.NodeCount = &count
	ms := float64(time.Since(start).Microseconds()) / 1000
	obs.CaptureMS = &ms
	return obs, nil
}

func (c *conn) observe(callID string, a *Action) error {
	if a.Structured != nil && !*a.Structured {
		return Errorf(CodeInvalidAction, "observe is the structured verb: structured=false is not accepted; use screenshot for pixels")
	}
	opts := ObserveOptions{Desktop: a.Scope == ScopeScreen}
	if a.Diff != nil {
		opts.Diff = *a.Diff
	}
	if a.SettleMS != nil {
		opts.Settle = time.Duration(*a.SettleMS) * time.Millisecond
	}
	obs, err := c.obs.Observe(c.ctx, opts)
	if err != nil {
		return err
	}
	obs.ObsID = c.rt.nextObsID()
	obs.Cause = callID
	c.send(obs)
	return nil
}

// lookup returns the backend ID of a ref, or a stale_element_ref error.
// o.mu must be held.
func (o *Observer) lookup(ref string) (string, int, error) {
	n, ok := parseRef(ref)
	if !ok {
		return "", 0, Errorf(CodeInvalidAction, "%q is not an element ref (e<N>)", ref)
	}
	id, ok := o.idOf[n]
	if !ok {
		return "", 0, Errorf(CodeStaleElementRef, "%s is gone or was never observed in this session: observe again", ref)
	}
	return id, n, nil
}

// center returns the centre of the visible part of ref's element, from a
// fresh snapshot so that a moved element is clicked where it is now.
func (o *Observer) center(ctx context.Context, ref string) (image.Point, error) {
	if o.a11y == nil {
		return image.Point{}, Errorf(CodeA11yUnavailable, "element_ref targets need an accessibility backend")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, _, err := o.lookup(ref); err != nil {
		return image.Point{}, err
	}
	if _, _, err := o.snapshot(ctx, false); err != nil {
		return image.Point{}, err
	}
	_, n, err := o.lookup(ref)
	if err != nil {
		return image.Point{}, err
	}
	box := o.bbox[n]
	if o.capturer != nil {
		if d, err := o.capturer.Display(ctx); err == nil {
			box = box.Intersect(image.Rect(0, 0, d.W, d.H))
		}
	}
	if box.Empty() {
		return image.Point{}, Errorf(CodeElementNotActionable, "%s has no visible area on the screen", ref)
	}
	return image.Pt((box.Min.X+box.Max.X)/2, (box.Min.Y+box.Max.Y)/2), nil
}

// do performs an element operation on a ref target.
func (o *Observer) do(ctx context.Context, t *Target, act ElementAction) error {
	if t.Kind != TargetElementRef {
		return Errorf(CodeInvalidAction, "invoke_action and set_value need an element_ref target, not %s", t.Kind)
	}
	o.mu.Lock()
	id, _, err := o.lookup(t.Ref)
	o.mu.Unlock()
	if err != nil {
		return err
	}
	if err := o.a11y.Do(ctx, id, act); err != nil {
		if errors.Is(err, ErrStaleElementRef) {
			o.mu.Lock()
			if n, ok := o.refOf[id]; ok {
				delete(o.refOf, id)
				delete(o.idOf, n)
				delete(o.bbox, n)
			}
			o.mu.Unlock()
			return Errorf(CodeStaleElementRef, "%s is gone: observe again", t.Ref)
		}
		return err
	}
	return nil
}
