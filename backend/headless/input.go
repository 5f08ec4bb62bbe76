package headless

import (
	"context"
	"fmt"
	"image"
	"time"
	"unicode"

	"shinken.dev/go/internal/keysym"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// pressKind says what the held left button grabbed.
type pressKind uint8

const (
	pressNone   pressKind = iota
	pressWidget           // a widget: it gets the drags and the release
	pressClose            // a title bar's close button: closes on release over it
	pressMove             // a title bar: drags move the window
	pressResize           // the frame's bottom right corner: drags resize the window
	pressPopup            // an open pop-up: it gets the release
)

// press is the state of the left button between down and up.
type press struct {
	kind pressKind
	win  *Window
	ctl  control
	grab image.Point // pressMove: the pointer's offset in the window; pressResize: from its bottom right corner
}

// Pointer implements shinken.Injector. Pointer positions are clamped to the
// screen, as an X server clamps them.
func (d *Desktop) Pointer(ctx context.Context, ev shinken.PointerEvent) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.lock()
	defer d.unlock()
	p := image.Pt(max(0, min(ev.X, d.size.X-1)), max(0, min(ev.Y, d.size.Y-1)))
	d.pointer = p
	switch ev.Kind {
	case shinken.PointerMove:
		if w := d.active; w != nil && w.pop != nil {
			w.pop.hover(p)
		}
		d.drag(p)
	case shinken.PointerDown:
		d.drag(p)
		d.buttonDown(p, ev.Button)
	case shinken.PointerUp:
		d.drag(p)
		d.buttonUp(p, ev.Button)
	case shinken.PointerScroll:
		d.clicks = clickRun{}
		if w := d.windowAt(p); w != nil && w.modal == nil {
			if c := scrollTarget(w.widgetAt(p)); c != nil && !c.base().disabled {
				c.scroll(ev.DX, ev.DY)
			}
		}
	default:
		return fmt.Errorf("%w: pointer event kind %d", aci.ErrInvalidAction, ev.Kind)
	}
	return nil
}

// scrollTarget is the widget the wheel over c scrolls: c when it scrolls
// itself (a list, a text area, a scroll view), else the scroll view
// holding it.
func scrollTarget(c control) control {
	switch c.(type) {
	case nil, *List, *TextArea, *ScrollView:
		return c
	}
	if sv := c.base().parent; sv != nil {
		return sv
	}
	return c
}

// drag follows the pointer while the left button is held.
func (d *Desktop) drag(p image.Point) {
	switch pr := d.press; pr.kind {
	case pressMove:
		pr.win.moveTo(p.Sub(pr.grab))
	case pressResize:
		pr.win.resizeTo(p.Sub(pr.grab))
	case pressWidget:
		pr.ctl.pointerDrag(p)
	}
}

// windowAt returns the topmost window under p, or nil.
func (d *Desktop) windowAt(p image.Point) *Window {
	if p.In(d.taskbar()) {
		return nil
	}
	for i := len(d.stack) - 1; i >= 0; i-- {
		if p.In(d.stack[i].frame) {
			return d.stack[i]
		}
	}
	return nil
}

// Multiple clicks and key repeat follow the usual desktop defaults: a press
// within multiClickTime and multiClickDistance of the previous press of the
// same button continues its run (GTK's double-click time and distance), and
// a key held past repeatDelay repeats every repeatInterval (an X server's
// default autorepeat, 660 ms then 25 per second). A key press or a scroll
// between two presses ends the run, so the desktop's double clicks depend
// on time only when nothing else happens between them.
const (
	multiClickTime     = 400 * time.Millisecond
	multiClickDistance = 5
	repeatDelay        = 660 * time.Millisecond
	repeatInterval     = 40 * time.Millisecond
)

// clickRun counts the presses of one double or triple click.
type clickRun struct {
	at     time.Time
	p      image.Point
	button shinken.Button
	n      int // 1 for a single click, 2 for a double, 3 for a triple
}

// count records a press of button at p and returns its place in the run:
// after a triple click the next press starts a new run.
func (r *clickRun) count(p image.Point, button shinken.Button, now time.Time) int {
	near := func(a, b int) bool { return a-b <= multiClickDistance && b-a <= multiClickDistance }
	if r.n > 0 && r.n < 3 && r.button == button && now.Sub(r.at) <= multiClickTime && near(p.X, r.p.X) && near(p.Y, r.p.Y) {
		r.n++
	} else {
		r.n = 1
	}
	r.at, r.p, r.button = now, p, button
	return r.n
}

// buttonDown presses button at p: it activates the window there and
// focuses and presses the widget under the pointer. A left press that
// continues a double or triple click reaches the widget with d.clicks.n
// set, so an editor selects a word or a line.
func (d *Desktop) buttonDown(p image.Point, button shinken.Button) {
	d.clicks.count(p, button, time.Now())
	if p.In(d.taskbar()) {
		if w := d.taskButtonAt(p); w != nil && button == shinken.ButtonLeft {
			d.activate(w)
		}
		return
	}
	if w := d.active; w != nil && w.pop != nil {
		if p.In(w.pop.bounds()) {
			if button == shinken.ButtonLeft {
				d.press = press{kind: pressPopup, win: w}
			}
			return
		}
		// A press outside a pop-up closes it and goes no further.
		w.pop.outside(p)
		return
	}
	w := d.windowAt(p)
	if w == nil {
		return
	}
	if w.modal != nil {
		// A window under a modal dialog takes no input: the press raises
		// the dialog, as window managers do.
		d.activate(w)
		return
	}
	d.activate(w)
	c := w.widgetAt(p)
	if c != nil && c.base().disabled {
		c = nil
	}
	if c != nil && c.focusable() {
		w.setFocus(c)
	}
	if button != shinken.ButtonLeft {
		return
	}
	switch {
	case p.In(w.closeBox()):
		d.press = press{kind: pressClose, win: w}
	case p.In(w.titleBar()):
		d.press = press{kind: pressMove, win: w, grab: p.Sub(w.frame.Min)}
	case w.inResizeGrip(p):
		d.press = press{kind: pressResize, win: w, grab: p.Sub(w.frame.Max)}
	case c != nil:
		d.press = press{kind: pressWidget, win: w, ctl: c}
		c.pointerDown(p)
	}
}

// buttonUp releases button at p, finishing what buttonDown started.
func (d *Desktop) buttonUp(p image.Point, button shinken.Button) {
	if button != shinken.ButtonLeft {
		return
	}
	pr := d.press
	d.press = press{}
	if pr.win == nil || pr.win.closed {
		return
	}
	switch pr.kind {
	case pressClose:
		if p.In(pr.win.closeBox()) {
			d.closeWindow(pr.win)
		}
	case pressWidget:
		pr.ctl.pointerUp(p, p.In(pr.ctl.base().screen()) && d.windowAt(p) == pr.win)
	case pressPopup:
		if pop := pr.win.pop; pop != nil && p.In(pop.bounds()) {
			pop.release(p)
		}
	}
}

// modifiers are the keysyms that modify other keys rather than type.
var modifiers = map[string]bool{
	"Control_L": true, "Control_R": true, "Shift_L": true, "Shift_R": true,
	"Alt_L": true, "Alt_R": true, "Meta_L": true, "Meta_R": true,
	"Super_L": true, "Super_R": true, "Hyper_L": true, "Hyper_R": true,
	"ISO_Level3_Shift": true, "Caps_Lock": true, "Num_Lock": true,
}

// shifted maps characters to what they type with Shift on a US keyboard,
// the layout an X server starts with.
var shifted = map[rune]rune{
	'1': '!', '2': '@', '3': '#', '4': '$', '5': '%', '6': '^', '7': '&', '8': '*',
	'9': '(', '0': ')', '-': '_', '=': '+', '[': '{', ']': '}', '\\': '|', ';': ':',
	'\'': '"', ',': '<', '.': '>', '/': '?', '`': '~',
}

// mod reports whether a modifier of the family (Control, Shift...) is down.
func (d *Desktop) mod(family string) bool { return d.held[family+"_L"] || d.held[family+"_R"] }

// Key implements shinken.Injector. Modifiers are tracked between events, so
// the core's combos (Control_L down, a down, a up, Control_L up) work as on
// a keyboard; Shift changes what letters, digits and punctuation type as on
// a US layout. Keys act when pressed; a key released after more than the
// repeat delay acts again once per repeat interval it was held past it, as
// autorepeat would have; releasing a modifier releases it.
func (d *Desktop) Key(ctx context.Context, ev shinken.KeyEvent) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sym, r, err := resolveKey(ev.Key)
	if err != nil {
		return err
	}
	d.lock()
	defer d.unlock()
	if modifiers[sym] {
		if ev.Down {
			d.held[sym] = true
		} else {
			delete(d.held, sym)
		}
		return nil
	}
	if !ev.Down {
		// A key held past the repeat delay repeats, as an X server's
		// autorepeat would have while it was down.
		if at, ok := d.keysDown[sym]; ok {
			delete(d.keysDown, sym)
			if held := time.Since(at); held >= repeatDelay {
				for range 1 + int((held-repeatDelay)/repeatInterval) {
					d.keyPress(d.keyInput(sym, r))
				}
			}
		}
		return nil
	}
	if _, ok := d.keysDown[sym]; !ok {
		d.keysDown[sym] = time.Now()
	}
	d.keyPress(d.keyInput(sym, r))
	return nil
}

// keyInput is what pressing the key sym (resolved by resolveKey, typing r)
// means with the modifiers held now.
func (d *Desktop) keyInput(sym string, r rune) keyInput {
	k := keyInput{sym: sym, r: r, ctrl: d.mod("Control"), shift: d.mod("Shift"), alt: d.mod("Alt") || d.mod("Meta")}
	if k.shift && k.r != 0 {
		if s, ok := shifted[k.r]; ok {
			k.r = s
		} else {
			k.r = unicode.ToUpper(k.r)
		}
	}
	if k.r == ' ' {
		k.sym = "space"
	}
	return k
}

// resolveKey maps a KeyEvent's key to the keysym name widgets see and the
// character it types (0 for none). The names are those the X11 backend
// takes (internal/keysym), so a name X11 refuses is refused here too, with
// the same error: an alias becomes its preferred name ("Prior" is
// "Page_Up"), a character keysym the character itself ("plus" is "+", a
// space "space"), and a control character its key ("\n" is "Return").
func resolveKey(name string) (sym string, r rune, err error) {
	ks, ok := keysym.Lookup(name)
	if !ok {
		return "", 0, fmt.Errorf("%w: unknown key %q", aci.ErrInvalidAction, name)
	}
	if r = keysym.Rune(ks); r < 0 {
		return keysym.Name(ks), 0, nil
	}
	if r == ' ' {
		return "space", r, nil
	}
	return string(r), r, nil
}

// Type implements shinken.Injector. Each character acts as its key would
// with no modifier held, whatever Key left held: "\n" presses Return and
// "\t" presses Tab; any other character is typed as itself, so accents,
// symbols and CJK arrive intact. Callbacks a character triggers (Return on
// a default button) run before the next character is typed.
func (d *Desktop) Type(ctx context.Context, text string) error {
	for _, r := range text {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := keyInput{sym: string(r), r: r}
		switch r {
		case '\r':
			continue
		case '\n':
			k = keyInput{sym: "Return"}
		case '\t':
			k = keyInput{sym: "Tab"}
		case ' ':
			k.sym = "space"
		}
		d.lock()
		d.keyPress(k)
		d.unlock()
	}
	return nil
}

// keyPress delivers a key press to the active window. Like any input
// between two presses, it ends a run of clicks.
func (d *Desktop) keyPress(k keyInput) {
	d.clicks = clickRun{}
	w := d.active
	if w == nil {
		return
	}
	switch {
	case k.alt && k.sym == "F4":
		d.closeWindow(w)
		return
	case w.pop != nil && k.sym == "Escape":
		w.closePopup()
		return
	case w.pop != nil && w.pop.key(k):
		return
	case k.sym == "Tab" || k.sym == "ISO_Left_Tab" || k.sym == "KP_Tab":
		w.closePopup()
		w.setFocus(w.nextFocus(w.focus, k.shift || k.sym == "ISO_Left_Tab"))
		return
	case k.sym == "F10" && !k.ctrl && !k.alt:
		if bar := w.menuBar(); bar != nil {
			w.closePopup()
			bar.openFromKeys(0)
			return
		}
	}
	if f := w.focus; f != nil && !f.base().disabled && f.key(k) {
		return
	}
	switch {
	case (k.sym == "Return" || k.sym == "KP_Enter") && w.def != nil:
		w.def.click()
	case k.sym == "Escape" && w.owner != nil:
		// Escape closes a dialog, as its Cancel would.
		d.closeWindow(w)
	}
}
