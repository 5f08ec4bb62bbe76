package headless

import (
	"fmt"
	"image"
	"slices"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// A RadioGroup is a column of radio buttons of which at most one is
// checked. Its accessible node, with role "panel", is named by its label;
// each button is a child with role "radio button", its option as name, the
// "checked" state when checked and the action "click", which checks it.
// The group takes the focus as one stop in the Tab order, on its checked
// button; the arrow keys check the next or previous button, as in GTK.
// set_value on the group checks the option it names.
type RadioGroup struct {
	widget
	options  []string
	ids      []uint64 // the buttons' ids
	selected int      // -1 for none
	pressed  int      // the button the left button went down on; -1 for none
	onSelect func(index int, option string)
}

// radioButton is a radio button in the desktop's objects.
type radioButton struct {
	g *RadioGroup
	i int
}

// AddRadioGroup adds a group of radio buttons, none checked. A non-empty
// label is shown above it and is its accessible name. onSelect, if not
// nil, runs when the user checks a button.
func (w *Window) AddRadioGroup(label string, onSelect func(index int, option string), options ...string) *RadioGroup {
	if label != "" {
		w.AddLabel(label)
	}
	g := &RadioGroup{widget: widget{name: label}, options: slices.Clone(options), selected: -1, pressed: -1, onSelect: onSelect}
	w.add(g)
	w.d.lock()
	defer w.d.unlock()
	for i := range g.options {
		id := w.d.newID()
		g.ids = append(g.ids, id)
		if !w.closed {
			w.d.objects[id] = radioButton{g, i}
		}
	}
	return g
}

// Selected returns the index of the checked button, or -1.
func (g *RadioGroup) Selected() int {
	g.win.d.lock()
	defer g.win.d.unlock()
	return g.selected
}

// Select checks button i (-1 for none) without running the callback.
func (g *RadioGroup) Select(i int) {
	g.win.d.lock()
	defer g.win.d.unlock()
	if i >= -1 && i < len(g.options) && i != g.selected {
		g.selected = i
		g.changed()
	}
}

// choose checks button i as the user does, running the callback.
func (g *RadioGroup) choose(i int) {
	if i < 0 || i >= len(g.options) || g.disabled {
		return
	}
	if i != g.selected {
		g.selected = i
		g.changed()
	}
	if w := g.win; w.focus != g && w.d.active == w {
		w.setFocus(g)
	}
	if g.onSelect != nil {
		f, opt := g.onSelect, g.options[i]
		g.win.d.later(func() { f(i, opt) })
	}
}

func (g *RadioGroup) forget() {
	for _, id := range g.ids {
		delete(g.win.d.objects, id)
	}
	g.widget.forget()
}

// rowHeight is the height of one button.
func (g *RadioGroup) rowHeight() int {
	d := g.win.d
	return max(d.m.box, d.text.height) + d.m.gap
}

// button is button i's rectangle in screen pixels.
func (g *RadioGroup) button(i int) image.Rectangle {
	r := g.screen()
	h := g.rowHeight()
	return image.Rect(r.Min.X, r.Min.Y+i*h, r.Max.X, r.Min.Y+(i+1)*h)
}

func (g *RadioGroup) measure(int) (int, bool) { return len(g.options) * g.rowHeight(), false }

func (g *RadioGroup) natural() int {
	d := g.win.d
	w := 0
	for _, o := range g.options {
		w = max(w, d.m.box+d.m.gap+d.text.width(o)+d.m.focus)
	}
	return w
}

func (g *RadioGroup) focusable() bool { return len(g.options) > 0 }

// cursor is the button that has the focus when the group has it.
func (g *RadioGroup) cursor() int { return max(0, g.selected) }

func (g *RadioGroup) focusedPart() uint64 {
	if len(g.ids) == 0 {
		return 0
	}
	return g.ids[g.cursor()]
}

func (g *RadioGroup) paint(dst *image.RGBA, _ image.Rectangle, focused bool) {
	d, m := g.win.d, g.win.d.m
	for i, opt := range g.options {
		row := g.button(i)
		circle := image.Rect(row.Min.X, row.Min.Y+(row.Dy()-m.box)/2, row.Min.X+m.box, row.Min.Y+(row.Dy()-m.box)/2+m.box)
		edge, body, bw := colBorder, colField, m.border
		on := i == g.selected
		switch {
		case g.disabled:
			body = colDisabled
		case on:
			edge, body = colAccentDark, colAccent
		case i == g.pressed:
			body = colButtonDown
		}
		if focused && i == g.cursor() {
			edge, bw = colAccentDark, m.focus
		}
		outlined(dst, circle, m.box/2, bw, edge, body)
		if on {
			dot := circle.Inset(m.box * 3 / 10)
			roundRect(dst, dot, dot.Dx()/2, colOnAccent)
		}
		d.text.draw(dst, circle.Max.X+m.gap, centredBaseline(d.text, row), opt, g.textColor())
	}
}

func (g *RadioGroup) describe(n *shinken.Node) {
	n.Role, n.Name = "panel", g.name
	n.States = g.nodeStates(n.States)
}

func (g *RadioGroup) parts() []part {
	ps := make([]part, len(g.ids))
	for i := range g.ids {
		ps[i] = radioButton{g, i}
	}
	return ps
}

func (b radioButton) owner() control    { return b.g }
func (b radioButton) partID() uint64    { return b.g.ids[b.i] }
func (b radioButton) invokePart(string) { b.g.choose(b.i) }
func (b radioButton) describePart(n *shinken.Node) {
	g := b.g
	n.Role, n.Name, n.BBox = "radio button", g.options[b.i], g.button(b.i)
	n.Provenance = map[string]any{"widget": g.id, "option": b.i}
	n.States = append(g.nodeStates(n.States), "focusable")
	if !n.BBox.Overlaps(g.view()) {
		n.States = slices.DeleteFunc(n.States, func(s string) bool { return s == "showing" })
	}
	if b.i == g.selected {
		n.States = append(n.States, "checked")
	}
	n.Actions = []string{"click"}
}

// buttonAt returns the button under p, or -1.
func (g *RadioGroup) buttonAt(p image.Point) int {
	for i := range g.options {
		if p.In(g.button(i)) {
			return i
		}
	}
	return -1
}

func (g *RadioGroup) pointerDown(p image.Point) {
	g.pressed = g.buttonAt(p)
	g.damage()
}

func (g *RadioGroup) pointerUp(p image.Point, inside bool) {
	i := g.pressed
	g.pressed = -1
	g.damage()
	if inside && i >= 0 && g.buttonAt(p) == i {
		g.choose(i)
	}
}

func (g *RadioGroup) key(k keyInput) bool {
	last := len(g.options) - 1
	switch k.sym {
	case "Up", "Left", "KP_Up", "KP_Left":
		g.choose(max(0, g.cursor()-1))
	case "Down", "Right", "KP_Down", "KP_Right":
		g.choose(min(last, g.cursor()+1))
	case "space":
		g.choose(g.cursor())
	default:
		return false
	}
	return true
}

func (g *RadioGroup) setValue(v string) error {
	i := slices.Index(g.options, v)
	if i < 0 {
		return fmt.Errorf("%w: radio group %s has no option %q; it has %q", aci.ErrElementNotActionable, g.ID(), v, g.options)
	}
	g.choose(i)
	return nil
}
