package toolset_test

import (
	"slices"
	"strings"
	"testing"

	"shinken.dev/go/shinken/toolset"
)

// TestGeminiNewerFunctions feeds the newer function set as the current
// models call it (x and y on the 0–999 grid, an intent) and checks the
// primitives that reached the desktop.
func TestGeminiNewerFunctions(t *testing.T) {
	k, rec := newRecDesk(t, 1000, 1000, nil, "form")
	g, err := toolset.NewGemini(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A 1000×1000 screen: grid point n is screen pixel n.
	for _, tt := range []struct {
		name, args string
		want       []string
	}{
		{"click", `{"x": 100, "y": 200, "intent": "press it"}`, []string{"down:0@100,200", "up:0@100,200"}},
		{"right_click", `{"x": 10, "y": 20}`, []string{"down:2@10,20", "up:2@10,20"}},
		{"middle_click", `{"x": 10, "y": 20}`, []string{"down:1@10,20", "up:1@10,20"}},
		{"mouse_down", `{"x": 30, "y": 40}`, []string{"down:0@30,40"}},
		{"move", `{"x": 50.4, "y": 60}`, []string{"move@50,60"}},
		{"mouse_up", `{"x": 50, "y": 60}`, []string{"up:0@50,60"}},
		{"press_key", `{"key": "Enter"}`, []string{"+Return", "-Return"}},
		{"hotkey", `{"keys": ["ctrl", "C"]}`, []string{"+Control_L", "+c", "-c", "-Control_L"}},
		{"type", `{"text": "hi"}`, []string{"type:hi"}}, // press_enter is false by default
		{"type", `{"text": "yo", "press_enter": true}`, []string{"type:yo", "+Return", "-Return"}},
		{"key_down", `{"key": "shift"}`, nil},
		{"click", `{"x": 100, "y": 200}`, []string{"+Shift_L", "down:0@100,200", "up:0@100,200", "-Shift_L"}},
		{"press_key", `{"key": "Tab"}`, []string{"+Shift_L", "+Tab", "-Tab", "-Shift_L"}},
		{"key_up", `{"key": "shift"}`, nil},
		{"press_key", `{"key": "Tab"}`, []string{"+Tab", "-Tab"}},
		{"take_screenshot", `{}`, nil},
		{"wait", `{"seconds": 0}`, nil},
		{"scroll", `{"x": 500, "y": 500, "direction": "down", "magnitude_in_pixels": 200}`, []string{"scroll:0,2@500,500"}},
		{"drag_and_drop", `{"start_x": 10, "start_y": 10, "end_x": 20, "end_y": 10}`, nil},
	} {
		rec.take()
		res, err := g.Turn(k.ctx, []toolset.FunctionCall{fcall(tt.name, tt.args)})
		if err != nil {
			t.Fatalf("%s %s: %v", tt.name, tt.args, err)
		}
		if len(res[0].Parts) != 1 {
			t.Fatalf("%s: no screenshot in the response", tt.name)
		}
		got := rec.take()
		if tt.name == "drag_and_drop" {
			if d := filter(got, "down:", "up:"); !slices.Equal(d, []string{"down:0@10,10", "up:0@20,10"}) {
				t.Errorf("drag_and_drop reached the desktop as %v", got)
			}
			continue
		}
		if tt.name != "scroll" {
			got = slices.DeleteFunc(got, func(s string) bool { return strings.HasPrefix(s, "move@") && tt.name != "move" })
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s %s reached the desktop as %v, want %v", tt.name, tt.args, got, tt.want)
		}
	}
	for _, bad := range []struct{ name, args, want string }{
		{"key_down", `{"key": "a"}`, "only modifiers"},
		{"key_up", `{"key": "ctrl"}`, "not held down"},
		{"drag_and_drop", `{"start_x": 1, "start_y": 1, "end_x": 2, "end_y": 2, "x": 1}`, "not both"},
		{"scroll", `{"x": 1, "y": 1, "direction": "down", "magnitude_in_pixels": 1000}`, "0–999"},
		{"hotkey", `{"keys": "ctrl+c"}`, "a list of key names"},
		{"wait", `{"seconds": 301}`, "between 0 and 300"},
	} {
		rec.take()
		if _, err := g.Turn(k.ctx, []toolset.FunctionCall{fcall(bad.name, bad.args)}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s %s: %v, want %q", bad.name, bad.args, err, bad.want)
		}
		if got := filter(rec.take(), "+", "-", "down:", "up:", "type:"); len(got) > 0 {
			t.Errorf("%s %s reached the desktop: %v", bad.name, bad.args, got)
		}
	}
	if _, err := g.Turn(k.ctx, []toolset.FunctionCall{fcall("key_down", `{"key": "ctrl"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Turn(k.ctx, []toolset.FunctionCall{fcall("type", `{"text": "x"}`)}); err == nil || !strings.Contains(err.Error(), "is held") {
		t.Fatalf("type while ctrl is held: %v", err)
	}
}

// TestGeminiOlderDefaults checks the older set's defaults against the
// reference agent: type_text_at clears the field and presses no Enter
// unless asked; scroll_document pages up and down.
func TestGeminiOlderDefaults(t *testing.T) {
	k, rec := newRecDesk(t, 1000, 1000, nil, "form")
	g, err := toolset.NewGemini(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec.take()
	if _, err := g.Turn(k.ctx, []toolset.FunctionCall{fcall("type_text_at", `{"x": 10, "y": 10, "text": "hi"}`)}); err != nil {
		t.Fatal(err)
	}
	if got := filter(rec.take(), "+", "type:"); !slices.Equal(got, []string{"+Control_L", "+a", "+BackSpace", "type:hi"}) {
		t.Fatalf("type_text_at reached the desktop as %v", got)
	}
	if _, err := g.Turn(k.ctx, []toolset.FunctionCall{fcall("scroll_document", `{"direction": "down"}`)}); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); !slices.Equal(got, []string{"+Page_Down", "-Page_Down"}) {
		t.Fatalf("scroll_document down reached the desktop as %v", got)
	}
}
