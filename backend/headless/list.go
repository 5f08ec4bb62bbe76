package headless

import (
	"fmt"
	"image"
	"slices"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// A List is a scrolling list of items, one of which may be selected. Its
// accessible role is "list"; each item is a child node with role "list item",
// the "selectable" state, "selected" when selected, and the action
// "activate", which selects it.
type List struct {
	widget
	items    []string
	ids      []uint64 // the items' ids, fresh for every SetItems
	selected int      // -1 for none
	off      int      // pixels scrolled out at the top
	onSelect func(index int, item string)
}

// listItem is a list item in the desktop's objects.
type listItem struct {
	list *List
	id   uint64
}

func (it listItem) owner() control    { return it.list }
func (it listItem) partID() uint64    { return it.id }
func (it listItem) index() int        { return slices.Index(it.list.ids, it.id) }
func (it listItem) invokePart(string) { it.list.choose(it.index()) }

func (it listItem) describePart(n *shinken.Node) {
	i := it.index()
	n.Provenance = map[string]any{"widget": it.list.id, "item": i}
	it.list.describeItem(i, n)
}

func (l *List) parts() []part {
	ps := make([]part, len(l.ids))
	for i, id := range l.ids {
		ps[i] = listItem{l, id}
	}
	return ps
}

// Items returns the list's items.
func (l *List) Items() []string {
	l.win.d.lock()
	defer l.win.d.unlock()
	return slices.Clone(l.items)
}

// SetItems replaces the list's items and clears the selection. The old
// items' accessible nodes become stale.
func (l *List) SetItems(items ...string) {
	d := l.win.d
	d.lock()
	defer d.unlock()
	l.forgetItems()
	l.items = slices.Clone(items)
	l.ids = make([]uint64, len(items))
	for i := range items {
		l.ids[i] = d.newID()
		d.objects[l.ids[i]] = listItem{l, l.ids[i]}
	}
	l.selected, l.off = -1, 0
	l.changed()
}

// Selected returns the index of the selected item, or -1.
func (l *List) Selected() int {
	l.win.d.lock()
	defer l.win.d.unlock()
	return l.selected
}

// Select selects item i (-1 for none) without running the callback.
func (l *List) Select(i int) {
	l.win.d.lock()
	defer l.win.d.unlock()
	if i < -1 || i >= len(l.items) || i == l.selected {
		return
	}
	l.selected = i
	l.reveal()
	l.changed()
}

// choose selects item i as the user does, running the callback.
func (l *List) choose(i int) {
	if i < 0 || i >= len(l.items) || l.disabled {
		return
	}
	if i != l.selected {
		l.selected = i
		l.reveal()
		l.changed()
	}
	if l.onSelect != nil {
		f, item := l.onSelect, l.items[i]
		l.win.d.later(func() { f(i, item) })
	}
}

func (l *List) forgetItems() {
	for _, id := range l.ids {
		delete(l.win.d.objects, id)
	}
}

func (l *List) forget() {
	l.forgetItems()
	l.widget.forget()
}

// inner is the area of r that holds rows.
func (l *List) inner(r image.Rectangle) image.Rectangle { return r.Inset(l.win.d.m.focus) }

// rowRect is item i's rectangle in screen pixels.
func (l *List) rowRect(i int) image.Rectangle {
	in := l.inner(l.screen())
	y := in.Min.Y + i*l.win.d.m.row - l.off
	return image.Rect(in.Min.X, y, in.Max.X, y+l.win.d.m.row)
}

// reveal scrolls the selected item into view.
func (l *List) reveal() {
	if l.selected < 0 || l.rect.Empty() {
		return
	}
	row, h := l.win.d.m.row, l.inner(l.screen()).Dy()
	top := l.selected * row
	if top < l.off {
		l.off = top
	}
	if top+row > l.off+h {
		l.off = top + row - h
	}
}

func (l *List) measure(int) (int, bool) { return 3*l.win.d.m.row + 2*l.win.d.m.focus, true }

func (l *List) focusable() bool { return true }

func (l *List) paint(dst *image.RGBA, r image.Rectangle, focused bool) {
	d, m := l.win.d, l.win.d.m
	edge, bw, body := colBorder, m.border, colField
	if l.disabled {
		body = colDisabled
	}
	if focused {
		edge, bw = colAccent, m.focus
	}
	outlined(dst, r, m.radius, bw, edge, body)
	clip := clipTo(dst, l.inner(r))
	for i, item := range l.items {
		row := l.rowRect(i)
		if !row.Overlaps(clip.Rect) {
			continue
		}
		col := l.textColor()
		if i == l.selected {
			fill(clip, row, colAccent)
			col = colOnAccent
		}
		d.text.draw(clip, row.Min.X+m.inset, centredBaseline(d.text, row), item, col)
	}
}

func (l *List) describe(n *shinken.Node) {
	n.Role, n.Name = "list", l.name
	n.States = append(l.nodeStates(n.States), "focusable")
}

// describeItem describes item i.
func (l *List) describeItem(i int, n *shinken.Node) {
	n.Role, n.Name = "list item", l.items[i]
	if !l.disabled {
		n.States = append(n.States, "enabled", "sensitive")
	}
	n.BBox = l.rowRect(i)
	if n.BBox.Overlaps(l.inner(l.screen())) {
		n.States = append(n.States, "showing")
	}
	n.States = append(n.States, "visible", "selectable")
	if i == l.selected {
		n.States = append(n.States, "selected")
	}
	n.Actions = []string{"activate"}
}

func (l *List) pointerDown(p image.Point) {
	in := l.inner(l.screen())
	if p.In(in) {
		l.choose(floorDiv(p.Y-in.Min.Y+l.off, l.win.d.m.row))
	}
}

func (l *List) key(k keyInput) bool {
	last := len(l.items) - 1
	page := max(1, l.inner(l.screen()).Dy()/l.win.d.m.row-1)
	switch k.sym {
	case "Up", "KP_Up":
		l.choose(max(0, l.selected-1))
	case "Down", "KP_Down":
		l.choose(min(last, l.selected+1))
	case "Home", "KP_Home":
		l.choose(0)
	case "End", "KP_End":
		l.choose(last)
	case "Page_Up":
		l.choose(max(0, l.selected-page))
	case "Page_Down":
		l.choose(min(last, l.selected+page))
	case "Return", "KP_Enter", "space":
		l.choose(l.selected)
	default:
		return false
	}
	return true
}

func (l *List) scroll(_, dy int) {
	row := l.win.d.m.row
	s := max(0, min(l.off+dy*row, len(l.items)*row-l.inner(l.screen()).Dy()))
	if s != l.off {
		l.off = s
		l.damage()
	}
}

func (l *List) setValue(v string) error {
	i := slices.Index(l.items, v)
	if i < 0 {
		return fmt.Errorf("%w: list %s has no item %q", aci.ErrElementNotActionable, l.ID(), v)
	}
	l.choose(i)
	return nil
}
