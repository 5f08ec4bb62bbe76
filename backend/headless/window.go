package headless

import (
	"image"
	"math"
	"slices"
)

// A Window is a top-level window of an application. Launch makes one and
// hands it to the application's build function, which adds widgets to it
// from top to bottom. Its methods are safe for concurrent use, also from
// widget callbacks.
type Window struct {
	d     *Desktop
	id    uint64
	app   string
	args  []string
	title string
	// content is the size of the area below the title bar, in UI points.
	content image.Point
	frame   image.Rectangle // the whole window in screen pixels, title bar included
	shown   bool            // on screen: build has returned
	closed  bool

	widgets []control // in layout order, top to bottom
	focus   control   // the widget with the keyboard focus when the window is active
	def     *Button   // the default button: Return activates it

	pop   popup   // the open pop-up (a combo box's list, a menu), if any
	owner *Window // for a dialog, the window it belongs to
	modal *Window // the modal dialog open over this window, if any
}

// ID returns the window's id, as shinken.Windows lists it.
func (w *Window) ID() uint64 { return w.id }

// App returns the name the window's application was launched by.
func (w *Window) App() string { return w.app }

// Args returns the arguments the application was launched with.
func (w *Window) Args() []string { return slices.Clone(w.args) }

// Title returns the window's title.
func (w *Window) Title() string {
	w.d.lock()
	defer w.d.unlock()
	return w.title
}

// SetTitle sets the window's title, shown in its title bar, the taskbar and
// the accessible tree. The default is the application's name.
func (w *Window) SetTitle(title string) {
	w.d.lock()
	defer w.d.unlock()
	w.title = title
	if w.shown {
		w.d.damageRect(w.titleBar())
		w.d.damageRect(w.d.taskbar())
		w.d.notify()
	}
}

// SetSize sets the size of the window's content area, below its title bar,
// in UI points. The default is 440×320.
func (w *Window) SetSize(width, height int) {
	w.d.lock()
	defer w.d.unlock()
	size := image.Pt(max(1, width), max(1, height))
	if !w.shown {
		w.content = size
		return
	}
	w.setContent(size)
}

// Move moves the window's top left corner, title bar included, to (x, y)
// in screen pixels. The window may be partly or wholly off screen.
func (w *Window) Move(x, y int) {
	w.d.lock()
	defer w.d.unlock()
	w.moveTo(image.Pt(x, y))
}

// moveTo moves the window's frame to p.
func (w *Window) moveTo(p image.Point) {
	if p == w.frame.Min {
		return
	}
	w.closePopup() // it would be left behind
	if w.shown {
		w.d.damageRect(w.outer())
	}
	w.frame = w.frame.Add(p.Sub(w.frame.Min))
	if w.shown {
		w.d.damageRect(w.outer())
		w.d.notify()
	}
}

// inResizeGrip reports whether p is on the frame's border (outside the
// content) within a title bar's height of its bottom right corner, where a
// drag resizes the window, as window managers' corner handles do.
func (w *Window) inResizeGrip(p image.Point) bool {
	n := w.d.m.title
	corner := image.Rectangle{w.frame.Max.Sub(image.Pt(n, n)), w.frame.Max}
	return p.In(corner) && !p.In(w.contentRect())
}

// resizeTo gives the window the size that puts its frame's bottom right
// corner at corner (exclusive), keeping its top left corner: the content area
// in whole UI points, at least one.
func (w *Window) resizeTo(corner image.Point) {
	m := w.d.m
	cw := float64(corner.X-w.frame.Min.X-2*m.border) / w.d.dpr
	ch := float64(corner.Y-w.frame.Min.Y-m.title-m.border) / w.d.dpr
	size := image.Pt(int(math.Max(1, math.Round(cw))), int(math.Max(1, math.Round(ch))))
	if size != w.content {
		w.setContent(size)
	}
}

// setContent resizes a shown window's content area to size, in UI points,
// and lays it out again.
func (w *Window) setContent(size image.Point) {
	w.closePopup()
	w.d.damageRect(w.outer())
	w.content = size
	w.frame = image.Rectangle{w.frame.Min, w.frame.Min.Add(w.frameSize())}
	w.layout()
	w.d.damageRect(w.outer())
	w.d.notify()
}

// Bounds returns the window's rectangle in screen pixels, title bar
// included. It is empty until the window is shown.
func (w *Window) Bounds() image.Rectangle {
	w.d.lock()
	defer w.d.unlock()
	return w.frame
}

// Close closes the window. Its widgets' accessible nodes become stale.
func (w *Window) Close() {
	w.d.lock()
	defer w.d.unlock()
	w.d.closeWindow(w)
}

// SetDefault makes b the window's default button: drawn in the accent
// colour, and activated by Return in an entry.
func (w *Window) SetDefault(b *Button) {
	w.d.lock()
	defer w.d.unlock()
	old := w.def
	w.def = b
	for _, c := range []*Button{old, b} {
		if c != nil {
			c.damage()
		}
	}
}

// Focus gives c the keyboard focus within the window, if c is an enabled
// widget of the window that takes the focus (not a label).
func (w *Window) Focus(c Widget) {
	w.d.lock()
	defer w.d.unlock()
	if ctl, ok := c.(control); ok && ctl.base().win == w && ctl.focusable() && !ctl.base().disabled {
		w.setFocus(ctl)
	}
}

// add appends c to the window, assigning it an id.
func (w *Window) add(c control) { w.place(c, nil) }

// place assigns c an id and appends it to the scroll view in, or to the
// window itself when in is nil; a shown window is laid out again, and
// what holds c reports the change.
func (w *Window) place(c control, in *ScrollView) {
	b := c.base()
	w.d.lock()
	defer w.d.unlock()
	b.id, b.win, b.parent = w.d.newID(), w, in
	if w.closed {
		return
	}
	w.d.objects[b.id] = c
	if in != nil {
		in.kids = append(in.kids, c)
	} else {
		w.widgets = append(w.widgets, c)
	}
	if !w.shown {
		return
	}
	w.relayout()
	if in != nil {
		in.changed()
	} else {
		b.changed()
	}
}

// AddLabel adds a line of text, wrapped to the window's width.
func (w *Window) AddLabel(text string) *Label { return addLabel(w, text) }

// AddButton adds a push button; onClick, if not nil, runs when it is
// clicked, pressed with space or Return, or invoked through the
// accessibility tree.
func (w *Window) AddButton(text string, onClick func()) *Button {
	return addButton(w, text, onClick)
}

// AddEntry adds a single-line text entry. A non-empty label is shown above
// it and is its accessible name.
func (w *Window) AddEntry(label string) *Entry { return addEntry(w, label) }

// AddTextArea adds a multi-line text area that takes a share of the
// window's spare height. A non-empty label is shown above it and is its
// accessible name.
func (w *Window) AddTextArea(label string) *TextArea {
	if label != "" {
		w.AddLabel(label)
	}
	t := &TextArea{editor{widget: widget{name: label}, multi: true}}
	w.add(t)
	return t
}

// AddCheckBox adds a check box; onToggle, if not nil, runs with the new
// state when the user toggles it.
func (w *Window) AddCheckBox(text string, onToggle func(checked bool)) *CheckBox {
	return addCheckBox(w, text, onToggle)
}

// AddList adds a list of selectable items that takes a share of the window's
// spare height. A non-empty label is shown above it and is its accessible
// name. onSelect, if not nil, runs when the user selects or activates an
// item.
func (w *Window) AddList(label string, onSelect func(index int, item string), items ...string) *List {
	if label != "" {
		w.AddLabel(label)
	}
	l := &List{widget: widget{name: label}, selected: -1, onSelect: onSelect}
	w.add(l)
	l.SetItems(items...)
	return l
}

// px converts UI points to device pixels.
func (w *Window) px(points int) int { return int(math.Round(float64(points) * w.d.dpr)) }

// frameSize is the window's size in pixels, title bar and borders included.
func (w *Window) frameSize() image.Point {
	m := w.d.m
	return image.Pt(w.px(w.content.X)+2*m.border, m.title+w.px(w.content.Y)+m.border)
}

// contentRect is the area below the title bar, in screen pixels.
func (w *Window) contentRect() image.Rectangle {
	b := w.d.m.border
	return image.Rect(w.frame.Min.X+b, w.frame.Min.Y+w.d.m.title, w.frame.Max.X-b, w.frame.Max.Y-b)
}

// titleBar is the title bar, in screen pixels.
func (w *Window) titleBar() image.Rectangle {
	return image.Rect(w.frame.Min.X, w.frame.Min.Y, w.frame.Max.X, w.frame.Min.Y+w.d.m.title)
}

// closeBox is the close button at the right of the title bar.
func (w *Window) closeBox() image.Rectangle {
	t := w.titleBar()
	in := w.d.m.gap / 2
	return image.Rect(t.Max.X-t.Dy()+in, t.Min.Y+in, t.Max.X-in, t.Max.Y-in)
}

// outer is everything the window paints, its shadow included.
func (w *Window) outer() image.Rectangle {
	n := w.d.m.shadow
	r := w.frame.Inset(-n).Union(w.frame.Add(image.Pt(0, n/3)).Inset(-n))
	if w.pop != nil {
		r = r.Union(popupOuter(w.d, w.pop))
	}
	return r
}

// layout stacks the widgets from top to bottom and shares the spare height
// among those that expand.
func (w *Window) layout() {
	m := w.d.m
	cw, ch := w.px(w.content.X), w.px(w.content.Y)
	width := max(1, cw-2*m.pad)
	heights := make([]int, len(w.widgets))
	expanding, used := 0, 2*m.pad
	for i, c := range w.widgets {
		h, expand := c.measure(width)
		heights[i] = h
		used += h
		if _, bar := c.(*MenuBar); bar && i == 0 {
			used -= m.pad - m.gap // it sits above the padding
		}
		if i > 0 {
			used += m.gap
		}
		if expand {
			expanding++
		}
	}
	spare := max(0, ch-used)
	y := m.pad
	for i, c := range w.widgets {
		h := heights[i]
		if _, bar := c.(*MenuBar); bar && i == 0 {
			// A menu bar spans the window's top edge, outside the padding.
			c.base().rect = image.Rect(0, 0, cw, h)
			y = h + m.pad
			continue
		}
		if _, expand := c.measure(width); expand {
			share := spare / expanding
			spare -= share
			expanding--
			h += share
		}
		cwidth := c.natural()
		if cwidth <= 0 || cwidth > width {
			cwidth = width
		}
		c.base().rect = image.Rect(m.pad, y, m.pad+cwidth, y+h)
		y += h + m.gap
	}
}

// relayout lays the widgets out again and damages those that moved.
func (w *Window) relayout() {
	all := w.controls()
	old := make([]image.Rectangle, len(all))
	for i, c := range all {
		old[i] = c.base().screen()
	}
	w.layout()
	if !w.shown {
		return
	}
	for i, c := range all {
		if r := c.base().screen(); r != old[i] {
			w.d.damageRect(old[i].Intersect(c.base().view()))
			w.d.damageRect(r.Intersect(c.base().view()))
		}
	}
}

// controls returns the window's widgets in focus order: each scroll view
// is followed by the widgets it holds.
func (w *Window) controls() []control {
	var all []control
	var walk func([]control)
	walk = func(cs []control) {
		for _, c := range cs {
			all = append(all, c)
			if sv, ok := c.(*ScrollView); ok {
				walk(sv.kids)
			}
		}
	}
	walk(w.widgets)
	return all
}

// nextFocus returns the focusable widget after from (before it when back),
// wrapping around; from nil means the first (or last).
func (w *Window) nextFocus(from control, back bool) control {
	var able []control
	for _, c := range w.controls() {
		if c.focusable() && !c.base().disabled {
			able = append(able, c)
		}
	}
	if len(able) == 0 {
		return nil
	}
	i := slices.Index(able, from)
	switch {
	case i < 0 && back:
		return able[len(able)-1]
	case i < 0:
		return able[0]
	case back:
		return able[(i+len(able)-1)%len(able)]
	default:
		return able[(i+1)%len(able)]
	}
}

// setFocus moves the window's focus to c.
func (w *Window) setFocus(c control) {
	if w.focus == c {
		return
	}
	if w.focus != nil {
		w.focus.base().damage()
	}
	w.focus = c
	if c != nil {
		if sv := c.base().parent; sv != nil {
			sv.reveal(c)
		}
		c.base().damage()
	}
	w.d.notify()
}

// hasFocus reports whether c has the desktop's keyboard focus.
func (w *Window) hasFocus(c control) bool { return w.d.active == w && w.focus == c }

// widgetAt returns the widget under the screen point p.
func (w *Window) widgetAt(p image.Point) control {
	if !p.In(w.contentRect()) {
		return nil
	}
	for _, c := range w.widgets {
		if p.In(c.base().screen()) {
			if sv, ok := c.(*ScrollView); ok {
				if kid := sv.kidAt(p); kid != nil {
					return kid
				}
			}
			return c
		}
	}
	return nil
}

// paint paints the window into dst, which is clipped to the area to
// repaint.
func (w *Window) paint(dst *image.RGBA) {
	d, m := w.d, w.d.m
	active := d.active == w
	shadow(dst, w.frame, m.shadow)
	fill(dst, w.frame, colFrame)
	tb := w.titleBar().Inset(m.border)
	tb.Max.Y = w.frame.Min.Y + m.title
	titleCol, textCol := colTitleIdle, colTitleIdleTxt
	if active {
		titleCol, textCol = colTitleActive, colTitleText
	}
	fill(dst, tb, titleCol)
	cb := w.closeBox()
	baseline := tb.Min.Y + (tb.Dy()-d.bold.ascent-d.bold.descent)/2 + d.bold.ascent
	title := ellipsize(d.bold, w.title, cb.Min.X-tb.Min.X-2*m.pad)
	tx := tb.Min.X + (tb.Dx()-d.bold.width(title))/2
	tx = max(tx, tb.Min.X+m.pad)
	d.bold.draw(clipTo(dst, tb), tx, baseline, title, textCol)
	cross := "×"
	d.bold.draw(clipTo(dst, cb), cb.Min.X+(cb.Dx()-d.bold.width(cross))/2, baseline, cross, textCol)

	content := w.contentRect()
	fill(dst, content, colWindow)
	in := clipTo(dst, content)
	for _, c := range w.widgets {
		r := c.base().screen()
		if r.Overlaps(in.Bounds()) {
			c.paint(in, r, w.hasFocus(c))
		}
	}
	if w.pop != nil {
		paintPopup(dst, w.d, w.pop)
	}
}

// clipTo returns the part of dst inside r, sharing dst's pixels.
func clipTo(dst *image.RGBA, r image.Rectangle) *image.RGBA {
	return dst.SubImage(r).(*image.RGBA)
}

// ellipsize shortens s with a trailing ellipsis until it fits in width.
func ellipsize(fc *face, s string, width int) string {
	if fc.width(s) <= width {
		return s
	}
	rs := []rune(s)
	for len(rs) > 0 {
		rs = rs[:len(rs)-1]
		if t := string(rs) + "…"; fc.width(t) <= width {
			return t
		}
	}
	return ""
}
