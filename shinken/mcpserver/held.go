package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/toolset"
)

// Held modifiers. key_down holds a modifier for the MCP session's later
// computer-use calls (clicks, scrolls, drags, moves and keys are made with
// it down, type is refused), until key_up or the session's end; ACI holds
// keys for one action at a time, so nothing stays down on the desktop
// between calls (see toolset.WithHeldKeys).

// keyInput is the input of key_down and key_up.
type keyInput struct {
	Key string `json:"key,omitempty" jsonschema:"a modifier: shift, ctrl, alt, super (key_up without it releases every held key)"`
}

// heldResult is the structured result of key_down and key_up.
type heldResult struct {
	Held []string `json:"held" jsonschema:"the modifiers held now"`
}

// heldKeys are the MCP sessions' held modifiers.
type heldKeys struct {
	mu sync.Mutex
	m  map[*mcp.ServerSession][]string
}

// of returns the modifiers ss holds.
func (h *heldKeys) of(ss *mcp.ServerSession) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.m[ss])
}

func (s *Server) addHeldKeyTools() {
	addTool(s, &mcp.Tool{
		Name:        "key_down",
		Description: "Hold a modifier (shift, ctrl, alt, super) down for the computer-use calls that follow, until key_up or the end of the session: clicks, scrolls, drags, moves and keys are made with it held, and type is refused meanwhile.",
		Annotations: &mcp.ToolAnnotations{Title: "Hold a modifier down"},
	}, inputIdempotent, func(_ context.Context, req *mcp.CallToolRequest, _ *client.Client, in keyInput) (textResult[heldResult], error) {
		k, err := toolset.Modifier(in.Key)
		if err != nil {
			return textResult[heldResult]{}, invalid("%v", err)
		}
		return s.setHeld(req.Session, func(held []string) []string {
			if !slices.Contains(held, k) {
				held = append(held, k)
			}
			return held
		}), nil
	})
	addTool(s, &mcp.Tool{
		Name:        "key_up",
		Description: "Release a modifier key_down holds, or every one without key.",
		Annotations: &mcp.ToolAnnotations{Title: "Release a modifier"},
	}, inputIdempotent, func(_ context.Context, req *mcp.CallToolRequest, _ *client.Client, in keyInput) (textResult[heldResult], error) {
		if in.Key == "" {
			return s.setHeld(req.Session, func([]string) []string { return nil }), nil
		}
		k, err := toolset.Modifier(in.Key)
		if err != nil {
			return textResult[heldResult]{}, invalid("%v", err)
		}
		if !slices.Contains(s.held.of(req.Session), k) {
			return textResult[heldResult]{}, invalid("%s is not held down", in.Key)
		}
		return s.setHeld(req.Session, func(held []string) []string {
			return slices.DeleteFunc(held, func(h string) bool { return h == k })
		}), nil
	})
}

// setHeld changes the modifiers ss holds; the first one held starts the
// watch that forgets them when ss ends.
func (s *Server) setHeld(ss *mcp.ServerSession, change func([]string) []string) textResult[heldResult] {
	h := &s.held
	h.mu.Lock()
	if h.m == nil {
		h.m = map[*mcp.ServerSession][]string{}
	}
	_, known := h.m[ss]
	held := change(h.m[ss])
	h.m[ss] = held
	h.mu.Unlock()
	if !known && ss != nil {
		go func() {
			ss.Wait()
			h.mu.Lock()
			delete(h.m, ss)
			h.mu.Unlock()
		}()
	}
	out := heldResult{Held: slices.Clone(held)}
	if out.Held == nil {
		out.Held = []string{}
	}
	text := "no key held"
	if len(held) > 0 {
		text = fmt.Sprintf("holding %s", strings.Join(held, "+"))
	}
	return textResult[heldResult]{text, out}
}
