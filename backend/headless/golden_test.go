package headless_test

import (
	"bytes"
	"context"
	"flag"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

var update = flag.Bool("update", false, "rewrite the golden PNGs in testdata/")

// golden compares img with testdata/name, or rewrites it under -update.
// Pixels are compared, not PNG bytes, so an encoder change cannot fail it.
func golden(t *testing.T, name string, img *image.RGBA) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	defer f.Close()
	want, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if want.Bounds() != img.Bounds() {
		t.Fatalf("%s: size %v, golden %v", name, img.Bounds(), want.Bounds())
	}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r1, g1, b1, a1 := img.At(x, y).RGBA()
			r2, g2, b2, a2 := want.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				t.Fatalf("%s: pixel (%d,%d) differs from the golden file; if the change is intended, run go test -update and look at the PNG", name, x, y)
			}
		}
	}
}

func capture(t *testing.T, d *headless.Desktop, scope aci.Scope) shinken.Frame {
	t.Helper()
	f, err := d.Capture(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// ui drives a desktop through its public interfaces, as an agent would.
type ui struct {
	t   *testing.T
	ctx context.Context
	d   *headless.Desktop
}

func newUI(t *testing.T, opts *headless.Options, apps ...string) *ui {
	u := &ui{t: t, ctx: context.Background(), d: headless.New(opts)}
	for _, app := range apps {
		if err := u.d.Launch(u.ctx, app, nil); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// find returns the first node with role and name in the whole desktop.
func (u *ui) find(role, name string) shinken.Node {
	u.t.Helper()
	tree, err := u.d.Snapshot(u.ctx, shinken.SnapshotOptions{Scope: shinken.TreeDesktop})
	if err != nil {
		u.t.Fatal(err)
	}
	for _, n := range tree.Nodes {
		if n.Role == role && n.Name == name {
			return n
		}
	}
	u.t.Fatalf("no %s named %q", role, name)
	return shinken.Node{}
}

func (u *ui) pointer(kind shinken.PointerKind, p image.Point) {
	u.t.Helper()
	if err := u.d.Pointer(u.ctx, shinken.PointerEvent{Kind: kind, X: p.X, Y: p.Y}); err != nil {
		u.t.Fatal(err)
	}
}

func (u *ui) clickAt(p image.Point) {
	u.t.Helper()
	u.pointer(shinken.PointerMove, p)
	u.pointer(shinken.PointerDown, p)
	u.pointer(shinken.PointerUp, p)
}

func (u *ui) click(role, name string) {
	u.t.Helper()
	u.clickAt(mid(u.find(role, name).BBox))
}

func (u *ui) typeText(s string) {
	u.t.Helper()
	if err := u.d.Type(u.ctx, s); err != nil {
		u.t.Fatal(err)
	}
}

func (u *ui) keys(keys ...string) {
	u.t.Helper()
	for _, k := range keys {
		if err := u.d.Key(u.ctx, shinken.KeyEvent{Key: k, Down: true}); err != nil {
			u.t.Fatal(err)
		}
	}
	for i := len(keys) - 1; i >= 0; i-- {
		if err := u.d.Key(u.ctx, shinken.KeyEvent{Key: keys[i]}); err != nil {
			u.t.Fatal(err)
		}
	}
}

func (u *ui) screen() *image.RGBA {
	u.t.Helper()
	return capture(u.t, u.d, aci.ScopeScreen).Image
}

func mid(r image.Rectangle) image.Point { return image.Pt((r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2) }

// useDesktop fills in both built-in apps through clicks and keys.
func useDesktop(u *ui, capture func()) {
	u.click("text", "Note")
	capture()
	u.typeText("Shopping list:\n- milk\n- bread ✓\n- 日本茶")
	capture()
	u.click("push button", "Save")
	capture()
	u.click("text", "Name")
	u.typeText("Ada Lovelace")
	capture()
	u.keys("Tab")
	u.typeText("ada@example.com")
	u.click("check box", "Subscribe to the newsletter")
	capture()
	u.keys("Return")
	u.click("text", "Email")
	u.keys("Shift_L", "Home")
	capture()
}

// TestGoldenDesktop renders the desktop with both built-in apps open, as it
// starts and after use.
func TestGoldenDesktop(t *testing.T) {
	u := newUI(t, nil, "notes", "form")
	golden(t, "desktop.png", u.screen())
	useDesktop(u, func() {})
	golden(t, "desktop-used.png", u.screen())
}

// galleryApp shows every widget.
func galleryApp(w *headless.Window) {
	w.SetTitle("Widget gallery")
	w.SetSize(360, 420)
	w.AddLabel("A label that is long enough to wrap onto a second line in this window.")
	e := w.AddEntry("Entry")
	e.SetText("Selected text")
	w.AddCheckBox("Checked", nil).SetChecked(true)
	w.AddCheckBox("Unchecked", nil)
	l := w.AddList("List", nil, "First item", "Second item", "Third item", "Fourth item", "Fifth item")
	l.Select(1)
	row := w.AddButton("Default", nil)
	w.SetDefault(row)
	w.AddButton("Disabled", nil).SetEnabled(false)
}

// TestGoldenWidgets renders every widget at DPR 1.5, as a window capture.
func TestGoldenWidgets(t *testing.T) {
	u := newUI(t, &headless.Options{Width: 900, Height: 900, DPR: 1.5})
	u.d.Register("gallery", galleryApp)
	if err := u.d.Launch(u.ctx, "gallery", nil); err != nil {
		t.Fatal(err)
	}
	u.click("text", "Entry")
	u.keys("Control_L", "a")
	list, err := u.d.Windows(u.ctx)
	if err != nil || len(list) != 1 {
		t.Fatal(list, err)
	}
	golden(t, "widgets.png", capture(t, u.d, aci.WindowScope(list[0].ID)).Image)
}

// fillSettings fills in the settings app through clicks and keys.
func fillSettings(u *ui) {
	u.click("text", "Username")
	u.typeText("ada")
	u.keys("Tab")
	u.typeText("correct horse")
	u.click("combo box", "Language")
	u.click("menu item", "日本語")
	u.click("radio button", "Dark")
	u.click("check box", "Microphone")
	at := mid(u.find("scroll pane", "Permissions").BBox)
	if err := u.d.Pointer(u.ctx, shinken.PointerEvent{Kind: shinken.PointerScroll, X: at.X, Y: at.Y, DY: 1}); err != nil {
		u.t.Fatal(err)
	}
}

// TestGoldenSettings renders the settings app filled in, with its combo
// box's list open, with a menu open from the keyboard, and with a modal
// dialog over it.
func TestGoldenSettings(t *testing.T) {
	u := newUI(t, &headless.Options{Width: 760, Height: 720}, "settings")
	fillSettings(u)
	golden(t, "settings.png", capture(t, u.d, aci.ScopeActiveWindow).Image)
	u.click("combo box", "Language")
	golden(t, "settings-combo.png", capture(t, u.d, aci.ScopeActiveWindow).Image)
	u.keys("Escape")
	u.keys("F10")
	u.keys("Down")
	golden(t, "settings-menu.png", capture(t, u.d, aci.ScopeActiveWindow).Image)
	u.keys("Escape")
	u.click("menu", "Help")
	u.click("menu item", "About Settings")
	golden(t, "settings-dialog.png", u.screen())
}

// everydayApp shows the widgets of the settings app at another density.
func everydayApp(w *headless.Window) {
	w.SetTitle("Everyday widgets")
	w.SetSize(340, 470)
	bar := w.AddMenuBar()
	bar.AddMenu("Edit").AddItem("Undo", nil)
	bar.AddMenu("View")
	w.AddPasswordEntry("Password").SetText("hunter2")
	c := w.AddComboBox("Size", nil, "Small", "Medium", "Large")
	c.Select(1)
	w.AddRadioGroup("Speed", nil, "Slow", "Fast").Select(1)
	sv := w.AddScrollView("Items", 90)
	for _, s := range []string{"One ✓", "Two ★", "Three →", "Four"} {
		sv.AddCheckBox(s, nil).SetChecked(s == "Two ★")
	}
	sv.AddButton("Five", nil)
}

// TestGoldenEverydayWidgets renders the widgets at DPR 1.5, with the combo
// box's list open, as a window capture.
func TestGoldenEverydayWidgets(t *testing.T) {
	u := newUI(t, &headless.Options{Width: 900, Height: 900, DPR: 1.5})
	u.d.Register("everyday", everydayApp)
	if err := u.d.Launch(u.ctx, "everyday", nil); err != nil {
		t.Fatal(err)
	}
	u.click("combo box", "Size")
	u.keys("Down")
	golden(t, "widgets-everyday.png", capture(t, u.d, aci.ScopeActiveWindow).Image)
}
