package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/machine"
)

// The window tools: close, minimise, maximise, move and resize a window,
// each offered only when the runtime has the means (see the client
// package's WindowControl, which New asks once): the headless desktop
// closes, moves and resizes windows, an X11 desktop with wmctrl, xdotool
// and xprop does all five (without wmctrl, all but maximise). They are made of exec and input verbs, judged by the
// runtime's Authorizer and plugins as those are, and each reads the window
// back: a window not as asked is an error, never "done".

// windowInput is the input of close_window, minimize_window and
// maximize_window.
type windowInput struct {
	ID uint64 `json:"id" jsonschema:"the window's id from list_windows"`
}

// moveWindowInput is the input of move_window.
type moveWindowInput struct {
	ID uint64 `json:"id" jsonschema:"the window's id from list_windows"`
	X  int    `json:"x" jsonschema:"the new left edge of the window's frame, in screen pixels"`
	Y  int    `json:"y" jsonschema:"the new top edge of the window's frame (its title bar's), in screen pixels"`
}

// resizeWindowInput is the input of resize_window.
type resizeWindowInput struct {
	ID     uint64 `json:"id" jsonschema:"the window's id from list_windows"`
	Width  int    `json:"width" jsonschema:"the frame's new width in screen pixels, borders included"`
	Height int    `json:"height" jsonschema:"the frame's new height in screen pixels, title bar included"`
}

// Window tools' annotations: closing may lose what the window held (the
// application may ask first); the others only rearrange the screen, and
// repeating one changes nothing more.
var (
	windowClose   = hints{destructive: true, idempotent: true}
	windowArrange = hints{idempotent: true}
)

// windowStates returns what the window manager says of ws, or nothing
// where it cannot be asked (the headless desktop) or the asking fails (a
// refused exec): list_windows carries states where they are known.
func (s *Server) windowStates(ctx context.Context, c *client.Client, ws []aci.WindowInfo) map[uint64]machine.WindowState {
	if s.wc == nil || len(ws) == 0 {
		return nil
	}
	st, err := s.wc.On(c).States(ctx, ws)
	if err != nil {
		return nil
	}
	return st
}

// addWindowTools adds the window tools wc supports.
func (s *Server) addWindowTools(wc *machine.WindowControl) {
	s.wc = wc
	if wc.Supports(machine.WindowClose) {
		addTool(s, &mcp.Tool{
			Name:        "close_window",
			Description: "Close a window, as its title bar's close button would (the application may ask to save first). It answers once the window is gone.",
			Annotations: &mcp.ToolAnnotations{Title: "Close a window"},
		}, windowClose, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, in windowInput) (textResult[doneResult], error) {
			if err := wc.On(c).Close(ctx, in.ID); err != nil {
				return textResult[doneResult]{}, err
			}
			return done(fmt.Sprintf("closed window %d", in.ID)), nil
		})
	}
	if wc.Supports(machine.WindowMinimize) {
		addTool(s, &mcp.Tool{
			Name:        "minimize_window",
			Description: "Minimise (iconify) a window; activate_window brings it back.",
			Annotations: &mcp.ToolAnnotations{Title: "Minimise a window"},
		}, windowArrange, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, in windowInput) (textResult[doneResult], error) {
			if err := wc.On(c).Minimize(ctx, in.ID); err != nil {
				return textResult[doneResult]{}, err
			}
			return done(fmt.Sprintf("minimised window %d", in.ID)), nil
		})
	}
	if wc.Supports(machine.WindowMaximize) {
		addTool(s, &mcp.Tool{
			Name:        "maximize_window",
			Description: "Maximise a window to fill the screen's work area. The result gives its new bounds.",
			Annotations: &mcp.ToolAnnotations{Title: "Maximise a window"},
		}, windowArrange, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, in windowInput) (textResult[window], error) {
			w, err := wc.On(c).Maximize(ctx, in.ID)
			return windowResult("maximised", w, err)
		})
	}
	if wc.Supports(machine.WindowMove) {
		addTool(s, &mcp.Tool{
			Name:        "move_window",
			Description: "Move a window so that its frame's top left corner (as list_windows gives its bounds) is at x, y in screen pixels. The result gives its new bounds.",
			Annotations: &mcp.ToolAnnotations{Title: "Move a window"},
		}, windowArrange, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, in moveWindowInput) (textResult[window], error) {
			w, err := wc.On(c).Move(ctx, in.ID, in.X, in.Y)
			return windowResult("moved", w, err)
		})
	}
	if wc.Supports(machine.WindowResize) {
		addTool(s, &mcp.Tool{
			Name: "resize_window",
			Description: "Resize a window's frame (as list_windows gives its bounds) to width × height screen pixels, keeping its top left corner. " +
				"A window that sizes itself in steps (a terminal's character cells) takes the nearest size of its steps at or below the one asked. The result gives its new bounds.",
			Annotations: &mcp.ToolAnnotations{Title: "Resize a window"},
		}, windowArrange, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, in resizeWindowInput) (textResult[window], error) {
			w, err := wc.On(c).Resize(ctx, in.ID, in.Width, in.Height)
			return windowResult("resized", w, err)
		})
	}
}

// windowResult answers a window tool with the window's new bounds.
func windowResult(did string, w aci.WindowInfo, err error) (textResult[window], error) {
	if err != nil {
		return textResult[window]{}, err
	}
	out := window{ID: w.ID, Title: w.Title, App: w.App, BBox: w.BBox, Active: w.Active != nil && *w.Active}
	return textResult[window]{fmt.Sprintf("%s window %d: bounds %v", did, w.ID, w.BBox), out}, nil
}
