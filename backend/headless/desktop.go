// Package headless is a pure-software desktop: a framebuffer, a compositor
// stacking windows with title bars, widgets drawn with real text, pointer and
// keyboard input, an accessibility tree in AT-SPI's vocabulary, a clipboard
// and an application launcher. Nothing in it needs a display.
//
// It is a reference implementation of the Shinken backend interfaces, not a
// mock: an agent that fills a form here clicks pixels, types keys and reads
// the tree exactly as it would on X11, so its unit tests run anywhere, fast
// and deterministically (the same inputs give byte-identical frames).
//
// Input follows the usual desktop conventions: a second press of the same
// button within 400 ms and 5 px of the first is a double click (an editor
// selects the word), a third a triple click (the line); Shift extends an
// editor's selection to a click; a key held past 660 ms repeats 25 times a
// second. Any key press or scroll between presses ends a run of clicks, so
// only back-to-back presses depend on time.
//
// Its window manager moves a window dragged by its title bar, resizes one
// dragged by its frame's bottom right corner (the border's last pixels,
// within a title bar's height of the corner), and closes one on its title
// bar's close button or alt+F4.
//
// Applications are built from the package's widgets. Three are built in:
// "notes" (a text area, a Save button and a status label), "form" (entries,
// a check box and a Submit button that writes a summary) and "settings" (a
// menu bar, a password entry, a combo box, a radio group, a scroll view and
// modal dialogs). Register adds more.
//
// Text is drawn with the Go fonts; a character they lack comes from
// embedded subsets of DejaVu Sans (symbols: ✓, arrows, shapes) and Noto Sans
// CJK (kana, Hangul, the common ideographs), so typed text shows on screen
// as the tree reports it (fonts/README.md lists what they hold). Key names
// are the X11 backend's: an X keysym name or a single character; any other
// name is refused with aci.ErrInvalidAction, as X11 refuses it.
//
// A *Desktop implements shinken.Capturer, Injector, A11y, ChangeWatcher,
// Clipboard, Windows, Launcher and PointerReporter. It runs no commands: pair
// it with an executor for exec. All its methods are safe for concurrent use.
package headless

import (
	"cmp"
	"context"
	"fmt"
	"image"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// Options configure a Desktop. A nil *Options means the defaults.
type Options struct {
	// Width and Height are the screen size in pixels, which is also the
	// global action space. 0 means 1280 and 800.
	Width, Height int
	// DPR is the number of device pixels per UI point: at 2, widgets, text
	// and title bars are drawn twice as large on the same screen. 0 means 1.
	DPR float64
}

// A Desktop is a headless desktop. Make one with New.
type Desktop struct {
	mu sync.Mutex

	// Fixed at New.
	size   image.Point
	dpr    float64
	m      metrics
	text   *face // widget text
	bold   *face // titles
	wall   *image.RGBA
	check  *image.Alpha // check mark coverage, one box in size
	screen image.Rectangle

	apps    map[string]func(*Window) // launchable by name
	nextID  uint64                   // last id handed out; ids are never reused
	objects map[uint64]any           // live windows, widgets and list items by id
	stack   []*Window                // shown windows, bottom first
	active  *Window
	placed  int // windows placed so far, for cascading

	pointer   image.Point
	press     press           // what the held left button grabbed
	held      map[string]bool // modifier keys held down
	clicks    clickRun        // the presses that make a double or triple click
	keysDown  map[string]time.Time
	clipboard string

	frame  *image.RGBA       // the last frame handed out; never modified again
	damage []image.Rectangle // screen areas that differ from frame
	crops  map[uint64]crop   // the last window capture of each window

	watchers map[chan struct{}]struct{}
	// pending holds the applications' callbacks queued while the lock is
	// held; unlock runs them once it is released, so callbacks may call any
	// method of the desktop or its widgets.
	pending []func()
}

// New returns a desktop with nothing open but the built-in applications
// ready to launch.
func New(opts *Options) *Desktop {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Width <= 0 {
		o.Width = 1280
	}
	if o.Height <= 0 {
		o.Height = 800
	}
	if o.DPR <= 0 {
		o.DPR = 1
	}
	d := &Desktop{
		size:     image.Pt(o.Width, o.Height),
		dpr:      o.DPR,
		m:        newMetrics(o.DPR),
		text:     newFace(false, 14*o.DPR),
		bold:     newFace(true, 14*o.DPR),
		wall:     wallpaper(o.Width, o.Height),
		screen:   image.Rect(0, 0, o.Width, o.Height),
		apps:     map[string]func(*Window){"notes": notesApp, "form": formApp, "settings": settingsApp},
		objects:  map[uint64]any{},
		held:     map[string]bool{},
		keysDown: map[string]time.Time{},
		crops:    map[uint64]crop{},
		watchers: map[chan struct{}]struct{}{},
	}
	d.check = checkMark(d.m.box)
	d.pointer = image.Pt(o.Width/2, o.Height/2)
	d.damage = []image.Rectangle{d.screen}
	return d
}

// lock takes the desktop's lock. Release it with unlock.
func (d *Desktop) lock() { d.mu.Lock() }

// unlock releases the lock, then runs the callbacks queued under it.
func (d *Desktop) unlock() {
	run := d.pending
	d.pending = nil
	d.mu.Unlock()
	for _, f := range run {
		f()
	}
}

// later queues f to run once the lock is released.
func (d *Desktop) later(f func()) { d.pending = append(d.pending, f) }

// newID returns a fresh object id.
func (d *Desktop) newID() uint64 {
	d.nextID++
	return d.nextID
}

// Register makes build launchable as name, replacing any application of that
// name (the built-in "notes", "form" and "settings" included). Launch calls build with a
// new window, which build fills with widgets; the window appears once build
// returns.
func (d *Desktop) Register(name string, build func(*Window)) {
	d.lock()
	defer d.unlock()
	d.apps[name] = build
}

// Launch implements shinken.Launcher: it opens a new window of the
// registered application app, which can read args with Window.Args. An
// unknown name is an error wrapping aci.ErrNoSuchApp.
func (d *Desktop) Launch(ctx context.Context, app string, args []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.lock()
	build, ok := d.apps[app]
	if !ok {
		names := slices.Sorted(maps.Keys(d.apps))
		d.unlock()
		return fmt.Errorf("%w: headless has no app %q (it has %s)", aci.ErrNoSuchApp, app, strings.Join(names, ", "))
	}
	w := &Window{d: d, id: d.newID(), app: app, args: slices.Clone(args), title: app, content: image.Pt(440, 320)}
	d.objects[w.id] = w
	d.unlock()
	build(w)
	d.lock()
	defer d.unlock()
	if w.closed {
		return nil
	}
	d.show(w)
	return nil
}

// show places w on screen, raises and activates it.
func (d *Desktop) show(w *Window) {
	w.layout()
	w.frame = d.place(w.frameSize())
	w.shown = true
	d.stack = append(d.stack, w)
	if w.focus == nil {
		w.focus = w.nextFocus(nil, false)
	}
	d.activate(w)
	d.damageRect(w.outer())
	d.damageRect(d.taskbar())
	d.notify()
}

// place finds a spot for a window of size sz: the first spot on a grid,
// scanning rows from the top left, where it overlaps no other window; when
// none is free, a cascade from the top left.
func (d *Desktop) place(sz image.Point) image.Rectangle {
	d.placed++
	m := d.m
	margin, step := 3*m.gap, 5*m.gap
	area := image.Rect(0, 0, d.size.X, d.size.Y-m.taskbar)
	for y := margin; y+sz.Y <= area.Max.Y; y += step {
		for x := margin; x+sz.X <= area.Max.X; x += step {
			r := image.Rectangle{image.Pt(x, y), image.Pt(x, y).Add(sz)}
			free := true
			for _, o := range d.stack {
				if o.frame.Inset(-2 * m.gap).Overlaps(r) {
					free = false
					break
				}
			}
			if free {
				return r
			}
		}
	}
	k := (d.placed - 1) % 8
	at := image.Pt(margin+k*4*m.gap, margin+k*4*m.gap)
	return image.Rectangle{at, at.Add(sz)}
}

// activate raises w and gives it the keyboard focus. A window under a
// modal dialog is raised with the dialog above it, and the dialog gets the
// focus, as window managers do.
func (d *Desktop) activate(w *Window) {
	if w.modal != nil {
		d.raise(w)
		d.activate(w.modal)
		return
	}
	if old := d.active; old != w && old != nil {
		d.damageRect(old.titleBar())
		if old.focus != nil {
			old.focus.base().damage()
		}
		old.closePopup()
	}
	d.raise(w)
	if d.active != w {
		d.active = w
		d.damageRect(w.outer())
		d.damageRect(d.taskbar())
		d.notify()
	}
}

// raise puts w on top of the stack.
func (d *Desktop) raise(w *Window) {
	if i := slices.Index(d.stack, w); i >= 0 && i != len(d.stack)-1 {
		d.stack = append(slices.Delete(d.stack, i, i+1), w)
		d.damageRect(w.outer())
	}
}

// closeWindow removes w and everything in it, its dialog first. A dialog's
// window gets the focus back.
func (d *Desktop) closeWindow(w *Window) {
	if w.closed {
		return
	}
	if w.modal != nil {
		d.closeWindow(w.modal)
	}
	w.closePopup()
	w.closed = true
	delete(d.objects, w.id)
	for _, c := range w.widgets {
		c.base().forget()
	}
	delete(d.crops, w.id)
	if i := slices.Index(d.stack, w); i >= 0 {
		d.stack = slices.Delete(d.stack, i, i+1)
		d.damageRect(w.outer())
		d.damageRect(d.taskbar())
	}
	if d.press.win == w {
		d.press = press{}
	}
	owner := w.owner
	if owner != nil && owner.modal == w {
		owner.modal = nil
	}
	if d.active == w {
		d.active = nil
		switch n := len(d.stack); {
		case owner != nil && !owner.closed && owner.shown:
			d.activate(owner)
		case n > 0:
			d.activate(d.stack[n-1])
		}
	}
	d.notify()
}

// Windows implements shinken.Windows. It lists the open windows in the
// order they opened.
func (d *Desktop) Windows(ctx context.Context) ([]shinken.Window, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.lock()
	defer d.unlock()
	list := make([]shinken.Window, 0, len(d.stack))
	for _, w := range d.byAge() {
		list = append(list, shinken.Window{ID: w.id, Title: w.title, App: w.app, BBox: w.frame, Active: w == d.active})
	}
	return list, nil
}

// byAge returns the shown windows, oldest first.
func (d *Desktop) byAge() []*Window {
	return slices.SortedFunc(slices.Values(d.stack), func(a, b *Window) int { return cmp.Compare(a.id, b.id) })
}

// window returns the shown window whose id is id.
func (d *Desktop) window(id uint64) (*Window, error) {
	if w, ok := d.objects[id].(*Window); ok && w.shown {
		return w, nil
	}
	return nil, fmt.Errorf("%w: headless has no window %d", aci.ErrNoSuchWindow, id)
}

// Activate implements shinken.Windows: it raises the window and gives it
// the keyboard focus.
func (d *Desktop) Activate(ctx context.Context, id uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.lock()
	defer d.unlock()
	w, err := d.window(id)
	if err != nil {
		return err
	}
	d.activate(w)
	return nil
}

// CloseWindow closes the window whose id is id, as its title bar's close
// button does. An unknown window is an error wrapping
// aci.ErrNoSuchWindow.
func (d *Desktop) CloseWindow(ctx context.Context, id uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.lock()
	defer d.unlock()
	w, err := d.window(id)
	if err != nil {
		return err
	}
	d.closeWindow(w)
	return nil
}

// ClipboardText implements shinken.Clipboard.
func (d *Desktop) ClipboardText(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	d.lock()
	defer d.unlock()
	return d.clipboard, nil
}

// SetClipboardText implements shinken.Clipboard.
func (d *Desktop) SetClipboardText(ctx context.Context, text string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.lock()
	defer d.unlock()
	d.clipboard = text
	return nil
}

// PointerPosition implements shinken.PointerReporter.
func (d *Desktop) PointerPosition(ctx context.Context) (image.Point, error) {
	if err := ctx.Err(); err != nil {
		return image.Point{}, err
	}
	d.lock()
	defer d.unlock()
	return d.pointer, nil
}

// Watch implements shinken.ChangeWatcher. The channel receives a value after
// any change to the accessibility tree: text, states, focus, windows opening,
// closing, moving or changing title.
func (d *Desktop) Watch(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	d.lock()
	d.watchers[ch] = struct{}{}
	d.unlock()
	context.AfterFunc(ctx, func() {
		d.lock()
		defer d.unlock()
		delete(d.watchers, ch)
		close(ch)
	})
	return ch
}

// notify tells the watchers that the tree changed. Sends never block: a
// watcher that has not read the last one gets a single value for both.
func (d *Desktop) notify() {
	for ch := range d.watchers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// nodeID is the accessible ID of object id.
func nodeID(id uint64) string { return "w" + strconv.FormatUint(id, 10) }

// parseNodeID is the inverse of nodeID.
func parseNodeID(s string) (uint64, bool) {
	rest, ok := strings.CutPrefix(s, "w")
	if !ok || rest == "" || rest[0] == '0' {
		return 0, false
	}
	id, err := strconv.ParseUint(rest, 10, 64)
	return id, err == nil
}
