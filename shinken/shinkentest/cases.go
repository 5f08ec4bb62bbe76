package shinkentest

import (
	"context"
	"errors"
	"fmt"
	"image"
	"slices"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// A testCase is one named contract.
type testCase struct {
	name string
	run  func(s *suite)
}

// directOnly names the cases that check an interface the Runtime consumes
// but does not serve back (change notifications), a shape the wire does not
// carry (the tree's structure and budgets), or a key pressed apart from its
// release (the key verb sends whole combos, refused whole): they run against
// the backend only, not also through a Runtime and a Client.
var directOnly = map[string]bool{"SnapshotShape": true, "Watch": true, "UnknownKeyRefused": true}

// cases are the suite's contracts, in the order they run. Each comment says
// what a backend promises.
var cases = []testCase{
	// Display reports a non-empty action space with a positive DPR, and the
	// same answer twice when nothing changed.
	{"Display", testDisplay},
	// A screen capture covers the whole action space: Source is (0,0)-(W,H),
	// the image is W×H, its origin is (0,0), and every pixel is opaque.
	{"CaptureScreen", testCaptureScreen},
	// Capturing twice with nothing changed gives the same pixels.
	{"CaptureUnchanged", testCaptureUnchanged},
	// A returned frame keeps its pixels after the screen changes (the
	// backend never redraws an image it handed out), and the next capture
	// shows the change.
	{"FrameKeepsPixels", testFrameKeepsPixels},
	// A window capture's Source is the window's bbox as Windows lists it, and
	// its pixels are the screen's pixels there (the fast path agrees with the
	// general one) for an active, unobscured window.
	{"CaptureWindow", testCaptureWindow},
	// active_window captures the window Windows reports as active.
	{"CaptureActiveWindow", testCaptureActiveWindow},
	// Capturing a window that does not exist fails with ErrNoSuchWindow.
	{"CaptureUnknownWindow", testCaptureUnknownWindow},
	// After a pointer move, PointerPosition reports where the pointer went,
	// corners included.
	{"PointerPosition", testPointerPosition},
	// A click (move, press, release) inside a push button's bbox activates
	// the button exactly once.
	{"ClickButton", testClickButton},
	// Text typed into a focused entry reads back as the entry's accessible
	// value, whatever its characters: ASCII, accents, symbols, CJK.
	{"TypeText", testTypeText},
	// Key events edit a focused entry as a person's keyboard would:
	// BackSpace, Left, Home, End, shift+letter, and ctrl+a to select all.
	{"KeyCombos", testKeyCombos},
	// An unknown key name is refused: Key fails with ErrInvalidAction for a
	// name that is neither an X keysym name nor a single character ("frob",
	// the alias "ctrl" the core resolves before a backend sees it, "F36",
	// "ab"), pressed or released, and nothing is typed. A combo broken by
	// such a name leaves no modifier held: the next text types as itself.
	{"UnknownKeyRefused", testUnknownKeyRefused},
	// A click with Shift held extends the entry's selection from the caret
	// to the click, as the core composes a click whose action holds keys.
	{"ShiftClick", testShiftClick},
	// Text set on the clipboard reads back unchanged, non-ASCII included.
	{"Clipboard", testClipboard},
	// ctrl+c in a focused entry copies its selection to the clipboard, and
	// ctrl+v pastes the clipboard into it.
	{"ClipboardKeys", testClipboardKeys},
	// Windows lists each top-level window once, with a title and a bbox;
	// Activate makes the named window the only active one; activating an
	// unknown window fails with ErrNoSuchWindow.
	{"Windows", testWindows},
	// A snapshot is a well-formed pre-order tree (parents before children,
	// depths consistent, IDs unique) and honours MaxNodes.
	{"SnapshotShape", testSnapshotShape},
	// The tree agrees with the pixels: the button's and the entry's bboxes
	// lie inside their window's bbox and on screen, and something is drawn
	// there (the pixels are not one flat colour).
	{"TreeMatchesPixels", testTreeMatchesPixels},
	// set_value replaces an entry's text, and the new text reads back.
	{"SetValue", testSetValue},
	// invoke_action with no action name runs the button's first action;
	// an action the node lacks fails with ErrNoSuchAction.
	{"InvokeAction", testInvokeAction},
	// An ID the backend never issued is stale: Perform fails with
	// ErrStaleElementRef rather than acting on some other node.
	{"StaleElement", testStaleElement},
	// Watch delivers a value after an accessible change, and closes its
	// channel when its context is done.
	{"Watch", testWatch},
	// Launching an application that does not exist fails with ErrNoSuchApp.
	{"LaunchUnknownApp", testLaunchUnknownApp},
	// Through a Runtime and a Client, with no wait between acting and
	// looking: the screenshot right after a click on the button differs
	// from the one before, the next observe shows the counter it changed,
	// and text typed right after a click on the entry lands in the entry.
	{"Settled", testSettled},
}

// suite is the state of one case.
type suite struct {
	t    *testing.T
	ctx  context.Context
	b    shinken.Backend
	real shinken.Backend // in the wire run, the backend behind the Runtime; else nil
	opts Options
}

// need returns the backend as a T, or skips the case. In the wire run the
// case skips when the backend behind the Runtime lacks T.
func need[T any](s *suite) T {
	s.t.Helper()
	v, ok := s.b.(T)
	if s.real != nil {
		_, ok = s.real.(T)
	}
	if !ok {
		s.t.Skipf("the backend does not implement %s", strings.TrimPrefix(fmt.Sprintf("%T", (*T)(nil)), "*"))
	}
	return v
}

// check fails the case on err, or skips it when err wraps
// errors.ErrUnsupported.
func (s *suite) check(err error, format string, args ...any) {
	s.t.Helper()
	if err == nil {
		return
	}
	what := fmt.Sprintf(format, args...)
	if errors.Is(err, errors.ErrUnsupported) {
		s.t.Skipf("%s: %v", what, err)
	}
	s.t.Fatalf("%s: %v", what, err)
}

// waitFor polls cond until it holds, failing the case with what when the
// timeout passes first. describe, called on failure, says what was seen.
func (s *suite) waitFor(what string, cond func() (bool, error), describe func() string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.Timeout)
	defer cancel()
	err := poll(ctx, cond)
	if errors.Is(err, errNotYet) {
		s.t.Fatalf("%s: not after %v; %s", what, s.opts.Timeout, describe())
	}
	s.check(err, "%s", what)
}

// open opens the fixture application.
func (s *suite) open() *App {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.Timeout)
	defer cancel()
	app, err := s.opts.Fixture.Open(ctx, s.t, s.b)
	s.check(err, "opening the fixture")
	return app
}

// node returns the accessible node whose ID is id.
func (s *suite) node(id string) *shinken.Node {
	s.t.Helper()
	n, err := findNode(s.ctx, need[shinken.A11y](s), id)
	s.check(err, "finding node %s", id)
	return n
}

// window returns the listed window whose ID is id.
func (s *suite) window(id uint64) shinken.Window {
	s.t.Helper()
	list, err := need[shinken.Windows](s).Windows(s.ctx)
	s.check(err, "Windows")
	i := slices.IndexFunc(list, func(w shinken.Window) bool { return w.ID == id })
	if i < 0 {
		s.t.Fatalf("window %d is not listed: %+v", id, list)
	}
	return list[i]
}

// capture captures scope.
func (s *suite) capture(scope aci.Scope) shinken.Frame {
	s.t.Helper()
	f, err := need[shinken.Capturer](s).Capture(s.ctx, scope)
	s.check(err, "Capture(%s)", scope)
	if f.Image == nil {
		s.t.Fatalf("Capture(%s) returned no image", scope)
	}
	return f
}

// pointer injects one pointer event.
func (s *suite) pointer(ev shinken.PointerEvent) {
	s.t.Helper()
	s.check(need[shinken.Injector](s).Pointer(s.ctx, ev), "Pointer(%+v)", ev)
}

// click clicks the left button at p.
func (s *suite) click(p image.Point) {
	s.t.Helper()
	s.pointer(shinken.PointerEvent{Kind: shinken.PointerMove, X: p.X, Y: p.Y})
	s.pointer(shinken.PointerEvent{Kind: shinken.PointerDown, X: p.X, Y: p.Y})
	s.pointer(shinken.PointerEvent{Kind: shinken.PointerUp, X: p.X, Y: p.Y})
}

// keys presses keys in order and releases them in reverse, as the core
// composes a combo such as ctrl+a.
func (s *suite) keys(keys ...string) {
	s.t.Helper()
	in := need[shinken.Injector](s)
	for _, k := range keys {
		s.check(in.Key(s.ctx, shinken.KeyEvent{Key: k, Down: true}), "pressing %s", k)
	}
	for _, k := range slices.Backward(keys) {
		s.check(in.Key(s.ctx, shinken.KeyEvent{Key: k}), "releasing %s", k)
	}
}

// typeText types text.
func (s *suite) typeText(text string) {
	s.t.Helper()
	s.check(need[shinken.Injector](s).Type(s.ctx, text), "Type(%q)", text)
}

// focusEntry clicks the fixture's entry and waits until it has the focus.
func (s *suite) focusEntry(app *App) {
	s.t.Helper()
	s.click(center(s.node(app.Entry).BBox))
	var n *shinken.Node
	s.waitFor("the entry takes the focus when clicked", func() (bool, error) {
		var err error
		n, err = findNode(s.ctx, need[shinken.A11y](s), app.Entry)
		return err == nil && (n.Focused || slices.Contains(n.States, "focused")), err
	}, func() string { return fmt.Sprintf("entry: %+v", n) })
}

// waitEntry waits until the entry's text is want.
func (s *suite) waitEntry(app *App, want, after string) {
	s.t.Helper()
	var got string
	s.waitFor(fmt.Sprintf("entry reads %q after %s", want, after), func() (bool, error) {
		n, err := findNode(s.ctx, need[shinken.A11y](s), app.Entry)
		if err != nil {
			return false, err
		}
		got = n.Value
		return got == want, nil
	}, func() string { return fmt.Sprintf("it reads %q", got) })
}

// waitActivations waits until the button has been activated want times.
func (s *suite) waitActivations(app *App, want int, after string) {
	s.t.Helper()
	var got int
	s.waitFor(fmt.Sprintf("%d activation(s) after %s", want, after), func() (bool, error) {
		var err error
		got, err = app.Activations(s.ctx)
		return got == want, err
	}, func() string { return fmt.Sprintf("the button was activated %d time(s)", got) })
}

func testDisplay(s *suite) {
	c := need[shinken.Capturer](s)
	d, err := c.Display(s.ctx)
	s.check(err, "Display")
	if d.W <= 0 || d.H <= 0 || d.DPR <= 0 {
		s.t.Fatalf("Display = %+v, want a positive size and DPR", d)
	}
	again, err := c.Display(s.ctx)
	s.check(err, "Display")
	if again != d {
		s.t.Fatalf("Display changed from %+v to %+v with nothing done", d, again)
	}
}

func testCaptureScreen(s *suite) {
	d, err := need[shinken.Capturer](s).Display(s.ctx)
	s.check(err, "Display")
	f := s.capture(aci.ScopeScreen)
	want := image.Rect(0, 0, d.W, d.H)
	if f.Source != want {
		s.t.Errorf("Source = %v, want %v", f.Source, want)
	}
	if b := f.Image.Bounds(); b != image.Rect(0, 0, d.W, d.H) {
		s.t.Errorf("image bounds = %v, want %v", b, want)
	}
	if f.Display != d {
		s.t.Errorf("Frame.Display = %+v, want %+v", f.Display, d)
	}
	if p, ok := firstTransparent(f.Image, f.Image.Bounds()); ok {
		s.t.Errorf("pixel %v of the screen is not opaque", p)
	}
}

func testCaptureUnchanged(s *suite) {
	a := s.capture(aci.ScopeScreen)
	b := s.capture(aci.ScopeScreen)
	if a.Source != b.Source || !samePixels(a.Image, a.Image.Bounds(), b.Image, b.Image.Bounds()) {
		s.t.Fatal("two captures with nothing changed differ")
	}
}

func testFrameKeepsPixels(s *suite) {
	app := s.open()
	before := s.capture(aci.ScopeScreen)
	kept := slices.Clone(before.Image.Pix)
	s.focusEntry(app)
	s.typeText("kept")
	s.waitEntry(app, "kept", `typing "kept"`)
	if !slices.Equal(before.Image.Pix, kept) {
		s.t.Fatal("the pixels of a frame already returned changed when the screen did: a backend must never draw into an image it handed out")
	}
	var after shinken.Frame
	s.waitFor("a capture after typing shows the typed text", func() (bool, error) {
		after = s.capture(aci.ScopeScreen)
		return !slices.Equal(after.Image.Pix, kept), nil
	}, func() string { return "every capture still has the pixels from before typing" })
	if !slices.Equal(before.Image.Pix, kept) {
		s.t.Fatal("a new capture drew into the image of an earlier one: a backend must never draw into an image it handed out")
	}
}

func testCaptureWindow(s *suite) {
	app := s.open()
	w := s.window(app.Window)
	f := s.capture(aci.WindowScope(app.Window))
	if f.Source != w.BBox {
		s.t.Fatalf("window capture Source = %v, want the listed bbox %v", f.Source, w.BBox)
	}
	if f.Image.Bounds() != image.Rect(0, 0, w.BBox.Dx(), w.BBox.Dy()) {
		s.t.Fatalf("window image bounds = %v, want %v at the origin", f.Image.Bounds(), w.BBox.Size())
	}
	// The two captures are taken one after the other: a blinking caret may
	// change the window in between, so compare until a pair agrees.
	s.waitFor("the window capture's pixels equal the screen's pixels at the window", func() (bool, error) {
		f := s.capture(aci.WindowScope(app.Window))
		screen := s.capture(aci.ScopeScreen)
		visible := w.BBox.Intersect(screen.Source)
		if visible.Empty() {
			s.t.Fatalf("the fixture window %v is off screen", w.BBox)
		}
		return samePixels(f.Image, visible.Sub(w.BBox.Min), screen.Image, visible), nil
	}, func() string { return "they differ" })
}

func testCaptureActiveWindow(s *suite) {
	app := s.open()
	s.check(need[shinken.Windows](s).Activate(s.ctx, app.Window), "Activate")
	var w shinken.Window
	s.waitFor("the fixture window is active", func() (bool, error) {
		w = s.window(app.Window)
		return w.Active, nil
	}, func() string { return fmt.Sprintf("%+v", w) })
	f := s.capture(aci.ScopeActiveWindow)
	if f.Source != w.BBox {
		s.t.Fatalf("active_window Source = %v, want the active window's bbox %v", f.Source, w.BBox)
	}
	if f.Image.Bounds().Size() != w.BBox.Size() {
		s.t.Fatalf("active_window image size = %v, want %v", f.Image.Bounds().Size(), w.BBox.Size())
	}
}

func testCaptureUnknownWindow(s *suite) {
	_, err := need[shinken.Capturer](s).Capture(s.ctx, aci.WindowScope(0xfffffff1))
	if !errors.Is(err, aci.ErrNoSuchWindow) {
		s.check(err, "Capture of an unknown window")
		s.t.Fatalf("Capture of an unknown window: err = %v, want ErrNoSuchWindow", err)
	}
}

func testPointerPosition(s *suite) {
	d, err := need[shinken.Capturer](s).Display(s.ctx)
	s.check(err, "Display")
	r := need[shinken.PointerReporter](s)
	for _, p := range []image.Point{{d.W / 2, d.H / 2}, {0, 0}, {d.W - 1, d.H - 1}, {d.W / 3, d.H / 5}} {
		s.pointer(shinken.PointerEvent{Kind: shinken.PointerMove, X: p.X, Y: p.Y})
		var got image.Point
		s.waitFor(fmt.Sprintf("the pointer is at %v", p), func() (bool, error) {
			var err error
			got, err = r.PointerPosition(s.ctx)
			return got == p, err
		}, func() string { return fmt.Sprintf("it is at %v", got) })
	}
}

func testClickButton(s *suite) {
	app := s.open()
	s.click(center(s.node(app.Button).BBox))
	s.waitActivations(app, 1, "a click on the button")
}

func testTypeText(s *suite) {
	app := s.open()
	s.focusEntry(app)
	want := ""
	for _, text := range []string{"hello ", "é", "✓", "日本", " naïve ½ Ωmega"} {
		s.typeText(text)
		want += text
		s.waitEntry(app, want, fmt.Sprintf("typing %q", text))
	}
}

func testKeyCombos(s *suite) {
	app := s.open()
	s.focusEntry(app)
	s.typeText("abc")
	s.waitEntry(app, "abc", `typing "abc"`)
	s.keys("BackSpace")
	s.waitEntry(app, "ab", "BackSpace")
	s.keys("Left")
	s.keys("x")
	s.waitEntry(app, "axb", "Left then x")
	s.keys("Home")
	s.keys("Shift_L", "q")
	s.waitEntry(app, "Qaxb", "Home then shift+q")
	s.keys("End")
	s.keys("Delete")
	s.keys("z")
	s.waitEntry(app, "Qaxbz", "End, Delete (nothing after the caret) and z")
	s.keys("Control_L", "a")
	s.keys("y")
	s.waitEntry(app, "y", "ctrl+a then y")
}

func testUnknownKeyRefused(s *suite) {
	in := need[shinken.Injector](s)
	app := s.open()
	s.focusEntry(app)
	for _, name := range []string{"frob", "ctrl", "Enter", "F36", "ab", "Control-L"} {
		for _, down := range []bool{true, false} {
			err := in.Key(s.ctx, shinken.KeyEvent{Key: name, Down: down})
			if !errors.Is(err, aci.ErrInvalidAction) {
				s.check(err, "Key(%q, down=%v)", name, down)
				s.t.Fatalf("Key(%q, down=%v) = %v, want an error wrapping ErrInvalidAction", name, down, err)
			}
		}
	}
	// What the core does with "ctrl+frob": Control_L down, frob refused,
	// Control_L up.
	s.check(in.Key(s.ctx, shinken.KeyEvent{Key: "Control_L", Down: true}), "pressing Control_L")
	if err := in.Key(s.ctx, shinken.KeyEvent{Key: "frob", Down: true}); !errors.Is(err, aci.ErrInvalidAction) {
		s.t.Fatalf("Key(frob) with Control_L held = %v, want ErrInvalidAction", err)
	}
	s.check(in.Key(s.ctx, shinken.KeyEvent{Key: "Control_L"}), "releasing Control_L")
	s.typeText("ok")
	s.waitEntry(app, "ok", `refused keys, then typing "ok"`)
}

func testClipboard(s *suite) {
	c := need[shinken.Clipboard](s)
	for _, text := range []string{"plain", "日本 ✓ é\nsecond line", ""} {
		s.check(c.SetClipboardText(s.ctx, text), "SetClipboardText(%q)", text)
		var got string
		s.waitFor(fmt.Sprintf("the clipboard holds %q", text), func() (bool, error) {
			var err error
			got, err = c.ClipboardText(s.ctx)
			return got == text, err
		}, func() string { return fmt.Sprintf("it holds %q", got) })
	}
}

func testClipboardKeys(s *suite) {
	c := need[shinken.Clipboard](s)
	app := s.open()
	s.focusEntry(app)
	s.typeText("copy me ✓")
	s.waitEntry(app, "copy me ✓", "typing")
	s.keys("Control_L", "a")
	s.keys("Control_L", "c")
	var got string
	s.waitFor("ctrl+a, ctrl+c copies the entry", func() (bool, error) {
		var err error
		got, err = c.ClipboardText(s.ctx)
		return got == "copy me ✓", err
	}, func() string { return fmt.Sprintf("the clipboard holds %q", got) })
	s.check(c.SetClipboardText(s.ctx, "pasted é"), "SetClipboardText")
	s.keys("Control_L", "a")
	s.keys("Control_L", "v")
	s.waitEntry(app, "pasted é", "ctrl+a, ctrl+v")
}

func testWindows(s *suite) {
	ws := need[shinken.Windows](s)
	first := s.open()
	second := s.open()
	if first.Window == second.Window {
		s.t.Fatalf("two launches share window %d", first.Window)
	}
	list, err := ws.Windows(s.ctx)
	s.check(err, "Windows")
	seen := map[uint64]int{}
	for _, w := range list {
		seen[w.ID]++
	}
	for _, id := range []uint64{first.Window, second.Window} {
		if seen[id] != 1 {
			s.t.Fatalf("window %d is listed %d times: %+v", id, seen[id], list)
		}
		if w := s.window(id); w.Title == "" || w.BBox.Empty() {
			s.t.Errorf("window %d has no title or no bbox: %+v", id, w)
		}
	}
	for _, id := range []uint64{first.Window, second.Window, first.Window} {
		s.check(ws.Activate(s.ctx, id), "Activate(%d)", id)
		var list []shinken.Window
		s.waitFor(fmt.Sprintf("window %d is the only active one", id), func() (bool, error) {
			var err error
			list, err = ws.Windows(s.ctx)
			if err != nil {
				return false, err
			}
			for _, w := range list {
				if w.Active != (w.ID == id) {
					return false, nil
				}
			}
			return true, nil
		}, func() string { return fmt.Sprintf("windows: %+v", list) })
	}
	err = ws.Activate(s.ctx, 0xfffffff1)
	if !errors.Is(err, aci.ErrNoSuchWindow) {
		s.t.Fatalf("Activate of an unknown window: err = %v, want ErrNoSuchWindow", err)
	}
}

func testSnapshotShape(s *suite) {
	a := need[shinken.A11y](s)
	s.open()
	for _, scope := range []shinken.TreeScope{shinken.TreeActiveApp, shinken.TreeDesktop} {
		tree, err := a.Snapshot(s.ctx, shinken.SnapshotOptions{Scope: scope})
		s.check(err, "Snapshot(scope %d)", scope)
		if len(tree.Nodes) < 3 {
			s.t.Fatalf("scope %d: %d nodes, want at least the window, the button and the entry", scope, len(tree.Nodes))
		}
		ids := map[string]bool{}
		for i, n := range tree.Nodes {
			switch {
			case n.ID == "" || ids[n.ID]:
				s.t.Fatalf("scope %d: node %d has an empty or repeated ID %q", scope, i, n.ID)
			case n.Parent >= i || n.Parent < -1:
				s.t.Fatalf("scope %d: node %d (%s) has parent %d, not an earlier node", scope, i, n.ID, n.Parent)
			case n.Parent == -1 && n.Depth != 0:
				s.t.Fatalf("scope %d: root %d (%s) has depth %d", scope, i, n.ID, n.Depth)
			case n.Parent >= 0 && n.Depth != tree.Nodes[n.Parent].Depth+1:
				s.t.Fatalf("scope %d: node %d (%s) has depth %d under a parent of depth %d",
					scope, i, n.ID, n.Depth, tree.Nodes[n.Parent].Depth)
			case n.Role == "":
				s.t.Fatalf("scope %d: node %d (%s) has no role", scope, i, n.ID)
			}
			ids[n.ID] = true
		}
		small, err := a.Snapshot(s.ctx, shinken.SnapshotOptions{Scope: scope, MaxNodes: 2})
		s.check(err, "Snapshot with MaxNodes 2")
		if len(small.Nodes) > 2 || !small.Truncated || small.TruncatedWhy == "" {
			s.t.Fatalf("scope %d, MaxNodes 2: %d nodes, truncated %v (%q); want at most 2 and a reason",
				scope, len(small.Nodes), small.Truncated, small.TruncatedWhy)
		}
	}
}

func testTreeMatchesPixels(s *suite) {
	app := s.open()
	w := s.window(app.Window)
	screen := s.capture(aci.ScopeScreen)
	for _, part := range []struct{ name, id string }{{"button", app.Button}, {"entry", app.Entry}} {
		n := s.node(part.id)
		switch {
		case n.BBox.Empty():
			s.t.Errorf("the %s has an empty bbox", part.name)
		case !n.BBox.In(w.BBox):
			s.t.Errorf("the %s's bbox %v is not inside its window's bbox %v", part.name, n.BBox, w.BBox)
		case !n.BBox.In(screen.Source):
			s.t.Errorf("the %s's bbox %v is not on screen %v", part.name, n.BBox, screen.Source)
		case flat(screen.Image, n.BBox):
			s.t.Errorf("the %s's bbox %v is one flat colour: nothing is drawn there", part.name, n.BBox)
		}
	}
}

func testSetValue(s *suite) {
	a := need[shinken.A11y](s)
	app := s.open()
	for _, text := range []string{"set by the suite ✓", ""} {
		s.check(a.Perform(s.ctx, app.Entry, shinken.ElementAction{Op: shinken.OpSetValue, Text: text}), "set_value %q", text)
		s.waitEntry(app, text, fmt.Sprintf("set_value %q", text))
	}
}

func testInvokeAction(s *suite) {
	a := need[shinken.A11y](s)
	app := s.open()
	s.check(a.Perform(s.ctx, app.Button, shinken.ElementAction{Op: shinken.OpInvoke}), "invoking the button's first action")
	s.waitActivations(app, 1, "invoke_action")
	err := a.Perform(s.ctx, app.Button, shinken.ElementAction{Op: shinken.OpInvoke, Action: "shinkentest-no-such-action"})
	if !errors.Is(err, aci.ErrNoSuchAction) {
		s.t.Fatalf("invoking an action the button lacks: err = %v, want ErrNoSuchAction", err)
	}
}

func testStaleElement(s *suite) {
	a := need[shinken.A11y](s)
	id := "shinkentest:never-issued"
	if s.real != nil {
		id = "e999999" // a well-formed ref the runtime never minted
	}
	err := a.Perform(s.ctx, id, shinken.ElementAction{Op: shinken.OpInvoke})
	if !errors.Is(err, aci.ErrStaleElementRef) {
		s.check(err, "Perform on an ID never issued")
		s.t.Fatalf("Perform on an ID never issued: err = %v, want ErrStaleElementRef", err)
	}
}

func testWatch(s *suite) {
	w := need[shinken.ChangeWatcher](s)
	a := need[shinken.A11y](s)
	app := s.open()
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	ch := w.Watch(ctx)
	drain(ch)
	s.check(a.Perform(s.ctx, app.Entry, shinken.ElementAction{Op: shinken.OpSetValue, Text: "changed"}), "set_value")
	timer := time.NewTimer(s.opts.Timeout)
	defer timer.Stop()
	select {
	case _, ok := <-ch:
		if !ok {
			s.t.Fatal("the Watch channel closed before its context was done")
		}
	case <-timer.C:
		s.t.Fatalf("no change notified %v after set_value", s.opts.Timeout)
	}
	cancel()
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-timer.C:
			s.t.Fatal("the Watch channel stayed open after its context was done")
		}
	}
}

func testLaunchUnknownApp(s *suite) {
	err := need[shinken.Launcher](s).Launch(s.ctx, "shinkentest-no-such-app-ZQX", nil)
	if !errors.Is(err, aci.ErrNoSuchApp) {
		s.check(err, "launching an unknown app")
		s.t.Fatalf("launching an unknown app: err = %v, want ErrNoSuchApp", err)
	}
}

// drain empties ch of values already sent.
func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// firstTransparent returns the first pixel of r in img that is not opaque.
func firstTransparent(img *image.RGBA, r image.Rectangle) (image.Point, bool) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := img.Pix[img.PixOffset(r.Min.X, y):img.PixOffset(r.Max.X, y)]
		for i := 3; i < len(row); i += 4 {
			if row[i] != 0xff {
				return image.Pt(r.Min.X+i/4, y), true
			}
		}
	}
	return image.Point{}, false
}

// samePixels reports whether ra in a and rb in b hold the same pixels.
func samePixels(a *image.RGBA, ra image.Rectangle, b *image.RGBA, rb image.Rectangle) bool {
	if ra.Size() != rb.Size() || !ra.In(a.Bounds()) || !rb.In(b.Bounds()) {
		return false
	}
	for dy := 0; dy < ra.Dy(); dy++ {
		rowA := a.Pix[a.PixOffset(ra.Min.X, ra.Min.Y+dy):a.PixOffset(ra.Max.X, ra.Min.Y+dy)]
		rowB := b.Pix[b.PixOffset(rb.Min.X, rb.Min.Y+dy):b.PixOffset(rb.Max.X, rb.Min.Y+dy)]
		if string(rowA) != string(rowB) {
			return false
		}
	}
	return true
}

// flat reports whether every pixel of r in img has the same colour.
func flat(img *image.RGBA, r image.Rectangle) bool {
	r = r.Intersect(img.Bounds())
	if r.Empty() {
		return true
	}
	first := img.Pix[img.PixOffset(r.Min.X, r.Min.Y):][:4]
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := img.Pix[img.PixOffset(r.Min.X, y):img.PixOffset(r.Max.X, y)]
		for i := 0; i < len(row); i += 4 {
			if string(row[i:i+4]) != string(first) {
				return false
			}
		}
	}
	return true
}
