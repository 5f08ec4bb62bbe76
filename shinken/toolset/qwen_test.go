package toolset_test

import (
	"encoding/json"
	"fmt"
	"image"
	"strings"
	"testing"

	"shinken.dev/go/shinken/toolset"
)

func qwenCall(t *testing.T, k *desk, q *toolset.Qwen, args string) *toolset.QwenResult {
	t.Helper()
	r, err := q.Call(k.ctx, "computer_use", json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	return r
}

func qwenPoint(g toolset.Grid, p image.Point) string {
	x, y := g.ToGrid(p)
	return fmt.Sprintf("[%d, %d]", x, y)
}

func TestQwenFillsTheForm(t *testing.T) {
	k := newDesk(t, 1920, 1080, "form")
	q, err := toolset.NewQwen(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := q.Scale()
	if px := sc.Model.X * sc.Model.Y; px > 1280*28*28 || sc.Model.X < 1300 {
		t.Fatalf("screenshots at %v", sc.Model)
	}
	grid := toolset.Grid{Screen: image.Pt(1920, 1080), Size: 1000}
	at := func(role, name string) string { return qwenPoint(grid, centre(rect(k.element(role, name)))) }
	qwenCall(t, k, q, `{"action": "left_click", "coordinate": `+at("text", "Name")+`}`)
	qwenCall(t, k, q, `{"action": "type", "text": "Mary Jackson"}`)
	qwenCall(t, k, q, `{"action": "left_click", "coordinate": `+at("check box", "Subscribe to the newsletter")+`}`)
	// Arguments as a JSON string, as OpenAI-compatible servers send them.
	r := qwenCall(t, k, q, `"{\"action\": \"left_click\", \"coordinate\": `+at("push button", "Submit")+`}"`)
	if r.Text != "OK" || r.Image == nil || r.Image.Width != sc.Model.X {
		t.Fatalf("result %+v", r)
	}
	k.element("label", "Submitted: Mary Jackson <no email>, newsletter: yes.")
	if r := qwenCall(t, k, q, `{"action": "terminate", "status": "success"}`); !r.Done || r.Status != "success" || r.Image != nil {
		t.Fatalf("terminate %+v", r)
	}
}

func TestQwenKeysTripleClickAndScroll(t *testing.T) {
	k := newDesk(t, 1280, 800, "notes", "first line\nsecond line\nthird line")
	q, err := toolset.NewQwen(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	grid := toolset.Grid{Screen: image.Pt(1280, 800), Size: 1000}
	area := rect(k.element("text", "Note"))
	qwenCall(t, k, q, `{"action": "triple_click", "coordinate": `+qwenPoint(grid, area.Min.Add(image.Pt(30, 8+17+8)))+`}`)
	qwenCall(t, k, q, `{"action": "type", "text": "2nd"}`)
	if got := k.element("text", "Note").Value; got != "first line\n2nd\nthird line" {
		t.Fatalf("the note reads %q", got)
	}
	// ctrl+a selects all, pressed in order and released in reverse.
	qwenCall(t, k, q, `{"action": "key", "keys": ["ctrl", "a"]}`)
	qwenCall(t, k, q, `{"action": "type", "text": "`+strings.Repeat(`x\n`, 60)+`"}`)
	before := qwenCall(t, k, q, `{"action": "scroll", "pixels": 5, "coordinate": `+qwenPoint(grid, centre(area))+`}`)
	after := qwenCall(t, k, q, `{"action": "scroll", "pixels": -5}`)
	if string(before.Image.Data) == string(after.Image.Data) {
		t.Fatal("scrolling changed nothing")
	}
	for _, c := range []struct{ args, want string }{
		{`{"action": "left_click", "coordinate": [1001, 5]}`, "outside"},
		{`{"action": "fly"}`, "unknown computer_use action"},
		{`{"action": "wait", "time": 1000}`, "between 0 and 300"},
		{`{"action": "type", "text": "a", "coordinate": [1, 1]}`, `takes no "coordinate"`},
	} {
		r, err := q.Call(k.ctx, "computer_use", json.RawMessage(c.args))
		if err == nil || !r.IsError || !strings.Contains(r.Text, c.want) {
			t.Errorf("%s: %v %+v, want %q", c.args, err, r, c.want)
		}
	}
}
