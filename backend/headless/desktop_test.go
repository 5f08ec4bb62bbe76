package headless_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"slices"
	"strings"
	"sync"
	"testing"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// editApp holds the widgets of an application made for one test.
type editApp struct {
	win      *headless.Window
	entry    *headless.Entry
	area     *headless.TextArea
	box      *headless.CheckBox
	list     *headless.List
	ok, off  *headless.Button
	clicks   int
	selected []string
}

// newEditApp opens a window holding one widget of each kind.
func newEditApp(t *testing.T) (*ui, *editApp) {
	u := newUI(t, nil)
	a := &editApp{}
	u.d.Register("edit", func(w *headless.Window) {
		w.SetTitle("Edit")
		w.SetSize(400, 520)
		a.win = w
		a.entry = w.AddEntry("Entry")
		a.area = w.AddTextArea("Area")
		a.box = w.AddCheckBox("Box", nil)
		a.list = w.AddList("List", func(i int, item string) { a.selected = append(a.selected, item) }, "one", "two", "three", "four", "five", "six")
		a.ok = w.AddButton("OK", func() { a.clicks++ })
		a.off = w.AddButton("Off", func() { t.Error("a disabled button ran its callback") })
		a.off.SetEnabled(false)
		w.SetDefault(a.ok)
	})
	if err := u.d.Launch(u.ctx, "edit", nil); err != nil {
		t.Fatal(err)
	}
	return u, a
}

func (u *ui) focused() shinken.Node {
	u.t.Helper()
	tree, err := u.d.Snapshot(u.ctx, shinken.SnapshotOptions{})
	if err != nil {
		u.t.Fatal(err)
	}
	for _, n := range tree.Nodes {
		if n.Focused {
			if !slices.Contains(n.States, "focused") {
				u.t.Fatalf("%s is Focused without the focused state", n.ID)
			}
			return n
		}
	}
	return shinken.Node{}
}

func TestEntryEditing(t *testing.T) {
	u, a := newEditApp(t)
	u.click("text", "Entry")
	steps := []struct {
		keys [][]string // combos pressed in turn
		typ  string
		want string
	}{
		{typ: "hello world", want: "hello world"},
		{keys: [][]string{{"Left"}, {"Left"}, {"Left"}, {"Left"}, {"Left"}}, typ: "big ", want: "hello big world"},
		{keys: [][]string{{"Control_L", "Left"}}, typ: "so ", want: "hello so big world"},
		{keys: [][]string{{"End"}, {"Shift_L", "Left"}, {"Shift_L", "Left"}}, typ: "LD", want: "hello so big worLD"},
		{keys: [][]string{{"Home"}, {"Delete"}}, typ: "j", want: "jello so big worLD"},
		{keys: [][]string{{"End"}, {"Control_L", "BackSpace"}}, want: "jello so big "},
		{keys: [][]string{{"BackSpace"}, {"Shift_L", "1"}, {"space"}, {"minus"}, {"Shift_L", "a"}, {"é"}}, want: "jello so big! -Aé"},
		{keys: [][]string{{"Control_L", "a"}, {"Control_L", "x"}}, want: ""},
		{keys: [][]string{{"Control_L", "v"}, {"Control_L", "v"}}, want: "jello so big! -Aéjello so big! -Aé"},
		{keys: [][]string{{"Control_L", "a"}, {"Right"}}, typ: "\u00a0✓", want: "jello so big! -Aéjello so big! -Aé\u00a0✓"},
		{keys: [][]string{{"Control_L", "a"}, {"Delete"}, {"Delete"}, {"BackSpace"}}, want: ""},
	}
	for i, s := range steps {
		for _, combo := range s.keys {
			u.keys(combo...)
		}
		u.typeText(s.typ)
		if got := a.entry.Text(); got != s.want {
			t.Fatalf("step %d: entry reads %q, want %q", i, got, s.want)
		}
	}
	if got, _ := u.d.ClipboardText(u.ctx); got != "jello so big! -Aé" {
		t.Errorf("ctrl+x put %q on the clipboard", got)
	}
	if a.clicks != 0 {
		t.Errorf("editing clicked the default button %d times", a.clicks)
	}
	u.keys("Return")
	if a.clicks != 1 {
		t.Errorf("Return in an entry clicked the default button %d times, want 1", a.clicks)
	}
}

func TestEntrySelectWithPointer(t *testing.T) {
	u, a := newEditApp(t)
	a.entry.SetText("drag to select")
	r := u.find("text", "Entry").BBox
	from, to := image.Pt(r.Min.X+2, mid(r).Y), image.Pt(r.Max.X-2, mid(r).Y)
	u.pointer(shinken.PointerDown, from)
	u.pointer(shinken.PointerMove, to)
	u.pointer(shinken.PointerUp, to)
	u.typeText("x")
	if got := a.entry.Text(); got != "x" {
		t.Fatalf("typing over a dragged selection gave %q, want %q", got, "x")
	}
}

func TestTextArea(t *testing.T) {
	u, a := newEditApp(t)
	u.click("text", "Area")
	u.typeText("first\nsecond line\nthird")
	u.keys("Up")
	u.keys("Home")
	u.typeText(">")
	u.keys("Down")
	u.keys("End")
	u.typeText("!")
	u.keys("Control_L", "Home")
	u.keys("Shift_L", "Down")
	u.typeText("1st\n")
	want := "1st\n>second line\nthird!"
	if got := a.area.Text(); got != want {
		t.Fatalf("text area reads %q, want %q", got, want)
	}
	if n := u.find("text", "Area"); n.Value != want || !slices.Contains(n.States, "multi line") {
		t.Fatalf("text area node: %+v", n)
	}
	if a.clicks != 0 {
		t.Fatal("Return in a text area clicked the default button")
	}
	// Many lines scroll the caret into view; the wheel scrolls back.
	u.typeText(strings.Repeat("more\n", 30))
	r := u.find("text", "Area").BBox
	topLeft := r.Min.Add(image.Pt(10, 14))
	u.clickAt(topLeft)
	u.typeText("X")
	if strings.HasPrefix(a.area.Text(), "X") {
		t.Fatal("the text area did not scroll to keep the caret in view")
	}
	if err := u.d.Pointer(u.ctx, shinken.PointerEvent{Kind: shinken.PointerScroll, X: mid(r).X, Y: mid(r).Y, DY: -100}); err != nil {
		t.Fatal(err)
	}
	u.clickAt(topLeft)
	u.typeText("Y")
	if !strings.HasPrefix(a.area.Text(), "Y1st") {
		t.Fatalf("after scrolling up, a click at the top left typed into %q", a.area.Text()[:10])
	}
}

func TestFocusTraversal(t *testing.T) {
	u, a := newEditApp(t)
	order := []string{"Entry", "Area", "Box", "List", "OK"}
	if got := u.focused().Name; got != order[0] {
		t.Fatalf("a new window focuses %q, want its first focusable widget %q", got, order[0])
	}
	for i := 1; i <= len(order); i++ {
		u.keys("Tab")
		if got, want := u.focused().Name, order[i%len(order)]; got != want {
			t.Fatalf("Tab %d focuses %q, want %q (the disabled button is skipped)", i, got, want)
		}
	}
	u.keys("Shift_L", "Tab")
	if got := u.focused().Name; got != "OK" {
		t.Fatalf("shift+Tab focuses %q, want OK", got)
	}
	u.keys("space")
	u.keys("Return")
	if a.clicks != 2 {
		t.Fatalf("space and Return on the focused button clicked it %d times, want 2", a.clicks)
	}
	u.click("push button", "Off")
	if got := u.focused().Name; got != "OK" {
		t.Fatalf("clicking a disabled button moved the focus to %q", got)
	}
	u.click("check box", "Box")
	u.keys("space")
	u.keys("space")
	if !a.box.Checked() {
		t.Fatal("a click and two spaces left the box unchecked")
	}
	if n := u.find("check box", "Box"); !slices.Contains(n.States, "checked") || !n.Focused {
		t.Fatalf("check box node: %+v", n)
	}
}

func TestList(t *testing.T) {
	u, a := newEditApp(t)
	u.click("list item", "two")
	u.keys("Down")
	u.keys("End")
	if got := a.list.Selected(); got != 5 {
		t.Fatalf("selected %d after click, Down, End; want 5", got)
	}
	if want := []string{"two", "three", "six"}; !slices.Equal(a.selected, want) {
		t.Fatalf("onSelect saw %q, want %q", a.selected, want)
	}
	six := u.find("list item", "six")
	list := u.find("list", "List")
	if !slices.Contains(six.States, "selected") || !six.BBox.In(list.BBox) {
		t.Fatalf("the last item is not selected and scrolled into view: %+v in %v", six, list.BBox)
	}
	if one := u.find("list item", "one"); slices.Contains(one.States, "showing") {
		t.Fatalf("item one is scrolled out but showing: %+v", one)
	}
	if err := u.d.Perform(u.ctx, list.ID, shinken.ElementAction{Op: shinken.OpSetValue, Text: "one"}); err != nil {
		t.Fatal(err)
	}
	if err := u.d.Perform(u.ctx, u.find("list item", "four").ID, shinken.ElementAction{Op: shinken.OpInvoke}); err != nil {
		t.Fatal(err)
	}
	if got := a.list.Selected(); got != 3 {
		t.Fatalf("selected %d after set_value one and activate four; want 3", got)
	}
	err := u.d.Perform(u.ctx, list.ID, shinken.ElementAction{Op: shinken.OpSetValue, Text: "seven"})
	if !errors.Is(err, aci.ErrElementNotActionable) {
		t.Fatalf("set_value of a missing item: %v", err)
	}
	old := u.find("list item", "two").ID
	a.list.SetItems("alpha", "beta")
	err = u.d.Perform(u.ctx, old, shinken.ElementAction{Op: shinken.OpInvoke})
	if !errors.Is(err, aci.ErrStaleElementRef) {
		t.Fatalf("an item removed by SetItems: %v, want stale", err)
	}
	if a.list.Selected() != -1 || !slices.Equal(a.list.Items(), []string{"alpha", "beta"}) {
		t.Fatalf("after SetItems: selected %d, items %q", a.list.Selected(), a.list.Items())
	}
}

func TestDoErrors(t *testing.T) {
	u, a := newEditApp(t)
	for _, c := range []struct {
		id   string
		act  shinken.ElementAction
		want error
	}{
		{u.find("label", "Entry").ID, shinken.ElementAction{Op: shinken.OpInvoke}, aci.ErrNoSuchAction},
		{u.find("label", "Entry").ID, shinken.ElementAction{Op: shinken.OpSetValue, Text: "x"}, aci.ErrElementNotActionable},
		{a.off.ID(), shinken.ElementAction{Op: shinken.OpInvoke}, aci.ErrElementNotActionable},
		{a.ok.ID(), shinken.ElementAction{Op: shinken.OpInvoke, Action: "toggle"}, aci.ErrNoSuchAction},
		{a.box.ID(), shinken.ElementAction{Op: shinken.OpSetValue, Text: "true"}, aci.ErrElementNotActionable},
		{"w0", shinken.ElementAction{Op: shinken.OpInvoke}, aci.ErrStaleElementRef},
		{"bogus", shinken.ElementAction{Op: shinken.OpInvoke}, aci.ErrStaleElementRef},
		{a.ok.ID(), shinken.ElementAction{Op: 99}, aci.ErrInvalidAction},
	} {
		if err := u.d.Perform(u.ctx, c.id, c.act); !errors.Is(err, c.want) {
			t.Errorf("Do(%s, %+v) = %v, want %v", c.id, c.act, err, c.want)
		}
	}
	if err := u.d.Perform(u.ctx, a.entry.ID(), shinken.ElementAction{Op: shinken.OpInvoke, Action: "activate"}); err != nil || a.clicks != 1 {
		t.Fatalf("activating the entry: %v, %d clicks of the default button", err, a.clicks)
	}
	a.win.Close()
	err := u.d.Perform(u.ctx, a.ok.ID(), shinken.ElementAction{Op: shinken.OpInvoke})
	if !errors.Is(err, aci.ErrStaleElementRef) {
		t.Fatalf("a button of a closed window: %v, want stale", err)
	}
}

func TestWindowManagement(t *testing.T) {
	u := newUI(t, nil, "notes", "form")
	list, err := u.d.Windows(u.ctx)
	if err != nil || len(list) != 2 || list[0].App != "notes" || list[1].App != "form" || !list[1].Active {
		t.Fatalf("Windows = %+v, %v", list, err)
	}
	notes, form := list[0], list[1]
	if notes.BBox.Overlaps(form.BBox) {
		t.Errorf("two windows on an empty desktop overlap: %v %v", notes.BBox, form.BBox)
	}
	// A click in the notes window activates it.
	u.clickAt(mid(notes.BBox))
	if w := u.window(notes.ID); !w.Active {
		t.Fatal("clicking a window did not activate it")
	}
	// Drag the form by its title bar, partly off the top left of the screen.
	grab := image.Pt(form.BBox.Min.X+40, form.BBox.Min.Y+10)
	u.pointer(shinken.PointerMove, grab)
	u.pointer(shinken.PointerDown, grab)
	drop := image.Pt(20, 5)
	u.pointer(shinken.PointerMove, drop)
	u.pointer(shinken.PointerUp, drop)
	moved := u.window(form.ID)
	want := form.BBox.Add(drop.Sub(grab))
	if moved.BBox != want || !moved.Active {
		t.Fatalf("after the drag the form is at %v (active %v), want %v", moved.BBox, moved.Active, want)
	}
	f := capture(t, u.d, aci.WindowScope(form.ID))
	if f.Source != want || f.Image.Bounds().Size() != want.Size() {
		t.Fatalf("capture of the moved window: %v %v", f.Source, f.Image.Bounds())
	}
	if px := f.Image.RGBAAt(0, 0); px != (color.RGBA{}) {
		t.Errorf("an off-screen pixel of a window capture is %v, want zero", px)
	}
	on := image.Pt(-want.Min.X+5, -want.Min.Y+5)
	if px := f.Image.RGBAAt(on.X, on.Y); px.A != 0xff {
		t.Errorf("an on-screen pixel of a window capture is %v, want opaque", px)
	}
	// The taskbar's first button activates the notes window.
	d, _ := u.d.Display(u.ctx)
	u.clickAt(image.Pt(100, d.H-10))
	if w := u.window(notes.ID); !w.Active {
		t.Fatal("the taskbar button did not activate its window")
	}
	// The close box closes; alt+F4 closes the active window.
	u.clickAt(image.Pt(notes.BBox.Max.X-12, notes.BBox.Min.Y+15))
	if list, _ := u.d.Windows(u.ctx); len(list) != 1 || list[0].ID != form.ID || !list[0].Active {
		t.Fatalf("after closing notes: %+v", list)
	}
	u.keys("Alt_L", "F4")
	if list, _ := u.d.Windows(u.ctx); len(list) != 0 {
		t.Fatalf("after alt+F4: %+v", list)
	}
	if _, err := u.d.Capture(u.ctx, aci.ScopeActiveWindow); !errors.Is(err, aci.ErrNoSuchWindow) {
		t.Fatalf("active_window with no window: %v", err)
	}
	if err := u.d.CloseWindow(u.ctx, form.ID); !errors.Is(err, aci.ErrNoSuchWindow) {
		t.Fatalf("closing a closed window: %v", err)
	}
	if tree, err := u.d.Snapshot(u.ctx, shinken.SnapshotOptions{}); err != nil || len(tree.Nodes) != 0 {
		t.Fatalf("tree of an empty desktop: %+v %v", tree, err)
	}
}

func (u *ui) window(id uint64) shinken.Window {
	u.t.Helper()
	list, err := u.d.Windows(u.ctx)
	if err != nil {
		u.t.Fatal(err)
	}
	for _, w := range list {
		if w.ID == id {
			return w
		}
	}
	u.t.Fatalf("no window %d", id)
	return shinken.Window{}
}

// TestCaptureImmutable checks the Frame contract: an image handed out is
// never modified, an unchanged screen gives the same image, and a change
// gives a new one.
func TestCaptureImmutable(t *testing.T) {
	u, a := newEditApp(t)
	first := u.screen()
	saved := bytes.Clone(first.Pix)
	if again := u.screen(); again != first {
		t.Fatal("a capture with nothing changed made a new image")
	}
	u.pointer(shinken.PointerMove, image.Pt(3, 3))
	if again := u.screen(); again != first {
		t.Fatal("moving the pointer changed the frame; captures are cursor-free")
	}
	a.entry.SetText("changed")
	next := u.screen()
	if next == first || bytes.Equal(next.Pix, saved) {
		t.Fatal("a change gave the same image or the same pixels")
	}
	if !bytes.Equal(first.Pix, saved) {
		t.Fatal("the image handed out before the change was modified")
	}
	w := capture(t, u.d, aci.ScopeActiveWindow)
	if w2 := capture(t, u.d, aci.WindowScope(a.win.ID())); w2.Image != w.Image {
		t.Fatal("a window capture with nothing changed made a new image")
	}
}

// TestDamageMatchesFullRepaint is the fast path checked against the general
// one: a desktop captured after every step (repainting only damaged areas)
// ends with the same pixels as one painted once at the end, and two runs of
// the same inputs give byte-identical frames.
func TestDamageMatchesFullRepaint(t *testing.T) {
	for _, opts := range []*headless.Options{nil, {Width: 1100, Height: 700, DPR: 1.25}} {
		stepwise := newUI(t, opts, "notes", "form")
		useDesktop(stepwise, func() { stepwise.screen() })
		once := newUI(t, opts, "notes", "form")
		useDesktop(once, func() {})
		if !bytes.Equal(stepwise.screen().Pix, once.screen().Pix) {
			t.Fatalf("options %+v: incremental repaint differs from a full repaint", opts)
		}
		again := newUI(t, opts, "notes", "form")
		useDesktop(again, func() { again.screen() })
		if !bytes.Equal(stepwise.screen().Pix, again.screen().Pix) {
			t.Fatalf("options %+v: the same inputs gave different frames", opts)
		}
	}
}

func TestWatch(t *testing.T) {
	u, a := newEditApp(t)
	ctx, cancel := context.WithCancel(u.ctx)
	ch := u.d.Watch(ctx)
	select {
	case <-ch:
		t.Fatal("a notification with nothing changed")
	default:
	}
	u.typeText("abc")
	<-ch // coalesced: one value for three changes
	select {
	case <-ch:
		t.Fatal("three changes sent more than one value to an unread watcher")
	default:
	}
	a.box.SetChecked(true)
	<-ch
	cancel()
	for range ch {
	}
	a.box.SetChecked(false) // must not send on the closed channel
}

func TestSnapshotBudgets(t *testing.T) {
	u := newUI(t, nil, "notes", "form")
	full, err := u.d.Snapshot(u.ctx, shinken.SnapshotOptions{Scope: shinken.TreeDesktop})
	if err != nil || full.Truncated || len(full.Nodes) != 13 {
		t.Fatalf("desktop tree: %d nodes, truncated %v, %v", len(full.Nodes), full.Truncated, err)
	}
	frames, _ := u.d.Snapshot(u.ctx, shinken.SnapshotOptions{Scope: shinken.TreeDesktop, MaxDepth: 1})
	if len(frames.Nodes) != 2 || !frames.Truncated || !strings.Contains(frames.TruncatedWhy, "depth") {
		t.Fatalf("MaxDepth 1: %+v", frames)
	}
	some, _ := u.d.Snapshot(u.ctx, shinken.SnapshotOptions{Scope: shinken.TreeDesktop, MaxNodes: 5})
	if len(some.Nodes) != 5 || !some.Truncated || !strings.Contains(some.TruncatedWhy, "budget") {
		t.Fatalf("MaxNodes 5: %+v", some)
	}
	active, _ := u.d.Snapshot(u.ctx, shinken.SnapshotOptions{})
	if active.App != "form" || active.Window != "Form" || !slices.Equal(active.Others, []string{"Notes"}) {
		t.Fatalf("active app tree header: %q %q %q", active.App, active.Window, active.Others)
	}
	if _, err := u.d.Snapshot(u.ctx, shinken.SnapshotOptions{Scope: 9}); !errors.Is(err, aci.ErrInvalidAction) {
		t.Fatalf("bad scope: %v", err)
	}
}

func TestLaunch(t *testing.T) {
	u := newUI(t, nil)
	if err := u.d.Launch(u.ctx, "notes", []string{"buy", "milk"}); err != nil {
		t.Fatal(err)
	}
	if got := u.find("text", "Note").Value; got != "buy milk" {
		t.Fatalf("notes launched with args shows %q", got)
	}
	u.click("push button", "Save")
	if u.find("label", "Saved 8 characters in 1 lines.").Role == "" {
		t.Fatal("no status")
	}
	err := u.d.Launch(u.ctx, "nope", nil)
	if !errors.Is(err, aci.ErrNoSuchApp) || !strings.Contains(err.Error(), "form, notes") {
		t.Fatalf("unknown app: %v", err)
	}
	// A callback may launch and close windows: callbacks run unlocked.
	u.d.Register("opener", func(w *headless.Window) {
		w.AddButton("Open", func() {
			if err := u.d.Launch(u.ctx, "form", nil); err != nil {
				t.Error(err)
			}
			w.Close()
		})
	})
	if err := u.d.Launch(u.ctx, "opener", nil); err != nil {
		t.Fatal(err)
	}
	u.click("push button", "Open")
	list, _ := u.d.Windows(u.ctx)
	if len(list) != 2 || list[1].App != "form" || !list[1].Active {
		t.Fatalf("after the callback: %+v", list)
	}
}

// TestTypeRunsCallbacksInOrder: a Return typed in the middle of a text
// submits what was typed before it, before the rest is typed.
func TestTypeRunsCallbacksInOrder(t *testing.T) {
	u := newUI(t, nil)
	var sent []string
	u.d.Register("chat", func(w *headless.Window) {
		e := w.AddEntry("Message")
		w.SetDefault(w.AddButton("Send", func() {
			sent = append(sent, e.Text())
			e.SetText("")
		}))
	})
	if err := u.d.Launch(u.ctx, "chat", nil); err != nil {
		t.Fatal(err)
	}
	u.typeText("first\nsecond\n")
	if !slices.Equal(sent, []string{"first", "second"}) {
		t.Fatalf("sent %q", sent)
	}
}

func TestPointerClamped(t *testing.T) {
	u := newUI(t, &headless.Options{Width: 640, Height: 480})
	u.pointer(shinken.PointerMove, image.Pt(-20, 9000))
	if p, _ := u.d.PointerPosition(u.ctx); p != image.Pt(0, 479) {
		t.Fatalf("pointer at %v, want clamped to (0,479)", p)
	}
	if err := u.d.Key(u.ctx, shinken.KeyEvent{}); !errors.Is(err, aci.ErrInvalidAction) {
		t.Fatalf("empty key: %v", err)
	}
	if d, _ := u.d.Display(u.ctx); d != (shinken.Display{W: 640, H: 480, DPR: 1}) {
		t.Fatalf("Display = %+v", d)
	}
}

// TestConcurrentUse drives one desktop from several goroutines; run it
// with -race.
func TestConcurrentUse(t *testing.T) {
	u, a := newEditApp(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 30 {
				switch g {
				case 0:
					_ = u.d.Type(u.ctx, "x")
				case 1:
					_, _ = u.d.Capture(u.ctx, aci.ScopeScreen)
				case 2:
					_, _ = u.d.Snapshot(u.ctx, shinken.SnapshotOptions{})
				case 3:
					a.box.SetChecked(i%2 == 0)
				}
			}
		})
	}
	wg.Wait()
	if got := a.entry.Text(); got != strings.Repeat("x", 30) {
		t.Fatalf("entry reads %q after 30 concurrent x", got)
	}
}

// TestButtonPressCancel: a button looks pressed while the left button is
// held on it, and releasing elsewhere does not click it.
func TestButtonPressCancel(t *testing.T) {
	u, a := newEditApp(t)
	a.win.Focus(a.ok) // a press focuses the button: start with it focused
	before := u.screen()
	ok := u.find("push button", "OK").BBox
	u.pointer(shinken.PointerDown, mid(ok))
	if pressed := u.screen(); bytes.Equal(pressed.Pix, before.Pix) {
		t.Fatal("a held button looks the same as a released one")
	}
	u.pointer(shinken.PointerMove, ok.Max.Add(image.Pt(30, 30)))
	u.pointer(shinken.PointerUp, ok.Max.Add(image.Pt(30, 30)))
	if a.clicks != 0 {
		t.Fatal("releasing off the button clicked it")
	}
	if after := u.screen(); !bytes.Equal(after.Pix, before.Pix) {
		t.Fatal("after a cancelled press the screen differs from before")
	}
}
