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

// Snapshot implements shinken.A11y. Each window is a "frame" node (a
// "dialog" for a dialog) whose children are its widgets in layout order; a
// scroll view's widgets are its children, and so are a list's items, a
// radio group's buttons, a combo box's menu and a menu bar's menus, whose
// items are theirs. TreeActiveApp covers the active window, TreeDesktop
// every window in the order they opened.
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
	focus              string // the ID of the node with the keyboard focus
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
	if n.ID == b.focus && b.focus != "" {
		n.Focused = true
		n.States = append(n.States, "focused")
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
	b.focus = w.focusNode()
	frame := b.add(frameNode(w), -1)
	if frame < 0 {
		return
	}
	for _, c := range w.widgets {
		b.control(c, frame)
	}
}

// control appends c under parent, then what it holds.
func (b *treeBuilder) control(c control, parent int) {
	i := b.add(widgetNode(c), parent)
	if i < 0 {
		return
	}
	if pp, ok := c.(partParent); ok {
		b.parts(pp, i)
	}
	if sv, ok := c.(*ScrollView); ok {
		for _, k := range sv.kids {
			b.control(k, i)
		}
	}
}

// parts appends pp's parts under parent, and theirs under them.
func (b *treeBuilder) parts(pp partParent, parent int) {
	for _, p := range pp.parts() {
		n := shinken.Node{ID: nodeID(p.partID())}
		p.describePart(&n)
		i := b.add(n, parent)
		if sub, ok := p.(partParent); ok && i >= 0 {
			b.parts(sub, i)
		}
	}
}

// frameNode describes window w.
func frameNode(w *Window) shinken.Node {
	n := shinken.Node{
		ID: nodeID(w.id), Role: "frame", Name: w.title, BBox: w.frame, Window: w.id,
		States:     []string{"enabled", "sensitive", "showing", "visible"},
		Actions:    []string{"activate"},
		Provenance: map[string]any{"window": w.id, "app": w.app},
	}
	if w.owner != nil {
		n.Role = "dialog"
		n.States = append(n.States, "modal")
	}
	if w.d.active == w {
		n.States = append(n.States, "active")
	}
	return n
}

// widgetNode describes c, without the focus, which the tree builder marks.
func widgetNode(c control) shinken.Node {
	b := c.base()
	n := shinken.Node{ID: b.ID(), BBox: b.screen(), Provenance: map[string]any{"widget": b.id}}
	c.describe(&n)
	return n
}

// Perform implements shinken.A11y. Buttons take "click", check boxes "toggle",
// entries "activate" (Return: the default button), list items "activate"
// (select), radio buttons "click" (check), combo boxes "press" (open or
// close the list), menus "click" (open or close), menu items "click" (run
// and close the menu) and frames "activate" (raise). Entries, password
// entries and text areas take a value; a list, a radio group and a combo
// box take the text of the item or option to select. While a modal dialog
// is open, the widgets of the window under it refuse every action with
// ErrElementNotActionable, as they refuse the pointer and the keyboard.
func (d *Desktop) Perform(ctx context.Context, id string, act shinken.ElementAction) error {
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
	var win *Window
	switch o := obj.(type) {
	case *Window:
		n, shown = frameNode(o), o.shown
		run = func(string) { d.activate(o) }
	case part:
		o.describePart(&n)
		win = o.owner().base().win
		disabled, shown = !slices.Contains(n.States, "enabled"), win.shown
		run = o.invokePart
	case control:
		win = o.base().win
		n, disabled, shown = widgetNode(o), o.base().disabled, win.shown
		run, set = o.invoke, o.setValue
	}
	if !shown {
		return fmt.Errorf("%w: %s is not on screen yet", aci.ErrElementNotActionable, id)
	}
	if win != nil && win.modal != nil {
		return fmt.Errorf("%w: %s (%s) is blocked by the modal dialog %q; act on the dialog first", aci.ErrElementNotActionable, id, n.Role, win.modal.title)
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
