package toolset_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"strings"
	"testing"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/toolset"
)

func fcall(name, args string) toolset.FunctionCall {
	return toolset.FunctionCall{Name: name, Args: json.RawMessage(args)}
}

// gridPoint is where a model reading the screenshot puts an element's
// centre on the 0–999 grid.
func gridPoint(g toolset.Grid, r image.Rectangle) string {
	x, y := g.ToGrid(centre(r))
	return fmt.Sprintf(`"x": %d, "y": %d`, x, y)
}

func TestGeminiFillsTheForm(t *testing.T) {
	k := newDesk(t, 1920, 1080, "form")
	g, err := toolset.NewGemini(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sc := g.Scale(); sc.Model != image.Pt(1440, 810) {
		t.Fatalf("screenshots at %v, want 1440×810 within Gemini's 1440×900", sc.Model)
	}
	grid := toolset.Grid{Screen: image.Pt(1920, 1080), Size: 1000}
	at := func(role, name string) string { return gridPoint(grid, rect(k.element(role, name))) }
	res, err := g.Turn(k.ctx, []toolset.FunctionCall{
		fcall("type_text_at", `{`+at("text", "Name")+`, "text": "Katherine Johnson", "press_enter": false}`),
		fcall("type_text_at", `{`+at("text", "Email")+`, "text": "kj@example.org", "press_enter": false, "clear_before_typing": true}`),
		fcall("click_at", `{`+at("check box", "Subscribe to the newsletter")+`}`),
		fcall("key_combination", `{"keys": "Enter"}`),
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, dump(res))
	}
	for _, r := range res {
		if len(r.Response) != 0 || len(r.Parts) != 1 || r.Parts[0].InlineData.MimeType != "image/png" {
			t.Fatalf("response %+v", r.Response)
		}
	}
	if img := decodePNG(t, res[3].Parts[0].InlineData.Data); img.Rect.Size() != image.Pt(1440, 810) {
		t.Fatalf("screenshot %v", img.Rect.Size())
	}
	k.element("label", "Submitted: Katherine Johnson <kj@example.org>, newsletter: yes.")
	// type_text_at clears the field first by default.
	if _, err := g.Turn(k.ctx, []toolset.FunctionCall{fcall("type_text_at", `{`+at("text", "Name")+`, "text": "KJ", "press_enter": true}`)}); err != nil {
		t.Fatal(err)
	}
	k.element("label", "Submitted: KJ <kj@example.org>, newsletter: yes.")
}

func TestGeminiTurnStopsAtTheFirstFailure(t *testing.T) {
	k := newDesk(t, 1280, 800, "form")
	g, err := toolset.NewGemini(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	name := gridPoint(toolset.Grid{Screen: image.Pt(1280, 800), Size: 1000}, rect(k.element("text", "Name")))
	res, err := g.Turn(k.ctx, []toolset.FunctionCall{
		fcall("click_at", `{`+name+`}`),
		fcall("navigate", `{"url": "https://example.org"}`), // the form is not a browser
		fcall("type_text_at", `{`+name+`, "text": "typed"}`),
	})
	if err == nil || !strings.Contains(err.Error(), "not one") {
		t.Fatalf("error %v", err)
	}
	if res[0].Response["error"] != nil || res[1].Response["error"] == nil || res[2].Response["error"] != toolset.NotExecuted || len(res[2].Parts) != 0 {
		t.Fatalf("responses %+v %+v %+v", res[0].Response, res[1].Response, res[2].Response)
	}
	if got := k.element("text", "Name").Value; got != "" {
		t.Fatalf("a call after the failure ran: %q", got)
	}
	for _, c := range []struct {
		call toolset.FunctionCall
		want string
	}{
		{fcall("open_web_browser", `{}`), "no browser is configured"},
		{fcall("click_at", `{"x": 1000, "y": 5}`), "outside the 0–999 grid"},
		{fcall("scroll_at", `{"x": 1, "y": 1, "direction": "sideways"}`), "not up, down"},
		{fcall("click_at", `{"x": 1, "y": 1, "safety_decision": {"decision": "require_confirmation", "explanation": "a payment"}}`), "confirmation"},
		{fcall("drag_and_drop", `{"x": 1, "y": 1}`), `requires "destination_x"`},
	} {
		if _, err := g.Turn(k.ctx, []toolset.FunctionCall{c.call}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.call.Name, c.call.Args, err, c.want)
		}
	}
	var def map[string]map[string]any
	if err := json.Unmarshal(g.Definition(), &def); err != nil || def["computerUse"]["environment"] != "ENVIRONMENT_DESKTOP" || def["computerUse"]["excludedPredefinedFunctions"] != nil {
		t.Fatalf("definition %s", g.Definition())
	}
	g, err = toolset.NewGemini(k.ctx, k.c, &toolset.GeminiOptions{Environment: "ENVIRONMENT_BROWSER"})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(g.Definition(), &def); err != nil || def["computerUse"]["environment"] != "ENVIRONMENT_BROWSER" || def["computerUse"]["excludedPredefinedFunctions"] == nil {
		t.Fatalf("definition %s", g.Definition())
	}
}

func TestGeminiScrollsAndDrags(t *testing.T) {
	k := newDesk(t, 1280, 800, "notes", strings.Repeat("line\n", 80))
	g, err := toolset.NewGemini(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	grid := toolset.Grid{Screen: image.Pt(1280, 800), Size: 1000}
	area := rect(k.element("text", "Note"))
	x0, y0 := grid.ToGrid(area.Min.Add(image.Pt(10, 10)))
	x1, y1 := grid.ToGrid(area.Min.Add(image.Pt(60, 60)))
	res, err := g.Turn(k.ctx, []toolset.FunctionCall{
		fcall("scroll_at", `{`+gridPoint(grid, area)+`, "direction": "down", "magnitude": 400}`),
		fcall("drag_and_drop", fmt.Sprintf(`{"x": %d, "y": %d, "destination_x": %d, "destination_y": %d}`, x0, y0, x1, y1)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(res[0].Parts[0].InlineData.Data) == string(res[1].Parts[0].InlineData.Data) && errors.Is(err, nil) {
		// The drag selects lines, which repaints them.
		t.Fatal("the drag changed nothing on screen")
	}
	if _, err := g.Turn(k.ctx, []toolset.FunctionCall{fcall("key_combination", `{"keys": "Control+X"}`)}); err != nil {
		t.Fatal(err)
	}
	if got := k.element("text", "Note").Value; len(got) >= 80*5 {
		t.Fatal("ctrl+x after a drag cut nothing")
	}
}

// TestGeminiURL checks when a function response carries "url": the
// option's answer when it has one; with no option, none on a desktop
// whose active window is not a browser's, nor when the window passes for
// one but its tree holds no document with a URL (the call still runs).
func TestGeminiURL(t *testing.T) {
	k := newDesk(t, 1280, 800, "form")
	for _, tt := range []struct {
		name string
		opts *toolset.GeminiOptions
		want any // nil: no url
	}{
		{"option", &toolset.GeminiOptions{URL: func(context.Context) (string, error) { return "https://example.com/a", nil }}, "https://example.com/a"},
		{"option failing", &toolset.GeminiOptions{URL: func(context.Context) (string, error) { return "", errors.New("no page") }}, nil},
		{"desktop", nil, nil},
		{"browser without a document", &toolset.GeminiOptions{IsBrowser: func(aci.WindowInfo) bool { return true }}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, err := toolset.NewGemini(k.ctx, k.c, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			res, err := g.Turn(k.ctx, []toolset.FunctionCall{fcall("take_screenshot", `{}`)})
			if err != nil {
				t.Fatal(err)
			}
			if got := res[0].Response["url"]; got != tt.want {
				t.Errorf("url %v, want %v", got, tt.want)
			}
			if len(res[0].Parts) != 1 {
				t.Errorf("no screenshot in %+v", res[0])
			}
		})
	}
}
