package headless

import (
	"image"

	"shinken.dev/go/shinken"
)

// A popup is a window's open pop-up: a combo box's list or a menu. It is
// drawn above the window's widgets, may reach past the window's edges, and
// takes the pointer and the keyboard until it closes: a press outside it
// closes it and does nothing else, as in GTK.
type popup interface {
	// bounds is the pop-up's rectangle in screen pixels.
	bounds() image.Rectangle
	// paintRows paints the pop-up's content into dst, clipped to the
	// inside of its border.
	paintRows(dst *image.RGBA)
	// hover follows the pointer, wherever it is.
	hover(p image.Point)
	// release handles the left button released over the pop-up.
	release(p image.Point)
	// outside handles a press outside the pop-up: it closes it, or (a menu
	// bar's other menu) opens another.
	outside(p image.Point)
	// key handles a key press and reports whether it used it.
	key(k keyInput) bool
	// highlighted is the id of the part that has the keyboard focus while
	// the pop-up is open; 0 for none.
	highlighted() uint64
	// closed tells the pop-up's widget that the window closed it.
	closed()
}

// openPopup opens p over w, closing the one that was open.
func (w *Window) openPopup(p popup) {
	w.closePopup()
	w.pop = p
	w.d.damageRect(popupOuter(w.d, p))
	w.d.notify()
}

// closePopup closes w's pop-up, if one is open.
func (w *Window) closePopup() {
	p := w.pop
	if p == nil {
		return
	}
	w.d.damageRect(popupOuter(w.d, p))
	w.pop = nil
	p.closed()
	w.d.notify()
}

// popupOuter is everything a pop-up paints, its shadow included.
func popupOuter(d *Desktop, p popup) image.Rectangle {
	r, n := p.bounds(), d.m.shadow/2
	return r.Inset(-n).Union(r.Add(image.Pt(0, n/3)).Inset(-n))
}

// paintPopup paints p's frame and content into dst.
func paintPopup(dst *image.RGBA, d *Desktop, p popup) {
	m := d.m
	r := p.bounds()
	shadow(dst, r, m.shadow/2)
	outlined(dst, r, m.radius, m.border, colBorder, colField)
	p.paintRows(clipTo(dst, r.Inset(m.border)))
}

// rows is the body of a pop-up: a column of text rows, one highlighted.
type rows struct {
	d    *Desktop
	at   image.Rectangle // the pop-up's bounds
	text []string
	hot  int // the highlighted row; -1 for none
}

// newRows lays out a column of texts at least minWidth wide, below anchor
// (above it when there is no room below), clamped to the screen.
func newRows(d *Desktop, anchor image.Rectangle, minWidth int, text []string) rows {
	m := d.m
	w := minWidth
	for _, t := range text {
		w = max(w, d.text.width(t)+4*m.inset)
	}
	h := len(text)*m.row + 2*m.border + m.gap/2
	r := image.Rect(anchor.Min.X, anchor.Max.Y, anchor.Min.X+w, anchor.Max.Y+h)
	if r.Max.Y > d.size.Y-m.taskbar && anchor.Min.Y-h >= 0 {
		r = r.Add(image.Pt(0, anchor.Min.Y-h-r.Min.Y))
	}
	if r.Max.X > d.size.X {
		r = r.Add(image.Pt(d.size.X-r.Max.X, 0))
	}
	return rows{d: d, at: r, text: text, hot: -1}
}

// row is row i's rectangle in screen pixels.
func (o *rows) row(i int) image.Rectangle {
	m := o.d.m
	y := o.at.Min.Y + m.border + m.gap/4 + i*m.row
	return image.Rect(o.at.Min.X+m.border, y, o.at.Max.X-m.border, y+m.row)
}

// rowAt returns the row under p, or -1.
func (o *rows) rowAt(p image.Point) int {
	for i := range o.text {
		if p.In(o.row(i)) {
			return i
		}
	}
	return -1
}

// setHot highlights row i (-1 for none).
func (o *rows) setHot(i int) {
	if i == o.hot {
		return
	}
	for _, j := range []int{o.hot, i} {
		if j >= 0 {
			o.d.damageRect(o.row(j))
		}
	}
	o.hot = i
	o.d.notify()
}

// step moves the highlight by delta rows, skipping the rows usable refuses,
// and stops at the ends.
func (o *rows) step(delta int, usable func(int) bool) {
	i := o.hot
	for {
		i += delta
		if i < 0 || i >= len(o.text) {
			return
		}
		if usable(i) {
			o.setHot(i)
			return
		}
	}
}

// paint paints the rows: the highlighted one in the accent colour, a
// check mark before the row marked (-1 for none), dimmed the rows usable
// refuses.
func (o *rows) paint(dst *image.RGBA, marked int, usable func(int) bool) {
	d, m := o.d, o.d.m
	for i, t := range o.text {
		r := o.row(i)
		if !r.Overlaps(dst.Rect) {
			continue
		}
		col := colText
		switch {
		case !usable(i):
			col = colTextDim
		case i == o.hot:
			fill(dst, r, colAccent)
			col = colOnAccent
		}
		box := image.Rect(r.Min.X+m.inset/2, r.Min.Y+(r.Dy()-m.box)/2, r.Min.X+m.inset/2+m.box, r.Min.Y+(r.Dy()-m.box)/2+m.box)
		if i == marked {
			drawMask(dst, box, d.check, col)
		}
		d.text.draw(dst, box.Max.X+m.gap/2, centredBaseline(d.text, r), t, col)
	}
}

// rowStates appends the states of row i of an option list.
func (o *rows) rowStates(st []string, i int, open, usable bool) []string {
	if usable {
		st = append(st, "enabled", "sensitive")
	}
	if open {
		st = append(st, "showing", "visible")
	}
	return append(st, "selectable")
}

// A part is an accessible node inside a widget, with an id of its own: a
// list item, a radio button, a menu, a menu item.
type part interface {
	// owner is the widget the part belongs to.
	owner() control
	// partID is the part's object id.
	partID() uint64
	// describePart fills in the part's role, name, states, actions, bbox
	// and provenance.
	describePart(n *shinken.Node)
	// invokePart performs one of the actions describePart lists.
	invokePart(action string)
}

// A partParent is a widget or a part whose children are parts.
type partParent interface {
	parts() []part
}

// A focusDelegate is a widget whose keyboard focus is on one of its parts
// (a radio group's checked button).
type focusDelegate interface {
	focusedPart() uint64
}

// focusNode is the node ID that has the keyboard focus in w, or "" when w
// is not the active window or nothing in it has the focus.
func (w *Window) focusNode() string {
	if w.d.active != w {
		return ""
	}
	if w.pop != nil {
		if id := w.pop.highlighted(); id != 0 {
			return nodeID(id)
		}
	}
	if w.focus == nil {
		return ""
	}
	if fd, ok := w.focus.(focusDelegate); ok {
		if id := fd.focusedPart(); id != 0 {
			return nodeID(id)
		}
	}
	return w.focus.base().ID()
}
