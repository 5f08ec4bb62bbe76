package toolset_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"strings"
	"testing"

	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/toolset"
)

func computerCall(actions ...string) *toolset.ComputerCall {
	c := &toolset.ComputerCall{Type: "computer_call", CallID: "call_1"}
	for _, a := range actions {
		c.Actions = append(c.Actions, json.RawMessage(a))
	}
	return c
}

func outputImage(t *testing.T, out *toolset.ComputerCallOutput) *image.RGBA {
	t.Helper()
	data, ok := strings.CutPrefix(out.Output.ImageURL, "data:image/png;base64,")
	if out.Type != "computer_call_output" || out.Output.Type != "computer_screenshot" || !ok {
		t.Fatalf("output %+v", out)
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		t.Fatal(err)
	}
	return decodePNG(t, b)
}

func xyFields(p image.Point) string { return fmt.Sprintf(`"x": %d, "y": %d`, p.X, p.Y) }

// The form filled by one actions[] batch at coordinates of a screenshot
// bounded to 960×600 (the screen is 1280×800).
func TestOpenAIFillsTheForm(t *testing.T) {
	k := newDesk(t, 1280, 800, "form")
	o, err := toolset.NewOpenAI(k.ctx, k.c, &toolset.OpenAIOptions{Width: 960, Height: 600})
	if err != nil {
		t.Fatal(err)
	}
	sc := o.Scale()
	if sc.Model != image.Pt(960, 600) {
		t.Fatalf("model screen %v", sc.Model)
	}
	at := func(role, name string) string { return xyFields(centre(modelRect(sc, rect(k.element(role, name))))) }
	out, err := o.Run(k.ctx, computerCall(
		`{"type": "click", `+at("text", "Name")+`}`,
		`{"type": "type", "text": "Grace Hopper"}`,
		`{"type": "click", "button": "left", `+at("text", "Email")+`}`,
		`{"type": "type", "text": "grace@example.org"}`,
		`{"type": "click", `+at("check box", "Subscribe to the newsletter")+`}`,
		`{"type": "keypress", "keys": ["ENTER"]}`,
		`{"type": "screenshot"}`,
	))
	if err != nil {
		t.Fatal(err)
	}
	img := outputImage(t, out)
	if out.CallID != "call_1" || img.Rect.Size() != sc.Model {
		t.Fatalf("output %+v", out.CallID)
	}
	k.element("label", "Submitted: Grace Hopper <grace@example.org>, newsletter: yes.")
	direct, err := k.c.Screenshot(k.ctx, &client.ScreenshotRequest{MaxLongEdge: 960})
	if err != nil {
		t.Fatal(err)
	}
	if string(decodePNG(t, direct.Data).Pix) != string(img.Pix) {
		t.Fatal("the output's screenshot is not the screen's end state")
	}
}

func TestOpenAISelections(t *testing.T) {
	k := newDesk(t, 1280, 800, "notes", "first line\nsecond line\nthird line")
	o, err := toolset.NewOpenAI(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	area := rect(k.element("text", "Note"))
	second := o.Scale().ToModel(area.Min.Add(image.Pt(30, 8+17+8)))
	// A double click then a click at the same point is a triple click; a
	// shift-click at the start of the third line extends the selection.
	third := o.Scale().ToModel(area.Min.Add(image.Pt(6, 8+2*17+8)))
	if _, err := o.Run(k.ctx, computerCall(
		`{"type": "double_click", `+xyFields(second)+`}`,
		`{"type": "click", `+xyFields(second)+`}`,
		`{"type": "click", "keys": ["SHIFT"], `+xyFields(third)+`}`,
		`{"type": "type", "text": "2nd\n"}`,
	)); err != nil {
		t.Fatal(err)
	}
	if got := k.element("text", "Note").Value; got != "first line\n2nd\nthird line" {
		t.Fatalf("the note reads %q", got)
	}
}

// A batch whose second action fails runs none of the rest, and still
// answers with the screenshot.
func TestOpenAIBatchStopsAtTheFirstFailure(t *testing.T) {
	k := newDesk(t, 1280, 800, "form")
	o, err := toolset.NewOpenAI(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	name := xyFields(centre(rect(k.element("text", "Name"))))
	out, err := o.Run(k.ctx, computerCall(
		`{"type": "click", `+name+`}`,
		`{"type": "click", "x": 5000, "y": 10}`,
		`{"type": "type", "text": "typed"}`,
		`{"type": "keypress", "keys": ["ENTER"]}`,
	))
	var be *toolset.BatchError
	if !errors.As(err, &be) || be.Index != 1 || be.NotRun != 2 || !errors.Is(err, toolset.ErrOutside) {
		t.Fatalf("error %v", err)
	}
	if out == nil || outputImage(t, out).Rect.Dx() != 1280 {
		t.Fatal("no screenshot after a failed batch")
	}
	if got := k.element("text", "Name").Value; got != "" {
		t.Fatalf("an action after the failure ran: %q", got)
	}
	// A batch with an action that does not parse runs nothing at all.
	_, err = o.Run(k.ctx, computerCall(`{"type": "type", "text": "x"}`, `{"type": "click", "x": 1}`))
	if !errors.As(err, &be) || be.Index != 1 || !strings.Contains(err.Error(), `requires "y"`) {
		t.Fatalf("error %v", err)
	}
	if got := k.element("text", "Name").Value; got != "" {
		t.Fatalf("a batch that does not parse ran: %q", got)
	}
}

func TestOpenAIScrollsAndDrags(t *testing.T) {
	k := newDesk(t, 1280, 800, "notes", strings.Repeat("line\n", 80))
	o, err := toolset.NewOpenAI(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	area := rect(k.element("text", "Note"))
	before, err := k.c.Screenshot(k.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := centre(area)
	out, err := o.Run(k.ctx, computerCall(
		fmt.Sprintf(`{"type": "scroll", %s, "scroll_x": 0, "scroll_y": 300}`, xyFields(c)),
		fmt.Sprintf(`{"type": "drag", "path": [{"x": %d, "y": %d}, {"x": %d, "y": %d}, {"x": %d, "y": %d}]}`,
			area.Min.X+10, area.Min.Y+10, area.Min.X+40, area.Min.Y+30, area.Min.X+60, area.Min.Y+60),
	))
	if err != nil {
		t.Fatal(err)
	}
	if img := outputImage(t, out); string(img.Pix) == string(decodePNG(t, before.Data).Pix) {
		t.Fatal("scrolling 300 px changed nothing")
	}
	// The drag selected some lines: typing replaces them.
	if _, err := o.Run(k.ctx, computerCall(`{"type": "type", "text": "X"}`)); err != nil {
		t.Fatal(err)
	}
	if got := k.element("text", "Note").Value; !strings.Contains(got, "X") || len(got) >= 80*5 {
		t.Fatalf("after a drag and typing the note reads %q", got[:40])
	}
}

func TestOpenAIRefusesWhatItCannotDo(t *testing.T) {
	k := newDesk(t, 1280, 800, "form")
	o, err := toolset.NewOpenAI(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ action, want string }{
		{`{"type": "click", "x": 1, "y": 1, "button": "side"}`, "not left, right"},
		{`{"type": "double_click", "x": 1, "y": 1, "button": "back"}`, "cannot be done"},
		{`{"type": "drag", "path": [{"x": 1, "y": 1}]}`, "at least two points"},
		{`{"type": "keypress", "keys": ["NOSUCHKEY!"]}`, "unknown key"},
		{`{"type": "teleport"}`, "unknown computer action"},
		{`{"type": "wait", "ms": 5}`, `takes no "ms"`},
	} {
		if _, err := o.Run(k.ctx, computerCall(c.action)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.action, err, c.want)
		}
	}
	call := computerCall(`{"type": "screenshot"}`)
	call.PendingSafetyChecks = []toolset.SafetyCheck{{ID: "sc1", Code: "malicious_instructions"}}
	if _, err := o.Run(k.ctx, call); !errors.Is(err, toolset.ErrSafetyCheck) {
		t.Fatalf("a call with an unacknowledged safety check: %v", err)
	}
}
