package headless

import (
	"context"
	"fmt"
	"slices"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// Default snapshot bounds, generous for a desktop whose apps are small.
const (
	defaultMaxNodes = 10000
	defaultMaxDepth = 64
)

// Snapshot implements shinken.A11y. Each window is a "frame" node whose
// children are its widgets in layout order; a list's items are the list's
// children. TreeActiveApp covers the active window, TreeDesktop every window
// in the order they opened.
func (d *Desktop) Snapshot(ctx context.Context, opts shinken.SnapshotOptions) (*shinken.Tree, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.lock()
	defer d.unlock()
	t := &shinken.Tree{}
	var wins []*Window
	switch opts.Scope {
	case shinken.TreeActiveApp:
		if w := d.active; w != nil {
			wins, t.App, t.Window = []*Window{w}, w.app, w.title
		}
		for _, w := range d.byAge() {
			if w != d.active {
				t.Others = append(t.Others, w.title)
			}
		}
	case shinken.TreeDesktop:
		wins = d.byAge()
	default:
		return nil, fmt.Errorf("%w: tree scope %d", aci.ErrInvalidAction, opts.Scope)
	}
	b := treeBuilder{t: t, maxNodes: opts.MaxNodes, maxDepth: opts.MaxDepth}
	if b.maxNodes <= 0 {
		b.maxNodes = defaultMaxNodes
	}
	if b.maxDepth <= 0 {
		b.maxDepth = defaultMaxDepth
	}
	for _, w := range wins {
		b.window(w)
	}
	return t, nil
}

// treeBuilder appends nodes within a snapshot's budgets.
type treeBuilder struct {
	t                  *shinken.Tree
	maxNodes, maxDepth int
}

// add appends n under parent and returns its index, or -1 when a budget
// refuses it.
func (b *treeBuilder) add(n shinken.Node, parent int) int {
	n.Parent, n.Depth = parent, 0
	if parent >= 0 {
		n.Depth = b.t.Nodes[parent].Depth + 1
	}
	switch {
	case n.Depth >= b.maxDepth:
		b.truncate(fmt.Sprintf("depth cap of %d reached", b.maxDepth))
		return -1
	case len(b.t.Nodes) >= b.maxNodes:
		b.truncate(fmt.Sprintf("node budget of %d reached", b.maxNodes))
		return -1
	}
	b.t.Nodes = append(b.t.Nodes, n)
	return len(b.t.Nodes) - 1
}

// truncate records the first reason the walk was cut.
func (b *treeBuilder) truncate(why string) {
	if !b.t.Truncated {
		b.t.Truncated, b.t.TruncatedWhy = true, why
	}
}

// window appends w's frame and its widgets.
func (b *treeBuilder) window(w *Window) {
	frame := b.add(frameNode(w), -1)
	if frame < 0 {
		return
	}
	for _, c := range w.widgets {
		i := b.add(widgetNode(c), frame)
		if l, ok := c.(*List); ok && i >= 0 {
			for j, id := range l.ids {
				n := shinken.Node{ID: nodeID(id), Provenance: map[string]any{"widget": l.id, "item": j}}
				l.describeItem(j, &n)
				b.add(n, i)
			}
		}
	}
}

// frameNode describes window w.
func frameNode(w *Window) shinken.Node {
	n := shinken.Node{
		ID: nodeID(w.id), Role: "frame", Name: w.title, BBox: w.frame,
		States:     []string{"enabled", "sensitive", "showing", "visible"},
		Actions:    []string{"activate"},
		Provenance: map[string]any{"window": w.id, "app": w.app},
	}
	if w.d.active == w {
		n.States = append(n.States, "active")
	}
	return n
}

// widgetNode describes c.
func widgetNode(c control) shinken.Node {
	b := c.base()
	n := shinken.Node{ID: b.ID(), BBox: b.screen(), Provenance: map[string]any{"widget": b.id}}
	c.describe(&n)
	if b.win.hasFocus(c) {
		n.Focused = true
		n.States = append(n.States, "focused")
	}
	return n
}

// Do implements shinken.A11y. Buttons take "click", check boxes "toggle",
// entries "activate" (Return: the default button), list items "activate"
// (select) and frames "activate" (raise). Entries and text areas take a
// value; a list takes the text of the item to select.
func (d *Desktop) Do(ctx context.Context, id string, act shinken.ElementAction) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.lock()
	defer d.unlock()
	oid, ok := parseNodeID(id)
	obj := d.objects[oid]
	if !ok || obj == nil {
		return fmt.Errorf("%w: %s is gone, observe again", aci.ErrStaleElementRef, id)
	}
	var n shinken.Node
	var disabled, shown bool
	var run func(action string)
	var set func(string) error
	switch o := obj.(type) {
	case *Window:
		n, shown = frameNode(o), o.shown
		run = func(string) { d.activate(o) }
	case listItem:
		i := slices.Index(o.list.ids, oid)
		o.list.describeItem(i, &n)
		disabled, shown = o.list.disabled, o.list.win.shown
		run = func(string) { o.list.choose(i) }
	case control:
		n, disabled, shown = widgetNode(o), o.base().disabled, o.base().win.shown
		run, set = o.invoke, o.setValue
	}
	if !shown {
		return fmt.Errorf("%w: %s is not on screen yet", aci.ErrElementNotActionable, id)
	}
	switch act.Op {
	case shinken.OpInvoke:
		action := act.Action
		if action == "" && len(n.Actions) > 0 {
			action = n.Actions[0]
		}
		if !slices.Contains(n.Actions, action) {
			return fmt.Errorf("%w: %s (%s) has no action %q; it has %q", aci.ErrNoSuchAction, id, n.Role, act.Action, n.Actions)
		}
		if disabled {
			return fmt.Errorf("%w: %s (%s) is disabled", aci.ErrElementNotActionable, id, n.Role)
		}
		run(action)
		return nil
	case shinken.OpSetValue:
		if set == nil {
			return fmt.Errorf("%w: %s (%s) takes no value", aci.ErrElementNotActionable, id, n.Role)
		}
		if disabled {
			return fmt.Errorf("%w: %s (%s) is disabled", aci.ErrElementNotActionable, id, n.Role)
		}
		return set(act.Text)
	}
	return fmt.Errorf("%w: element operation %d", aci.ErrInvalidAction, act.Op)
}
