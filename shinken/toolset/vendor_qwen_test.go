package toolset_test

import (
	"encoding/json"
	"fmt"
	"image"
	"slices"
	"strings"
	"testing"

	"shinken.dev/go/shinken/toolset"
)

// TestQwenAbsolute runs Qwen2.5-VL's computer_use as its cookbook drives
// it: coordinates in the pixels of the smart-resized screenshot, whose
// size the description states as the screen's resolution.
func TestQwenAbsolute(t *testing.T) {
	k, rec := newRecDesk(t, 1920, 1080, nil, "form")
	q, err := toolset.NewQwen(k.ctx, k.c, &toolset.QwenOptions{Mode: toolset.QwenAbsolute})
	if err != nil {
		t.Fatal(err)
	}
	// smart_resize(1080, 1920, factor 28, max_pixels 1280·28·28).
	if sc := q.Scale(); sc.Model != image.Pt(1316, 728) || sc.Image != sc.Model {
		t.Fatalf("screenshots at %v", sc.Model)
	}
	var def struct {
		Function struct {
			Description string `json:"description"`
			Parameters  struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(q.Definition(), &def); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(def.Function.Description, "* The screen's resolution is 1316x728.\n") || strings.Contains(def.Function.Description, "0-1000") {
		t.Fatalf("description %q", def.Function.Description)
	}
	if slices.Contains(def.Function.Parameters.Properties["action"].Enum, "triple_click") {
		t.Fatal("Qwen2.5-VL's computer_use has no triple_click")
	}
	r := qwenCall(t, k, q, `{"action": "mouse_move", "coordinate": [0, 0]}`)
	if r.Image == nil || r.Image.Width != 1316 || r.Image.Height != 728 {
		t.Fatalf("screenshot %+v", r.Image)
	}
	if img := decodePNG(t, r.Image.Data); img.Rect.Size() != image.Pt(1316, 728) {
		t.Fatalf("the PNG is %v", img.Rect.Size())
	}
	box := rect(k.element("check box", "Subscribe to the newsletter"))
	c := centre(box)
	m := image.Pt(c.X*1316/1920, c.Y*728/1080)
	rec.take()
	qwenCall(t, k, q, fmt.Sprintf(`{"action": "left_click", "coordinate": [%d, %d]}`, m.X, m.Y))
	var down string
	for _, e := range rec.take() {
		if strings.HasPrefix(e, "down:") {
			down = e
		}
	}
	var x, y int
	if _, err := fmt.Sscanf(down, "down:0@%d,%d", &x, &y); err != nil || !image.Pt(x, y).In(box) {
		t.Fatalf("model point %v pressed %q, outside %v", m, down, box)
	}
	if el := k.element("check box", "Subscribe to the newsletter"); !slices.Contains(el.States, "checked") {
		t.Fatal("the box is not checked")
	}
	if _, err := q.Call(k.ctx, "computer_use", json.RawMessage(`{"action": "left_click", "coordinate": [1316, 10]}`)); err == nil {
		t.Fatal("a click right of the screenshot was accepted")
	}
}
