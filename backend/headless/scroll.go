package headless

import (
	"image"

	"shinken.dev/go/shinken"
)

// A ScrollView is a framed viewport onto a column of widgets taller than
// it, scrolled by the wheel over it (three lines a notch) and by moving
// the keyboard focus to a widget out of view, which scrolls it into view.
// Its accessible node, with role "scroll pane", is named by its label; the
// widgets it holds are its children, and those scrolled out of view keep
// their bboxes (outside the pane's) and lose the "showing" state, keeping
// "visible", as AT-SPI reports widgets scrolled away.
type ScrollView struct {
	widget
	kids    []control
	height  int // the view's height in UI points; 0 takes a share of the spare height
	off     int // pixels of content scrolled out at the top
	content int // the content's height in pixels, at the last layout
}

// AddScrollView adds a scroll view height UI points tall (0: a share of the
// window's spare height). A non-empty label is shown above it and is its
// accessible name. Fill it with its Add methods.
func (w *Window) AddScrollView(label string, height int) *ScrollView {
	if label != "" {
		w.AddLabel(label)
	}
	s := &ScrollView{widget: widget{name: label}, height: max(0, height)}
	w.add(s)
	return s
}

// add appends c to the view's content.
func (s *ScrollView) add(c control) { s.win.place(c, s) }

// AddLabel adds a line of text to the view, wrapped to its width.
func (s *ScrollView) AddLabel(text string) *Label { return addLabel(s, text) }

// AddButton adds a push button to the view; onClick is as for
// Window.AddButton.
func (s *ScrollView) AddButton(text string, onClick func()) *Button {
	return addButton(s, text, onClick)
}

// AddCheckBox adds a check box to the view; onToggle is as for
// Window.AddCheckBox.
func (s *ScrollView) AddCheckBox(text string, onToggle func(checked bool)) *CheckBox {
	return addCheckBox(s, text, onToggle)
}

// AddEntry adds a single-line text entry to the view, with its label above
// it as for Window.AddEntry.
func (s *ScrollView) AddEntry(label string) *Entry { return addEntry(s, label) }

// Offset returns how many pixels of the content are scrolled out at the
// top.
func (s *ScrollView) Offset() int {
	s.win.d.lock()
	defer s.win.d.unlock()
	return s.off
}

func (s *ScrollView) forget() {
	for _, k := range s.kids {
		k.base().forget()
	}
	s.widget.forget()
}

// bar is the scroll bar's width.
func (s *ScrollView) bar() int { return s.win.d.m.gap }

// viewport is the area showing content, in screen pixels.
func (s *ScrollView) viewport() image.Rectangle {
	r, f := s.screen(), s.win.d.m.focus
	return image.Rect(r.Min.X+f, r.Min.Y+f, r.Max.X-f-s.bar(), r.Max.Y-f)
}

// origin is where the content's top left is on screen.
func (s *ScrollView) origin() image.Point {
	return s.viewport().Min.Sub(image.Pt(0, s.off))
}

// kidAt returns the widget of the view under p, or nil.
func (s *ScrollView) kidAt(p image.Point) control {
	if !p.In(s.viewport()) {
		return nil
	}
	for _, k := range s.kids {
		if p.In(k.base().screen()) {
			return k
		}
	}
	return nil
}

// maxOff is the furthest the content scrolls.
func (s *ScrollView) maxOff() int { return max(0, s.content-s.viewport().Dy()) }

// scrollTo scrolls the content to off, clamped.
func (s *ScrollView) scrollTo(off int) {
	off = max(0, min(off, s.maxOff()))
	if off != s.off {
		s.off = off
		s.changed()
	}
}

// reveal scrolls c, one of the view's widgets, into view.
func (s *ScrollView) reveal(c control) {
	r, h := c.base().rect, s.viewport().Dy()
	switch {
	case r.Min.Y < s.off:
		s.scrollTo(r.Min.Y)
	case r.Max.Y > s.off+h:
		s.scrollTo(r.Max.Y - h)
	}
}

func (s *ScrollView) measure(width int) (int, bool) {
	m := s.win.d.m
	inner := max(1, width-2*m.focus-s.bar()-2*m.gap)
	y := m.gap
	for i, k := range s.kids {
		h, _ := k.measure(inner)
		cw := k.natural()
		if cw <= 0 || cw > inner {
			cw = inner
		}
		if i > 0 {
			y += m.gap
		}
		k.base().rect = image.Rect(m.gap, y, m.gap+cw, y+h)
		y += h
	}
	s.content = y + m.gap
	if s.height > 0 {
		return s.win.px(s.height), false
	}
	return 3 * m.row, true
}

func (s *ScrollView) paint(dst *image.RGBA, r image.Rectangle, _ bool) {
	m := s.win.d.m
	outlined(dst, r, m.radius, m.border, colBorder, colField)
	vp := s.viewport()
	clip := clipTo(dst, vp)
	for _, k := range s.kids {
		if kr := k.base().screen(); kr.Overlaps(clip.Rect) {
			k.paint(clip, kr, s.win.hasFocus(k))
		}
	}
	// The scroll bar: a track, and a thumb as long as the share in view.
	track := image.Rect(vp.Max.X, vp.Min.Y, vp.Max.X+s.bar(), vp.Max.Y).Inset(m.border)
	if s.content > vp.Dy() && track.Dy() > 0 {
		fill(dst, track, colDisabled)
		th := max(m.gap, track.Dy()*vp.Dy()/s.content)
		ty := track.Min.Y + (track.Dy()-th)*s.off/max(1, s.maxOff())
		roundRect(dst, image.Rect(track.Min.X, ty, track.Max.X, ty+th), track.Dx()/2, colBorder)
	}
}

func (s *ScrollView) describe(n *shinken.Node) {
	n.Role, n.Name = "scroll pane", s.name
	n.States = s.nodeStates(n.States)
}

func (s *ScrollView) scroll(_, dy int) {
	s.scrollTo(s.off + dy*3*s.win.d.text.height)
}
