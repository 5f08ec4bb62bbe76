package toolset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// GeminiOptions configure [NewGemini]. A nil *GeminiOptions means every
// default.
type GeminiOptions struct {
	// Width and Height bound the screenshots; default 1440×900, Gemini's
	// recommended screen size. Coordinates are on Gemini's 0–999 grid
	// whatever the size.
	Width, Height int
	// PixelsPerNotch is how many screen pixels make one wheel notch when a
	// scroll's magnitude (a fraction of the screen, on the grid) becomes
	// notches; default 100.
	PixelsPerNotch int
	// Browser is the app launch_app starts for open_web_browser ("chromium",
	// "firefox-esr"). Empty refuses open_web_browser.
	Browser string
	// SearchURL is the page search opens; default https://www.google.com/.
	SearchURL string
	// IsBrowser tells whether a window is a web browser's; the browser-only
	// actions (navigate, go_back, go_forward, search) run only when the
	// active window is one, and answer once the next page has loaded (10 s
	// at most). Default: its app or title names Chromium, Chrome, Firefox,
	// Mozilla, Edge, Safari or Epiphany.
	IsBrowser func(aci.WindowInfo) bool
	// URL reports the current page's address for each function response's
	// "url", which Gemini's browser environment expects; an error sends
	// no url. Nil takes it from the accessibility tree (the value of the
	// document the active window shows) when the active window is a
	// browser's, and sends none otherwise, as for a desktop.
	URL func(context.Context) (string, error)
	// ConfirmSafety decides the calls that carry a safety_decision
	// requiring confirmation: true runs the call and acknowledges it. Nil
	// refuses every such call.
	ConfirmSafety func(call FunctionCall, explanation string) bool
	// Environment is the tool's environment in the definition:
	// "ENVIRONMENT_DESKTOP" or "ENVIRONMENT_BROWSER". Default the desktop,
	// or the browser when Browser is set. The older models
	// (gemini-2.5-computer-use-preview) know the browser only.
	Environment string
}

// Gemini runs the predefined functions of Gemini's computer use tool
// against an ACI session: the older set (click_at, type_text_at,
// key_combination, scroll_document...) and the newer one the current
// models call (click, type, press_key, hotkey, key_down, key_up, scroll,
// take_screenshot...). key_down holds a modifier for the gestures and keys
// of the calls after it, until key_up (ACI holds keys only for one
// action's duration); other keys cannot be held so and are refused.
type Gemini struct {
	s    *screen
	grid func() Grid
	opts GeminiOptions

	mu   sync.Mutex
	down []string // the keys key_down holds, in order
}

// NewGemini returns Gemini's computer use functions over c. It asks the
// runtime for the screen size.
func NewGemini(ctx context.Context, c *client.Client, o *GeminiOptions) (*Gemini, error) {
	opts := GeminiOptions{}
	if o != nil {
		opts = *o
	}
	if opts.Width == 0 && opts.Height == 0 {
		opts.Width, opts.Height = 1440, 900
	}
	if opts.PixelsPerNotch <= 0 {
		opts.PixelsPerNotch = 100
	}
	if opts.SearchURL == "" {
		opts.SearchURL = "https://www.google.com/"
	}
	if opts.IsBrowser == nil {
		opts.IsBrowser = isBrowser
	}
	switch opts.Environment {
	case "":
		opts.Environment = "ENVIRONMENT_DESKTOP"
		if opts.Browser != "" {
			opts.Environment = "ENVIRONMENT_BROWSER"
		}
	case "ENVIRONMENT_DESKTOP", "ENVIRONMENT_BROWSER":
	default:
		return nil, fmt.Errorf("toolset: Gemini environment %q is not ENVIRONMENT_DESKTOP or ENVIRONMENT_BROWSER", opts.Environment)
	}
	s, err := newScreen(ctx, c, image.Pt(opts.Width, opts.Height), false)
	if err != nil {
		return nil, err
	}
	g := &Gemini{s: s, opts: opts}
	g.grid = func() Grid { sc, _ := s.current(); return Grid{Screen: sc.Screen, Size: 1000, Max: 999} }
	return g, nil
}

func isBrowser(w aci.WindowInfo) bool {
	s := strings.ToLower(w.App + " " + w.Title)
	for _, b := range []string{"chromium", "chrome", "firefox", "mozilla", "edge", "safari", "epiphany"} {
		if strings.Contains(s, b) {
			return true
		}
	}
	return false
}

// GeminiBrowserFunctions are the predefined functions that act on a web
// browser rather than the desktop.
var GeminiBrowserFunctions = []string{"open_web_browser", "navigate", "go_back", "go_forward", "search"}

// Definition returns the tool for a generateContent request's tools:
// {"computerUse": {"environment": "ENVIRONMENT_DESKTOP"}} (see
// GeminiOptions.Environment); in the browser environment it excludes the
// browser-only functions unless a browser is configured to open.
func (g *Gemini) Definition() json.RawMessage {
	cu := map[string]any{"environment": g.opts.Environment}
	if g.opts.Browser == "" && g.opts.Environment == "ENVIRONMENT_BROWSER" {
		cu["excludedPredefinedFunctions"] = GeminiBrowserFunctions
	}
	b, _ := json.Marshal(map[string]any{"computerUse": cu})
	return b
}

// Scale reports the current mapping between the screenshots and the
// screen.
func (g *Gemini) Scale() Scale { sc, _ := g.s.current(); return sc }

// A FunctionCall is a functionCall part of a Gemini response.
type FunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// A FunctionResponse is the functionResponse part that answers a
// FunctionCall: the outcome, and the screenshot after it.
type FunctionResponse struct {
	ID       string                 `json:"id,omitempty"`
	Name     string                 `json:"name"`
	Response map[string]any         `json:"response"`
	Parts    []FunctionResponsePart `json:"parts,omitempty"`
}

// A FunctionResponsePart carries a function response's inline image.
type FunctionResponsePart struct {
	InlineData *Blob `json:"inlineData,omitempty"`
}

// A Blob is inline data; Data is base64 in JSON.
type Blob struct {
	MimeType string `json:"mimeType"`
	Data     []byte `json:"data"`
}

// Turn runs the function calls of one response in order and answers each.
// A call that fails is answered {"error": "…"}; none after it runs, and
// each is answered {"error": NotExecuted}. Every call that ran is answered
// with the screenshot after it. The error is the first failure.
func (g *Gemini) Turn(ctx context.Context, calls []FunctionCall) ([]FunctionResponse, error) {
	out := make([]FunctionResponse, 0, len(calls))
	var failed error
	for _, fc := range calls {
		fr := FunctionResponse{ID: fc.ID, Name: fc.Name, Response: map[string]any{}}
		if failed != nil {
			fr.Response["error"] = NotExecuted
			out = append(out, fr)
			continue
		}
		ack, err := g.call(ctx, fc)
		if err != nil {
			failed = err
			fr.Response["error"] = err.Error()
		}
		if ack {
			fr.Response["safety_acknowledgement"] = "true"
		}
		if u, ok := g.url(ctx); ok {
			fr.Response["url"] = u
		}
		img, serr := g.s.screenshot(ctx)
		if serr != nil {
			return append(out, fr), errors.Join(failed, serr)
		}
		fr.Parts = []FunctionResponsePart{{InlineData: &Blob{MimeType: img.MediaType, Data: img.Data}}}
		out = append(out, fr)
	}
	return out, failed
}

// geminiArgs is every argument of Gemini's predefined functions, of both
// function sets.
type geminiArgs struct {
	X                 *coord          `json:"x"`
	Y                 *coord          `json:"y"`
	DestinationX      *coord          `json:"destination_x"`
	DestinationY      *coord          `json:"destination_y"`
	StartX            *coord          `json:"start_x"`
	StartY            *coord          `json:"start_y"`
	EndX              *coord          `json:"end_x"`
	EndY              *coord          `json:"end_y"`
	Text              *string         `json:"text"`
	PressEnter        *bool           `json:"press_enter"`
	ClearBeforeTyping *bool           `json:"clear_before_typing"`
	Direction         *string         `json:"direction"`
	Magnitude         *coord          `json:"magnitude"`
	MagnitudePixels   *coord          `json:"magnitude_in_pixels"`
	Keys              json.RawMessage `json:"keys"` // "Control+A" (key_combination) or ["ctrl", "a"] (hotkey)
	Key               *string         `json:"key"`
	Seconds           *float64        `json:"seconds"`
	Intent            *string         `json:"intent"`
	URL               *string         `json:"url"`
	SafetyDecision    *struct {
		Decision    string `json:"decision"`
		Explanation string `json:"explanation"`
	} `json:"safety_decision"`
}

// geminiFields lists each function's arguments: the older set
// (gemini-2.5-computer-use-preview: click_at, type_text_at...) and the
// newer one (click, type, press_key, hotkey...), which the current models
// call. Both take an optional intent, the model's note of what it means to
// do. drag_and_drop is in both, with its own arguments in each.
var geminiFields = map[string]fieldSpec{
	"click":            {nil, []string{"x", "y"}},
	"double_click":     {nil, []string{"x", "y"}},
	"triple_click":     {nil, []string{"x", "y"}},
	"middle_click":     {nil, []string{"x", "y"}},
	"right_click":      {nil, []string{"x", "y"}},
	"mouse_down":       {nil, []string{"x", "y"}},
	"mouse_up":         {nil, []string{"x", "y"}},
	"move":             {nil, []string{"x", "y"}},
	"type":             {[]string{"press_enter", "x", "y"}, []string{"text"}},
	"wait":             {[]string{"seconds"}, nil},
	"press_key":        {nil, []string{"key"}},
	"key_down":         {nil, []string{"key"}},
	"key_up":           {nil, []string{"key"}},
	"hotkey":           {nil, []string{"keys"}},
	"take_screenshot":  {},
	"scroll":           {[]string{"magnitude_in_pixels"}, []string{"x", "y", "direction"}},
	"open_web_browser": {},
	"wait_5_seconds":   {},
	"go_back":          {},
	"go_forward":       {},
	"search":           {},
	"navigate":         {nil, []string{"url"}},
	"click_at":         {nil, []string{"x", "y"}},
	"hover_at":         {nil, []string{"x", "y"}},
	"type_text_at":     {[]string{"press_enter", "clear_before_typing"}, []string{"x", "y", "text"}},
	"key_combination":  {nil, []string{"keys"}},
	"scroll_document":  {nil, []string{"direction"}},
	"scroll_at":        {[]string{"magnitude"}, []string{"x", "y", "direction"}},
	"drag_and_drop":    {[]string{"x", "y", "destination_x", "destination_y", "start_x", "start_y", "end_x", "end_y"}, nil},
}

// parseGemini decodes and checks a call's arguments.
func parseGemini(fc FunctionCall) (*geminiArgs, error) {
	spec, ok := geminiFields[fc.Name]
	if !ok {
		return nil, fmt.Errorf("toolset: unknown computer use function %q", fc.Name)
	}
	fields, err := objectFields(fc.Args)
	if err != nil {
		return nil, err
	}
	var a geminiArgs
	if len(fields) > 0 {
		if err := json.Unmarshal(fc.Args, &a); err != nil {
			return nil, fmt.Errorf("toolset: %s args: %w", fc.Name, err)
		}
	}
	if fc.Name == "drag_and_drop" {
		older := []string{"x", "y", "destination_x", "destination_y"}
		newer := []string{"start_x", "start_y", "end_x", "end_y"}
		set := older
		if _, ok := fields["start_x"]; ok {
			set = newer
		}
		for f := range fields {
			if f != "safety_decision" && f != "intent" && !slices.Contains(set, f) {
				return nil, fmt.Errorf("toolset: drag_and_drop takes %s or %s, not both", strings.Join(older, ", "), strings.Join(newer, ", "))
			}
		}
		spec.required = set
	}
	if err := spec.check(fc.Name, fields, "safety_decision", "intent"); err != nil {
		return nil, err
	}
	if a.Direction != nil && !slices.Contains([]string{"up", "down", "left", "right"}, *a.Direction) {
		return nil, fmt.Errorf("toolset: direction %q is not up, down, left or right", *a.Direction)
	}
	if a.Magnitude != nil && (*a.Magnitude < 0 || *a.Magnitude > 999) {
		return nil, fmt.Errorf("toolset: magnitude %d is not on the 0–999 grid", *a.Magnitude)
	}
	if a.MagnitudePixels != nil && (*a.MagnitudePixels < 0 || *a.MagnitudePixels > 999) {
		return nil, fmt.Errorf("toolset: magnitude_in_pixels %d is not on the 0–999 grid", *a.MagnitudePixels)
	}
	if a.Seconds != nil && (math.IsNaN(*a.Seconds) || *a.Seconds < 0 || *a.Seconds > maxDurationSecs) {
		return nil, fmt.Errorf("toolset: wait seconds must be between 0 and %d", maxDurationSecs)
	}
	return &a, nil
}

// call runs one function call and reports whether it acknowledged a safety
// decision.
func (g *Gemini) call(ctx context.Context, fc FunctionCall) (ack bool, err error) {
	a, err := parseGemini(fc)
	if err != nil {
		return false, err
	}
	if sd := a.SafetyDecision; sd != nil && sd.Decision == "require_confirmation" {
		if g.opts.ConfirmSafety == nil || !g.opts.ConfirmSafety(fc, sd.Explanation) {
			return false, fmt.Errorf("toolset: %s needs a person's confirmation: %s", fc.Name, sd.Explanation)
		}
		ack = true
	}
	return ack, g.run(g.heldCtx(ctx), fc.Name, a)
}

func (g *Gemini) at(x, y *coord) (image.Point, error) { return g.grid().ToScreen(int(*x), int(*y)) }

func (g *Gemini) run(ctx context.Context, name string, a *geminiArgs) error {
	s := g.s
	switch name {
	case "click_at":
		p, err := g.at(a.X, a.Y)
		if err != nil {
			return err
		}
		return s.click(ctx, px(p), aci.PointerLeft, "", 1)
	case "hover_at":
		p, err := g.at(a.X, a.Y)
		if err != nil {
			return err
		}
		return s.do(ctx, &aci.Action{Verb: aci.VerbMove, Target: px(p)})
	case "type_text_at":
		p, err := g.at(a.X, a.Y)
		if err != nil {
			return err
		}
		if err := s.click(ctx, px(p), aci.PointerLeft, "", 1); err != nil {
			return err
		}
		if a.ClearBeforeTyping == nil || *a.ClearBeforeTyping {
			all := "ctrl+a"
			if s.platform() == aci.PlatformMacOS {
				all = "cmd+a"
			}
			if err := s.do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: all + " BackSpace"}); err != nil {
				return err
			}
		}
		if err := s.do(ctx, &aci.Action{Verb: aci.VerbTypeText, Text: a.Text}); err != nil {
			return err
		}
		// False by default, as the reference agent reads it.
		if a.PressEnter != nil && *a.PressEnter {
			return s.do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: "Return"})
		}
		return nil
	case "key_combination":
		var combo string
		if err := json.Unmarshal(a.Keys, &combo); err != nil {
			return fmt.Errorf("toolset: key_combination keys: want a string such as \"Control+A\": %w", err)
		}
		keys, err := geminiKeys(combo)
		if err != nil {
			return err
		}
		return s.do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: keys})
	case "scroll_at":
		p, err := g.at(a.X, a.Y)
		if err != nil {
			return err
		}
		m := 800
		if a.Magnitude != nil {
			m = int(*a.Magnitude)
		}
		return g.scroll(ctx, p, *a.Direction, m)
	case "scroll_document":
		// As the reference agent does: a page down or up, or half the
		// screen's width sideways.
		switch *a.Direction {
		case "down":
			return s.do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: "Page_Down"})
		case "up":
			return s.do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: "Page_Up"})
		}
		sc := g.Scale()
		return g.scroll(ctx, sc.Screen.Div(2), *a.Direction, 500)
	case "drag_and_drop":
		fx, fy, tx, ty := a.X, a.Y, a.DestinationX, a.DestinationY
		if a.StartX != nil {
			fx, fy, tx, ty = a.StartX, a.StartY, a.EndX, a.EndY
		}
		from, err := g.at(fx, fy)
		if err != nil {
			return err
		}
		to, err := g.at(tx, ty)
		if err != nil {
			return err
		}
		return s.drag(ctx, []image.Point{from, to}, aci.PointerLeft, "")
	case "wait_5_seconds":
		return s.wait(ctx, 5*time.Second)
	case "open_web_browser":
		if g.opts.Browser == "" {
			return errors.New("toolset: open_web_browser: no browser is configured to open on this computer")
		}
		return s.do(ctx, &aci.Action{Verb: aci.VerbLaunchApp, App: &g.opts.Browser})
	case "go_back", "go_forward", "navigate", "search":
		if err := g.browserActive(ctx, name); err != nil {
			return err
		}
		before, _ := g.page(ctx)
		var err error
		switch name {
		case "go_back", "go_forward":
			err = s.do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: s.backForward(name == "go_forward")})
		case "search":
			err = g.open(ctx, g.opts.SearchURL)
		default:
			err = g.open(ctx, *a.URL)
		}
		if err == nil {
			g.navigated(ctx, before)
		}
		return err
	}
	return g.runNewer(ctx, name, a)
}

// scroll scrolls the screen fraction magnitude/1000 of its height (up,
// down) or width (left, right) at p.
func (g *Gemini) scroll(ctx context.Context, p image.Point, dir string, magnitude int) error {
	return g.scrollKeys(ctx, p, dir, magnitude, "")
}

// open types url into the active browser's address bar.
func (g *Gemini) open(ctx context.Context, url string) error {
	focus := "ctrl+l"
	if g.s.platform() == aci.PlatformMacOS {
		focus = "cmd+l"
	}
	s := g.s
	if err := s.do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: focus}); err != nil {
		return err
	}
	if err := s.do(ctx, &aci.Action{Verb: aci.VerbTypeText, Text: &url}); err != nil {
		return err
	}
	return s.do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: "Return"})
}

// url is the current page's URL for a function response, and whether
// one is known: GeminiOptions.URL's, else pageURL's.
func (g *Gemini) url(ctx context.Context) (string, bool) {
	if g.opts.URL != nil {
		u, err := g.opts.URL(ctx)
		return u, err == nil
	}
	u := g.pageURL(ctx)
	return u, u != ""
}

// pageURL returns the URL of the page the active window shows, or "" when
// none is known (see page).
func (g *Gemini) pageURL(ctx context.Context) string {
	u, _ := g.page(ctx)
	return u
}

// page returns the URL of the page the active window shows, and whether
// it is still loading (busy); "" when none is known: the runtime ships no
// observation engine, no window is active or the active one is not a
// browser's, the tree cannot be read, or it holds no document with a
// URL. A browser's document carries its URL as its value (the x11
// backend's AT-SPI reads it so); the first showing one in the active
// window's tree is the page, iframes' documents coming after it.
func (g *Gemini) page(ctx context.Context) (url string, loading bool) {
	c := g.s.c
	if w := c.Welcome(); w == nil || !w.Capabilities.StructuredObservation {
		return "", false
	}
	ws, err := c.ListWindows(ctx)
	if err != nil {
		return "", false
	}
	i := slices.IndexFunc(ws, func(w aci.WindowInfo) bool { return w.Active != nil && *w.Active })
	if i < 0 || !g.opts.IsBrowser(ws[i]) {
		return "", false
	}
	obs, err := c.Observe(ctx, &client.ObserveRequest{ActiveWindow: true})
	if err != nil {
		return "", false
	}
	for _, e := range obs.Elements {
		if (e.Role == "document web" || e.Role == "document frame") && slices.Contains(e.States, "showing") && isURL(e.Value) {
			return e.Value, slices.Contains(e.States, "busy")
		}
	}
	return "", false
}

// navigationWait bounds navigated's wait for a page that does not come.
const navigationWait = 10 * time.Second

// navigated waits, after a function that navigates, until the active
// browser shows a page other than before that is not loading, as the
// reference browser environment waits for the page's load before it
// answers: the response then carries the page the function led to, not
// the tree of a page being torn down. A page that does not come within
// navigationWait (a navigation to the page already shown, a page that
// never loads) is answered as it stands.
func (g *Gemini) navigated(ctx context.Context, before string) {
	if before == "" {
		return // the tree cannot tell this page from the next
	}
	ctx, cancel := context.WithTimeout(ctx, navigationWait)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if u, loading := g.page(ctx); u != "" && u != before && !loading {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// isURL reports whether s looks like an absolute URL (a scheme, then a
// colon), not a document's text.
func isURL(s string) bool {
	i := strings.IndexByte(s, ':')
	if i <= 0 || strings.ContainsAny(s, " \n") {
		return false
	}
	for j, r := range s[:i] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || j > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return true
}

// browserActive refuses a browser-only function unless the active window
// is a browser's.
func (g *Gemini) browserActive(ctx context.Context, name string) error {
	ws, err := g.s.c.ListWindows(ctx)
	if err != nil {
		return fmt.Errorf("toolset: %s acts on a web browser, and the windows cannot be listed to find one: %w", name, err)
	}
	for _, w := range ws {
		if w.Active != nil && *w.Active {
			if g.opts.IsBrowser(w) {
				return nil
			}
			return fmt.Errorf("toolset: %s acts on a web browser, and the active window (%q) is not one", name, w.Title)
		}
	}
	return fmt.Errorf("toolset: %s acts on a web browser, and no window is active", name)
}

// geminiKeys turns "Control+Shift+T" into an ACI combination.
func geminiKeys(s string) (string, error) {
	parts := strings.Split(s, "+")
	if strings.HasSuffix(s, "++") {
		parts = append(strings.Split(strings.TrimSuffix(s, "++"), "+"), "+")
	}
	return openAIKeys(parts)
}
