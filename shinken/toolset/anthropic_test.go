package toolset_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"strings"
	"testing"

	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/toolset"
)

func newAnthropic(t *testing.T, k *desk, o *toolset.AnthropicOptions) *toolset.Anthropic {
	t.Helper()
	a, err := toolset.NewAnthropic(k.ctx, k.c, o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// use is a member tool_use block as the model writes it.
func use(id, name, input string) toolset.ToolUse {
	return toolset.ToolUse{Type: "tool_use", ID: id, Name: name, ToolsetName: "computer", Input: json.RawMessage(input)}
}

// turn runs uses and fails the test on any error result.
func turn(t *testing.T, k *desk, a *toolset.Anthropic, uses ...toolset.ToolUse) []toolset.ToolResult {
	t.Helper()
	res, err := a.Turn(k.ctx, uses)
	if err != nil {
		t.Fatalf("turn failed: %v\n%s", err, dump(res))
	}
	return res
}

func dump(v any) string { b, _ := json.MarshalIndent(v, "", "  "); return string(b) }

func xy(p image.Point) string { return fmt.Sprintf("[%d, %d]", p.X, p.Y) }

func decodePNG(t *testing.T, data []byte) *image.RGBA {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	rgba := image.NewRGBA(image.Rect(0, 0, img.Bounds().Dx(), img.Bounds().Dy()))
	draw.Draw(rgba, rgba.Rect, img, img.Bounds().Min, draw.Src)
	return rgba
}

func resultImage(t *testing.T, r toolset.ToolResult) *image.RGBA {
	t.Helper()
	if len(r.Content) != 1 || r.Content[0].Type != "image" || r.Content[0].Source == nil {
		t.Fatalf("not an image result: %s", dump(r))
	}
	data, err := base64Decode(r.Content[0].Source.Data)
	if err != nil {
		t.Fatal(err)
	}
	return decodePNG(t, data)
}

// The form is filled by clicks at coordinates read off the scaled
// screenshot: the model sees 1024×640 of a 1280×800 screen.
func TestAnthropicFillsTheForm(t *testing.T) {
	k := newDesk(t, 1280, 800, "form")
	a := newAnthropic(t, k, nil)
	sc := a.Scale()
	if sc.Model != image.Pt(1024, 640) {
		t.Fatalf("model screen %v, want 1024×640", sc.Model)
	}
	shot := turn(t, k, a, use("s", "screenshot", `{}`))
	if img := resultImage(t, shot[0]); img.Rect.Size() != sc.Model {
		t.Fatalf("screenshot is %v, want %v", img.Rect.Size(), sc.Model)
	}
	at := func(role, name string) string { return xy(centre(modelRect(sc, rect(k.element(role, name))))) }
	res := turn(t, k, a,
		use("1", "left_click", `{"coordinate": `+at("text", "Name")+`}`),
		use("2", "type", `{"text": "Ada Lovelace"}`),
		use("3", "left_click", `{"coordinate": `+at("text", "Email")+`}`),
		use("4", "type", `{"text": "ada@example.org"}`),
		use("5", "left_click", `{"coordinate": `+at("check box", "Subscribe to the newsletter")+`}`),
		use("6", "left_click", `{"coordinate": `+at("push button", "Submit")+`}`),
		use("7", "screenshot", `{}`),
	)
	for _, r := range res[:6] {
		if r.IsError || r.ToolsetName != "computer" || r.Content[0].Text != "OK" {
			t.Fatalf("result %s", dump(r))
		}
	}
	k.element("label", "Submitted: Ada Lovelace <ada@example.org>, newsletter: yes.")
	// The last screenshot is the end state, downscaled: the pixels of the
	// runtime's own screenshot at 1024 px.
	after := resultImage(t, res[6])
	before := resultImage(t, shot[0])
	if bytes.Equal(after.Pix, before.Pix) {
		t.Fatal("the screenshot after filling the form is the one before")
	}
	direct, err := k.c.Screenshot(k.ctx, &client.ScreenshotRequest{MaxLongEdge: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(decodePNG(t, direct.Data).Pix, after.Pix) {
		t.Fatal("the toolset's last screenshot is not the screen's end state")
	}
}

func TestAnthropicTripleClickSelectsALine(t *testing.T) {
	k := newDesk(t, 1280, 800, "notes", "first line\nsecond line\nthird line")
	a := newAnthropic(t, k, nil)
	area := rect(k.element("text", "Note"))
	// The second line of text, a few pixels in: the text area's lines are
	// about 17 px apart from its top padding.
	second := a.Scale().ToModel(area.Min.Add(image.Pt(30, 8+17+8)))
	turn(t, k, a,
		use("1", "triple_click", `{"coordinate": `+xy(second)+`}`),
		use("2", "type", `{"text": "2nd"}`),
	)
	if got := k.element("text", "Note").Value; got != "first line\n2nd\nthird line" {
		t.Fatalf("after a triple click on the second line and typing, the note reads %q", got)
	}
}

func TestAnthropicShiftClickExtendsTheSelection(t *testing.T) {
	k := newDesk(t, 1280, 800, "form")
	a := newAnthropic(t, k, nil)
	sc := a.Scale()
	name := rect(k.element("text", "Name"))
	turn(t, k, a,
		use("1", "left_click", `{"coordinate": `+xy(centre(modelRect(sc, name)))+`}`),
		use("2", "type", `{"text": "hello world"}`),
		use("3", "key", `{"text": "Home"}`),
	)
	// The end of "hello": where the text begins plus five of its
	// characters; the selection runs from the caret at 0 to there.
	end := sc.ToModel(image.Pt(name.Min.X+6+5*8, centre(name).Y))
	turn(t, k, a,
		use("4", "left_click", `{"coordinate": `+xy(end)+`, "text": "shift"}`),
		use("5", "type", `{"text": "J"}`),
	)
	got := k.element("text", "Name").Value
	if !strings.HasSuffix(got, "world") || !strings.HasPrefix(got, "J") || len(got) >= len("hello world") {
		t.Fatalf("after a shift-click and typing J the name reads %q", got)
	}
}

func TestAnthropicHoldsAKey(t *testing.T) {
	k := newDesk(t, 1280, 800, "form")
	a := newAnthropic(t, k, nil)
	turn(t, k, a,
		use("1", "left_click", `{"coordinate": `+xy(centre(modelRect(a.Scale(), rect(k.element("text", "Name")))))+`}`),
		use("2", "hold_key", `{"text": "x", "duration": 1}`),
	)
	// One press, then the desktop's autorepeat: after 660 ms, 25 a second.
	got := k.element("text", "Name").Value
	if len(got) < 10 || strings.Trim(got, "x") != "" {
		t.Fatalf("holding x for a second typed %q, want at least 10 x", got)
	}
}

// A zoom is the region captured at native resolution: its pixels are the
// full-resolution frame's.
func TestAnthropicZoomMatchesTheFullFrame(t *testing.T) {
	k := newDesk(t, 1280, 800, "form")
	a := newAnthropic(t, k, nil)
	res := turn(t, k, a, use("1", "zoom", `{"region": [100, 80, 400, 300]}`))
	zoom := resultImage(t, res[0])
	shot, err := k.c.Screenshot(k.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	full := decodePNG(t, shot.Data)
	r := a.Scale().RectToScreen(image.Rect(100, 80, 400, 300))
	if r != image.Rect(125, 100, 500, 375) {
		t.Fatalf("the region maps to %v", r)
	}
	// 375×275 native pixels are enlarged to fill the 1024×640 screenshot,
	// aspect ratio kept: 640 high, 873 wide.
	if zoom.Rect.Size() != image.Pt(873, 640) {
		t.Fatalf("zoom is %v, want 873×640", zoom.Rect.Size())
	}
	// Where the full frame is flat around a pixel, the zoom shows that
	// pixel's colour at the place the region's scale puts it.
	checked := 0
	for y := 1; y < r.Dy()-1; y += 7 {
		for x := 1; x < r.Dx()-1; x += 7 {
			want := full.RGBAAt(r.Min.X+x, r.Min.Y+y)
			flat := true
			for dy := -2; dy <= 2 && flat; dy++ {
				for dx := -2; dx <= 2 && flat; dx++ {
					flat = full.RGBAAt(r.Min.X+x+dx, r.Min.Y+y+dy) == want
				}
			}
			if !flat {
				continue
			}
			zx, zy := (2*x+1)*873/(2*r.Dx()), (2*y+1)*640/(2*r.Dy())
			if got := zoom.RGBAAt(zx, zy); !near8(got.R, want.R) || !near8(got.G, want.G) || !near8(got.B, want.B) {
				t.Fatalf("zoom pixel (%d, %d) is %v, the full frame's (%d, %d) is %v", zx, zy, got, r.Min.X+x, r.Min.Y+y, want)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("only %d flat pixels compared", checked)
	}
	// The cases on a 1024×640 screenshot: a 2:1 region fills the
	// width, a quarter of the screen the whole screenshot.
	for region, want := range map[string]image.Point{"[100, 200, 400, 350]": {1024, 512}, "[0, 0, 512, 320]": {1024, 640}} {
		res := turn(t, k, a, use("z", "zoom", `{"region": `+region+`}`))
		if got := resultImage(t, res[0]).Rect.Size(); got != want {
			t.Fatalf("zoom %s is %v, want %v", region, got, want)
		}
	}
	// A region larger than the screenshot's size at native resolution is
	// downscaled to fit it.
	res = turn(t, k, a, use("2", "zoom", `{"region": [0, 0, 1024, 640]}`))
	if got := resultImage(t, res[0]).Rect.Size(); got != image.Pt(1024, 640) {
		t.Fatalf("a zoom on the whole screen is %v", got)
	}
}

func TestAnthropicCursorPositionInModelSpace(t *testing.T) {
	k := newDesk(t, 1280, 800, "form")
	a := newAnthropic(t, k, nil)
	res := turn(t, k, a,
		use("1", "mouse_move", `{"coordinate": [100, 200]}`),
		use("2", "cursor_position", `{}`),
	)
	if got := res[1].Content[0].Text; got != "X=100,Y=200" {
		t.Fatalf("cursor_position says %q", got)
	}
	if p, _ := k.d.PointerPosition(k.ctx); p != image.Pt(125, 250) {
		t.Fatalf("the pointer is at %v in action pixels, want (125, 250)", p)
	}
	// A click with no coordinate clicks at the cursor.
	box := xy(centre(modelRect(a.Scale(), rect(k.element("check box", "Subscribe to the newsletter")))))
	res = turn(t, k, a,
		use("3", "mouse_move", `{"coordinate": `+box+`}`),
		use("4", "cursor_position", `{}`),
		use("5", "left_click", `{}`),
	)
	if got := res[1].Content[0].Text; got != "X="+strings.Trim(strings.ReplaceAll(box, ", ", ",Y="), "[]") {
		t.Fatalf("cursor_position says %q after a move to %s", got, box)
	}
	if el := k.element("check box", "Subscribe to the newsletter"); !strings.Contains(strings.Join(el.States, " "), "checked") {
		t.Fatal("a left_click at the cursor did not check the box under it")
	}
}

// A turn whose second call fails answers the rest "Not executed" and runs
// none of them.
func TestAnthropicTurnStopsAtTheFirstFailure(t *testing.T) {
	k := newDesk(t, 1280, 800, "form")
	a := newAnthropic(t, k, nil)
	name := xy(centre(modelRect(a.Scale(), rect(k.element("text", "Name")))))
	res, err := a.Turn(k.ctx, []toolset.ToolUse{
		use("1", "left_click", `{"coordinate": `+name+`}`),
		use("2", "left_click", `{"coordinate": [1000, 700]}`), // below the 1024×640 screenshot
		use("3", "type", `{"text": "typed"}`),
		use("4", "key", `{"text": "Return"}`),
	})
	if !errors.Is(err, toolset.ErrOutside) {
		t.Fatalf("turn error %v, want ErrOutside", err)
	}
	if len(res) != 4 || res[0].IsError || !res[1].IsError || !strings.HasPrefix(res[1].Content[0].Text, "Error: ") {
		t.Fatalf("results %s", dump(res))
	}
	for _, r := range res[2:] {
		if !r.IsError || r.Content[0].Text != toolset.NotExecuted || r.ToolsetName != "computer" {
			t.Fatalf("result %s", dump(r))
		}
	}
	if got := k.element("text", "Name").Value; got != "" {
		t.Fatalf("a call after the failure ran: the name reads %q", got)
	}
	k.element("label", "Fill in the form and press Submit.")
}

func TestAnthropicRefusesBadInput(t *testing.T) {
	k := newDesk(t, 1280, 800, "form")
	a := newAnthropic(t, k, nil)
	for _, c := range []struct{ name, input, want string }{
		{"left_click", `{"coordinate": [10, 10], "button": "left"}`, `takes no "button"`},
		{"left_click", `{"action": "left_click"}`, `set AnthropicOptions.Version = Computer20251124`},
		{"mouse_move", `{}`, `requires "coordinate"`},
		{"scroll", `{"scroll_direction": "sideways", "scroll_amount": 1}`, "not up, down"},
		{"key", `{"text": "a", "repeat": 10001}`, "repeat must be between 1 and 10000"},
		{"key", `{"text": "ctrl+bogus"}`, `unknown key "bogus"`},
		{"hold_key", `{"text": "a", "duration": 301}`, "between 0 and 300"},
		{"zoom", `{"region": [400, 300, 100, 80]}`, "top-left to its bottom-right"},
		{"left_click", `{"text": "shift shift"}`, "one combination"},
		{"teleport", `{}`, "unknown computer action"},
		{"type", `[1]`, "not a JSON object"},
	} {
		r, err := a.Call(k.ctx, c.name, json.RawMessage(c.input))
		if err == nil || !r.IsError || !strings.Contains(r.Text, c.want) {
			t.Errorf("%s %s: %v, %+v; want an error containing %q", c.name, c.input, err, r, c.want)
		}
	}
}

// TestAnthropicZoomNamesTheVersion: zoom under computer_20250124, which has
// no zoom, is an error that names the versions that have it and the option
// that picks one.
func TestAnthropicZoomNamesTheVersion(t *testing.T) {
	k := newDesk(t, 1280, 800, "form")
	a := newAnthropic(t, k, &toolset.AnthropicOptions{Version: toolset.Computer20250124})
	r, err := a.Call(k.ctx, "computer", json.RawMessage(`{"action": "zoom", "region": [0, 0, 100, 80]}`))
	if err == nil || !r.IsError {
		t.Fatalf("zoom under %s: %v, %+v; want an error", toolset.Computer20250124, err, r)
	}
	for _, want := range []string{"AnthropicOptions.Version", string(toolset.Computer20251124), string(toolset.ComputerToolset20260801)} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("the error %q does not name %s", r.Text, want)
		}
	}
}

// The 2025 versions: one "computer" tool, the action in the input, the
// display size in the definition.
func TestAnthropicComputer20251124(t *testing.T) {
	k := newDesk(t, 1920, 1080, "form")
	a := newAnthropic(t, k, &toolset.AnthropicOptions{Version: toolset.Computer20251124, Pad: true})
	var def map[string]any
	if err := json.Unmarshal(a.Definition(), &def); err != nil {
		t.Fatal(err)
	}
	if def["type"] != "computer_20251124" || def["name"] != "computer" || def["display_width_px"] != 1024.0 || def["display_height_px"] != 768.0 || def["enable_zoom"] != true {
		t.Fatalf("definition %v", def)
	}
	res, err := a.Turn(k.ctx, []toolset.ToolUse{
		{ID: "1", Name: "computer", Input: json.RawMessage(`{"action": "screenshot"}`)},
		{ID: "2", Name: "computer", Input: json.RawMessage(`{"action": "zoom", "region": [0, 0, 512, 288]}`)},
		{ID: "3", Name: "computer", Input: json.RawMessage(`{"action": "left_click", "coordinate": [10, 700]}`)},
	})
	// 1920×1080 fits 1024×576 in XGA; the rest of 768 is padding.
	if !errors.Is(err, toolset.ErrOutside) {
		t.Fatalf("a click in the padding: %v", err)
	}
	if img := resultImage(t, res[0]); img.Rect.Size() != image.Pt(1024, 768) || img.RGBAAt(10, 700) != (colorBlack) {
		t.Fatalf("padded screenshot %v, pixel in the padding %v", img.Rect.Size(), img.RGBAAt(10, 700))
	}
	// The native 960×540 enlarged to fill the model's 1024×768, aspect kept.
	if img := resultImage(t, res[1]); img.Rect.Size() != image.Pt(1024, 576) {
		t.Fatalf("zoom of a quarter of the screen is %v, want 1024×576", img.Rect.Size())
	}
	if res[0].ToolsetName != "" {
		t.Fatal("a computer_20251124 result carries toolset_name")
	}
}

var colorBlack = colorRGBA(0, 0, 0, 255)

// Every scale: a click at the centre of the check box, as the model sees it,
// lands inside it.
func TestAnthropicClicksLandAtEveryScale(t *testing.T) {
	for _, size := range []image.Point{{1280, 800}, {1920, 1080}, {1024, 768}, {800, 600}, {2560, 1440}, {1366, 768}, {900, 1400}} {
		t.Run(fmt.Sprintf("%dx%d", size.X, size.Y), func(t *testing.T) {
			k := newDesk(t, size.X, size.Y, "form")
			a := newAnthropic(t, k, nil)
			box := rect(k.element("check box", "Subscribe to the newsletter"))
			m := centre(modelRect(a.Scale(), box))
			turn(t, k, a, use("1", "left_click", `{"coordinate": `+xy(m)+`}`))
			p, _ := k.d.PointerPosition(k.ctx)
			if !p.In(box) {
				t.Fatalf("model point %v landed at %v, outside %v", m, p, box)
			}
			if el := k.element("check box", "Subscribe to the newsletter"); !strings.Contains(strings.Join(el.States, " "), "checked") {
				t.Fatalf("the check box is not checked: %v", el.States)
			}
		})
	}
}

func near8(a, b uint8) bool { return a-b <= 2 || b-a <= 2 }
