package mcpserver_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"image"
	"image/png"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/mcpserver"
)

// The test desktop is 1280×800; the model's screen, XGA-bounded, is
// 1024×640: a model pixel is 1.25 screen pixels.
const modelW, modelH = 1024, 640

// model maps a screen point to the model's screenshot.
func model(p image.Point) []int { return []int{p.X * modelW / 1280, p.Y * modelH / 800} }

// centre is the centre of a node, in screen pixels.
func centre(n shinken.Node) image.Point {
	return image.Pt((n.BBox.Min.X+n.BBox.Max.X)/2, (n.BBox.Min.Y+n.BBox.Max.Y)/2)
}

// image calls an image tool and decodes its PNG.
func (e *env) image(t *testing.T, name string, args any) (image.Image, []byte) {
	t.Helper()
	res := e.call(t, name, args)
	if res.IsError {
		t.Fatalf("%s: %s", name, text(res))
	}
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			if ic.MIMEType != "image/png" {
				t.Fatalf("%s: %s", name, ic.MIMEType)
			}
			img, err := png.Decode(bytes.NewReader(ic.Data))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return img, ic.Data
		}
	}
	t.Fatalf("%s returned no image: %s", name, text(res))
	return nil, nil
}

func (e *env) pointer(t *testing.T) image.Point {
	t.Helper()
	p, err := e.desk.PointerPosition(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func near(a, b image.Point) bool {
	d := a.Sub(b)
	return d.X >= -1 && d.X <= 1 && d.Y >= -1 && d.Y <= 1
}

// TestComputerTools runs every Anthropic member tool once against the
// headless desktop, in the model's scaled space, and checks the desktop's
// state after each.
func TestComputerTools(t *testing.T) {
	e := newEnv(t, nil)

	// screenshot: the model's size, as a PNG.
	img, _ := e.image(t, "screenshot", map[string]any{})
	if b := img.Bounds(); b.Dx() != modelW || b.Dy() != modelH {
		t.Fatalf("screenshot is %v, want %dx%d", b, modelW, modelH)
	}

	// zoom: a quarter of the screen at native resolution.
	img, _ = e.image(t, "zoom", map[string]any{"region": []int{0, 0, modelW / 2, modelH / 2}})
	if b := img.Bounds(); b.Dx()*modelH != b.Dy()*modelW || b.Dx() < 640 {
		t.Fatalf("zoom is %v, want the 640×400 region at 1.6:1, at least native", b)
	}

	// mouse_move and cursor_position round trip through the scale.
	name := e.node(t, "text", "Name")
	at := model(centre(name))
	e.ok(t, "mouse_move", map[string]any{"coordinate": at})
	if p := e.pointer(t); !near(p, centre(name)) {
		t.Fatalf("pointer at %v, want %v", p, centre(name))
	}
	res := e.call(t, "cursor_position", map[string]any{})
	var cp mcpserver.CursorPosition
	structured(t, res, &cp)
	if cp.X != at[0] || cp.Y != at[1] {
		t.Fatalf("cursor_position %+v (%s), want %v", cp, text(res), at)
	}

	// left_click focuses the Name field; type fills it; key edits it.
	email := e.node(t, "text", "Email")
	e.ok(t, "left_click", map[string]any{"coordinate": model(centre(email))})
	if !e.node(t, "text", "Email").Focused {
		t.Fatal("Email is not focused after left_click")
	}
	e.ok(t, "left_click", map[string]any{"coordinate": at})
	e.ok(t, "type", map[string]any{"text": "Ada Lovelacex"})
	e.ok(t, "key", map[string]any{"text": "BackSpace"})
	if v := e.node(t, "text", "Name").Value; v != "Ada Lovelace" {
		t.Fatalf("Name holds %q after type and key", v)
	}
	e.ok(t, "key", map[string]any{"text": "BackSpace", "repeat": 4})
	if v := e.node(t, "text", "Name").Value; v != "Ada Love" {
		t.Fatalf("Name holds %q after key with repeat", v)
	}

	// triple_click selects the line: typing replaces it.
	e.ok(t, "triple_click", map[string]any{"coordinate": at})
	e.ok(t, "type", map[string]any{"text": "Grace Hopper"})
	if v := e.node(t, "text", "Name").Value; v != "Grace Hopper" {
		t.Fatalf("Name holds %q after triple_click and type", v)
	}
	// double_click selects a word: past the text's end, the last one.
	e.ok(t, "double_click", map[string]any{"coordinate": model(image.Pt(name.BBox.Max.X-8, centre(name).Y))})
	e.ok(t, "type", map[string]any{"text": "Brewster"})
	if v := e.node(t, "text", "Name").Value; v != "Grace Brewster" {
		t.Fatalf("Name holds %q after double_click and type", v)
	}

	// right_click and middle_click press their buttons where they are
	// told: the field under them takes the focus.
	e.ok(t, "right_click", map[string]any{"coordinate": model(centre(email))})
	if !e.node(t, "text", "Email").Focused {
		t.Fatal("Email is not focused after right_click")
	}
	e.ok(t, "middle_click", map[string]any{"coordinate": at})
	if !e.node(t, "text", "Name").Focused {
		t.Fatal("Name is not focused after middle_click")
	}

	// hold_key holds a key past the autorepeat delay: it types repeatedly.
	e.ok(t, "left_click", map[string]any{"coordinate": model(centre(email))})
	e.ok(t, "hold_key", map[string]any{"text": "x", "duration": 0.8})
	if v := e.node(t, "text", "Email").Value; len(v) < 2 || strings.Trim(v, "x") != "" {
		t.Fatalf("Email holds %q after hold_key", v)
	}

	// left_mouse_down and left_mouse_up at the cursor click Submit.
	submit := e.node(t, "push button", "Submit")
	e.ok(t, "mouse_move", map[string]any{"coordinate": model(centre(submit))})
	e.ok(t, "left_mouse_down", map[string]any{})
	e.ok(t, "left_mouse_up", map[string]any{})
	e.node(t, "label", `"`+e.node(t, "text", "Email").Value+`" is not an email address.`)

	// wait waits.
	e.ok(t, "wait", map[string]any{"duration": 0.01})

	// left_click_drag moves the form by its title bar.
	before := e.window(t, "Form")
	grab := image.Pt(before.Min.X+100, before.Min.Y+10)
	e.ok(t, "left_click_drag", map[string]any{"start_coordinate": model(grab), "coordinate": model(grab.Add(image.Pt(100, 50)))})
	if after := e.window(t, "Form"); after.Min != before.Min.Add(image.Pt(100, 50)) {
		t.Fatalf("form at %v after the drag, want %v", after.Min, before.Min.Add(image.Pt(100, 50)))
	}

	// scroll moves a long note's text: the pixels change.
	e.ok(t, "activate_window", map[string]any{"title": "Notes"})
	note := e.node(t, "text", "Note")
	e.ok(t, "left_click", map[string]any{"coordinate": model(centre(note))})
	e.ok(t, "type", map[string]any{"text": strings.Repeat("a line of the note\n", 40)})
	_, a := e.image(t, "screenshot", map[string]any{})
	e.ok(t, "scroll", map[string]any{"coordinate": model(centre(note)), "scroll_direction": "up", "scroll_amount": 5})
	_, b := e.image(t, "screenshot", map[string]any{})
	if sha256.Sum256(a) == sha256.Sum256(b) {
		t.Fatal("the screen did not change after scroll")
	}
}

func (e *env) window(t *testing.T, title string) image.Rectangle {
	t.Helper()
	ws, err := e.desk.Windows(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.Title == title {
			return w.BBox
		}
	}
	t.Fatalf("no window %q", title)
	return image.Rectangle{}
}

// TestComputerToolErrors checks the member tools' refusals: tool errors
// with the ACI code, the server staying up.
func TestComputerToolErrors(t *testing.T) {
	e := newEnv(t, nil)
	e.fails(t, "left_click", map[string]any{"coordinate": []int{5000, 5}}, aci.CodeInvalidAction)
	e.fails(t, "key", map[string]any{"text": "Return", "bogus": 1}, aci.CodeInvalidAction)
	e.fails(t, "scroll", map[string]any{"scroll_direction": "sideways", "scroll_amount": 1}, aci.CodeInvalidAction)
	e.fails(t, "type", map[string]any{}, aci.CodeInvalidAction)
	e.ok(t, "cursor_position", map[string]any{})
}

// TestAnnotations checks every tool states every hint, and the ones the
// issue names: screenshot and observe read-only, exec and launch_app
// destructive.
func TestAnnotations(t *testing.T) {
	e := newEnv(t, nil)
	res, err := e.sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	by := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		by[tool.Name] = tool
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil || a.Title == "" {
			t.Fatalf("%s: annotations %+v", tool.Name, a)
		}
		if a.ReadOnlyHint && (*a.DestructiveHint || !a.IdempotentHint || *a.OpenWorldHint) {
			t.Fatalf("%s: a read-only tool that destroys, is not idempotent or reaches out: %+v", tool.Name, a)
		}
		if tool.Description == "" {
			t.Fatalf("%s: no description", tool.Name)
		}
	}
	// No open: the headless desktop has no opener.
	want := []string{"activate_window", "click_element", "clipboard_get", "clipboard_set", "close_window", "command_input", "command_kill", "command_list", "command_output", "command_start", "cursor_position", "delete", "double_click",
		"exec", "exists", "hold_key", "invoke_action", "key", "key_down", "key_up", "launch_app", "left_click", "left_click_drag", "left_mouse_down",
		"left_mouse_up", "list_files", "list_windows", "middle_click", "mkdir", "mouse_move", "move", "move_window", "observe", "read_file", "resize_window", "right_click",
		"screen_size", "screenshot", "scroll", "set_value", "shell", "stat", "triple_click", "type", "wait", "wait_for", "write_file", "zoom"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v\nwant  %v", names, want)
	}
	for _, n := range []string{"screenshot", "observe", "zoom", "cursor_position", "list_windows", "clipboard_get", "wait_for", "read_file", "list_files", "screen_size", "stat", "exists"} {
		if !by[n].Annotations.ReadOnlyHint {
			t.Errorf("%s is not read-only", n)
		}
	}
	for _, n := range []string{"exec", "launch_app", "left_click", "type", "key", "write_file", "shell", "move", "delete"} {
		if a := by[n].Annotations; a.ReadOnlyHint || !*a.DestructiveHint {
			t.Errorf("%s is not destructive", n)
		}
	}
	for _, n := range []string{"exec", "launch_app", "shell"} {
		if !*by[n].Annotations.OpenWorldHint {
			t.Errorf("%s is not open-world", n)
		}
	}
}
