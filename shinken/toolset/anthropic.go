package toolset

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"
	"slices"
	"strings"
	"time"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// AnthropicVersion names a version of Anthropic's computer use tool.
type AnthropicVersion string

// The versions of Anthropic's computer use tool this package speaks.
const (
	// Computer20250124 is the single "computer" tool whose input names an
	// action: key, type, mouse_move, the clicks, drags, scroll, hold_key,
	// wait, screenshot, cursor_position.
	Computer20250124 AnthropicVersion = "computer_20250124"
	// Computer20251124 adds the zoom action.
	Computer20251124 AnthropicVersion = "computer_20251124"
	// ComputerToolset20260801 is the client toolset of 17 member tools,
	// called several per turn; see [Anthropic.Turn].
	ComputerToolset20260801 AnthropicVersion = "computer_toolset_20260801"
)

// AnthropicToolsetName is the toolset_name of the computer use toolset's
// calls and results.
const AnthropicToolsetName = "computer"

// NotExecuted is the result text of a toolset call not run because an
// earlier computer action of the same turn failed, word for word as
// Anthropic asks.
const NotExecuted = "Not executed: an earlier computer action in this turn failed."

// AnthropicOptions configure [NewAnthropic]. A nil *AnthropicOptions means
// every default.
type AnthropicOptions struct {
	// Version is the tool version the model is given; default
	// ComputerToolset20260801.
	Version AnthropicVersion
	// Width and Height bound the screenshots the model sees, and so its
	// coordinate space; default 1024×768 (XGA, Anthropic's recommendation).
	// The screen is downscaled to fit, aspect ratio kept, never upscaled.
	Width, Height int
	// Pad pads every screenshot with black at the right and bottom to
	// exactly Width×Height. Clicks in the padding are refused. Default off:
	// the model's screen is the downscaled size itself.
	Pad bool
	// DisplayNumber is sent as display_number in the tool definition of the
	// 2025 versions when set.
	DisplayNumber *int
}

// Anthropic runs Anthropic computer use tool calls against an ACI session.
// It owns the scaling: screenshots are delivered at the model's size,
// coordinates are mapped back to action pixels, cursor_position answers in
// the model's space, zoom captures at native resolution.
//
// Its methods may be called from several goroutines, but calls of one
// agent should run in order: they drive one shared pointer and keyboard.
type Anthropic struct {
	s       *screen
	version AnthropicVersion
	display *int
}

// NewAnthropic returns the tools of o.Version over c. It asks the runtime
// for the screen size.
func NewAnthropic(ctx context.Context, c *client.Client, o *AnthropicOptions) (*Anthropic, error) {
	if o == nil {
		o = &AnthropicOptions{}
	}
	v := o.Version
	if v == "" {
		v = ComputerToolset20260801
	}
	if !slices.Contains([]AnthropicVersion{Computer20250124, Computer20251124, ComputerToolset20260801}, v) {
		return nil, fmt.Errorf("toolset: unknown Anthropic tool version %q", v)
	}
	w, h := o.Width, o.Height
	if w == 0 && h == 0 {
		w, h = 1024, 768
	}
	s, err := newScreen(ctx, c, image.Pt(w, h), o.Pad)
	if err != nil {
		return nil, err
	}
	return &Anthropic{s: s, version: v, display: o.DisplayNumber}, nil
}

// Version reports the tool version.
func (a *Anthropic) Version() AnthropicVersion { return a.version }

// Scale reports the current mapping between the model's screenshots and the
// screen.
func (a *Anthropic) Scale() Scale { sc, _ := a.s.current(); return sc }

// Definition returns the entry to put in the tools array of a Messages API
// request: {"type": "computer_toolset_20260801"}, or for the 2025 versions
// the "computer" tool with the model's display size (and enable_zoom for
// computer_20251124).
func (a *Anthropic) Definition() json.RawMessage {
	if a.version == ComputerToolset20260801 {
		return json.RawMessage(`{"type":"` + string(a.version) + `"}`)
	}
	sc := a.Scale()
	def := map[string]any{
		"type": a.version, "name": "computer",
		"display_width_px": sc.Model.X, "display_height_px": sc.Model.Y,
	}
	if a.display != nil {
		def["display_number"] = *a.display
	}
	if a.version == Computer20251124 {
		def["enable_zoom"] = true
	}
	b, _ := json.Marshal(def)
	return b
}

// A Tool describes one tool as a function-calling API or an MCP server
// lists it: a name, a description, and a JSON Schema of its input.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Members describes the 17 member tools of computer_toolset_20260801 (for
// the 2025 versions, the actions of the computer tool), with input schemas
// written from Anthropic's published definitions and coordinates in the
// model's screenshot space. An MCP server can list them as its tools and
// hand each call to [Anthropic.Call].
func (a *Anthropic) Members() []Tool {
	sc := a.Scale()
	var out []Tool
	for _, m := range anthropicMembers {
		if !a.has(m.name) {
			continue
		}
		out = append(out, Tool{Name: m.name, Description: fmt.Sprintf(m.desc, sc.Model.X, sc.Model.Y), InputSchema: m.schema(a.version)})
	}
	return out
}

// has reports whether the version has the member.
func (a *Anthropic) has(name string) bool {
	_, ok := memberByName[name]
	return ok && (a.version != Computer20250124 || name != "zoom")
}

// A Result is the answer to one tool call: text or an image, and whether
// it reports an error.
type Result struct {
	Text    string
	Image   *Image
	IsError bool
}

// Call runs one call: for computer_toolset_20260801, name is the member
// ("left_click") and input its JSON input; for the 2025 versions name is
// "computer" and input carries "action". It always returns a Result to send
// back: on failure the Result reports the error (IsError, "Error: …") and
// the error is also returned, so a caller can stop a turn.
func (a *Anthropic) Call(ctx context.Context, name string, input json.RawMessage) (*Result, error) {
	r, err := a.call(ctx, name, input)
	if err != nil {
		return &Result{Text: "Error: " + err.Error(), IsError: true}, err
	}
	return r, nil
}

// A ToolUse is a tool_use block of a Messages API response.
type ToolUse struct {
	Type        string          `json:"type,omitempty"` // "tool_use"
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	ToolsetName string          `json:"toolset_name,omitempty"`
	Input       json.RawMessage `json:"input"`
}

// A ToolResult is the tool_result block that answers a ToolUse, in the
// Messages API's shape.
type ToolResult struct {
	Type        string         `json:"type"` // "tool_result"
	ToolUseID   string         `json:"tool_use_id"`
	ToolsetName string         `json:"toolset_name,omitempty"`
	Content     []ContentBlock `json:"content"`
	IsError     bool           `json:"is_error,omitempty"`
}

// A ContentBlock is a text or image block of a tool result.
type ContentBlock struct {
	Type   string       `json:"type"` // "text" or "image"
	Text   string       `json:"text,omitempty"`
	Source *ImageSource `json:"source,omitempty"`
}

// An ImageSource carries an image block's base64 data.
type ImageSource struct {
	Type      string `json:"type"` // "base64"
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// Turn runs the tool_use blocks of one response in order and answers each
// with a tool_result. After the first failure it runs none of the rest:
// they are answered, with is_error, [NotExecuted]. Blocks that are not
// calls of this tool (another toolset's, or a custom tool's) are answered
// as errors too: pass only this tool's blocks. The returned error is the
// first failure, nil when every call ran.
func (a *Anthropic) Turn(ctx context.Context, uses []ToolUse) ([]ToolResult, error) {
	out := make([]ToolResult, 0, len(uses))
	var failed error
	for _, u := range uses {
		// A result carries its use's toolset_name: the API refuses a
		// mismatch, so another toolset's use is not stamped as this one's.
		tr := ToolResult{Type: "tool_result", ToolUseID: u.ID}
		if a.version == ComputerToolset20260801 {
			tr.ToolsetName = u.ToolsetName
		}
		var r *Result
		switch {
		case failed != nil:
			r = &Result{Text: NotExecuted, IsError: true}
		case a.version == ComputerToolset20260801 && u.ToolsetName != AnthropicToolsetName:
			err := fmt.Errorf("toolset: %q is not a member of the %q toolset (toolset_name %q)", u.Name, AnthropicToolsetName, u.ToolsetName)
			r, failed = &Result{Text: "Error: " + err.Error(), IsError: true}, err
		default:
			var err error
			if r, err = a.Call(ctx, u.Name, u.Input); err != nil {
				failed = err
			}
		}
		tr.Content, tr.IsError = r.anthropicContent(), r.IsError
		out = append(out, tr)
	}
	return out, failed
}

func (r *Result) anthropicContent() []ContentBlock {
	if r.Image != nil {
		return []ContentBlock{{Type: "image", Source: &ImageSource{Type: "base64", MediaType: r.Image.MediaType, Data: base64.StdEncoding.EncodeToString(r.Image.Data)}}}
	}
	return []ContentBlock{{Type: "text", Text: r.Text}}
}

// anthropicInput is every field an Anthropic computer action takes.
type anthropicInput struct {
	Action          string   `json:"action"`
	Coordinate      *ints2   `json:"coordinate"`
	StartCoordinate *ints2   `json:"start_coordinate"`
	Text            *string  `json:"text"`
	Repeat          *int     `json:"repeat"`
	Duration        *float64 `json:"duration"`
	ScrollDirection *string  `json:"scroll_direction"`
	ScrollAmount    *int     `json:"scroll_amount"`
	Region          *ints4   `json:"region"`
}

// Bounds of the inputs. Anthropic's types bound none of these: hold_key
// and wait take up to 300 seconds, as Anthropic's documentation says; a
// key is repeated up to 10,000 times and a scroll up to 10,000 notches,
// sent to the runtime in parts it takes, so that no call holds every
// other's input for ever. Each is stated in the member's schema, and a
// value beyond it is refused, never clamped.
const (
	maxRepeat       = 10000
	maxDurationSecs = 300
	maxScrollAmount = 10000
)

func (a *Anthropic) call(ctx context.Context, name string, raw json.RawMessage) (*Result, error) {
	m, in, err := parseAnthropic(a.version, name, raw)
	if err != nil {
		return nil, err
	}
	return m.run(ctx, a, in)
}

// parseAnthropic decodes a call of version v: the member it names, and its
// input, every required field present and no field the member does not
// take.
func parseAnthropic(v AnthropicVersion, name string, raw json.RawMessage) (*anthropicMember, *anthropicInput, error) {
	member := name
	fields, err := objectFields(raw)
	if err != nil {
		return nil, nil, err
	}
	var in anthropicInput
	if len(fields) > 0 {
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, nil, fmt.Errorf("toolset: %s input: %w", name, err)
		}
	}
	if v != ComputerToolset20260801 {
		if name != "computer" {
			return nil, nil, fmt.Errorf("toolset: unknown tool %q; %s has one tool, \"computer\"", name, v)
		}
		if in.Action == "" {
			return nil, nil, errors.New("toolset: computer input has no \"action\"")
		}
		member = in.Action
		delete(fields, "action")
	} else if _, ok := fields["action"]; ok {
		return nil, nil, fmt.Errorf("toolset: %s takes no \"action\": the member's name is the action (under %s); the input looks like %s's or %s's: set AnthropicOptions.Version = Computer20251124 or Computer20250124", name, v, Computer20251124, Computer20250124)
	}
	m, ok := memberByName[member]
	if ok && v == Computer20250124 && member == "zoom" {
		return nil, nil, fmt.Errorf("toolset: %s has no computer action \"zoom\": %s and %s have it: set AnthropicOptions.Version to one of them", v, Computer20251124, ComputerToolset20260801)
	}
	if !ok {
		return nil, nil, fmt.Errorf("toolset: unknown computer action %q", member)
	}
	if err := m.spec(v).check(member, fields); err != nil {
		return nil, nil, err
	}
	return m, &in, nil
}

// do sends one action and waits for its ack, with the keys ctx holds
// (see WithHeldKeys).
func (s *screen) do(ctx context.Context, act *aci.Action) error {
	if held := heldKeys(ctx); held != "" {
		var err error
		if act, err = s.withHeld(held, act); err != nil {
			return err
		}
	}
	_, err := s.c.Do(ctx, act)
	if err == nil {
		switch act.Verb {
		case aci.VerbMouseDown:
			s.buttons.Add(1)
		case aci.VerbMouseUp:
			if s.buttons.Add(-1) < 0 {
				s.buttons.Store(0)
			}
		}
	}
	return err
}

// buttonsDown is how many mouse_down the toolset sent without their
// mouse_up.
func (s *screen) buttonsDown() int64 { return s.buttons.Load() }

// at resolves an optional model coordinate to a target: nil means the
// pointer's current position.
func (s *screen) at(ctx context.Context, c *ints2) (*aci.Target, error) {
	if c != nil {
		t, _, err := s.point(image.Pt(c[0], c[1]))
		return t, err
	}
	p, err := s.cursor(ctx)
	if err != nil {
		return nil, err
	}
	return aci.Px(float64(p.X), float64(p.Y)), nil
}

// click clicks n times (1 to 3) with button, keys held, at t. A triple
// click is a double click followed at once by a click at the same point,
// well within any multi-click time.
func (s *screen) click(ctx context.Context, t *aci.Target, button aci.PointerButton, keys string, n int) error {
	verb := aci.VerbClick
	if n >= 2 {
		verb = aci.VerbDoubleClick
	}
	if button == aci.PointerRight && n == 1 {
		verb, button = aci.VerbRightClick, ""
	}
	if button == aci.PointerLeft {
		button = ""
	}
	if err := s.do(ctx, &aci.Action{Verb: verb, Target: t, Button: button, Keys: keys}); err != nil {
		return err
	}
	if n == 3 {
		return s.do(ctx, &aci.Action{Verb: aci.VerbClick, Target: t, Button: button, Keys: keys})
	}
	return nil
}

// modifiers normalises an Anthropic held-modifier text ("shift",
// "ctrl+shift") to one ACI key combination.
func modifiers(text *string) (string, error) {
	if text == nil || *text == "" {
		return "", nil
	}
	if strings.ContainsAny(strings.TrimSpace(*text), " \t\n") {
		return "", fmt.Errorf("toolset: held keys %q must be one combination such as \"ctrl+shift\"", *text)
	}
	return xdotoolKeys(*text)
}

func seconds(name string, d *float64) (time.Duration, error) {
	if d == nil || math.IsNaN(*d) || *d < 0 || *d > maxDurationSecs {
		return 0, fmt.Errorf("toolset: %s duration must be between 0 and %d seconds", name, maxDurationSecs)
	}
	return time.Duration(math.Round(*d*1000)) * time.Millisecond, nil
}

// anthropicMember is one action: the fields it takes and how it runs.
type anthropicMember struct {
	name     string
	desc     string   // a format with the model screen's width and height
	optional []string // fields it may take
	required []string // fields it must take
	legacy   []string // further optional fields of the 2025 versions
	toolset  []string // further optional fields of the toolset only
	run      func(ctx context.Context, a *Anthropic, in *anthropicInput) (*Result, error)
}

// spec is what the member takes under version v.
func (m *anthropicMember) spec(v AnthropicVersion) fieldSpec {
	if v == ComputerToolset20260801 {
		return fieldSpec{slices.Concat(m.optional, m.toolset), m.required}
	}
	return fieldSpec{slices.Concat(m.optional, m.legacy), m.required}
}

// done answers an action that has no result of its own: "OK", or its
// error.
func done(err error) (*Result, error) {
	if err != nil {
		return nil, err
	}
	return &Result{Text: "OK"}, nil
}

func clickMember(name, what string, button aci.PointerButton, n int) *anthropicMember {
	return &anthropicMember{
		name: name, optional: []string{"coordinate", "text"},
		desc: what + " at coordinate [x, y] in the %d×%d screenshot, or at the cursor when coordinate is omitted; text holds modifier keys during the click (\"shift\", \"ctrl\", \"alt\", \"super\", or a +-joined combination).",
		run: func(ctx context.Context, a *Anthropic, in *anthropicInput) (*Result, error) {
			keys, err := modifiers(in.Text)
			if err != nil {
				return nil, err
			}
			t, err := a.s.at(ctx, in.Coordinate)
			if err != nil {
				return nil, err
			}
			return done(a.s.click(ctx, t, button, keys, n))
		},
	}
}

var anthropicMembers = []*anthropicMember{
	{name: "screenshot", desc: "Capture the display as a %d×%d image.",
		run: func(ctx context.Context, a *Anthropic, _ *anthropicInput) (*Result, error) {
			img, err := a.s.screenshot(ctx)
			if err != nil {
				return nil, err
			}
			return &Result{Image: img}, nil
		}},
	{name: "zoom", required: []string{"region"},
		desc: "Capture region [x0, y0, x1, y1] (top-left and bottom-right corners in the %d×%d screenshot) at the display's full resolution, scaled to fill the screenshot's size.",
		run: func(ctx context.Context, a *Anthropic, in *anthropicInput) (*Result, error) {
			r := in.Region
			if r[2] <= r[0] || r[3] <= r[1] {
				return nil, fmt.Errorf("toolset: zoom region %v must go from its top-left to its bottom-right corner", *r)
			}
			img, err := a.s.zoom(ctx, image.Rect(r[0], r[1], r[2], r[3]))
			if err != nil {
				return nil, err
			}
			return &Result{Image: img}, nil
		}},
	clickMember("left_click", "Click the left mouse button", aci.PointerLeft, 1),
	clickMember("right_click", "Click the right mouse button", aci.PointerRight, 1),
	clickMember("middle_click", "Click the middle mouse button", aci.PointerMiddle, 1),
	clickMember("double_click", "Double-click the left mouse button", aci.PointerLeft, 2),
	clickMember("triple_click", "Triple-click the left mouse button (selects a line)", aci.PointerLeft, 3),
	{name: "left_click_drag", required: []string{"start_coordinate", "coordinate"}, optional: []string{"text"},
		desc: "Press the left button at start_coordinate, drag to coordinate and release (points in the %d×%d screenshot); text holds modifier keys during the drag.",
		run: func(ctx context.Context, a *Anthropic, in *anthropicInput) (*Result, error) {
			keys, err := modifiers(in.Text)
			if err != nil {
				return nil, err
			}
			from, _, err := a.s.point(image.Pt(in.StartCoordinate[0], in.StartCoordinate[1]))
			if err != nil {
				return nil, err
			}
			to, _, err := a.s.point(image.Pt(in.Coordinate[0], in.Coordinate[1]))
			if err != nil {
				return nil, err
			}
			return done(a.s.do(ctx, &aci.Action{Verb: aci.VerbDrag, Target: from, To: to, Keys: keys}))
		}},
	{name: "mouse_move", required: []string{"coordinate"},
		desc: "Move the cursor to coordinate [x, y] in the %d×%d screenshot without clicking.",
		run: func(ctx context.Context, a *Anthropic, in *anthropicInput) (*Result, error) {
			t, err := a.s.at(ctx, in.Coordinate)
			if err != nil {
				return nil, err
			}
			return done(a.s.do(ctx, &aci.Action{Verb: aci.VerbMove, Target: t}))
		}},
	mouseButton("left_mouse_down", aci.VerbMouseDown),
	mouseButton("left_mouse_up", aci.VerbMouseUp),
	{name: "cursor_position", desc: "Report the cursor's position as X=…,Y=… in the %d×%d screenshot.",
		run: func(ctx context.Context, a *Anthropic, _ *anthropicInput) (*Result, error) {
			p, err := a.s.cursor(ctx)
			if err != nil {
				return nil, err
			}
			m := a.Scale().ToModel(p)
			return &Result{Text: fmt.Sprintf("X=%d,Y=%d", m.X, m.Y)}, nil
		}},
	{name: "scroll", required: []string{"scroll_direction", "scroll_amount"}, optional: []string{"coordinate", "text"},
		desc: "Scroll scroll_amount wheel clicks in scroll_direction (up, down, left, right) at coordinate in the %d×%d screenshot, or at the cursor; text holds modifier keys during the scroll.",
		run: func(ctx context.Context, a *Anthropic, in *anthropicInput) (*Result, error) {
			keys, err := modifiers(in.Text)
			if err != nil {
				return nil, err
			}
			n := *in.ScrollAmount
			if n < 0 || n > maxScrollAmount {
				return nil, fmt.Errorf("toolset: scroll_amount must be between 0 and %d, got %d", maxScrollAmount, n)
			}
			act := &aci.Action{Verb: aci.VerbScroll, Keys: keys}
			switch *in.ScrollDirection {
			case "up":
				act.DY = -float64(n)
			case "down":
				act.DY = float64(n)
			case "left":
				act.DX = -float64(n)
			case "right":
				act.DX = float64(n)
			default:
				return nil, fmt.Errorf("toolset: scroll_direction %q is not up, down, left or right", *in.ScrollDirection)
			}
			if act.Target, err = a.s.at(ctx, in.Coordinate); err != nil {
				return nil, err
			}
			if n == 0 {
				return done(a.s.do(ctx, &aci.Action{Verb: aci.VerbMove, Target: act.Target}))
			}
			return done(a.s.scrollNotches(ctx, act))
		}},
	{name: "type", required: []string{"text"}, desc: "Type text at the keyboard focus (the screenshot is %d×%d).",
		run: func(ctx context.Context, a *Anthropic, in *anthropicInput) (*Result, error) {
			return done(a.s.do(ctx, &aci.Action{Verb: aci.VerbTypeText, Text: in.Text}))
		}},
	{name: "key", required: []string{"text"}, toolset: []string{"repeat"},
		desc: "Press a key or a +-joined combination in xdotool's syntax, names in any case (\"Return\", \"ctrl+s\", \"alt+Tab\"), repeat times (1 to 10000). The screenshot is %d×%d.",
		run: func(ctx context.Context, a *Anthropic, in *anthropicInput) (*Result, error) {
			n := 1
			if in.Repeat != nil {
				n = *in.Repeat
			}
			if n < 1 || n > maxRepeat {
				return nil, fmt.Errorf("toolset: repeat must be between 1 and %d, got %d", maxRepeat, n)
			}
			keys, err := xdotoolKeys(*in.Text)
			if err != nil {
				return nil, err
			}
			return done(a.s.keys(ctx, keys, n))
		}},
	{name: "hold_key", required: []string{"text", "duration"},
		desc: "Hold a key or combination down for duration seconds (up to 300). The screenshot is %d×%d.",
		run: func(ctx context.Context, a *Anthropic, in *anthropicInput) (*Result, error) {
			d, err := seconds("hold_key", in.Duration)
			if err != nil {
				return nil, err
			}
			keys, err := xdotoolKeys(*in.Text)
			if err != nil {
				return nil, err
			}
			return done(a.s.hold(ctx, keys, d))
		}},
	{name: "wait", required: []string{"duration"}, desc: "Wait duration seconds (up to 300). The screenshot is %d×%d.",
		run: func(ctx context.Context, a *Anthropic, in *anthropicInput) (*Result, error) {
			d, err := seconds("wait", in.Duration)
			if err != nil {
				return nil, err
			}
			return done(a.s.wait(ctx, d))
		}},
}

func mouseButton(name string, verb aci.Verb) *anthropicMember {
	what := "Press"
	if verb == aci.VerbMouseUp {
		what = "Release"
	}
	return &anthropicMember{name: name, legacy: []string{"coordinate"},
		desc: what + " the left mouse button at the cursor; move it first with mouse_move (the screenshot is %d×%d).",
		run: func(ctx context.Context, a *Anthropic, in *anthropicInput) (*Result, error) {
			act := &aci.Action{Verb: verb}
			if in.Coordinate != nil {
				t, _, err := a.s.point(image.Pt(in.Coordinate[0], in.Coordinate[1]))
				if err != nil {
					return nil, err
				}
				act.Target = t
			}
			return done(a.s.do(ctx, act))
		}}
}

var memberByName = func() map[string]*anthropicMember {
	m := map[string]*anthropicMember{}
	for _, a := range anthropicMembers {
		m[a.name] = a
	}
	return m
}()

// anthropicFields are the JSON Schemas of the fields of Anthropic's computer
// actions.
var anthropicFields = map[string]map[string]any{
	"coordinate":       point("[x, y] in screenshot pixels"),
	"start_coordinate": point("[x, y] in screenshot pixels where the drag starts"),
	"text":             {"type": "string"},
	"repeat":           {"type": "integer", "minimum": 1, "maximum": maxRepeat, "description": "how many times to press; default 1"},
	"duration":         {"type": "number", "minimum": 0, "maximum": maxDurationSecs, "description": "seconds"},
	"scroll_direction": {"type": "string", "enum": []string{"up", "down", "left", "right"}},
	"scroll_amount":    {"type": "integer", "minimum": 0, "maximum": maxScrollAmount, "description": "scroll-wheel clicks"},
	"region": {"type": "array", "items": map[string]any{"type": "integer", "minimum": 0}, "minItems": 4, "maxItems": 4,
		"description": "[x0, y0, x1, y1]: the top-left and bottom-right corners in screenshot pixels"},
}

func point(desc string) map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "integer", "minimum": 0}, "minItems": 2, "maxItems": 2, "description": desc}
}

// schema returns the member's input schema for version v.
func (m *anthropicMember) schema(v AnthropicVersion) json.RawMessage {
	props := map[string]any{}
	spec := m.spec(v)
	for _, f := range slices.Concat(spec.optional, spec.required) {
		props[f] = anthropicFields[f]
	}
	required := slices.Clone(m.required)
	if v != ComputerToolset20260801 {
		props["action"] = map[string]any{"const": m.name}
		required = append([]string{"action"}, required...)
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	b, _ := json.Marshal(s)
	return b
}
