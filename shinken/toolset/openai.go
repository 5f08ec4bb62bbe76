package toolset

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"strings"
	"time"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// OpenAIOptions configure [NewOpenAI]. A nil *OpenAIOptions means every
// default.
type OpenAIOptions struct {
	// Width and Height bound the screenshots, and so the model's coordinate
	// space. Default none: the screen at its native resolution (within the
	// runtime's long-edge cap), as OpenAI's computer tool reads screenshots
	// at full detail and answers in their pixels.
	Width, Height int
	// PixelsPerNotch is how many screen pixels of a scroll's scroll_x and
	// scroll_y make one wheel notch; default 100.
	PixelsPerNotch int
	// Wait is how long the wait action, which has no duration, waits;
	// default 2 s.
	Wait time.Duration
	// AcknowledgeSafetyCheck decides the safety checks a call arrives with
	// (pending_safety_checks): true acknowledges one and lets the call run.
	// Nil refuses every call that carries a check, since a check is for a
	// person to see.
	AcknowledgeSafetyCheck func(SafetyCheck) bool
}

// OpenAI runs calls of OpenAI's computer tool (the Responses API's
// {"type": "computer"}) against an ACI session: each computer_call's
// actions[] batch in order, then the screenshot the model reads next.
type OpenAI struct {
	s    *screen
	opts OpenAIOptions
}

// NewOpenAI returns OpenAI's computer tool over c. It asks the runtime for
// the screen size.
func NewOpenAI(ctx context.Context, c *client.Client, o *OpenAIOptions) (*OpenAI, error) {
	opts := OpenAIOptions{}
	if o != nil {
		opts = *o
	}
	if opts.PixelsPerNotch <= 0 {
		opts.PixelsPerNotch = 100
	}
	if opts.Wait <= 0 {
		opts.Wait = 2 * time.Second
	}
	s, err := newScreen(ctx, c, image.Pt(opts.Width, opts.Height), false)
	if err != nil {
		return nil, err
	}
	return &OpenAI{s: s, opts: opts}, nil
}

// Definition returns the entry for the tools array of a Responses API
// request: {"type": "computer"}.
func (o *OpenAI) Definition() json.RawMessage { return json.RawMessage(`{"type":"computer"}`) }

// Scale reports the current mapping between the screenshots and the
// screen.
func (o *OpenAI) Scale() Scale { sc, _ := o.s.current(); return sc }

// A ComputerCall is a computer_call output item of a Responses API
// response.
type ComputerCall struct {
	Type    string            `json:"type"` // "computer_call"
	ID      string            `json:"id,omitempty"`
	CallID  string            `json:"call_id"`
	Actions []json.RawMessage `json:"actions,omitempty"`
	// Action is the single action of a computer_use_preview call (and of
	// OpenAI's sample app); a call carries it or Actions, not both.
	Action              json.RawMessage `json:"action,omitempty"`
	PendingSafetyChecks []SafetyCheck   `json:"pending_safety_checks,omitempty"`
	Status              string          `json:"status,omitempty"`
}

// A SafetyCheck is a pending or acknowledged safety check of a computer
// call.
type SafetyCheck struct {
	ID      string `json:"id"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// A ComputerCallOutput is the computer_call_output input item that answers
// a ComputerCall: the screenshot after its actions.
type ComputerCallOutput struct {
	Type                     string             `json:"type"` // "computer_call_output"
	CallID                   string             `json:"call_id"`
	Output                   ComputerScreenshot `json:"output"`
	AcknowledgedSafetyChecks []SafetyCheck      `json:"acknowledged_safety_checks,omitempty"`
}

// A ComputerScreenshot is a computer_call_output's image.
type ComputerScreenshot struct {
	Type     string `json:"type"`      // "computer_screenshot"
	ImageURL string `json:"image_url"` // a data: URL
}

// A BatchError reports the action of a batch that failed; the actions after
// it were not run. An action that cannot be read fails the batch before
// any runs: then Ran is 0 whatever its Index.
type BatchError struct {
	Index  int    // the failed action's index in the batch
	Action string // its type
	Ran    int    // how many actions of the batch ran (those before Index, or none)
	NotRun int    // how many actions after it were not run
	Err    error
}

// Error says which action failed, which ran, and why.
func (e *BatchError) Error() string {
	if e.Ran < e.Index {
		return fmt.Sprintf("toolset: action %d (%s) is invalid, so none of the batch's %d actions ran: %v", e.Index, e.Action, e.Index+1+e.NotRun, e.Err)
	}
	return fmt.Sprintf("toolset: action %d (%s) failed after %d ran; %d after it not executed: %v", e.Index, e.Action, e.Ran, e.NotRun, e.Err)
}

// Unwrap returns the action's error.
func (e *BatchError) Unwrap() error { return e.Err }

// ErrSafetyCheck reports a call whose pending safety checks were not
// acknowledged: none of its actions ran.
var ErrSafetyCheck = errors.New("toolset: a pending safety check was not acknowledged")

// Run runs call's actions in order and answers with the screenshot after
// them. When an action fails, none after it runs, the error is a
// *BatchError, and the output still carries the screenshot of what the
// screen shows now (nil only when that screenshot cannot be taken): send it,
// and tell the model what failed. A batch with an action that does not
// parse runs none of its actions.
func (o *OpenAI) Run(ctx context.Context, call *ComputerCall) (*ComputerCallOutput, error) {
	out := &ComputerCallOutput{Type: "computer_call_output", CallID: call.CallID}
	for _, sc := range call.PendingSafetyChecks {
		if o.opts.AcknowledgeSafetyCheck == nil || !o.opts.AcknowledgeSafetyCheck(sc) {
			return nil, fmt.Errorf("%w: %s (%s)", ErrSafetyCheck, sc.Code, sc.Message)
		}
		out.AcknowledgedSafetyChecks = append(out.AcknowledgedSafetyChecks, sc)
	}
	raws := call.Actions
	switch {
	case call.Action != nil && raws != nil:
		return nil, errors.New("toolset: a computer_call carries \"action\" or \"actions\", not both")
	case call.Action != nil:
		raws = []json.RawMessage{call.Action}
	case raws == nil:
		return nil, errors.New("toolset: the computer_call carries no \"actions\" (nor a single \"action\")")
	}
	acts := make([]*openAIAction, len(raws))
	for i, raw := range raws {
		a, err := parseOpenAIAction(raw)
		if err != nil {
			return nil, &BatchError{Index: i, Action: a.Type, NotRun: len(raws) - i - 1, Err: err}
		}
		acts[i] = a
	}
	var failed error
	for i, a := range acts {
		if err := o.run(ctx, a); err != nil {
			failed = &BatchError{Index: i, Action: a.Type, Ran: i, NotRun: len(acts) - i - 1, Err: err}
			break
		}
	}
	img, err := o.s.screenshot(ctx)
	if err != nil {
		return nil, errors.Join(failed, err)
	}
	out.Output = ComputerScreenshot{Type: "computer_screenshot", ImageURL: dataURL(img)}
	return out, failed
}

func dataURL(img *Image) string {
	return "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
}

// openAIAction is every field an action of OpenAI's computer tool takes.
type openAIAction struct {
	Type    string     `json:"type"`
	X       *coord     `json:"x"`
	Y       *coord     `json:"y"`
	Button  string     `json:"button"`
	Keys    []string   `json:"keys"`
	Path    []xyObject `json:"path"`
	ScrollX *coord     `json:"scroll_x"`
	ScrollY *coord     `json:"scroll_y"`
	Text    *string    `json:"text"`

	keys string // Keys as one ACI combination
}

type xyObject struct {
	X coord `json:"x"`
	Y coord `json:"y"`
}

// openAIFields lists, per action type, the fields it takes (besides type)
// and those it requires.
var openAIFields = map[string]fieldSpec{
	"click":        {[]string{"button", "keys"}, []string{"x", "y"}},
	"double_click": {[]string{"button", "keys"}, []string{"x", "y"}},
	"drag":         {[]string{"keys"}, []string{"path"}},
	"keypress":     {nil, []string{"keys"}},
	"move":         {[]string{"keys"}, []string{"x", "y"}},
	"screenshot":   {},
	"scroll":       {[]string{"keys"}, []string{"x", "y", "scroll_x", "scroll_y"}},
	"type":         {nil, []string{"text"}},
	"wait":         {},
}

// parseOpenAIAction decodes and checks one action, before any runs. The
// returned action is never nil.
func parseOpenAIAction(raw json.RawMessage) (*openAIAction, error) {
	a := &openAIAction{}
	fields, err := objectFields(raw)
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(raw, a); err != nil {
		return a, fmt.Errorf("toolset: computer action: %w", err)
	}
	spec, ok := openAIFields[a.Type]
	if !ok {
		return a, fmt.Errorf("toolset: unknown computer action type %q", a.Type)
	}
	if err := spec.check(a.Type, fields, "type"); err != nil {
		return a, err
	}
	if a.Keys != nil && (a.Type != "keypress" || len(a.Keys) > 0) {
		if a.keys, err = openAIKeys(a.Keys); err != nil {
			return a, err
		}
	}
	if a.Type == "keypress" && a.keys == "" {
		return a, errors.New("toolset: keypress needs at least one key")
	}
	switch a.Button {
	case "", "left", "right", "wheel", "back", "forward":
	default:
		return a, fmt.Errorf("toolset: button %q is not left, right, wheel, back or forward", a.Button)
	}
	if a.Type == "double_click" && a.Button != "" && a.Button != "left" && a.Button != "right" && a.Button != "wheel" {
		return a, fmt.Errorf("toolset: a double click of the %s button cannot be done", a.Button)
	}
	if a.Type == "drag" && len(a.Path) < 2 {
		return a, errors.New("toolset: a drag's path needs at least two points")
	}
	return a, nil
}

// openAIKeys turns the model's key names ("CTRL", "SHIFT", "ARROWLEFT",
// "A") into one ACI combination ("ctrl+shift+Left+a").
func openAIKeys(keys []string) (string, error) {
	names := make([]string, 0, len(keys))
	for _, k := range keys {
		if k == " " {
			k = "space"
		}
		if strings.ContainsAny(k, " \t\n") || (k != "+" && strings.Contains(k, "+")) {
			return "", fmt.Errorf("toolset: key name %q", k)
		}
		// Key names, not characters: "A" is the A key, as a person
		// pressing ctrl+a means it.
		name, err := keyName(k, true)
		if err != nil {
			return "", err
		}
		names = append(names, name)
	}
	return strings.Join(names, "+"), nil
}

func (o *OpenAI) at(x, y *coord) (image.Point, error) {
	_, p, err := o.s.point(image.Pt(int(*x), int(*y)))
	return p, err
}

func (o *OpenAI) run(ctx context.Context, a *openAIAction) error {
	switch a.Type {
	case "click", "double_click":
		p, err := o.at(a.X, a.Y)
		if err != nil {
			return err
		}
		n := 1
		if a.Type == "double_click" {
			n = 2
		}
		switch a.Button {
		case "back", "forward":
			// No ACI button: the platform's back and forward keys, where the
			// pointer is, as a mouse's side buttons act.
			if err := o.s.do(ctx, &aci.Action{Verb: aci.VerbMove, Target: px(p)}); err != nil {
				return err
			}
			keys := o.s.backForward(a.Button == "forward")
			if a.keys != "" {
				keys = a.keys + "+" + keys
			}
			return o.s.do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: keys})
		case "wheel":
			return o.s.click(ctx, px(p), aci.PointerMiddle, a.keys, n)
		case "right":
			return o.s.click(ctx, px(p), aci.PointerRight, a.keys, n)
		}
		return o.s.click(ctx, px(p), aci.PointerLeft, a.keys, n)
	case "drag":
		sc := o.Scale()
		path := make([]image.Point, len(a.Path))
		for i, q := range a.Path {
			p, err := sc.ToScreen(image.Pt(int(q.X), int(q.Y)))
			if err != nil {
				return err
			}
			path[i] = p
		}
		return o.s.drag(ctx, path, aci.PointerLeft, a.keys)
	case "keypress":
		return o.s.do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: a.keys})
	case "move":
		p, err := o.at(a.X, a.Y)
		if err != nil {
			return err
		}
		return o.s.do(ctx, &aci.Action{Verb: aci.VerbMove, Target: px(p), Keys: a.keys})
	case "scroll":
		p, err := o.at(a.X, a.Y)
		if err != nil {
			return err
		}
		// The model's pixels are the screenshot's: scale them to the
		// screen's, then to notches.
		sc := o.Scale()
		dx := float64(*a.ScrollX) * float64(sc.Screen.X) / float64(sc.Image.X) / float64(o.opts.PixelsPerNotch)
		dy := float64(*a.ScrollY) * float64(sc.Screen.Y) / float64(sc.Image.Y) / float64(o.opts.PixelsPerNotch)
		return o.s.scroll(ctx, p, dx, dy, a.keys)
	case "type":
		return o.s.do(ctx, &aci.Action{Verb: aci.VerbTypeText, Text: a.Text})
	case "wait":
		return o.s.wait(ctx, o.opts.Wait)
	case "screenshot":
		// The batch is answered with the screenshot taken after it.
		return nil
	}
	return fmt.Errorf("toolset: unknown computer action type %q", a.Type)
}
