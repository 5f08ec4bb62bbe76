package headless

import (
	"fmt"
	"image"
	"image/color"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// A Widget is a control in a window: a *Label, *Button, *Entry,
// *PasswordEntry, *TextArea, *CheckBox, *List, *RadioGroup, *ComboBox,
// *MenuBar or *ScrollView. Windows (and scroll views) make them with their
// Add methods.
type Widget interface {
	// ID returns the widget's accessible node ID, such as "w12": stable for
	// the widget's life and never reused.
	ID() string
	// Enabled reports whether the widget takes input.
	Enabled() bool
	// SetEnabled enables or disables the widget. A disabled widget is drawn
	// greyed out, ignores input, loses the focus, and its accessible node
	// lacks the enabled and sensitive states.
	SetEnabled(enabled bool)

	base() *widget
}

// control is what the window, the input code and the accessibility tree
// need of a widget. widget gives the defaults.
type control interface {
	Widget
	// measure returns the widget's height for a width, and whether it takes
	// a share of the window's spare height.
	measure(width int) (h int, expand bool)
	// natural returns the widget's natural width; 0 means the full width.
	natural() int
	// paint paints the widget into dst (already clipped) at r in screen
	// pixels.
	paint(dst *image.RGBA, r image.Rectangle, focused bool)
	// describe fills in the role, name, value, own states and actions.
	describe(n *shinken.Node)
	focusable() bool
	// pointerDown, pointerDrag and pointerUp handle the left button, in
	// screen pixels. pointerUp is told whether the pointer is still over
	// the widget.
	pointerDown(p image.Point)
	pointerDrag(p image.Point)
	pointerUp(p image.Point, inside bool)
	// key handles a key press and reports whether it used it.
	key(k keyInput) bool
	// scroll scrolls by wheel notches.
	scroll(dx, dy int)
	// invoke performs one of the actions describe lists.
	invoke(action string)
	// setValue sets the widget's value or text.
	setValue(v string) error
	// forget drops the widget's ids from the desktop.
	forget()
}

// keyInput is a key press as a widget sees it.
type keyInput struct {
	sym              string // X keysym name
	r                rune   // the character the press types; 0 for none
	ctrl, shift, alt bool
}

// widget is what every widget has.
type widget struct {
	id       uint64
	win      *Window
	rect     image.Rectangle // in the window's content coordinates
	disabled bool
	name     string      // accessible name of widgets without their own text
	parent   *ScrollView // the scroll view holding the widget; nil for the window
}

// ID implements Widget.
func (b *widget) ID() string { return nodeID(b.id) }

// Enabled implements Widget.
func (b *widget) Enabled() bool {
	b.win.d.lock()
	defer b.win.d.unlock()
	return !b.disabled
}

// SetEnabled implements Widget.
func (b *widget) SetEnabled(enabled bool) {
	w := b.win
	w.d.lock()
	defer w.d.unlock()
	if b.disabled == !enabled {
		return
	}
	b.disabled = !enabled
	if b.disabled {
		w.closePopup() // it may be the widget's
	}
	if ctl, ok := w.d.objects[b.id].(control); ok && b.disabled && w.focus == ctl {
		// nextFocus skips disabled widgets: this one, now.
		w.setFocus(w.nextFocus(ctl, false))
	}
	b.changed()
}

func (b *widget) base() *widget { return b }

// screen is the widget's rectangle in screen pixels. A widget in a scroll
// view moves with the view's content.
func (b *widget) screen() image.Rectangle {
	if b.parent != nil {
		return b.rect.Add(b.parent.origin())
	}
	return b.rect.Add(b.win.contentRect().Min)
}

// view is the part of the screen where the widget can be seen: its
// window's content area, and its scroll view's viewport.
func (b *widget) view() image.Rectangle {
	if b.parent != nil {
		return b.parent.viewport().Intersect(b.parent.view())
	}
	return b.win.contentRect()
}

// damage marks the widget for repainting.
func (b *widget) damage() {
	if b.win.shown && !b.win.closed {
		b.win.d.damageRect(b.screen().Intersect(b.view()))
	}
}

// changed marks the widget for repainting and tells the watchers.
func (b *widget) changed() {
	b.damage()
	b.win.d.notify()
}

// nodeStates appends the states every widget has.
func (b *widget) nodeStates(st []string) []string {
	if !b.disabled {
		st = append(st, "enabled", "sensitive")
	}
	if b.screen().Overlaps(b.view()) {
		st = append(st, "showing")
	}
	return append(st, "visible")
}

func (b *widget) natural() int                { return 0 }
func (b *widget) focusable() bool             { return false }
func (b *widget) pointerDown(image.Point)     {}
func (b *widget) pointerDrag(image.Point)     {}
func (b *widget) pointerUp(image.Point, bool) {}
func (b *widget) key(keyInput) bool           { return false }
func (b *widget) scroll(int, int)             {}
func (b *widget) invoke(string)               {}
func (b *widget) forget()                     { delete(b.win.d.objects, b.id) }

func (b *widget) setValue(string) error {
	return fmt.Errorf("%w: %s takes no value", aci.ErrElementNotActionable, b.ID())
}

// textColor is the colour of a widget's text.
func (b *widget) textColor() color.RGBA {
	if b.disabled {
		return colTextDim
	}
	return colText
}

// A Label is a line of text, wrapped to its window's width. Its accessible
// role is "label" and its name is its text.
type Label struct {
	widget
	text  string
	lines []string // text wrapped at the last layout
}

// Text returns the label's text.
func (l *Label) Text() string {
	l.win.d.lock()
	defer l.win.d.unlock()
	return l.text
}

// SetText sets the label's text.
func (l *Label) SetText(text string) {
	l.win.d.lock()
	defer l.win.d.unlock()
	if l.text == text {
		return
	}
	l.text = text
	l.win.relayout()
	l.changed()
}

func (l *Label) measure(width int) (int, bool) {
	fc := l.win.d.text
	l.lines = fc.wrap(l.text, width)
	return len(l.lines) * fc.height, false
}

func (l *Label) paint(dst *image.RGBA, r image.Rectangle, _ bool) {
	fc := l.win.d.text
	for i, line := range l.lines {
		fc.draw(dst, r.Min.X, r.Min.Y+i*fc.height+fc.ascent, line, l.textColor())
	}
}

func (l *Label) describe(n *shinken.Node) {
	n.Role, n.Name = "label", l.text
	n.States = l.nodeStates(n.States)
}

// A Button is a push button. Its accessible role is "push button", its name
// its text, and its action "click".
type Button struct {
	widget
	text    string
	pressed bool // the left button went down on it and is still held
	onClick func()
}

// Text returns the button's text.
func (b *Button) Text() string {
	b.win.d.lock()
	defer b.win.d.unlock()
	return b.text
}

// SetText sets the button's text.
func (b *Button) SetText(text string) {
	b.win.d.lock()
	defer b.win.d.unlock()
	b.text = text
	b.win.relayout()
	b.changed()
}

// click runs the button's callback once the lock is released.
func (b *Button) click() {
	if b.onClick != nil && !b.disabled {
		b.win.d.later(b.onClick)
	}
}

func (b *Button) measure(int) (int, bool) { return b.win.d.m.control, false }

func (b *Button) natural() int {
	m := b.win.d.m
	return max(m.minWidth, b.win.d.text.width(b.text)+4*m.inset)
}

func (b *Button) focusable() bool { return true }

func (b *Button) paint(dst *image.RGBA, r image.Rectangle, focused bool) {
	d, m := b.win.d, b.win.d.m
	isDefault := b.win.def == b
	body, edge, text := colButton, colBorder, b.textColor()
	switch {
	case b.disabled:
		body = colDisabled
	case isDefault && b.pressed:
		body, edge, text = colAccentDark, colAccentDark, colOnAccent
	case isDefault:
		body, edge, text = colAccent, colAccentDark, colOnAccent
	case b.pressed:
		body = colButtonDown
	}
	bw := m.border
	if focused {
		bw = m.focus
		if !isDefault {
			edge = colAccent
		} else {
			edge = colAccentDark
		}
	}
	outlined(dst, r, m.radius, bw, edge, body)
	fc := d.text
	label := ellipsize(fc, b.text, r.Dx()-2*m.inset)
	x := r.Min.X + (r.Dx()-fc.width(label))/2
	fc.draw(clipTo(dst, r.Inset(bw)), x, centredBaseline(fc, r), label, text)
}

func (b *Button) describe(n *shinken.Node) {
	n.Role, n.Name = "push button", b.text
	n.States = append(b.nodeStates(n.States), "focusable")
	n.Actions = []string{"click"}
}

func (b *Button) pointerDown(image.Point) {
	b.pressed = true
	b.damage()
}

func (b *Button) pointerUp(_ image.Point, inside bool) {
	b.pressed = false
	b.damage()
	if inside {
		b.click()
	}
}

func (b *Button) key(k keyInput) bool {
	switch k.sym {
	case "space", "Return", "KP_Enter":
		b.click()
		return true
	}
	return false
}

func (b *Button) invoke(string) { b.click() }

// A CheckBox is a box with a caption that the user checks and unchecks.
// Its accessible role is "check box", its name its caption, its action
// "toggle", and it has the "checked" state when checked.
type CheckBox struct {
	widget
	text     string
	checked  bool
	pressed  bool
	onToggle func(checked bool)
}

// Checked reports whether the box is checked.
func (c *CheckBox) Checked() bool {
	c.win.d.lock()
	defer c.win.d.unlock()
	return c.checked
}

// SetChecked checks or unchecks the box without running its callback.
func (c *CheckBox) SetChecked(checked bool) {
	c.win.d.lock()
	defer c.win.d.unlock()
	if c.checked != checked {
		c.checked = checked
		c.changed()
	}
}

// toggle flips the box as the user does, running its callback.
func (c *CheckBox) toggle() {
	if c.disabled {
		return
	}
	c.checked = !c.checked
	c.changed()
	if c.onToggle != nil {
		f, checked := c.onToggle, c.checked
		c.win.d.later(func() { f(checked) })
	}
}

func (c *CheckBox) measure(int) (int, bool) {
	d := c.win.d
	return max(d.m.box, d.text.height) + d.m.gap, false
}

func (c *CheckBox) natural() int {
	d := c.win.d
	return d.m.box + d.m.gap + d.text.width(c.text) + d.m.focus
}

func (c *CheckBox) focusable() bool { return true }

func (c *CheckBox) paint(dst *image.RGBA, r image.Rectangle, focused bool) {
	d, m := c.win.d, c.win.d.m
	box := image.Rect(r.Min.X, r.Min.Y+(r.Dy()-m.box)/2, r.Min.X+m.box, r.Min.Y+(r.Dy()-m.box)/2+m.box)
	edge, body, bw := colBorder, colField, m.border
	switch {
	case c.disabled:
		body = colDisabled
	case c.checked && c.pressed:
		edge, body = colAccentDark, colAccentDark
	case c.checked:
		edge, body = colAccentDark, colAccent
	case c.pressed:
		body = colButtonDown
	}
	if focused {
		edge, bw = colAccentDark, m.focus
	}
	outlined(dst, box, m.radius-1, bw, edge, body)
	if c.checked {
		drawMask(dst, box, d.check, colOnAccent)
	}
	d.text.draw(dst, box.Max.X+m.gap, centredBaseline(d.text, r), c.text, c.textColor())
}

func (c *CheckBox) describe(n *shinken.Node) {
	n.Role, n.Name = "check box", c.text
	n.States = append(c.nodeStates(n.States), "focusable")
	if c.checked {
		n.States = append(n.States, "checked")
	}
	n.Actions = []string{"toggle"}
}

func (c *CheckBox) pointerDown(image.Point) {
	c.pressed = true
	c.damage()
}

func (c *CheckBox) pointerUp(_ image.Point, inside bool) {
	c.pressed = false
	c.damage()
	if inside {
		c.toggle()
	}
}

func (c *CheckBox) key(k keyInput) bool {
	if k.sym == "space" {
		c.toggle()
		return true
	}
	return false
}

func (c *CheckBox) invoke(string) { c.toggle() }

// centredBaseline is the baseline that centres a line of fc vertically in r.
func centredBaseline(fc *face, r image.Rectangle) int {
	return r.Min.Y + (r.Dy()-fc.ascent-fc.descent)/2 + fc.ascent
}
