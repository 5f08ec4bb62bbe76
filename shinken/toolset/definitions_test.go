package toolset_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"shinken.dev/go/shinken/toolset"
)

// compile compiles a JSON Schema, failing the test when it is not one.
func compile(t *testing.T, name string, schema []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "https://shinken.dev/toolset/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s is not a valid JSON Schema: %v", name, err)
	}
	return s
}

func validates(t *testing.T, s *jsonschema.Schema, input string) bool {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(input)))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(v) == nil
}

// The 17 members of computer_toolset_20260801 and their required inputs,
// from Anthropic's table of available actions.
var anthropicRequired = map[string][]string{
	"screenshot": nil, "zoom": {"region"},
	"left_click": nil, "right_click": nil, "middle_click": nil, "double_click": nil, "triple_click": nil,
	"left_click_drag": {"start_coordinate", "coordinate"}, "mouse_move": {"coordinate"},
	"left_mouse_down": nil, "left_mouse_up": nil, "cursor_position": nil,
	"scroll": {"scroll_direction", "scroll_amount"}, "type": {"text"}, "key": {"text"},
	"hold_key": {"text", "duration"}, "wait": {"duration"},
}

func TestAnthropicDefinitions(t *testing.T) {
	k := newDesk(t, 1280, 800, "form")
	a := newAnthropic(t, k, nil)
	if string(a.Definition()) != `{"type":"computer_toolset_20260801"}` {
		t.Fatalf("toolset entry %s", a.Definition())
	}
	members := a.Members()
	if len(members) != 17 {
		t.Fatalf("%d members, want 17", len(members))
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, m := range members {
		want, ok := anthropicRequired[m.Name]
		if !ok {
			t.Fatalf("unknown member %q", m.Name)
		}
		var s struct {
			Type     string         `json:"type"`
			Required []string       `json:"required"`
			Props    map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(m.InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		if s.Type != "object" || !slices.Equal(s.Required, want) || m.Description == "" {
			t.Errorf("%s: schema %s, want required %q", m.Name, m.InputSchema, want)
		}
		if _, ok := s.Props["action"]; ok {
			t.Errorf("%s: a member's input has no action", m.Name)
		}
		schemas[m.Name] = compile(t, m.Name, m.InputSchema)
	}
	// The examples of Anthropic's documentation validate; wrong inputs do
	// not.
	for _, c := range []struct {
		member, input string
		ok            bool
	}{
		{"left_click", `{"coordinate": [500, 300], "text": "shift"}`, true},
		{"left_click", `{}`, true},
		{"left_click_drag", `{"start_coordinate": [200, 300], "coordinate": [600, 300]}`, true},
		{"scroll", `{"coordinate": [500, 400], "scroll_direction": "down", "scroll_amount": 3}`, true},
		{"key", `{"text": "Tab", "repeat": 4}`, true},
		{"zoom", `{"region": [100, 200, 400, 350]}`, true},
		{"cursor_position", `{}`, true},
		{"hold_key", `{"text": "shift", "duration": 2.5}`, true},
		{"key", `{"text": "Tab", "repeat": 0}`, false},
		{"scroll", `{"scroll_direction": "sideways", "scroll_amount": 3}`, false},
		{"zoom", `{"region": [1, 2, 3]}`, false},
		{"mouse_move", `{}`, false},
		{"screenshot", `{"action": "screenshot"}`, false},
	} {
		if got := validates(t, schemas[c.member], c.input); got != c.ok {
			t.Errorf("%s %s: valid %v, want %v", c.member, c.input, got, c.ok)
		}
	}

	for _, v := range []toolset.AnthropicVersion{toolset.Computer20250124, toolset.Computer20251124} {
		a := newAnthropic(t, k, &toolset.AnthropicOptions{Version: v, DisplayNumber: new(int)})
		var def map[string]any
		if err := json.Unmarshal(a.Definition(), &def); err != nil {
			t.Fatal(err)
		}
		if def["type"] != string(v) || def["name"] != "computer" || def["display_width_px"] != 1024.0 || def["display_height_px"] != 640.0 || def["display_number"] != 0.0 {
			t.Errorf("%s definition %v", v, def)
		}
		wantN := 17
		if v == toolset.Computer20250124 {
			wantN = 16 // no zoom
		}
		if ms := a.Members(); len(ms) != wantN {
			t.Errorf("%s: %d actions, want %d", v, len(ms), wantN)
		} else {
			s := compile(t, string(v)+"-left_click", ms[slices.IndexFunc(ms, func(m toolset.Tool) bool { return m.Name == "left_click" })].InputSchema)
			if !validates(t, s, `{"action": "left_click", "coordinate": [1, 2]}`) || validates(t, s, `{"coordinate": [1, 2]}`) {
				t.Errorf("%s: left_click's schema does not require its action", v)
			}
		}
	}
}

func TestVendorDefinitions(t *testing.T) {
	k := newDesk(t, 1280, 800, "form")
	o, err := toolset.NewOpenAI(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(o.Definition()) != `{"type":"computer"}` {
		t.Errorf("OpenAI definition %s", o.Definition())
	}
	g, err := toolset.NewGemini(k.ctx, k.c, &toolset.GeminiOptions{Browser: "chromium"})
	if err != nil {
		t.Fatal(err)
	}
	if string(g.Definition()) != `{"computerUse":{"environment":"ENVIRONMENT_BROWSER"}}` {
		t.Errorf("Gemini definition %s", g.Definition())
	}
	q, err := toolset.NewQwen(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	var def struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(q.Definition(), &def); err != nil {
		t.Fatal(err)
	}
	if def.Type != "function" || def.Function.Name != "computer_use" {
		t.Fatalf("Qwen definition %s", q.Definition())
	}
	s := compile(t, "computer_use", def.Function.Parameters)
	for _, c := range []struct {
		args string
		ok   bool
	}{
		{`{"action": "left_click", "coordinate": [500, 500]}`, true},
		{`{"action": "key", "keys": ["ctrl", "c"]}`, true},
		{`{"action": "scroll", "pixels": -5}`, true},
		{`{"action": "terminate", "status": "success"}`, true},
		{`{"action": "fly"}`, false},
		{`{"coordinate": [1, 2]}`, false},
		{`{"action": "left_click", "coordinate": [1001, 2]}`, false},
	} {
		if got := validates(t, s, c.args); got != c.ok {
			t.Errorf("computer_use %s: valid %v, want %v", c.args, got, c.ok)
		}
	}
}
