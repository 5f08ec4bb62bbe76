package headless_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// settings launches the built-in settings app on a fresh desktop.
func settings(t *testing.T) *ui {
	return newUI(t, nil, "settings")
}

// tree returns the whole desktop's tree.
func (u *ui) tree() *shinken.Tree {
	u.t.Helper()
	tree, err := u.d.Snapshot(u.ctx, shinken.SnapshotOptions{Scope: shinken.TreeDesktop})
	if err != nil {
		u.t.Fatal(err)
	}
	return tree
}

// children returns the children of the first node with role and name.
func (u *ui) children(role, name string) []shinken.Node {
	u.t.Helper()
	tree := u.tree()
	for i, n := range tree.Nodes {
		if n.Role == role && n.Name == name {
			var kids []shinken.Node
			for _, k := range tree.Nodes[i+1:] {
				if k.Depth <= n.Depth {
					break
				}
				if k.Depth == n.Depth+1 {
					kids = append(kids, k)
				}
			}
			return kids
		}
	}
	u.t.Fatalf("no %s named %q", role, name)
	return nil
}

// do runs an element action on the node with role and name.
func (u *ui) do(role, name string, act shinken.ElementAction) error {
	u.t.Helper()
	return u.d.Perform(u.ctx, u.find(role, name).ID, act)
}

func has(n shinken.Node, state string) bool { return slices.Contains(n.States, state) }

func TestPasswordEntry(t *testing.T) {
	u := settings(t)
	if err := u.d.SetClipboardText(u.ctx, "before"); err != nil {
		t.Fatal(err)
	}
	u.click("password text", "Password")
	u.typeText("s3cret ✓")
	n := u.find("password text", "Password")
	if n.Value != "" || !has(n, "editable") || !has(n, "single line") || !n.Focused {
		t.Fatalf("password node = %+v, want no value, editable, single line, focused", n)
	}
	for _, k := range []string{"c", "x"} {
		u.keys("Control_L", "a")
		u.keys("Control_L", k)
		if got, _ := u.d.ClipboardText(u.ctx); got != "before" {
			t.Fatalf("ctrl+%s put %q on the clipboard", k, got)
		}
	}
	tree := u.tree()
	for _, n := range tree.Nodes {
		if strings.Contains(n.Name+n.Value+n.Description, "s3cret") {
			t.Fatalf("node %s %q shows the password", n.ID, n.Role)
		}
	}
	// On screen: one bullet per character, the same pixels as an entry
	// holding bullets.
	u.keys("Tab") // the caret goes, so the two crops compare
	pw := u.find("password text", "Password").BBox
	masked := crop(u.screen(), pw)
	if err := u.do("text", "Username", shinken.ElementAction{Op: shinken.OpSetValue, Text: "●●●●●●●●"}); err != nil {
		t.Fatal(err)
	}
	user := u.find("text", "Username").BBox
	if !equalPixels(masked, crop(u.screen(), user)) {
		t.Fatal("the password is not drawn as bullets")
	}
	// set_value sets the text, and still shows none.
	if err := u.do("password text", "Password", shinken.ElementAction{Op: shinken.OpSetValue, Text: "hunter2"}); err != nil {
		t.Fatal(err)
	}
	if n := u.find("password text", "Password"); n.Value != "" {
		t.Fatalf("after set_value the value is %q", n.Value)
	}
	u.click("push button", "Save")
	if got := u.find("label", "Saved: ●●●●●●●●, a password of 7 characters, English, light theme, 0 permissions.").Name; got == "" {
		t.Fatal("no summary")
	}
}

func TestRadioGroup(t *testing.T) {
	u := settings(t)
	names := func() (checked []string) {
		for _, k := range u.children("panel", "Theme") {
			if k.Role != "radio button" || !slices.Contains(k.Actions, "click") {
				t.Fatalf("radio group child %+v", k)
			}
			if has(k, "checked") {
				checked = append(checked, k.Name)
			}
		}
		return checked
	}
	if got := names(); !slices.Equal(got, []string{"Light"}) {
		t.Fatalf("checked %q, want Light", got)
	}
	u.click("radio button", "Dark")
	if got := names(); !slices.Equal(got, []string{"Dark"}) {
		t.Fatalf("after a click, checked %q", got)
	}
	if f := u.focused(); f.Role != "radio button" || f.Name != "Dark" {
		t.Fatalf("focus on %s %q, want the checked radio button", f.Role, f.Name)
	}
	u.keys("Down")
	if got := names(); !slices.Equal(got, []string{"Follow the system"}) {
		t.Fatalf("after Down, checked %q", got)
	}
	u.keys("Up")
	u.keys("Up")
	if got := names(); !slices.Equal(got, []string{"Light"}) {
		t.Fatalf("after Up Up, checked %q", got)
	}
	if err := u.do("radio button", "Follow the system", shinken.ElementAction{Op: shinken.OpInvoke, Action: "click"}); err != nil {
		t.Fatal(err)
	}
	if got := names(); !slices.Equal(got, []string{"Follow the system"}) {
		t.Fatalf("after invoke, checked %q", got)
	}
	if err := u.do("panel", "Theme", shinken.ElementAction{Op: shinken.OpSetValue, Text: "Dark"}); err != nil {
		t.Fatal(err)
	}
	if got := names(); !slices.Equal(got, []string{"Dark"}) {
		t.Fatalf("after set_value, checked %q", got)
	}
	err := u.do("panel", "Theme", shinken.ElementAction{Op: shinken.OpSetValue, Text: "Sepia"})
	if !errors.Is(err, aci.ErrElementNotActionable) {
		t.Fatalf("set_value of an unknown option: %v", err)
	}
}

func TestComboBox(t *testing.T) {
	u := settings(t)
	combo := func() shinken.Node { return u.find("combo box", "Language") }
	items := func() []shinken.Node { return u.children("menu", "") }
	if c := combo(); c.Value != "English" || has(c, "expanded") || !slices.Equal(c.Actions, []string{"press"}) {
		t.Fatalf("combo box %+v", c)
	}
	for _, it := range items() {
		if it.Role != "menu item" || has(it, "showing") {
			t.Fatalf("closed list item %+v", it)
		}
	}
	before := u.screen()
	u.click("combo box", "Language")
	if !has(combo(), "expanded") {
		t.Fatal("a click did not open the list")
	}
	open := u.screen()
	for _, it := range items() {
		if !has(it, "showing") {
			t.Fatalf("open list item %+v", it)
		}
		if r := it.BBox; equalPixels(crop(before, r), crop(open, r)) {
			t.Fatalf("nothing is drawn where item %q is", it.Name)
		}
	}
	u.click("menu item", "Deutsch")
	if c := combo(); c.Value != "Deutsch" || has(c, "expanded") {
		t.Fatalf("after choosing Deutsch: %+v", c)
	}
	// Keys: Down chooses the next option; space opens, Down and Return
	// choose in the list; Escape closes it.
	u.keys("Down")
	if v := combo().Value; v != "Español" {
		t.Fatalf("after Down: %q", v)
	}
	u.keys("space")
	if f := u.focused(); f.Role != "menu item" || f.Name != "Español" {
		t.Fatalf("in the open list the focus is on %s %q", f.Role, f.Name)
	}
	u.keys("Down")
	u.keys("Return")
	if c := combo(); c.Value != "日本語" || has(c, "expanded") {
		t.Fatalf("after space, Down, Return: %+v", c)
	}
	u.keys("space")
	u.keys("Escape")
	if c := combo(); c.Value != "日本語" || has(c, "expanded") {
		t.Fatalf("after space, Escape: %+v", c)
	}
	// A click outside the open list closes it and does nothing else.
	u.keys("space")
	u.click("push button", "Save")
	if has(combo(), "expanded") || u.find("label", "Not saved yet.").Name == "" {
		t.Fatal("the click outside the list was not swallowed")
	}
	// Accessible actions.
	if err := u.do("combo box", "Language", shinken.ElementAction{Op: shinken.OpInvoke}); err != nil || !has(combo(), "expanded") {
		t.Fatalf("press: %v, %+v", err, combo())
	}
	if err := u.do("combo box", "Language", shinken.ElementAction{Op: shinken.OpSetValue, Text: "한국어"}); err != nil {
		t.Fatal(err)
	}
	if c := combo(); c.Value != "한국어" || has(c, "expanded") {
		t.Fatalf("after set_value: %+v", c)
	}
	if err := u.do("menu item", "Français", shinken.ElementAction{Op: shinken.OpInvoke, Action: "click"}); err != nil || combo().Value != "Français" {
		t.Fatalf("click on a closed item: %v, %+v", err, combo())
	}
	err := u.do("combo box", "Language", shinken.ElementAction{Op: shinken.OpSetValue, Text: "Klingon"})
	if !errors.Is(err, aci.ErrElementNotActionable) || !strings.Contains(err.Error(), "Klingon") {
		t.Fatalf("set_value of an unknown option: %v", err)
	}
}

func TestMenuBar(t *testing.T) {
	u := settings(t)
	var menus []string
	for _, m := range u.children("menu bar", "") {
		menus = append(menus, m.Role+" "+m.Name)
	}
	if !slices.Equal(menus, []string{"menu File", "menu Help"}) {
		t.Fatalf("menu bar children %q", menus)
	}
	var items []string
	for _, it := range u.children("menu", "File") {
		items = append(items, it.Role+" "+it.Name)
		if has(it, "showing") {
			t.Fatalf("item %q of a closed menu is showing", it.Name)
		}
	}
	if !slices.Equal(items, []string{"menu item Save", "menu item Reset", "menu item Close"}) {
		t.Fatalf("File items %q", items)
	}
	u.click("text", "Username")
	u.typeText("ada")
	u.click("menu", "File")
	if m := u.find("menu", "File"); !has(m, "expanded") {
		t.Fatalf("a click did not open File: %+v", m)
	}
	for _, it := range u.children("menu", "File") {
		if !has(it, "showing") {
			t.Fatalf("item %q of the open menu is not showing", it.Name)
		}
	}
	// Pointing at Help while File is open opens Help.
	u.pointer(shinken.PointerMove, mid(u.find("menu", "Help").BBox))
	if !has(u.find("menu", "Help"), "expanded") || has(u.find("menu", "File"), "expanded") {
		t.Fatal("pointing at Help did not switch menus")
	}
	u.keys("Escape")
	if has(u.find("menu", "Help"), "expanded") {
		t.Fatal("Escape did not close the menu")
	}
	// A click on File, then one on Help, leaves Help open; another click
	// on Help closes it.
	u.click("menu", "File")
	u.click("menu", "Help")
	if !has(u.find("menu", "Help"), "expanded") || has(u.find("menu", "File"), "expanded") {
		t.Fatal("clicking Help with File open did not leave Help open")
	}
	u.click("menu", "Help")
	if has(u.find("menu", "Help"), "expanded") {
		t.Fatal("clicking the open menu's title did not close it")
	}
	u.click("menu", "File")
	u.click("menu item", "Reset")
	if v := u.find("text", "Username").Value; v != "" || has(u.find("menu", "File"), "expanded") {
		t.Fatalf("Reset: username %q, menu still open", v)
	}
	// F10 opens the first menu on its first item; Right goes to Help;
	// Return runs About, which opens a dialog.
	u.keys("F10")
	if f := u.focused(); f.Role != "menu item" || f.Name != "Save" {
		t.Fatalf("after F10 the focus is on %s %q", f.Role, f.Name)
	}
	u.keys("Right")
	u.keys("Return")
	if n := u.find("dialog", "About Settings"); !has(n, "modal") || !has(n, "active") {
		t.Fatalf("About opened %+v", n)
	}
	u.keys("Escape")
	// A closed menu's item runs when invoked.
	if err := u.do("menu item", "About Settings", shinken.ElementAction{Op: shinken.OpInvoke}); err != nil {
		t.Fatal(err)
	}
	u.find("dialog", "About Settings")
}

func TestModalDialog(t *testing.T) {
	u := settings(t)
	u.click("push button", "Save") // no password: a dialog says so
	dlg := u.find("dialog", "Cannot save")
	if !has(dlg, "modal") || !has(dlg, "active") {
		t.Fatalf("dialog %+v", dlg)
	}
	settingsFrame := u.find("frame", "Settings")
	if has(settingsFrame, "active") {
		t.Fatal("the parent is still active")
	}
	// Input to the parent is blocked: a click on its Username entry raises
	// the dialog and focuses nothing; typed text goes to the dialog.
	u.click("text", "Username")
	u.typeText("ada")
	if v := u.find("text", "Username").Value; v != "" || !has(u.find("dialog", "Cannot save"), "active") {
		t.Fatalf("the parent took input: username %q", v)
	}
	at := mid(u.find("scroll pane", "Permissions").BBox)
	if at.In(dlg.BBox) {
		t.Fatal("the dialog covers the permissions: the wheel test below would prove nothing")
	}
	if err := u.d.Pointer(u.ctx, shinken.PointerEvent{Kind: shinken.PointerScroll, X: at.X, Y: at.Y, DY: 5}); err != nil {
		t.Fatal(err)
	}
	if !has(u.find("check box", "Camera"), "showing") {
		t.Fatal("the wheel scrolled the window under the dialog")
	}
	err := u.do("text", "Username", shinken.ElementAction{Op: shinken.OpSetValue, Text: "ada"})
	if !errors.Is(err, aci.ErrElementNotActionable) || !strings.Contains(err.Error(), "Cannot save") {
		t.Fatalf("set_value on the parent: %v", err)
	}
	if err := u.d.Activate(u.ctx, settingsFrame.Provenance["window"].(uint64)); err != nil {
		t.Fatal(err)
	}
	if !has(u.find("dialog", "Cannot save"), "active") {
		t.Fatal("activating the parent did not activate its dialog")
	}
	// Return clicks the dialog's default button, OK, which closes it.
	u.keys("Return")
	tree := u.tree()
	if slices.ContainsFunc(tree.Nodes, func(n shinken.Node) bool { return n.Role == "dialog" }) {
		t.Fatal("the dialog is still open")
	}
	if !has(u.find("frame", "Settings"), "active") {
		t.Fatal("the parent did not get the focus back")
	}
	u.click("text", "Username")
	u.typeText("ada")
	if v := u.find("text", "Username").Value; v != "ada" {
		t.Fatalf("after the dialog closed the username reads %q", v)
	}
	// Closing the parent closes its dialog.
	u.click("push button", "Save")
	u.find("dialog", "Cannot save")
	ws, _ := u.d.Windows(u.ctx)
	if len(ws) != 2 {
		t.Fatalf("windows %+v", ws)
	}
	if err := u.d.CloseWindow(u.ctx, ws[0].ID); err != nil {
		t.Fatal(err)
	}
	if ws, _ := u.d.Windows(u.ctx); len(ws) != 0 {
		t.Fatalf("windows left %+v", ws)
	}
}

func TestScrollView(t *testing.T) {
	u := settings(t)
	pane := u.find("scroll pane", "Permissions")
	kids := u.children("scroll pane", "Permissions")
	if len(kids) != 10 {
		t.Fatalf("%d children", len(kids))
	}
	hidden := func() (names []string) {
		for _, k := range u.children("scroll pane", "Permissions") {
			if !has(k, "visible") {
				t.Fatalf("%q is not visible", k.Name)
			}
			if !has(k, "showing") {
				names = append(names, k.Name)
				if k.BBox.Overlaps(pane.BBox) {
					t.Fatalf("%q is reported out of view at %v, inside the pane %v", k.Name, k.BBox, pane.BBox)
				}
			}
		}
		return names
	}
	if h := hidden(); len(h) == 0 || slices.Contains(h, "Camera") || !slices.Contains(h, "Clipboard") {
		t.Fatalf("out of view at first: %q", h)
	}
	before := u.screen()
	// The wheel over a check box in the view scrolls the view.
	box := u.find("check box", "Camera").BBox
	if err := u.d.Pointer(u.ctx, shinken.PointerEvent{Kind: shinken.PointerScroll, X: mid(box).X, Y: mid(box).Y, DY: 10}); err != nil {
		t.Fatal(err)
	}
	if h := hidden(); slices.Contains(h, "Clipboard") || !slices.Contains(h, "Camera") {
		t.Fatalf("out of view after scrolling down: %q", h)
	}
	if equalPixels(crop(before, pane.BBox), crop(u.screen(), pane.BBox)) {
		t.Fatal("scrolling changed no pixel")
	}
	clip := u.find("check box", "Clipboard")
	u.clickAt(mid(clip.BBox))
	if !has(u.find("check box", "Clipboard"), "checked") {
		t.Fatal("a click on a scrolled-in check box missed it")
	}
	// Moving the focus to a widget out of view scrolls it into view.
	u.keys("Shift_L", "Tab") // Bluetooth
	for range 8 {
		u.keys("Shift_L", "Tab")
	}
	cam := u.find("check box", "Camera")
	if !cam.Focused || !has(cam, "showing") {
		t.Fatalf("Camera, focused from the keyboard: %+v", cam)
	}
}

// TestEverydayDeterministic drives the settings app twice through the same
// inputs, popups and dialogs included, and checks that every frame is the
// same, byte for byte.
func TestEverydayDeterministic(t *testing.T) {
	run := func() [][]byte {
		u := newUI(t, &headless.Options{Width: 1024, Height: 768}, "form", "settings")
		var frames [][]byte
		shot := func() { frames = append(frames, slices.Clone(u.screen().Pix)) }
		u.click("text", "Username")
		u.typeText("ada ✓ 日本")
		shot()
		u.click("combo box", "Language")
		shot()
		u.click("menu item", "한국어")
		u.click("radio button", "Dark")
		at := mid(u.find("scroll pane", "Permissions").BBox)
		if err := u.d.Pointer(u.ctx, shinken.PointerEvent{Kind: shinken.PointerScroll, X: at.X, Y: at.Y, DY: 1}); err != nil {
			t.Fatal(err)
		}
		shot()
		u.click("menu", "Help")
		shot()
		u.click("menu item", "About Settings")
		shot()
		return frames
	}
	a, b := run(), run()
	for i := range a {
		if string(a[i]) != string(b[i]) {
			t.Fatalf("frame %d differs between two runs", i)
		}
	}
}

// TestEverydayHiDPI drives every everyday widget by the pointer on a
// desktop at twice the density, where every metric differs.
func TestEverydayHiDPI(t *testing.T) {
	u := newUI(t, &headless.Options{Width: 1200, Height: 1500, DPR: 2}, "settings")
	u.click("password text", "Password")
	u.typeText("pw")
	u.click("combo box", "Language")
	u.click("menu item", "Español")
	u.click("radio button", "Follow the system")
	u.click("menu", "File")
	u.click("menu item", "Save")
	if got := u.find("label", "Saved: nobody, a password of 2 characters, Español, system theme, 0 permissions.").Name; got == "" {
		t.Fatal("no summary")
	}
	at := mid(u.find("scroll pane", "Permissions").BBox)
	if err := u.d.Pointer(u.ctx, shinken.PointerEvent{Kind: shinken.PointerScroll, X: at.X, Y: at.Y, DY: 10}); err != nil {
		t.Fatal(err)
	}
	u.click("check box", "Clipboard")
	if !has(u.find("check box", "Clipboard"), "checked") {
		t.Fatal("the scrolled-in check box was not clicked")
	}
	if err := u.do("password text", "Password", shinken.ElementAction{Op: shinken.OpSetValue, Text: ""}); err != nil {
		t.Fatal(err)
	}
	u.click("push button", "Save")
	u.click("push button", "OK") // the dialog's
	if slices.ContainsFunc(u.tree().Nodes, func(n shinken.Node) bool { return n.Role == "dialog" }) {
		t.Fatal("the dialog's OK did not close it")
	}
}
