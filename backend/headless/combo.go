package headless

import (
	"fmt"
	"image"
	"slices"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// A ComboBox shows the option chosen among several and opens a pop-up list
// of them. Its accessible node, with role "combo box", is named by its
// label, its value is the chosen option, it has the "expanded" state while
// the list is open, and its action "press" opens or closes the list. Its
// child, a "menu", holds one "menu item" per option, "selected" for the
// chosen one, "showing" while the list is open, with the action "click",
// which chooses it.
//
// A click opens the list and a click on an option chooses it; a click
// elsewhere closes the list. With the focus on it, space, Return or
// alt+Down open the list, Up and Down choose the previous or next option,
// as in GTK; in the open list Up and Down move the highlight, Return or
// space choose and Escape closes. set_value chooses the option it names.
type ComboBox struct {
	widget
	options  []string
	ids      []uint64 // the menu's, then the options'
	selected int      // -1 for none
	list     *comboList
	onSelect func(index int, option string)
}

// comboPart is a combo box's menu (i == -1) or option i.
type comboPart struct {
	c *ComboBox
	i int
}

// comboList is a combo box's open list.
type comboList struct {
	c *ComboBox
	rows
}

// AddComboBox adds a combo box with nothing chosen. A non-empty label is
// shown above it and is its accessible name. onSelect, if not nil, runs
// when the user chooses an option.
func (w *Window) AddComboBox(label string, onSelect func(index int, option string), options ...string) *ComboBox {
	if label != "" {
		w.AddLabel(label)
	}
	c := &ComboBox{widget: widget{name: label}, options: slices.Clone(options), selected: -1, onSelect: onSelect}
	w.add(c)
	w.d.lock()
	defer w.d.unlock()
	for i := -1; i < len(c.options); i++ {
		id := w.d.newID()
		c.ids = append(c.ids, id)
		if !w.closed {
			w.d.objects[id] = comboPart{c, i}
		}
	}
	return c
}

// Selected returns the index of the chosen option, or -1.
func (c *ComboBox) Selected() int {
	c.win.d.lock()
	defer c.win.d.unlock()
	return c.selected
}

// Select chooses option i (-1 for none) without running the callback.
func (c *ComboBox) Select(i int) {
	c.win.d.lock()
	defer c.win.d.unlock()
	if i >= -1 && i < len(c.options) && i != c.selected {
		c.selected = i
		c.changed()
	}
}

// choose chooses option i as the user does: it closes the list and runs
// the callback.
func (c *ComboBox) choose(i int) {
	if i < 0 || i >= len(c.options) || c.disabled {
		return
	}
	c.win.closePopup()
	if i != c.selected {
		c.selected = i
		c.changed()
	}
	if c.onSelect != nil {
		f, opt := c.onSelect, c.options[i]
		c.win.d.later(func() { f(i, opt) })
	}
}

// toggle opens the list, or closes it when open.
func (c *ComboBox) toggle() {
	if c.list != nil {
		c.win.closePopup()
		return
	}
	if c.disabled || len(c.options) == 0 {
		return
	}
	w := c.win
	if w.d.active == w && w.focus != c {
		w.setFocus(c)
	}
	c.list = &comboList{c: c, rows: newRows(w.d, c.screen(), c.screen().Dx(), c.options)}
	c.list.hot = c.selected
	w.openPopup(c.list)
	c.changed()
}

func (c *ComboBox) forget() {
	for _, id := range c.ids {
		delete(c.win.d.objects, id)
	}
	c.widget.forget()
}

func (c *ComboBox) measure(int) (int, bool) { return c.win.d.m.control, false }

func (c *ComboBox) natural() int {
	d, m := c.win.d, c.win.d.m
	w := m.minWidth
	for _, o := range c.options {
		w = max(w, d.text.width(o)+3*m.inset+m.box)
	}
	return w
}

func (c *ComboBox) focusable() bool { return true }

func (c *ComboBox) paint(dst *image.RGBA, r image.Rectangle, focused bool) {
	d, m := c.win.d, c.win.d.m
	body, edge, bw := colButton, colBorder, m.border
	switch {
	case c.disabled:
		body = colDisabled
	case c.list != nil:
		body = colButtonDown
	}
	if focused {
		edge, bw = colAccent, m.focus
	}
	outlined(dst, r, m.radius, bw, edge, body)
	arrow := image.Rect(r.Max.X-m.inset-m.box, r.Min.Y, r.Max.X-m.inset, r.Max.Y)
	if c.selected >= 0 {
		text := ellipsize(d.text, c.options[c.selected], arrow.Min.X-r.Min.X-2*m.inset)
		d.text.draw(clipTo(dst, r.Inset(bw)), r.Min.X+m.inset, centredBaseline(d.text, r), text, c.textColor())
	}
	// The drop-down arrow: a small downward triangle.
	cx, cy, s := (arrow.Min.X+arrow.Max.X)/2, (arrow.Min.Y+arrow.Max.Y)/2, max(2, m.box/4)
	for j := range s {
		fill(dst, image.Rect(cx-s+j, cy-s/2+j, cx+s-j, cy-s/2+j+1), c.textColor())
	}
}

func (c *ComboBox) describe(n *shinken.Node) {
	n.Role, n.Name = "combo box", c.name
	if c.selected >= 0 {
		n.Value = c.options[c.selected]
	}
	n.States = append(c.nodeStates(n.States), "focusable")
	if c.list != nil {
		n.States = append(n.States, "expanded")
	}
	n.Actions = []string{"press"}
}

func (c *ComboBox) parts() []part { return []part{comboPart{c, -1}} }

func (p comboPart) owner() control { return p.c }
func (p comboPart) partID() uint64 { return p.c.ids[p.i+1] }

func (p comboPart) invokePart(string) {
	if p.i >= 0 {
		p.c.choose(p.i)
	}
}

func (p comboPart) parts() []part {
	if p.i >= 0 {
		return nil
	}
	ps := make([]part, len(p.c.options))
	for i := range ps {
		ps[i] = comboPart{p.c, i}
	}
	return ps
}

func (p comboPart) describePart(n *shinken.Node) {
	c := p.c
	open := c.list != nil
	n.Provenance = map[string]any{"widget": c.id, "option": p.i}
	if p.i < 0 {
		n.Role = "menu"
		n.States = []string{"enabled", "sensitive"}
		if open {
			n.BBox = c.list.at
			n.States = append(n.States, "showing", "visible")
		}
		return
	}
	n.Role, n.Name = "menu item", c.options[p.i]
	// The rows' rectangles are where the list opens, open or not.
	at := newRows(c.win.d, c.screen(), c.screen().Dx(), c.options)
	if open {
		at = c.list.rows
	}
	n.BBox = at.row(p.i)
	n.States = at.rowStates(n.States, p.i, open, !c.disabled)
	if p.i == c.selected {
		n.States = append(n.States, "selected")
	}
	n.Actions = []string{"click"}
}

func (c *ComboBox) pointerDown(image.Point) { c.toggle() }

func (c *ComboBox) key(k keyInput) bool {
	last := len(c.options) - 1
	switch {
	case k.sym == "space" || k.sym == "Return" || k.sym == "KP_Enter" || k.alt && (k.sym == "Down" || k.sym == "KP_Down"):
		c.toggle()
	case k.sym == "Up" || k.sym == "KP_Up":
		c.choose(max(0, c.selected-1))
	case k.sym == "Down" || k.sym == "KP_Down":
		c.choose(min(last, c.selected+1))
	case k.sym == "Home" || k.sym == "KP_Home":
		c.choose(0)
	case k.sym == "End" || k.sym == "KP_End":
		c.choose(last)
	default:
		return false
	}
	return true
}

func (c *ComboBox) invoke(string) { c.toggle() }

func (c *ComboBox) setValue(v string) error {
	i := slices.Index(c.options, v)
	if i < 0 {
		return fmt.Errorf("%w: combo box %s has no option %q; it has %q", aci.ErrElementNotActionable, c.ID(), v, c.options)
	}
	c.choose(i)
	return nil
}

func (l *comboList) bounds() image.Rectangle { return l.at }
func (l *comboList) paintRows(dst *image.RGBA) {
	l.paint(dst, l.c.selected, func(int) bool { return true })
}
func (l *comboList) hover(p image.Point) {
	if i := l.rowAt(p); i >= 0 {
		l.setHot(i)
	}
}
func (l *comboList) release(p image.Point) {
	if i := l.rowAt(p); i >= 0 {
		l.c.choose(i)
	}
}
func (l *comboList) outside(image.Point) { l.c.win.closePopup() }

func (l *comboList) key(k keyInput) bool {
	all := func(int) bool { return true }
	switch k.sym {
	case "Up", "KP_Up":
		l.step(-1, all)
	case "Down", "KP_Down":
		l.step(1, all)
	case "Home", "KP_Home":
		l.setHot(0)
	case "End", "KP_End":
		l.setHot(len(l.text) - 1)
	case "Return", "KP_Enter", "space":
		if l.hot >= 0 {
			l.c.choose(l.hot)
		} else {
			l.c.win.closePopup()
		}
	default:
		return false
	}
	return true
}

func (l *comboList) highlighted() uint64 {
	if l.hot < 0 {
		return 0
	}
	return l.c.ids[l.hot+1]
}

func (l *comboList) closed() {
	l.c.list = nil
	l.c.changed()
}
