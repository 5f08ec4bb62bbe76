// Package plugin is the plugin side of the Escouade protocol, in Go: Serve
// answers the Host on a pair of streams (a program's stdin and stdout), and
// a Conn calls the Host back (secrets, settings, files, the journal).
//
// A plugin run as a command:
//
//	func main() {
//		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
//		defer stop()
//		err := plugin.Serve(ctx, os.Stdin, os.Stdout, plugin.Handlers{
//			Fact: func(ctx context.Context, c *plugin.Conn, f protocol.Fact) { ... },
//		})
//		if err != nil {
//			os.Exit(1)
//		}
//	}
//
// A guard (Handlers.Decide) sees every program the agent wants to run as a
// request of kind "command" whose input.command is the whole command line,
// one string, whatever form the agent used (an argv, a shell line, sh -c
// in either), with the structured argv, cwd and env beside it: see
// protocol.CommandInput, and PermissionRequest.Command to decode it. A
// guard that cannot answer (it crashed, it is restarting, it was disabled
// past its crash budget) counts as ask, never as absent.
//
// The messages, the error codes and the method table are those of package
// protocol, the one package this one shares with the Host: a plugin built
// with it links none of the Host's engines. Package plugintest runs the
// same Handlers in-process, against a real Host and without a process, so
// that a plugin's tests can publish facts, ask for decisions and check
// what it did.
package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"shinken.dev/go/escouade/internal/jsonrpc"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/strictjson"
)

// Handlers are a plugin's answers to the Host. A nil field has the default
// its comment gives.
type Handlers struct {
	// Initialize receives the first message and returns the plugin's
	// capabilities, sent to the Host with the protocol version. nil: no
	// capabilities.
	Initialize func(ctx context.Context, c *Conn, p protocol.InitializeParams) (map[string]any, error)
	// Fact receives the facts of permissions.events, one at a time, in the
	// order of their seq. nil: facts are dropped.
	Fact func(ctx context.Context, c *Conn, f protocol.Fact)
	// Decide answers permissions/decide (permissions.decide), within its
	// timeout (500 ms): past it the Host counts it as ask. Decisions run
	// concurrently. nil: answered methodNotFound, which the Host counts as
	// ask.
	Decide func(ctx context.Context, c *Conn, p protocol.DecideParams) (protocol.Decision, error)
	// Attach receives the agents attached to the plugin, again after a
	// restart. nil: dropped.
	Attach func(ctx context.Context, c *Conn, a protocol.AttachParams)
	// Shutdown runs before the plugin answers shutdown; Serve returns when
	// the Host then closes the plugin's input. nil: nothing to do.
	Shutdown func(ctx context.Context, c *Conn) error
}

// Limits of the plugin side.
const (
	maxLine = 8 << 20 // a line from the Host: files/read's 256 KiB, escaped, fit
	workers = 64      // requests handled at once
	backlog = 4096    // notifications waiting; past it they are dropped, and the Host told
)

// Serve serves the protocol: it reads the Host's lines from in and writes
// its own to out, until in ends (it returns nil), in fails (it returns the
// error) or ctx is done (it returns ctx's error). When out is a file
// (a program's stdout), Serve writes a non-blocking copy of it, and out is
// non-blocking until Serve returns; when in is a file, it is read as the
// quickest way allows (see stdio). A read under way when ctx ends lasts
// until in is closed or has data: in a plugin program, until it exits.
func Serve(ctx context.Context, in io.Reader, out io.Writer, hs Handlers) error {
	in, out, restore := stdio(in, out)
	defer restore()
	c := &Conn{hs: hs}
	c.rpc = jsonrpc.NewConn(in, out, jsonrpc.HandlerFunc(c.handle), &jsonrpc.Options{
		MaxLine: maxLine,
		Workers: workers,
		Backlog: backlog,
		Busy:    &jsonrpc.Error{Code: int64(protocol.CodeFailed), Message: "failed: the plugin is busy"},
		Timeout: protocol.MethodTimeout,
		OnEvent: c.event,
	})
	errc := make(chan error, 1)
	go func() { errc <- c.rpc.Run(ctx) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		c.rpc.Close()
		return ctx.Err()
	}
}

// A Conn is the plugin's side of its connection to the Host: what handlers
// use to call the Host back. Its methods are safe for concurrent use.
type Conn struct {
	hs  Handlers
	rpc *jsonrpc.Conn

	mu       sync.Mutex
	init     protocol.InitializeParams
	dropped  int       // notifications dropped, not yet told
	lastTold time.Time // when the Host was last told of drops
}

// event tells the Host's journal, once a second at most, of the facts the
// plugin dropped because its Fact handler could not keep up. The Host is
// trusted: its other misbehaviour is not reported.
func (c *Conn) event(ev jsonrpc.Event) {
	if ev.Kind != jsonrpc.EventDropped {
		return
	}
	c.mu.Lock()
	c.dropped++
	n := c.dropped
	now := time.Now()
	tell := now.Sub(c.lastTold) >= time.Second
	if tell {
		c.dropped, c.lastTold = 0, now
	}
	c.mu.Unlock()
	if tell {
		c.Log(slog.LevelWarn, fmt.Sprintf("plugin: %d notifications dropped: the plugin handles them too slowly", n))
	}
}

// Init returns what the Host said in initialize: its version, the
// interface's language, its capabilities.
func (c *Conn) Init() protocol.InitializeParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.init
}

func (c *Conn) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	switch req.Method {
	case "initialize":
		var p protocol.InitializeParams
		if err := p.UnmarshalJSON(req.Params); err != nil {
			return nil, invalidParams(err)
		}
		c.mu.Lock()
		c.init = p
		c.mu.Unlock()
		caps := map[string]any{}
		if c.hs.Initialize != nil {
			got, err := c.hs.Initialize(ctx, c, p)
			if err != nil {
				return nil, wireError(err)
			}
			if got != nil {
				caps = got
			}
		}
		return protocol.InitializeResult{ProtocolVersion: protocol.Version, Capabilities: caps}, nil
	case "shutdown":
		if c.hs.Shutdown != nil {
			if err := c.hs.Shutdown(ctx, c); err != nil {
				return nil, wireError(err)
			}
		}
		return json.RawMessage("null"), nil
	case "events/fact":
		var f protocol.Fact
		if err := f.UnmarshalJSON(req.Params); err != nil {
			return nil, invalidParams(err)
		}
		if c.hs.Fact != nil {
			c.hs.Fact(ctx, c, f)
		}
		return nil, nil
	case "permissions/decide":
		if c.hs.Decide == nil {
			break
		}
		var p protocol.DecideParams
		if err := p.UnmarshalJSON(req.Params); err != nil {
			return nil, invalidParams(err)
		}
		d, err := c.hs.Decide(ctx, c, p)
		if err != nil {
			return nil, wireError(err)
		}
		switch d.Verdict {
		case protocol.Allow, protocol.Deny, protocol.Ask:
			// By hand: decisions are the requests a plugin answers most.
			b := append(make([]byte, 0, 48+len(d.Message)), `{"decision":`...)
			b = strictjson.AppendString(b, string(d.Verdict))
			if d.Message != "" {
				b = append(b, `,"message":`...)
				b = strictjson.AppendString(b, d.Message)
			}
			return json.RawMessage(append(b, '}')), nil
		}
		return nil, fmt.Errorf("plugin: Decide returned the verdict %q", d.Verdict)
	case "agent/attach":
		var a protocol.AttachParams
		if err := a.UnmarshalJSON(req.Params); err != nil {
			return nil, invalidParams(err)
		}
		if c.hs.Attach != nil {
			c.hs.Attach(ctx, c, a)
		}
		return nil, nil
	}
	return nil, &jsonrpc.Error{Code: int64(protocol.CodeMethodNotFound), Message: "method not found: " + req.Method}
}

// invalidParams answers params that do not hold, naming every field.
func invalidParams(err error) error {
	msg := strings.ReplaceAll(err.Error(), "escouade: ", "")
	return &jsonrpc.Error{Code: int64(protocol.CodeInvalidParams), Message: "invalid params: " + strings.ReplaceAll(msg, "\n", "; ")}
}

// wireError answers a handler's *protocol.Error with its code; anything
// else is an internal error.
func wireError(err error) error {
	var e *protocol.Error
	if errors.As(err, &e) {
		return &jsonrpc.Error{Code: int64(e.Code), Message: e.Message}
	}
	return err
}

// hostError turns a call's failure into the protocol package's errors, so
// that callers test it with errors.Is(err, protocol.ErrNotYours).
func hostError(method string, err error) error {
	var e *jsonrpc.Error
	switch {
	case errors.As(err, &e):
		return &protocol.Error{Code: protocol.Code(e.Code), Message: e.Message}
	case errors.Is(err, jsonrpc.ErrTimeout):
		return &protocol.Error{Code: protocol.CodeFailed, Message: "failed: " + method + ": no answer in time"}
	case errors.Is(err, jsonrpc.ErrClosed):
		return fmt.Errorf("plugin: %s: %w", method, protocol.ErrClosed)
	}
	return fmt.Errorf("plugin: %s: %w", method, err)
}

// Call calls the Host's method with params (encoded with encoding/json; nil
// for none) and decodes the result into result (nil to drop it). An error
// answer is an *protocol.Error.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	raw, err := c.rpc.Call(ctx, method, params)
	if err != nil {
		return hostError(method, err)
	}
	if result != nil {
		if err := json.Unmarshal(raw, result); err != nil {
			return fmt.Errorf("plugin: %s: %w", method, err)
		}
	}
	return nil
}

// Notify sends the Host a notification.
func (c *Conn) Notify(method string, params any) error {
	if err := c.rpc.Notify(method, params); err != nil {
		return hostError(method, err)
	}
	return nil
}

// A BatchCall is one call of a batch.
type BatchCall struct {
	Method string
	Params any  // as for Call
	Result any  // where to decode the result; nil to drop it
	Notify bool // a notification: no answer
	Err    error
}

// Batch sends calls to the Host as one batch, and fills each one's Result
// and Err. It returns an error only when the batch could not be sent.
func (c *Conn) Batch(ctx context.Context, calls []BatchCall) error {
	bc := make([]jsonrpc.BatchCall, len(calls))
	for i, call := range calls {
		bc[i] = jsonrpc.BatchCall{Method: call.Method, Params: call.Params, Notify: call.Notify}
	}
	if err := c.rpc.Batch(ctx, bc); err != nil {
		return hostError("batch", err)
	}
	for i := range calls {
		switch {
		case bc[i].Err != nil:
			calls[i].Err = hostError(calls[i].Method, bc[i].Err)
		case calls[i].Result != nil && !calls[i].Notify:
			if err := json.Unmarshal(bc[i].Result, calls[i].Result); err != nil {
				calls[i].Err = fmt.Errorf("plugin: %s: %w", calls[i].Method, err)
			}
		}
	}
	return nil
}

// Secret returns the plugin's secret under key (a key of
// permissions.secrets); ok is false when none is kept. A key outside
// permissions.secrets is protocol.ErrNotYours; a keychain that cannot be
// reached, protocol.ErrKeychain.
func (c *Conn) Secret(ctx context.Context, key string) (value string, ok bool, err error) {
	var v *string
	if err := c.Call(ctx, "secrets/get", map[string]string{"key": key}, &v); err != nil {
		return "", false, err
	}
	if v == nil {
		return "", false, nil
	}
	return *v, true, nil
}

// Settings returns the values of the plugin's settings: the manifest's
// defaults under the user's values, under those of project's
// .escouade.yml when project is not "" and the plugin is on there.
func (c *Conn) Settings(ctx context.Context, project string) (map[string]any, error) {
	params := map[string]string{}
	if project != "" {
		params["project"] = project
	}
	var values map[string]any
	if err := c.Call(ctx, "settings/get", params, &values); err != nil {
		return nil, err
	}
	return values, nil
}

// ReadFile returns a file of the plugin's folder as text: path is relative
// to the folder, with / between its parts. A path that leaves the folder,
// a hidden one, the manifest and a file with more than one name (a hard
// link) are protocol.ErrRefused; a missing file, or one that is not a
// regular file (a FIFO, a folder), protocol.ErrNotFound; a file over
// 256 KiB or not UTF-8 protocol.ErrFailed.
func (c *Conn) ReadFile(ctx context.Context, path string) (string, error) {
	var text string
	if err := c.Call(ctx, "files/read", map[string]string{"path": path}, &text); err != nil {
		return "", err
	}
	return text, nil
}

// Log writes a line to the plugin's journal in the Host.
func (c *Conn) Log(level slog.Level, msg string) error {
	return c.Notify("log", map[string]string{"level": levelName(level), "message": msg})
}

func levelName(l slog.Level) string {
	switch {
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warn"
	}
	return "error"
}

// Logger returns a logger whose records go to the plugin's journal in the
// Host, as log notifications: the message, then its attributes as
// key=value.
func (c *Conn) Logger() *slog.Logger {
	return slog.New(&logHandler{c: c})
}

type logHandler struct {
	c      *Conn
	prefix string // attributes and groups given by With
	group  string
}

func (h *logHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	b.WriteString(h.prefix)
	r.Attrs(func(a slog.Attr) bool {
		writeAttr(&b, h.group, a)
		return true
	})
	return h.c.Log(r.Level, b.String())
}

func writeAttr(b *strings.Builder, group string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		g := group
		if a.Key != "" {
			g = group + a.Key + "."
		}
		for _, ga := range a.Value.Group() {
			writeAttr(b, g, ga)
		}
		return
	}
	fmt.Fprintf(b, " %s%s=%s", group, a.Key, a.Value)
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.prefix)
	for _, a := range attrs {
		writeAttr(&b, h.group, a)
	}
	return &logHandler{c: h.c, prefix: b.String(), group: h.group}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &logHandler{c: h.c, prefix: h.prefix, group: h.group + name + "."}
}
