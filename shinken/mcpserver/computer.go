package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/toolset"
)

// The Anthropic member tools are served by the toolset package, which owns
// their definitions (names, inputs, descriptions) and the scaling between
// the model's screenshot and the screen. Each MCP call is one member call;
// MCP has no turn, so the toolset's stop-at-the-first-failure rule is the
// client's to apply across its calls.

// memberHints are the truthful annotations of each member tool, and its
// title.
var memberHints = map[string]struct {
	title string
	hints
}{
	"screenshot":      {"Take a screenshot", readLocal},
	"zoom":            {"Zoom into a region", readLocal},
	"cursor_position": {"Report the cursor position", readLocal},
	"wait":            {"Wait", readLocal},
	"mouse_move":      {"Move the mouse", inputIdempotent},
	"left_click":      {"Left click", input},
	"right_click":     {"Right click", input},
	"middle_click":    {"Middle click", input},
	"double_click":    {"Double click", input},
	"triple_click":    {"Triple click", input},
	"left_click_drag": {"Drag with the left button", input},
	"left_mouse_down": {"Press the left button", input},
	"left_mouse_up":   {"Release the left button", input},
	"scroll":          {"Scroll", input},
	"type":            {"Type text", input},
	"key":             {"Press a key", input},
	"hold_key":        {"Hold a key", input},
}

// cursorPosition is the structured result of cursor_position, in the
// screenshot's pixels.
type cursorPosition struct {
	X int `json:"x"`
	Y int `json:"y"`
}

var cursorText = regexp.MustCompile(`X=(-?\d+),Y=(-?\d+)`)

func (s *Server) addComputerTools(a *toolset.Anthropic) error {
	doneSchema, err := jsonschema.For[doneResult](nil)
	if err != nil {
		return err
	}
	cursorSchema, err := jsonschema.For[cursorPosition](nil)
	if err != nil {
		return err
	}
	for _, m := range a.Members() {
		h, ok := memberHints[m.Name]
		if !ok {
			return fmt.Errorf("mcpserver: no annotations for the toolset's member %q", m.Name)
		}
		t := &mcp.Tool{Name: m.Name, Description: m.Description, InputSchema: m.InputSchema, Annotations: h.annotations(h.title)}
		image := m.Name == "screenshot" || m.Name == "zoom"
		switch {
		case m.Name == "cursor_position":
			t.OutputSchema = cursorSchema
		case !image:
			t.OutputSchema = doneSchema
		}
		name := m.Name
		s.srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ctx = toolset.WithHeldKeys(ctx, s.held.of(req.Session)...)
			var r *toolset.Result
			err := s.run(ctx, h.readOnly, func(sess *aciSession) error {
				var err error
				switch name {
				case "hold_key", "wait":
					r, err = s.long(ctx, req, sess.a, name)
				default:
					r, err = sess.a.Call(ctx, name, req.Params.Arguments)
				}
				return err
			})
			if err != nil {
				var e *aci.Error
				if !errors.As(err, &e) && !errors.Is(err, errors.ErrUnsupported) && ctx.Err() == nil {
					// Errors from the runtime carry its code, and the
					// toolset's own failures carry theirs (internal,
					// unsupported); the rest are its refusals of the call's
					// input.
					err = &aci.Error{Code: aci.CodeInvalidAction, Detail: err.Error(), Err: err}
				}
				return s.toolError(name, err), nil
			}
			res := &mcp.CallToolResult{}
			if r.Image != nil {
				res.Content = append(res.Content, s.imageContent(req, r.Image.Data, r.Image.MediaType))
			}
			if r.Text != "" || r.Image == nil {
				res.Content = append(res.Content, &mcp.TextContent{Text: r.Text})
			}
			switch {
			case name == "cursor_position":
				m := cursorText.FindStringSubmatch(r.Text)
				if m == nil {
					return s.toolError(name, aci.Errorf(aci.CodeInternal, "cursor_position answered %q", r.Text)), nil
				}
				x, _ := strconv.Atoi(m[1])
				y, _ := strconv.Atoi(m[2])
				res.StructuredContent = cursorPosition{X: x, Y: y}
			case !image:
				res.StructuredContent = doneResult{OK: true}
			}
			return res, nil
		})
	}
	return nil
}

// long runs hold_key or wait, which last as long as their input says (a
// wait beyond the runtime's MaxWait is several; a hold it cuts short is an
// error), reporting progress. A held key holds the
// runtime's input, every session's, for its whole duration: with
// Options.Dial, hold_key runs on an ACI session of its own, so that a
// cancelled call closes it and the runtime releases the keys at once
// rather than holding every later input until the duration ends.
func (s *Server) long(ctx context.Context, req *mcp.CallToolRequest, a *toolset.Anthropic, name string) (*toolset.Result, error) {
	stop := newProgress(req).every(ctx, s.opts.ProgressInterval, func(d time.Duration) string {
		if d == 0 {
			return name + " started"
		}
		return fmt.Sprintf("%s for %.1f s", name, d.Seconds())
	})
	defer stop()
	if name != "hold_key" || s.opts.Dial == nil {
		return a.Call(ctx, name, req.Params.Arguments)
	}
	c, err := s.opts.Dial(ctx)
	if err != nil {
		return nil, own(err)
	}
	defer c.Close()
	held, err := s.newSession(ctx, c)
	if err != nil {
		return nil, own(err)
	}
	r, err := held.a.Call(ctx, name, req.Params.Arguments)
	return r, own(err)
}
