package headless

import (
	"image"
	"slices"
	"strings"
	"unicode"

	"shinken.dev/go/shinken"
)

// editor is the text editing shared by Entry and TextArea: a caret, a
// selection between the caret and an anchor, the usual keys, the clipboard,
// and scrolling that keeps the caret in view.
type editor struct {
	widget
	text   []rune
	caret  int         // rune index
	anchor int         // the other end of the selection; == caret when none
	multi  bool        // newlines allowed, Up and Down move between lines
	off    image.Point // pixels of content scrolled out at the top left
}

// sel returns the selection as ordered rune indices.
func (e *editor) sel() (a, b int) { return min(e.caret, e.anchor), max(e.caret, e.anchor) }

// set replaces the text and puts the caret at its end.
func (e *editor) set(s string) {
	if !e.multi {
		s = strings.ReplaceAll(s, "\n", " ")
	}
	e.text = []rune(s)
	e.caret, e.anchor = len(e.text), len(e.text)
	e.edited()
}

// insert replaces the selection with s.
func (e *editor) insert(s string) {
	if !e.multi {
		s = strings.ReplaceAll(s, "\n", " ")
	}
	a, b := e.sel()
	rs := []rune(s)
	e.text = slices.Replace(e.text, a, b, rs...)
	e.caret = a + len(rs)
	e.anchor = e.caret
}

// cut removes the selection and reports whether there was one.
func (e *editor) cut() bool {
	a, b := e.sel()
	if a == b {
		return false
	}
	e.text = slices.Delete(e.text, a, b)
	e.caret, e.anchor = a, a
	return true
}

// moveTo moves the caret to i, extending the selection when extend is set.
func (e *editor) moveTo(i int, extend bool) {
	e.caret = max(0, min(i, len(e.text)))
	if !extend {
		e.anchor = e.caret
	}
}

// lineStarts returns the index of the first rune of each line.
func (e *editor) lineStarts() []int {
	starts := []int{0}
	if e.multi {
		for i, r := range e.text {
			if r == '\n' {
				starts = append(starts, i+1)
			}
		}
	}
	return starts
}

// line returns the line holding rune index i and that line's bounds.
func (e *editor) line(i int) (n, start, end int) {
	starts := e.lineStarts()
	n = max(0, lineIndex(starts, i))
	return n, starts[n], e.lineEnd(starts, n)
}

// lineEnd returns the index after the last rune of line n, its newline
// excluded.
func (e *editor) lineEnd(starts []int, n int) int {
	if n+1 < len(starts) {
		return starts[n+1] - 1
	}
	return len(e.text)
}

// lineIndex returns the index of the last element of starts not above i.
func lineIndex(starts []int, i int) int {
	n, _ := slices.BinarySearch(starts, i+1)
	return n - 1
}

// wordLeft returns the start of the word before i.
func (e *editor) wordLeft(i int) int {
	for i > 0 && unicode.IsSpace(e.text[i-1]) {
		i--
	}
	for i > 0 && !unicode.IsSpace(e.text[i-1]) {
		i--
	}
	return i
}

// wordRight returns the end of the word after i.
func (e *editor) wordRight(i int) int {
	for i < len(e.text) && unicode.IsSpace(e.text[i]) {
		i++
	}
	for i < len(e.text) && !unicode.IsSpace(e.text[i]) {
		i++
	}
	return i
}

// key handles the editing keys and reports whether it used k.
func (e *editor) key(k keyInput) bool {
	d := e.win.d
	a, b := e.sel()
	hasSel := a != b
	if k.ctrl && !k.alt {
		switch unicode.ToLower(k.r) {
		case 'a':
			e.anchor, e.caret = 0, len(e.text)
		case 'c':
			if hasSel {
				d.clipboard = string(e.text[a:b])
			}
		case 'x':
			if hasSel {
				d.clipboard = string(e.text[a:b])
				e.cut()
			}
		case 'v':
			e.insert(d.clipboard)
		default:
			switch k.sym {
			case "Left":
				e.moveTo(e.wordLeft(e.caret), k.shift)
			case "Right":
				e.moveTo(e.wordRight(e.caret), k.shift)
			case "Home":
				e.moveTo(0, k.shift)
			case "End":
				e.moveTo(len(e.text), k.shift)
			case "BackSpace":
				if !e.cut() {
					i := e.wordLeft(e.caret)
					e.text = slices.Delete(e.text, i, e.caret)
					e.moveTo(i, false)
				}
			default:
				return false
			}
		}
		e.edited()
		return true
	}
	_, start, end := e.line(e.caret)
	switch k.sym {
	case "BackSpace":
		if !e.cut() && e.caret > 0 {
			e.text = slices.Delete(e.text, e.caret-1, e.caret)
			e.moveTo(e.caret-1, false)
		}
	case "Delete", "KP_Delete":
		if !e.cut() && e.caret < len(e.text) {
			e.text = slices.Delete(e.text, e.caret, e.caret+1)
		}
	case "Left", "KP_Left":
		if hasSel && !k.shift {
			e.moveTo(a, false)
		} else {
			e.moveTo(e.caret-1, k.shift)
		}
	case "Right", "KP_Right":
		if hasSel && !k.shift {
			e.moveTo(b, false)
		} else {
			e.moveTo(e.caret+1, k.shift)
		}
	case "Home", "KP_Home":
		e.moveTo(start, k.shift)
	case "End", "KP_End":
		e.moveTo(end, k.shift)
	case "Up", "Down", "KP_Up", "KP_Down", "Page_Up", "Page_Down":
		if !e.multi {
			return false
		}
		e.moveTo(e.vertical(k.sym), k.shift)
	case "Return", "KP_Enter":
		if !e.multi {
			return false
		}
		e.insert("\n")
	default:
		if k.r == 0 || k.alt || !unicode.IsGraphic(k.r) {
			return false
		}
		e.insert(string(k.r))
	}
	e.edited()
	return true
}

// vertical returns where Up, Down, Page_Up or Page_Down moves the caret:
// to the same column of another line, or the nearest end.
func (e *editor) vertical(sym string) int {
	starts := e.lineStarts()
	n, start, _ := e.line(e.caret)
	col := e.caret - start
	step := 1
	if strings.HasPrefix(sym, "Page") {
		step = max(1, e.viewLines()-1)
	}
	if strings.HasSuffix(sym, "Up") {
		n -= step
	} else {
		n += step
	}
	switch {
	case n < 0:
		return 0
	case n >= len(starts):
		return len(e.text)
	}
	return min(starts[n]+col, e.lineEnd(starts, n))
}

// viewLines is how many lines fit in the view.
func (e *editor) viewLines() int {
	return max(1, e.inner(e.screen()).Dy()/e.win.d.text.height)
}

// edited keeps the caret in view and repaints.
func (e *editor) edited() {
	e.reveal()
	e.changed()
}

// inner is the area of r that holds text.
func (e *editor) inner(r image.Rectangle) image.Rectangle {
	m := e.win.d.m
	if !e.multi {
		return image.Rect(r.Min.X+m.inset, r.Min.Y+m.focus, r.Max.X-m.inset, r.Max.Y-m.focus)
	}
	return image.Rect(r.Min.X+m.inset, r.Min.Y+m.inset/2+m.focus, r.Max.X-m.inset, r.Max.Y-m.inset/2-m.focus)
}

// reveal scrolls so that the caret is in view, and no further than the
// text needs.
func (e *editor) reveal() {
	if e.rect.Empty() {
		return
	}
	fc, m := e.win.d.text, e.win.d.m
	in := e.inner(e.screen())
	n, start, end := e.line(e.caret)
	xs := fc.advances(e.text[start:end])
	cx := xs[e.caret-start]
	w := in.Dx() - m.caret
	if cx-e.off.X > w {
		e.off.X = cx - w
	}
	if cx < e.off.X {
		e.off.X = cx
	}
	// Scrolling sideways never goes past the caret's line: other lines may
	// be longer, but measuring them all on every key would make typing a
	// long text quadratic.
	widest := xs[len(xs)-1]
	if e.multi {
		starts := e.lineStarts()
		cy := n * fc.height
		if cy < e.off.Y {
			e.off.Y = cy
		}
		if cy+fc.height > e.off.Y+in.Dy() {
			e.off.Y = cy + fc.height - in.Dy()
		}
		e.off.Y = max(0, min(e.off.Y, len(starts)*fc.height-in.Dy()))
	}
	e.off.X = max(0, min(e.off.X, widest-w))
}

// indexAt returns the rune boundary nearest the screen point p.
func (e *editor) indexAt(p image.Point) int {
	fc := e.win.d.text
	in := e.inner(e.screen())
	starts := e.lineStarts()
	n := 0
	if e.multi {
		n = max(0, min(len(starts)-1, floorDiv(p.Y-in.Min.Y+e.off.Y, fc.height)))
	}
	start, end := starts[n], e.lineEnd(starts, n)
	xs := fc.advances(e.text[start:end])
	x := p.X - in.Min.X + e.off.X
	j := 0
	for j < len(xs)-1 && (xs[j]+xs[j+1])/2 < x {
		j++
	}
	return start + j
}

// floorDiv divides rounding towards minus infinity.
func floorDiv(a, b int) int {
	if a < 0 {
		return -((-a + b - 1) / b)
	}
	return a / b
}

func (e *editor) focusable() bool { return true }

// pointerDown places the caret; with Shift held it extends the selection
// to the press instead. The second press of a double click selects the word
// there, the third of a triple click the whole line.
func (e *editor) pointerDown(p image.Point) {
	d := e.win.d
	i := e.indexAt(p)
	switch d.clicks.n {
	case 2:
		a, b := i, i
		for a > 0 && !unicode.IsSpace(e.text[a-1]) {
			a--
		}
		for b < len(e.text) && !unicode.IsSpace(e.text[b]) {
			b++
		}
		e.anchor, e.caret = a, b
	case 3:
		_, start, end := e.line(i)
		e.anchor, e.caret = start, end
	default:
		e.moveTo(i, d.mod("Shift"))
	}
	e.edited()
}

func (e *editor) pointerDrag(p image.Point) {
	// A double or triple click's selection is by word or line; dragging
	// after one is not refined character by character.
	if e.win.d.clicks.n > 1 {
		return
	}
	if i := e.indexAt(p); i != e.caret {
		e.moveTo(i, true)
		e.edited()
	}
}

func (e *editor) scroll(_, dy int) {
	if !e.multi {
		return
	}
	fc := e.win.d.text
	lines := len(e.lineStarts())
	y := e.off.Y + dy*3*fc.height
	y = max(0, min(y, lines*fc.height-e.inner(e.screen()).Dy()))
	if y != e.off.Y {
		e.off.Y = y
		e.damage()
	}
}

func (e *editor) setValue(v string) error {
	e.set(v)
	return nil
}

func (e *editor) describe(n *shinken.Node) {
	n.Role, n.Name, n.Value = "text", e.name, string(e.text)
	n.States = append(e.nodeStates(n.States), "focusable")
	if !e.disabled {
		n.States = append(n.States, "editable")
	}
	if e.multi {
		n.States = append(n.States, "multi line")
	} else {
		n.States = append(n.States, "single line")
	}
}

func (e *editor) paint(dst *image.RGBA, r image.Rectangle, focused bool) {
	d, m := e.win.d, e.win.d.m
	fc := d.text
	edge, bw, body := colBorder, m.border, colField
	if e.disabled {
		body = colDisabled
	}
	if focused {
		edge, bw = colAccent, m.focus
	}
	outlined(dst, r, m.radius, bw, edge, body)
	in := e.inner(r)
	clip := clipTo(dst, in.Union(image.Rect(in.Min.X-m.caret, in.Min.Y, in.Max.X+m.caret, in.Max.Y)).Intersect(r.Inset(bw)))
	a, b := e.sel()
	showSel := focused && a != b
	starts := e.lineStarts()
	x0 := in.Min.X - e.off.X
	textCol := e.textColor()
	for n, start := range starts {
		top := in.Min.Y + n*fc.height - e.off.Y
		if !e.multi {
			top = r.Min.Y + (r.Dy()-fc.height)/2
		}
		if top >= clip.Rect.Max.Y || top+fc.height <= clip.Rect.Min.Y {
			continue
		}
		base := top + (fc.height-fc.ascent-fc.descent)/2 + fc.ascent
		end := e.lineEnd(starts, n)
		xs := fc.advances(e.text[start:end])
		if showSel && a <= end && b >= start {
			sa, sb := max(a, start), min(b, end)
			x1 := x0 + xs[sb-start]
			if b > end {
				x1 += fc.glyph(' ').adv // the selected newline
			}
			fill(clip, image.Rect(x0+xs[sa-start], top, x1, top+fc.height), colAccent)
			fc.draw(clip, x0, base, string(e.text[start:sa]), textCol)
			fc.draw(clip, x0+xs[sa-start], base, string(e.text[sa:sb]), colOnAccent)
			fc.draw(clip, x0+xs[sb-start], base, string(e.text[sb:end]), textCol)
		} else {
			fc.draw(clip, x0, base, string(e.text[start:end]), textCol)
		}
		if focused && e.caret >= start && e.caret <= end {
			cx := x0 + xs[e.caret-start]
			fill(clip, image.Rect(cx, top, cx+m.caret, top+fc.height), colText)
		}
	}
}

// An Entry is a single-line text entry. Its accessible role is "text" with
// the "single line" and "editable" states, its value is its text, and its
// action "activate" does what Return does: it clicks the window's default
// button.
type Entry struct{ editor }

// Text returns the entry's text.
func (e *Entry) Text() string {
	e.win.d.lock()
	defer e.win.d.unlock()
	return string(e.text)
}

// SetText replaces the entry's text and puts the caret at its end.
// Newlines become spaces.
func (e *Entry) SetText(text string) {
	e.win.d.lock()
	defer e.win.d.unlock()
	e.set(text)
}

func (e *Entry) measure(int) (int, bool) { return e.win.d.m.control, false }

func (e *Entry) describe(n *shinken.Node) {
	e.editor.describe(n)
	n.Actions = []string{"activate"}
}

func (e *Entry) invoke(string) {
	if def := e.win.def; def != nil {
		def.click()
	}
}

// A TextArea is a multi-line text editor. Its accessible role is "text"
// with the "multi line" and "editable" states, and its value is its text.
type TextArea struct{ editor }

// Text returns the text area's text.
func (t *TextArea) Text() string {
	t.win.d.lock()
	defer t.win.d.unlock()
	return string(t.text)
}

// SetText replaces the text area's text and puts the caret at its end.
func (t *TextArea) SetText(text string) {
	t.win.d.lock()
	defer t.win.d.unlock()
	t.set(text)
}

func (t *TextArea) measure(int) (int, bool) {
	d := t.win.d
	return 3*d.text.height + d.m.inset + 2*d.m.focus, true
}
