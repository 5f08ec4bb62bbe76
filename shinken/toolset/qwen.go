package toolset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"
	"time"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// QwenOptions configure [NewQwen]. A nil *QwenOptions means every default.
type QwenOptions struct {
	// Width and Height bound the screenshots. Default: the screen scaled,
	// aspect ratio kept, to at most 1280·28·28 pixels, the image budget of
	// Qwen-VL's cookbook. Coordinates are on the 0–1000 grid whatever the
	// size.
	Width, Height int
	// PixelsPerNotch is how many units of a scroll's pixels make one wheel
	// notch. Default 1: Qwen-VL's computer_use passes pixels to pyautogui's
	// scroll, whose unit is one wheel click.
	PixelsPerNotch float64
	// Mode is how the model gives coordinates: QwenGrid (Qwen3-VL's
	// 0–1000 grid, the default) or QwenAbsolute (Qwen2.5-VL's pixels of
	// the smart-resized screenshot).
	Mode QwenMode
}

// A QwenMode is how a Qwen-VL model gives coordinates.
type QwenMode int

// Qwen-VL's coordinate modes.
const (
	// QwenGrid: Qwen3-VL's 0–1000 grid over the screen, whatever the
	// screenshot's size.
	QwenGrid QwenMode = iota
	// QwenAbsolute: Qwen2.5-VL's pixels of the screenshot it is shown,
	// smart-resized as its cookbook does (each side a multiple of 28,
	// within the pixel budget), whose size the tool description states as
	// the screen's resolution. Width and Height are ignored: the size is
	// the smart resize of the screen's.
	QwenAbsolute
)

// smartResize is Qwen2.5-VL's smart_resize of a w×h image: each side
// rounded to a multiple of 28, the area brought within [4·28·28, budget]
// with the aspect ratio kept as near as the rounding allows.
func smartResize(sz image.Point) image.Point {
	const f, minPixels = 28, 4 * 28 * 28
	round := func(v float64) int { return max(f, int(math.Round(v/f))*f) }
	w, h := round(float64(sz.X)), round(float64(sz.Y))
	area := float64(sz.X) * float64(sz.Y)
	switch {
	case w*h > qwenBudget:
		beta := math.Sqrt(area / qwenBudget)
		w = max(f, int(math.Floor(float64(sz.X)/beta/f))*f)
		h = max(f, int(math.Floor(float64(sz.Y)/beta/f))*f)
	case w*h < minPixels:
		beta := math.Sqrt(minPixels / area)
		w = int(math.Ceil(float64(sz.X)*beta/f)) * f
		h = int(math.Ceil(float64(sz.Y)*beta/f)) * f
	}
	return image.Pt(w, h)
}

// Qwen runs calls of Qwen-VL's computer_use function against an ACI
// session, coordinates on its 0–1000 grid.
type Qwen struct {
	s    *screen
	opts QwenOptions
}

// qwenBudget is the pixel budget of Qwen-VL's cookbook, max_pixels 1280·28·28.
const qwenBudget = 1280 * 28 * 28

// NewQwen returns Qwen-VL's computer_use over c. It asks the runtime for the
// screen size.
func NewQwen(ctx context.Context, c *client.Client, o *QwenOptions) (*Qwen, error) {
	opts := QwenOptions{}
	if o != nil {
		opts = *o
	}
	if opts.PixelsPerNotch <= 0 {
		opts.PixelsPerNotch = 1
	}
	if opts.Mode == QwenAbsolute {
		s, err := newExactScreen(ctx, c, smartResize)
		if err != nil {
			return nil, err
		}
		return &Qwen{s: s, opts: opts}, nil
	}
	bound := image.Pt(opts.Width, opts.Height)
	if bound == (image.Point{}) {
		sz, err := c.ScreenSize(ctx)
		if err != nil {
			return nil, fmt.Errorf("toolset: asking the screen size: %w", err)
		}
		r := math.Min(1, math.Sqrt(qwenBudget/float64(sz.W*sz.H)))
		bound = image.Pt(max(1, int(float64(sz.W)*r)), max(1, int(float64(sz.H)*r)))
	}
	s, err := newScreen(ctx, c, bound, false)
	if err != nil {
		return nil, err
	}
	return &Qwen{s: s, opts: opts}, nil
}

// Scale reports the current mapping between the screenshots and the
// screen.
func (q *Qwen) Scale() Scale { sc, _ := q.s.current(); return sc }

func (q *Qwen) grid() Grid { return Grid{Screen: q.Scale().Screen, Size: 1000} }

var qwenActions = []string{"key", "type", "mouse_move", "left_click", "left_click_drag", "right_click", "middle_click",
	"double_click", "triple_click", "scroll", "hscroll", "wait", "terminate", "answer"}

// qwen25Actions are the actions of Qwen2.5-VL's computer_use.
var qwen25Actions = []string{"key", "type", "mouse_move", "left_click", "left_click_drag", "right_click", "middle_click",
	"double_click", "scroll", "wait", "terminate"}

// qwenDescription is computer_use's description as Qwen-VL's cookbooks
// train it, the screen's resolution being the screenshot's.
const qwenDescription = `Use a mouse and keyboard to interact with a computer, and take screenshots.
* This is an interface to a desktop GUI. You do not have access to a terminal or applications menu. You must click on desktop icons to start applications.
* Some applications may take time to start or process actions, so you may need to wait and take successive screenshots to see the results of your actions. E.g. if you click on Firefox and a window doesn't open, try wait and taking another screenshot.
* The screen's resolution is %dx%d.
* Whenever you intend to move the cursor to click on an element like an icon, you should consult a screenshot to determine the coordinates of the element before moving the cursor.
* If you tried clicking on a program or link but it failed to load, even after waiting, try adjusting your cursor position so that the tip of the cursor visually falls on the element that you want to click.
* Make sure to click any buttons, links, icons, etc with the cursor tip in the center of the element. Don't click boxes on their edges unless asked.`

// Definition returns computer_use as an OpenAI-style function tool, the
// form Qwen-VL's chat template and OpenAI-compatible servers take, its
// description the cookbooks' with the screen's resolution: the
// screenshot's size (in QwenAbsolute mode the space of the coordinates;
// on the grid, what the model sees).
func (q *Qwen) Definition() json.RawMessage {
	sc := q.Scale()
	actions, coordDesc := qwenActions, "(x, y) on the 0–1000 grid over the screen: where to move, click, drag to or scroll."
	if q.opts.Mode == QwenAbsolute {
		actions = qwen25Actions
		coordDesc = "(x, y): The x (pixels from the left edge) and y (pixels from the top edge) coordinates to move the mouse to. Required only by `action=mouse_move` and `action=left_click_drag`."
	}
	maxCoord := 1000
	if q.opts.Mode == QwenAbsolute {
		maxCoord = max(sc.Model.X, sc.Model.Y)
	}
	params := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"action": map[string]any{"type": "string", "enum": actions, "description": "The action to perform."},
			"keys":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "action=key: the keys, pressed in order and released in reverse."},
			"text":   map[string]any{"type": "string", "description": "action=type: the text to type; action=answer: the answer."},
			"coordinate": map[string]any{"type": "array", "items": map[string]any{"type": "number", "minimum": 0, "maximum": maxCoord}, "minItems": 2, "maxItems": 2,
				"description": coordDesc},
			"pixels": map[string]any{"type": "number", "description": "action=scroll: positive scrolls up, negative down; action=hscroll: positive scrolls right, negative left."},
			"time":   map[string]any{"type": "number", "minimum": 0, "maximum": maxDurationSecs, "description": "action=wait: seconds."},
			"status": map[string]any{"type": "string", "enum": []string{"success", "failure"}, "description": "action=terminate: how the task ended."},
		},
		"required":             []string{"action"},
		"additionalProperties": false,
	}
	desc := fmt.Sprintf(qwenDescription, sc.Model.X, sc.Model.Y)
	if q.opts.Mode != QwenAbsolute {
		desc += "\n* Coordinates are on a 0-1000 grid over the screen, whatever its resolution."
	}
	fn := map[string]any{"name": "computer_use", "description": desc, "parameters": params}
	b, _ := json.Marshal(map[string]any{"type": "function", "function": fn})
	return b
}

// A QwenResult answers one computer_use call: a short text, the screenshot
// after the action, and for terminate and answer what the model said.
type QwenResult struct {
	Text    string
	Image   *Image
	IsError bool
	Done    bool   // the model called terminate
	Status  string // terminate's status
}

// qwenArgs is every argument computer_use takes.
type qwenArgs struct {
	Action     string   `json:"action"`
	Keys       []string `json:"keys"`
	Text       *string  `json:"text"`
	Coordinate *floats2 `json:"coordinate"`
	Pixels     *float64 `json:"pixels"`
	Time       *float64 `json:"time"`
	Status     *string  `json:"status"`
}

var qwenFields = map[string]fieldSpec{
	"key":             {nil, []string{"keys"}},
	"type":            {nil, []string{"text"}},
	"mouse_move":      {nil, []string{"coordinate"}},
	"left_click":      {[]string{"coordinate"}, nil},
	"left_click_drag": {nil, []string{"coordinate"}},
	"right_click":     {[]string{"coordinate"}, nil},
	"middle_click":    {[]string{"coordinate"}, nil},
	"double_click":    {[]string{"coordinate"}, nil},
	"triple_click":    {[]string{"coordinate"}, nil},
	"scroll":          {[]string{"coordinate"}, []string{"pixels"}},
	"hscroll":         {[]string{"coordinate"}, []string{"pixels"}},
	"wait":            {nil, []string{"time"}},
	"terminate":       {nil, []string{"status"}},
	"answer":          {nil, []string{"text"}},
}

// parseQwen decodes a call's arguments: a JSON object, or a JSON string
// holding one, as OpenAI-compatible servers send them.
func parseQwen(args json.RawMessage) (*qwenArgs, error) {
	var str string
	if err := json.Unmarshal(args, &str); err == nil {
		args = json.RawMessage(str)
	}
	fields, err := objectFields(args)
	if err != nil {
		return nil, err
	}
	var a qwenArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("toolset: computer_use arguments: %w", err)
	}
	spec, ok := qwenFields[a.Action]
	if !ok {
		return nil, fmt.Errorf("toolset: unknown computer_use action %q", a.Action)
	}
	if err := spec.check(a.Action, fields, "action"); err != nil {
		return nil, err
	}
	if c := a.Coordinate; c != nil && (math.IsNaN(c[0]) || math.IsNaN(c[1])) {
		return nil, errors.New("toolset: coordinate is not a number")
	}
	if a.Time != nil && !(*a.Time >= 0 && *a.Time <= maxDurationSecs) {
		return nil, fmt.Errorf("toolset: wait time must be between 0 and %d seconds", maxDurationSecs)
	}
	if a.Status != nil && *a.Status != "success" && *a.Status != "failure" {
		return nil, fmt.Errorf("toolset: terminate status %q is not success or failure", *a.Status)
	}
	if a.Action == "key" && len(a.Keys) == 0 {
		return nil, errors.New("toolset: key needs at least one key")
	}
	return &a, nil
}

// Call runs one computer_use call (name must be "computer_use") and answers
// with the screenshot after it. On failure the result reports the error
// (IsError, "Error: …", with the screenshot when it can be taken) and the
// error is returned too.
func (q *Qwen) Call(ctx context.Context, name string, args json.RawMessage) (*QwenResult, error) {
	r, err := q.call(ctx, name, args)
	if err != nil {
		r = &QwenResult{Text: "Error: " + err.Error(), IsError: true}
	}
	if !r.Done && r.Status == "" {
		img, serr := q.s.screenshot(ctx)
		if serr != nil {
			return r, errors.Join(err, serr)
		}
		r.Image = img
	}
	return r, err
}

func (q *Qwen) call(ctx context.Context, name string, raw json.RawMessage) (*QwenResult, error) {
	if name != "computer_use" {
		return nil, fmt.Errorf("toolset: unknown function %q; Qwen's computer tool is computer_use", name)
	}
	a, err := parseQwen(raw)
	if err != nil {
		return nil, err
	}
	okr := &QwenResult{Text: "OK"}
	at := func() (*aci.Target, error) {
		if a.Coordinate == nil {
			p, err := q.s.cursor(ctx)
			return px(p), err
		}
		x, y := int(math.Round(a.Coordinate[0])), int(math.Round(a.Coordinate[1]))
		if q.opts.Mode == QwenAbsolute {
			_, p, err := q.s.point(image.Pt(x, y))
			return px(p), err
		}
		p, err := q.grid().ToScreen(x, y)
		return px(p), err
	}
	s := q.s
	switch a.Action {
	case "terminate":
		return &QwenResult{Text: "terminated: " + *a.Status, Done: true, Status: *a.Status}, nil
	case "answer":
		return &QwenResult{Text: *a.Text}, nil
	case "key":
		keys, err := openAIKeys(a.Keys)
		if err != nil {
			return nil, err
		}
		return okr, s.do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: keys})
	case "type":
		return okr, s.do(ctx, &aci.Action{Verb: aci.VerbTypeText, Text: a.Text})
	case "wait":
		return okr, s.wait(ctx, time.Duration(*a.Time*float64(time.Second)))
	}
	t, err := at()
	if err != nil {
		return nil, err
	}
	switch a.Action {
	case "mouse_move":
		return okr, s.do(ctx, &aci.Action{Verb: aci.VerbMove, Target: t})
	case "left_click":
		return okr, s.click(ctx, t, aci.PointerLeft, "", 1)
	case "right_click":
		return okr, s.click(ctx, t, aci.PointerRight, "", 1)
	case "middle_click":
		return okr, s.click(ctx, t, aci.PointerMiddle, "", 1)
	case "double_click":
		return okr, s.click(ctx, t, aci.PointerLeft, "", 2)
	case "triple_click":
		return okr, s.click(ctx, t, aci.PointerLeft, "", 3)
	case "left_click_drag":
		// From where the pointer is to the coordinate.
		from, err := s.cursor(ctx)
		if err != nil {
			return nil, err
		}
		to := image.Pt(int(*t.X), int(*t.Y))
		return okr, s.drag(ctx, []image.Point{from, to}, aci.PointerLeft, "")
	case "scroll", "hscroll":
		n := *a.Pixels / q.opts.PixelsPerNotch
		p := image.Pt(int(*t.X), int(*t.Y))
		if a.Action == "scroll" {
			return okr, s.scroll(ctx, p, 0, -n, "") // positive pixels scroll up
		}
		return okr, s.scroll(ctx, p, n, 0, "")
	}
	return nil, fmt.Errorf("toolset: unknown computer_use action %q", a.Action)
}
