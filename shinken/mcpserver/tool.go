package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/internal/logtext"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/machine"
)

// ErrorCodeMeta is the _meta key of a failed tool call's result that
// carries the ACI error code ("stale_element_ref", "permission_denied"...),
// the same code that prefixes the result's text.
const ErrorCodeMeta = "shinken.dev/error_code"

// hints are a tool's annotations, spelled out so that every tool states
// each one.
type hints struct {
	readOnly, destructive, idempotent, openWorld bool
}

func (h hints) annotations(title string) *mcp.ToolAnnotations {
	a := &mcp.ToolAnnotations{Title: title, ReadOnlyHint: h.readOnly, OpenWorldHint: &h.openWorld}
	if !h.readOnly {
		a.DestructiveHint = &h.destructive
		a.IdempotentHint = h.idempotent
	} else {
		f := false
		a.DestructiveHint = &f
		a.IdempotentHint = true
	}
	return a
}

// Annotations of the tool families.
var (
	// Reading the screen, the tree, the windows or the clipboard changes
	// nothing and reaches nothing outside the desktop.
	readLocal = hints{readOnly: true}
	// Input reaches whatever app has focus, a browser included: a click or
	// a key may delete, send or buy. Repeating one repeats its effect.
	input = hints{destructive: true, openWorld: true}
	// Input that lands the desktop in the same state however often it is
	// repeated (a pointer move, a window raised).
	inputIdempotent = hints{destructive: false, idempotent: true, openWorld: true}
	// Overwriting a value: repeating it changes nothing more.
	overwrite = hints{destructive: true, idempotent: true, openWorld: true}
)

// textResult is the shape of an action's answer: a short text for the
// model, and a structured value for programs.
type textResult[Out any] struct {
	text string
	out  Out
}

// addTool registers a tool whose handler, given the current ACI session,
// returns a text and a structured value of type Out, described by Out's
// schema. A failure becomes a tool error carrying the ACI error code. The
// input schema is In's, or t.InputSchema when set.
func addTool[In, Out any](s *Server, t *mcp.Tool, h hints, fn func(ctx context.Context, req *mcp.CallToolRequest, c *client.Client, in In) (textResult[Out], error)) {
	addSessionTool(s, t, h, func(ctx context.Context, req *mcp.CallToolRequest, sess *aciSession, in In) (textResult[Out], error) {
		return fn(ctx, req, sess.c, in)
	})
}

// addMachineTool is addTool for a tool of the session's machine.
func addMachineTool[In, Out any](s *Server, t *mcp.Tool, h hints, fn func(ctx context.Context, req *mcp.CallToolRequest, m *machine.Tools, in In) (textResult[Out], error)) {
	addSessionTool(s, t, h, func(ctx context.Context, req *mcp.CallToolRequest, sess *aciSession, in In) (textResult[Out], error) {
		return fn(ctx, req, sess.m, in)
	})
}

func addSessionTool[In, Out any](s *Server, t *mcp.Tool, h hints, fn func(ctx context.Context, req *mcp.CallToolRequest, sess *aciSession, in In) (textResult[Out], error)) {
	t.Annotations = h.annotations(t.Annotations.Title)
	schema, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: output schema of %s: %v", t.Name, err))
	}
	t.OutputSchema = schema
	mcp.AddTool(s.srv, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		var r textResult[Out]
		err := s.run(ctx, h.readOnly, func(sess *aciSession) error {
			var err error
			r, err = fn(ctx, req, sess, in)
			return err
		})
		if err != nil {
			return s.toolError(t.Name, err), nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.text}}}, r.out, nil
	})
}

// bounded is In's input schema with integer properties bounded: each
// named property takes values from 0 to its maximum, so that the SDK
// refuses what the tool would otherwise clamp.
func bounded[In any](maxima map[string]float64) *jsonschema.Schema {
	sc, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema: %v", err))
	}
	for name, m := range maxima {
		p := sc.Properties[name]
		if p == nil {
			panic("mcpserver: no input property " + name)
		}
		p.Minimum = jsonschema.Ptr(0.0)
		p.Maximum = jsonschema.Ptr(m)
	}
	return sc
}

// toolError turns a failure into an MCP tool error (not a protocol error,
// so the model sees it and can correct itself): the text is the ACI wire
// error, "code: detail", and the code is also in _meta.
func (s *Server) toolError(tool string, err error) *mcp.CallToolResult {
	code := errorCode(err)
	text := aci.WireError(err)
	if errors.Is(err, context.Canceled) {
		text = string(code) + ": the call was cancelled"
	}
	s.log.Debug("tool failed", logtext.String("tool", tool), logtext.String("err", text))
	res := &mcp.CallToolResult{Meta: mcp.Meta{ErrorCodeMeta: string(code)}}
	res.SetError(errors.New(text))
	return res
}

// codeToolErrors gives the tool errors the SDK makes itself (arguments
// that break the tool's input schema) the code and the text shape of ours:
// invalid_action, as the runtime answers an action that breaks a rule.
// Arguments that are not valid UTF-8 are refused the same way before any
// tool sees them, as the runtime refuses an ACI message carrying them
// (the SDK would replace the bytes and type or run something else than
// was sent). A call its client cancelled gets no answer.
func (s *Server) codeToolErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, _ := req.(*mcp.CallToolRequest)
		if call != nil && call.Params != nil && !utf8.Valid(call.Params.Arguments) {
			return s.toolError(call.Params.Name, invalid("the arguments are not valid UTF-8")), nil
		}
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		if err == nil && ok && call != nil && errors.Is(context.Cause(ctx), context.Canceled) {
			return s.unanswered(call, r), nil
		}
		if err != nil || !ok || !r.IsError {
			return res, err
		}
		if _, coded := r.Meta[ErrorCodeMeta]; coded {
			return res, err
		}
		if r.Meta == nil {
			r.Meta = mcp.Meta{}
		}
		r.Meta[ErrorCodeMeta] = string(aci.CodeInvalidAction)
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				tc.Text = string(aci.CodeInvalidAction) + ": " + tc.Text
			}
		}
		return res, err
	}
}

// errorCode is the ACI code of err, as WireError would prefix it.
func errorCode(err error) aci.Code {
	var e *aci.Error
	switch {
	case errors.As(err, &e):
		return e.Code
	case errors.Is(err, context.Canceled):
		return aci.CodeClosed
	case errors.Is(err, context.DeadlineExceeded):
		return aci.CodeTimeout
	case errors.Is(err, errors.ErrUnsupported):
		return aci.CodeUnsupported
	}
	return aci.CodeBackend
}

// invalid returns an invalid_action error for arguments the schema admits
// but the tool cannot take.
func invalid(format string, args ...any) error {
	return aci.Errorf(aci.CodeInvalidAction, format, args...)
}

// A progress reports a long call's progress to a client that asked for it
// (its request carries a progress token); to others it says nothing.
type progress struct {
	req   *mcp.CallToolRequest
	token any
	n     float64
}

func newProgress(req *mcp.CallToolRequest) *progress {
	return &progress{req: req, token: req.Params.GetProgressToken()}
}

// report sends one notification; progress increases with each.
func (p *progress) report(ctx context.Context, msg string) {
	if p.token == nil || p.req.Session == nil {
		return
	}
	p.n++
	p.req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.n, Message: msg})
}

// every reports at once, then every interval, msg(elapsed) until the
// returned stop is called.
func (p *progress) every(ctx context.Context, interval time.Duration, msg func(elapsed time.Duration) string) (stop func()) {
	if p.token == nil {
		return func() {}
	}
	start := time.Now()
	p.report(ctx, msg(0))
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				p.report(ctx, msg(time.Since(start)))
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
