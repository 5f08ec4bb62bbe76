package client

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"sync"
	"time"

	"shinken.dev/go/shinken/aci"
)

// ack sends a mutating action and waits for its ack.
func (c *Client) ack(ctx context.Context, a *aci.Action) error {
	_, err := c.Do(ctx, a)
	return err
}

// Click clicks the left button at t.
func (c *Client) Click(ctx context.Context, t *aci.Target) error {
	return c.ack(ctx, &aci.Action{Verb: aci.VerbClick, Target: t})
}

// DoubleClick double-clicks the left button at t.
func (c *Client) DoubleClick(ctx context.Context, t *aci.Target) error {
	return c.ack(ctx, &aci.Action{Verb: aci.VerbDoubleClick, Target: t})
}

// RightClick clicks the right button at t.
func (c *Client) RightClick(ctx context.Context, t *aci.Target) error {
	return c.ack(ctx, &aci.Action{Verb: aci.VerbRightClick, Target: t})
}

// Move moves the pointer to t.
func (c *Client) Move(ctx context.Context, t *aci.Target) error {
	return c.ack(ctx, &aci.Action{Verb: aci.VerbMove, Target: t})
}

// Drag presses the left button at from, moves along an interpolated path
// for d, and releases at to.
func (c *Client) Drag(ctx context.Context, from, to *aci.Target, d time.Duration) error {
	return c.ack(ctx, &aci.Action{Verb: aci.VerbDrag, Target: from, To: to, DurationMS: int(d / time.Millisecond)})
}

// MouseDown presses button at t (nil: where the pointer is).
func (c *Client) MouseDown(ctx context.Context, t *aci.Target, button aci.PointerButton) error {
	return c.ack(ctx, &aci.Action{Verb: aci.VerbMouseDown, Target: t, Button: button})
}

// MouseUp releases button at t (nil: where the pointer is).
func (c *Client) MouseUp(ctx context.Context, t *aci.Target, button aci.PointerButton) error {
	return c.ack(ctx, &aci.Action{Verb: aci.VerbMouseUp, Target: t, Button: button})
}

// Scroll scrolls at t by dx, dy wheel notches (positive dy scrolls down).
func (c *Client) Scroll(ctx context.Context, t *aci.Target, dx, dy float64) error {
	return c.ack(ctx, &aci.Action{Verb: aci.VerbScroll, Target: t, DX: dx, DY: dy})
}

// TypeText types text, whatever its characters.
func (c *Client) TypeText(ctx context.Context, text string) error {
	return c.ack(ctx, &aci.Action{Verb: aci.VerbTypeText, Text: &text})
}

// Key presses a key expression: "ctrl+s", "Return", "ctrl+a Delete".
func (c *Client) Key(ctx context.Context, keys string) error {
	return c.ack(ctx, &aci.Action{Verb: aci.VerbKey, Keys: keys})
}

// Wait asks the runtime to wait d; a d past the runtime's MaxWait (60 s
// by default) is refused with invalid_action.
func (c *Client) Wait(ctx context.Context, d time.Duration) error {
	return c.ack(ctx, &aci.Action{Verb: aci.VerbWait, MS: int(d / time.Millisecond)})
}

// InvokeAction invokes the action named name ("" for its first) of the
// element aci.Ref(el.Ref) (not a point: invalid_action), name sent as text.
func (c *Client) InvokeAction(ctx context.Context, t *aci.Target, name string) error {
	a := &aci.Action{Verb: aci.VerbInvokeAction, Target: t}
	if name != "" {
		a.Text = &name
	}
	return c.ack(ctx, a)
}

// SetValue sets the value or text of the element t refers to,
// aci.Ref(el.Ref) (a point target is refused with invalid_action).
func (c *Client) SetValue(ctx context.Context, t *aci.Target, text string) error {
	return c.ack(ctx, &aci.Action{Verb: aci.VerbSetValue, Target: t, Text: &text})
}

// ClipboardSet puts text on the clipboard.
func (c *Client) ClipboardSet(ctx context.Context, text string) error {
	return c.ack(ctx, &aci.Action{Verb: aci.VerbClipboardSet, Text: &text})
}

// ClipboardGet reads the clipboard's text.
func (c *Client) ClipboardGet(ctx context.Context) (string, error) {
	r, err := c.Do(ctx, &aci.Action{Verb: aci.VerbClipboardGet})
	if err != nil {
		return "", err
	}
	var v aci.ClipboardValue
	if r.Result == nil || json.Unmarshal(r.Result.Value, &v) != nil {
		return "", aci.Errorf(aci.CodeInvalidMessage, "clipboard_get was not answered with {text}")
	}
	return v.Text, nil
}

// LaunchApp starts app with args passed verbatim.
func (c *Client) LaunchApp(ctx context.Context, app string, args ...string) error {
	a := &aci.Action{Verb: aci.VerbLaunchApp, App: &app}
	if len(args) > 0 {
		a.Args = args
	}
	return c.ack(ctx, a)
}

// ActivateWindow raises and focuses the window with id.
func (c *Client) ActivateWindow(ctx context.Context, id uint64) error {
	return c.ack(ctx, &aci.Action{Verb: aci.VerbActivateWindow, WindowID: &id})
}

// ActivateWindowTitled activates the first window whose title has title (any
// case).
func (c *Client) ActivateWindowTitled(ctx context.Context, title string) error {
	return c.ack(ctx, &aci.Action{Verb: aci.VerbActivateWindow, App: &title})
}

// Platform asks the runtime's platform.
func (c *Client) Platform(ctx context.Context) (aci.Platform, error) {
	var p aci.Platform
	err := c.Query(ctx, aci.QueryPlatform, &p)
	return p, err
}

// ScreenSize asks the size of the global action space.
func (c *Client) ScreenSize(ctx context.Context) (aci.ScreenSize, error) {
	var s aci.ScreenSize
	err := c.Query(ctx, aci.QueryScreenSize, &s)
	return s, err
}

// Ready asks whether the backend can act.
func (c *Client) Ready(ctx context.Context) (bool, error) {
	var b bool
	err := c.Query(ctx, aci.QueryReady, &b)
	return b, err
}

// ListWindows lists the top-level windows.
func (c *Client) ListWindows(ctx context.Context) ([]aci.WindowInfo, error) {
	var ws []aci.WindowInfo
	err := c.Query(ctx, aci.QueryListWindows, &ws)
	return ws, err
}

// ObserveRequest tunes Client.Observe.
type ObserveRequest struct {
	Diff    bool          // tree_text as a diff against the previous revision
	Settle  time.Duration // wait for the UI to be quiet this long first
	Desktop bool          // every application, not just the active one
	// Subtree (an element ref) renders that element and its descendants,
	// hidden ones included; Window (an id, as tree_text lists it) only
	// that top-level window; ActiveWindow only the active one. Refs are
	// the unscoped view's; no Diff with any of them.
	Subtree      string
	Window       uint64
	ActiveWindow bool
}

// Observe takes a structured observation of the accessibility tree.
func (c *Client) Observe(ctx context.Context, req *ObserveRequest) (*aci.Observation, error) {
	a := &aci.Action{Verb: aci.VerbObserve}
	if req != nil {
		if req.Diff {
			a.Diff = &req.Diff
		}
		if req.Settle > 0 {
			ms := int(req.Settle / time.Millisecond)
			a.SettleMS = &ms
		}
		switch {
		case req.Window != 0:
			a.Scope = aci.WindowScope(req.Window)
		case req.ActiveWindow:
			a.Scope = aci.ScopeActiveWindow
		case req.Desktop:
			a.Scope = aci.ScopeScreen
		}
		if req.Subtree != "" {
			a.Target = aci.Ref(req.Subtree)
		}
	}
	r, err := c.Do(ctx, a)
	if err != nil {
		return nil, err
	}
	if r.Observation == nil {
		return nil, aci.Errorf(aci.CodeInvalidMessage, "observe was not answered with an observation")
	}
	return r.Observation, nil
}

// ScreenshotRequest tunes Client.Screenshot; nil is a PNG of the whole
// screen.
type ScreenshotRequest struct {
	Scope       aci.Scope
	Format      aci.ImageFormat
	Quality     int // JPEG quality 1-100; 0 is the runtime's default
	MaxLongEdge int // 0: no downscale beyond the runtime's cap
}

// A Shot is a screenshot.
type Shot struct {
	Data    []byte          // encoded image bytes
	Format  aci.ImageFormat // codec of Data
	Width   int
	Height  int
	Display aci.CoordinateSpace // how the pixels map to action coordinates
	Hash    string              // frame_hash
	Pointer *image.Point        // pointer position, when the backend reports it
	// Cached: the runtime answered not_modified; Data is the cached copy.
	Cached bool

	once sync.Once
	img  image.Image
	err  error
}

// Image decodes the shot (once).
func (s *Shot) Image() (image.Image, error) {
	s.once.Do(func() {
		if s.Format == aci.FormatJPEG {
			s.img, s.err = jpeg.Decode(bytes.NewReader(s.Data))
		} else {
			s.img, s.err = png.Decode(bytes.NewReader(s.Data))
		}
	})
	return s.img, s.err
}

// frameCache keeps the last shot per request shape, for if_none_match.
type frameCache struct {
	mu    sync.Mutex
	shots map[ScreenshotRequest]*Shot
}

func (fc *frameCache) get(k ScreenshotRequest) *Shot {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.shots[k]
}

func (fc *frameCache) put(k ScreenshotRequest, s *Shot) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.shots == nil {
		fc.shots = map[ScreenshotRequest]*Shot{}
	}
	fc.shots[k] = s
}

// Screenshot captures the screen (or a scope). Unless
// DialOptions.NoFrameCache, it sends the last frame_hash of the same request
// as if_none_match, and on not_modified returns the cached shot (Cached set,
// Pointer fresh).
func (c *Client) Screenshot(ctx context.Context, req *ScreenshotRequest) (*Shot, error) {
	var k ScreenshotRequest
	if req != nil {
		k = *req
	}
	a := &aci.Action{Verb: aci.VerbScreenshot, Scope: k.Scope, Format: k.Format}
	if k.Quality > 0 {
		a.Quality = &k.Quality
	}
	if k.MaxLongEdge > 0 {
		a.MaxLongEdge = &k.MaxLongEdge
	}
	useCache := !c.opts.NoFrameCache && c.Welcome().Capabilities.FrameDedup
	var cached *Shot
	if useCache {
		if cached = c.cache.get(k); cached != nil {
			a.IfNoneMatch = cached.Hash
		}
	}
	r, err := c.Do(ctx, a)
	if err != nil {
		return nil, err
	}
	o := r.Observation
	if o == nil {
		return nil, aci.Errorf(aci.CodeInvalidMessage, "screenshot was not answered with an observation")
	}
	if o.NotModified && cached != nil {
		s := &Shot{Data: cached.Data, Format: cached.Format, Width: cached.Width, Height: cached.Height,
			Display: cached.Display, Hash: cached.Hash, Pointer: pointOf(o.Pointer), Cached: true}
		s.once.Do(func() { s.img, s.err = cached.Image() })
		return s, nil
	}
	if o.Image == nil || o.Display == nil {
		return nil, aci.Errorf(aci.CodeInvalidMessage, "screenshot observation carries no image")
	}
	s := &Shot{Data: r.Image, Format: o.Image.Format, Width: o.Image.W, Height: o.Image.H,
		Display: *o.Display, Hash: o.FrameHash, Pointer: pointOf(o.Pointer)}
	if s.Format == "" {
		s.Format = aci.FormatPNG
	}
	if useCache && s.Hash != "" {
		c.cache.put(k, s)
	}
	return s, nil
}

func pointOf(p []int) *image.Point {
	if len(p) != 2 {
		return nil
	}
	return &image.Point{X: p[0], Y: p[1]}
}

// Exec runs a command and waits for its result: the exit status and each
// channel's output up to the runtime's budget. A refusal (the Authorizer,
// exec limits, a spawn failure) is an *aci.Error matching
// aci.ErrPermissionDenied, ErrTooManyExecs or ErrExecSpawnFailed.
func (c *Client) Exec(ctx context.Context, req *aci.ExecRequest) (*aci.ExecResult, error) {
	x := req.Action(false)
	r, err := c.Do(ctx, &x)
	if err != nil {
		return nil, err
	}
	if r.Result == nil {
		return nil, aci.Errorf(aci.CodeInvalidMessage, "exec was not answered with a result")
	}
	var res aci.ExecResult
	if err := aci.DecodeJSON(r.Result.Value, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// An ExecStream is a streamed exec in progress.
type ExecStream struct {
	mu       sync.Mutex
	cond     *sync.Cond
	chunks   []ExecChunk
	queued   int // bytes in chunks
	exit     *aci.ExecExit
	err      error
	done     bool
	released bool // the connection is closing: queue without waiting
}

// maxExecQueued bounds the output a streamed exec holds unread: past it
// the connection's reader waits for Next, so that the runtime, whose
// sends wait for room, stops reading the command's output and the command
// pauses on a full pipe. Without it a command faster than its reader
// (yes at a shell) grew the queue without bound.
const maxExecQueued = 4 << 20

// ExecChunk is one piece of a streamed exec's output.
type ExecChunk struct {
	Seq     uint64
	Channel string // "stdout" or "stderr"
	Data    []byte
}

// ExecStream starts a streamed exec: read its output with Next until io.EOF,
// then Exit. A refusal before the command runs (the Authorizer, the exec
// limits) is ExecStream's error, a spawn failure (reported after the ack)
// Next's; both are *aci.Error values matching Exec's sentinels.
func (c *Client) ExecStream(ctx context.Context, req *aci.ExecRequest) (*ExecStream, error) {
	x := req.Action(true)
	callID := c.newID("x")
	st := &ExecStream{}
	st.cond = sync.NewCond(&st.mu)
	s := c.session()
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return nil, err
	}
	s.execs[callID] = st
	s.mu.Unlock()
	_, _, r, err := c.roundTrip(ctx, callID, &aci.ActionMsg{CallID: callID, Action: x}, false)
	if err == nil {
		err = (&Reply{}).take(r)
	}
	if err != nil {
		s.mu.Lock()
		delete(s.execs, callID)
		s.mu.Unlock()
		return nil, err
	}
	return st, nil
}

func (s *session) execChunk(cause string, seq uint64, channel string, data []byte) {
	s.mu.Lock()
	x := s.execs[cause]
	s.mu.Unlock()
	if x == nil {
		return
	}
	x.mu.Lock()
	for x.queued > maxExecQueued && !x.released {
		x.cond.Wait()
	}
	x.chunks = append(x.chunks, ExecChunk{Seq: seq, Channel: channel, Data: bytes.Clone(data)})
	x.queued += len(data)
	x.mu.Unlock()
	x.cond.Broadcast()
}

// releaseExecs lets the reader of a closing connection past every
// stream's bound, so that it reaches the close.
func (s *session) releaseExecs() {
	s.mu.Lock()
	xs := make([]*ExecStream, 0, len(s.execs))
	for _, x := range s.execs {
		xs = append(xs, x)
	}
	s.mu.Unlock()
	for _, x := range xs {
		x.mu.Lock()
		x.released = true
		x.mu.Unlock()
		x.cond.Broadcast()
	}
}

func (x *ExecStream) end(exit *aci.ExecExit, err error) {
	x.mu.Lock()
	x.exit, x.err, x.done = exit, err, true
	x.mu.Unlock()
	x.cond.Broadcast()
}

// Next returns the next chunk in seq order, or io.EOF after the exec_exit,
// blocking until one arrives or ctx is done.
func (x *ExecStream) Next(ctx context.Context) (ExecChunk, error) {
	stop := context.AfterFunc(ctx, func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		x.cond.Broadcast()
	})
	defer stop()
	x.mu.Lock()
	defer x.mu.Unlock()
	for {
		if len(x.chunks) > 0 {
			ch := x.chunks[0]
			x.chunks[0] = ExecChunk{}
			x.chunks = x.chunks[1:]
			x.queued -= len(ch.Data)
			x.cond.Broadcast() // a reader waiting for room
			return ch, nil
		}
		if x.done {
			if x.err != nil {
				return ExecChunk{}, x.err
			}
			return ExecChunk{}, io.EOF
		}
		if err := ctx.Err(); err != nil {
			return ExecChunk{}, err
		}
		x.cond.Wait()
	}
}

// Exit returns the exec_exit once Next returned io.EOF or the spawn failure
// (also in its Error field); nil before.
func (x *ExecStream) Exit() *aci.ExecExit {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.exit
}
