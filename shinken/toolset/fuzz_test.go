package toolset

import (
	"encoding/json"
	"testing"
	"unicode"

	"shinken.dev/go/shinken"
)

// The decoders of the vendors' calls take any input, answer it with an
// error or a decoded call whose required fields are all there, and never
// panic. The seed corpus is in testdata/fuzz.

func FuzzParseAnthropic(f *testing.F) {
	for _, s := range []struct{ name, input string }{
		{"left_click", `{"coordinate": [500, 300], "text": "shift"}`},
		{"scroll", `{"coordinate": [500, 400], "scroll_direction": "down", "scroll_amount": 3}`},
		{"zoom", `{"region": [100, 200, 400, 350]}`},
		{"computer", `{"action": "hold_key", "text": "a", "duration": 1}`},
		{"key", `{"text": null}`},
	} {
		f.Add(s.name, []byte(s.input), uint8(0))
	}
	versions := []AnthropicVersion{ComputerToolset20260801, Computer20251124, Computer20250124}
	f.Fuzz(func(t *testing.T, name string, input []byte, version uint8) {
		v := versions[int(version)%len(versions)]
		m, in, err := parseAnthropic(v, name, json.RawMessage(input))
		if err != nil {
			return
		}
		for _, r := range m.required {
			if !anthropicHas(in, r) {
				t.Fatalf("%s %s: accepted without %q", name, input, r)
			}
		}
	})
}

func anthropicHas(in *anthropicInput, field string) bool {
	switch field {
	case "coordinate":
		return in.Coordinate != nil
	case "start_coordinate":
		return in.StartCoordinate != nil
	case "text":
		return in.Text != nil
	case "duration":
		return in.Duration != nil
	case "scroll_direction":
		return in.ScrollDirection != nil
	case "scroll_amount":
		return in.ScrollAmount != nil
	case "region":
		return in.Region != nil
	}
	return false
}

func FuzzParseOpenAI(f *testing.F) {
	for _, s := range []string{
		`{"type": "click", "x": 10, "y": 20, "button": "left", "keys": ["SHIFT"]}`,
		`{"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 3, "y": 4}]}`,
		`{"type": "scroll", "x": 1, "y": 2, "scroll_x": 0, "scroll_y": -300}`,
		`{"type": "keypress", "keys": ["CTRL", "A"]}`,
		`{"type": "wait"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		a, err := parseOpenAIAction(json.RawMessage(input))
		if a == nil {
			t.Fatal("nil action")
		}
		if err != nil {
			return
		}
		spec := openAIFields[a.Type]
		for _, r := range spec.required {
			ok := map[string]bool{"x": a.X != nil, "y": a.Y != nil, "path": len(a.Path) >= 2, "keys": a.keys != "",
				"scroll_x": a.ScrollX != nil, "scroll_y": a.ScrollY != nil, "text": a.Text != nil}[r]
			if !ok {
				t.Fatalf("%s: accepted without %q", input, r)
			}
		}
	})
}

func FuzzParseGemini(f *testing.F) {
	for _, s := range []struct{ name, args string }{
		{"click_at", `{"x": 500, "y": 300}`},
		{"type_text_at", `{"x": 1, "y": 2, "text": "hi", "press_enter": false}`},
		{"scroll_at", `{"x": 1, "y": 2, "direction": "down", "magnitude": 800}`},
		{"drag_and_drop", `{"x": 1, "y": 2, "destination_x": 3, "destination_y": 4}`},
		{"navigate", `{"url": "https://example.org", "safety_decision": {"decision": "require_confirmation", "explanation": "x"}}`},
		{"click", `{"x": 500.5, "y": 300, "intent": "the button"}`},
		{"hotkey", `{"keys": ["ctrl", "shift", "t"]}`},
		{"press_key", `{"key": "Enter"}`},
		{"scroll", `{"x": 1, "y": 2, "direction": "up", "magnitude_in_pixels": 300}`},
		{"drag_and_drop", `{"start_x": 1, "start_y": 2, "end_x": 3, "end_y": 4}`},
		{"wait", `{"seconds": 2}`},
	} {
		f.Add(s.name, []byte(s.args))
	}
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		a, err := parseGemini(FunctionCall{Name: name, Args: json.RawMessage(args)})
		if err != nil {
			return
		}
		required := geminiFields[name].required
		if name == "drag_and_drop" {
			if (a.X == nil || a.Y == nil || a.DestinationX == nil || a.DestinationY == nil) &&
				(a.StartX == nil || a.StartY == nil || a.EndX == nil || a.EndY == nil) {
				t.Fatalf("%s: drag_and_drop accepted without its points", args)
			}
		}
		for _, r := range required {
			ok := map[string]bool{"x": a.X != nil, "y": a.Y != nil, "destination_x": a.DestinationX != nil, "destination_y": a.DestinationY != nil,
				"text": a.Text != nil, "keys": a.Keys != nil, "direction": a.Direction != nil, "url": a.URL != nil, "key": a.Key != nil}[r]
			if !ok {
				t.Fatalf("%s %s: accepted without %q", name, args, r)
			}
		}
	})
}

func FuzzParseQwen(f *testing.F) {
	for _, s := range []string{
		`{"action": "left_click", "coordinate": [500, 500]}`,
		`{"action": "key", "keys": ["ctrl", "c"]}`,
		`"{\"action\": \"scroll\", \"pixels\": -5}"`,
		`{"action": "terminate", "status": "success"}`,
		`{"action": "wait", "time": 2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		a, err := parseQwen(json.RawMessage(args))
		if err != nil {
			return
		}
		for _, r := range qwenFields[a.Action].required {
			ok := map[string]bool{"keys": len(a.Keys) > 0, "text": a.Text != nil, "coordinate": a.Coordinate != nil,
				"pixels": a.Pixels != nil, "time": a.Time != nil, "status": a.Status != nil}[r]
			if !ok {
				t.Fatalf("%s: accepted without %q", args, r)
			}
		}
	})
}

// FuzzXdotoolKeys: any key text is refused or becomes an expression the
// runtime's parser takes, with no letter upper-cased in a combination.
func FuzzXdotoolKeys(f *testing.F) {
	for _, s := range []string{"CTRL+S", "ctrl+shift+T", "Return", "kp_enter", "ctrl++", "+", "a b c", "ctrl+", "Ä", "super+É"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		expr, err := xdotoolKeys(text)
		if err != nil {
			return
		}
		combos, err := shinken.ParseKeys(expr)
		if err != nil {
			t.Fatalf("%q became %q, which the runtime refuses: %v", text, expr, err)
		}
		for _, c := range combos {
			if len(c) < 2 {
				continue
			}
			for _, k := range c {
				if r := []rune(k); len(r) == 1 && unicode.IsUpper(r[0]) && unicode.ToLower(r[0]) != r[0] {
					t.Fatalf("%q became %q: an upper-case letter in a combination", text, expr)
				}
			}
		}
	})
}
