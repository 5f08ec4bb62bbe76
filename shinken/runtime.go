package shinken

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"image"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"shinken.dev/go/internal/logtext"
	"shinken.dev/go/shinken/aci"
)

// RuntimeOptions configure a Runtime. A nil *RuntimeOptions means defaults.
type RuntimeOptions struct {
	// Token is the bearer token a hello must carry. It is required on every
	// TCP connection: with an empty Token, TCP clients are refused. Over a
	// unix socket an empty Token admits every client. SetToken replaces it
	// while the Runtime serves.
	Token            string
	Name             string        // the server name in the welcome; default "shinken"
	Logger           *slog.Logger  // default slog.Default()
	HandshakeTimeout time.Duration // the wait for the hello; default 10 s
	ReadLimit        int64         // bounds one incoming message (larger: closed with 1009); default 16 MiB
	WriteQueue       int           // outgoing messages a connection buffers before its handlers wait; default 64
	// MaxQueuedBytes bounds the bytes of replies waiting for one slow
	// client; past it the runtime reads no new request from that client
	// until it catches up. Default 32 MiB.
	MaxQueuedBytes int64
	WriteTimeout   time.Duration // bounds one message's write (slower: disconnected); default 30 s
	// ReadTimeout bounds one message's read, first byte to last, whatever
	// KeepAlive says (a client stalled mid-message is closed with 1008);
	// idle sessions stay open. Default 30 s; negative means no bound.
	ReadTimeout     time.Duration
	MaxLongEdge     int           // caps the long edge of every delivered image; default 4096
	JPEGQuality     int           // the default JPEG quality; default 80
	MaxWait         time.Duration // caps the wait verb; default 60 s
	MaxDragDuration time.Duration // caps a drag's duration_ms; default 10 s
	MaxTypeText     int           // caps one type_text (input is serialised runtime-wide); default 64 KiB
	MaxScreencasts  int           // the screencasts one connection runs at once; default 4
	MaxClipboard    int           // caps the clipboard text, both ways, in bytes; default 4 MiB
	OriginPatterns  []string      // browser origins allowed besides the runtime's own host (websocket.AcceptOptions)
	Authorizer      Authorizer    // when set, is asked before exec and launch_app run
	Exec            ExecOptions   // configures the exec verb
	Executor        Executor      // runs exec; default: the backend, if it implements Executor
	// SettleCap bounds the wait after each input action for the UI to fall
	// quiet ([Settler]); default 1.5 s, clamped to [50 ms, 10 s].
	SettleCap time.Duration
	Recorder  Recorder // when set, is told every [Event], synchronously (metrics)
	// KeepAlive is how long a session may stay idle (nothing read or
	// written) before the runtime pings the client, so that routers do not
	// drop it and a vanished client is found; default 25 s, below common
	// router idle timeouts (30 to 60 s). Negative disables the pings.
	KeepAlive time.Duration
	// MaxMessage caps one outgoing message; default 16 MiB, what common
	// WebSocket routers pass. A reply that would be larger is answered
	// with ok=false and the code too_large instead (ask for a smaller
	// image with max_long_edge or jpeg); a screencast frame that would be
	// larger is skipped.
	MaxMessage int
	Feed       *Feed // when set, fans every [Event] out to its subscribers, never blocking
}

// ExecOptions configure the exec verb. Zero fields take their defaults.
type ExecOptions struct {
	DefaultTimeout time.Duration // default 60 s
	MaxTimeout     time.Duration // hard cap on timeout_ms; default 10 min; the machine tools' shell start is held by its idle bound, the executor's maximum and 24 h instead
	OutputBudget   int           // each channel's budget for a buffered exec; default 1 MiB
	StreamBudget   int64         // the total output budget of a streamed exec; default 64 MiB
	ChunkSize      int           // caps one exec_output chunk; default 32 KiB
	MaxPerConn     int           // bounds concurrent execs of one connection; default 8
	MaxTotal       int           // bounds concurrent execs of the runtime; default 32
}

// An Authorizer decides whether a sensitive action may run. Authorize returns
// nil to allow it; any error refuses it, and its text reaches the client as
// "permission_denied: <text>".
type Authorizer interface {
	Authorize(ctx context.Context, req AuthRequest) error
}

// AuthRequest describes an action awaiting authorization.
type AuthRequest struct {
	Verb   aci.Verb    // VerbExec or VerbLaunchApp
	Action *aci.Action // the action as the client sent it; do not modify
	// Remote is the client's network address, when known.
	Remote string
	Intent *Intent // what a machine tool's exec does (judge it, not its script); nil for any other
}

// An Intent is what a machine tool's exec does, read back from the tool's
// fixed plumbing, word for word, so that no exec can pass for another.
type Intent struct {
	Tool        string   // read_file, write_file, list_files, shell…
	Kind        string   // "read", "edit" or "command", the plugin protocol's kinds
	Path, To    string   // what a read or an edit touches; a move's destination
	Line        string   // a command's line (one typed into a shell)
	Dir         string   // the folder Line runs in (the shell's working folder); "" when not known
	Argv        []string // a command's program and arguments (open's opener, the shell)
	Interactive bool     // the command reads what to run as it runs
	Dynamic     bool     // what the command runs is known only when it runs (open's opener)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, req AuthRequest) error

// Authorize calls f.
func (f AuthorizerFunc) Authorize(ctx context.Context, req AuthRequest) error { return f(ctx, req) }

// A Runtime serves ACI v0 over WebSocket for one Backend. It is an
// http.Handler; Serve runs it on any net.Listener, unix sockets included.
// A Runtime is safe for concurrent use.
type Runtime struct {
	backend Backend
	opts    RuntimeOptions
	log     *slog.Logger

	capturer  Capturer
	injector  Injector
	a11y      A11y
	executor  Executor
	clipboard Clipboard
	windows   Windows
	launcher  Launcher
	pointer   PointerReporter
	watcher   ChangeWatcher
	settler   Settler

	caps     aci.Capabilities
	platform aci.Platform
	verbs    map[aci.Verb]bool

	inputMu   sync.Mutex // serialises input runtime-wide
	departing departures // sessions ending, whose held input is not released yet
	held      *hold      // a person's takeover; guarded by inputMu
	lastPtr   atomic.Pointer[image.Point]
	lastPress pressRecord // guarded by inputMu

	obsSeq   atomic.Uint64
	sessions atomic.Uint64 // numbers the sessions for the feed
	execs    atomic.Int64
	encodes  atomic.Uint64 // images encoded, for tests and metrics
	// pixelSlots admits the captures (grab) and encodes that run at once:
	// one fewer than the Go scheduler has processors (one on two cores).
	// The others wait parked, not runnable, so a probe, a ping or an ack
	// finds a processor soon however many clients ask for pixels: with
	// every processor taken by 200 clients' frames, a /readyz that does
	// no work waited up to 762 ms, measured from another process.
	pixelSlots chan struct{}

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	conns  sync.WaitGroup
	closed atomic.Bool
	// closeWhy, when set before closed, is how the sessions are closed
	// (see CloseRestarted).
	closeWhy atomic.Pointer[closeErr]
	// refusedLog bounds the records of refused hellos, which anyone who
	// can connect causes at will.
	refusedLog logtext.Limiter

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	live      map[*conn]struct{}

	casts  *castRegistry
	frames shapeCache

	token   atomic.Pointer[string] // the current token; see SetToken
	drainMu sync.Mutex
	drain   drainState
}

// NewRuntime returns a Runtime serving b. See [Backend] for how b's
// interfaces are found.
func NewRuntime(b Backend, opts *RuntimeOptions) *Runtime {
	rt := &Runtime{backend: b, listeners: map[net.Listener]struct{}{}, live: map[*conn]struct{}{},
		pixelSlots: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1))}
	if opts != nil {
		rt.opts = *opts
	}
	o := &rt.opts
	if o.Name == "" {
		o.Name = "shinken"
	}
	rt.log = o.Logger
	if rt.log == nil {
		rt.log = slog.Default()
	}
	if err := CheckBackend(b); err != nil {
		rt.log.Warn("the backend misses a capability by its signature", "err", err)
	}
	defaultDur(&o.HandshakeTimeout, 10*time.Second)
	defaultDur(&o.WriteTimeout, 30*time.Second)
	if o.ReadTimeout == 0 { // negative: no bound
		o.ReadTimeout = 30 * time.Second
	}
	defaultDur(&o.MaxWait, 60*time.Second)
	defaultDur(&o.MaxDragDuration, 10*time.Second)
	defaultDur(&o.Exec.DefaultTimeout, 60*time.Second)
	defaultDur(&o.Exec.MaxTimeout, 10*time.Minute)
	defaultInt(&o.WriteQueue, 64)
	defaultInt(&o.MaxLongEdge, 4096)
	defaultInt(&o.JPEGQuality, 80)
	defaultInt(&o.MaxTypeText, 64<<10)
	defaultInt(&o.MaxScreencasts, 4)
	defaultInt(&o.MaxClipboard, 4<<20)
	defaultInt(&o.Exec.OutputBudget, 1<<20)
	defaultInt(&o.Exec.ChunkSize, 32<<10)
	defaultInt(&o.Exec.MaxPerConn, 8)
	defaultInt(&o.Exec.MaxTotal, 32)
	if o.Exec.StreamBudget <= 0 {
		o.Exec.StreamBudget = 64 << 20
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = 16 << 20
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = 25 * time.Second
	}
	defaultInt(&o.MaxMessage, 16<<20)
	rt.token.Store(&o.Token)
	if o.MaxQueuedBytes <= 0 {
		o.MaxQueuedBytes = 32 << 20
	}

	rt.capturer, _ = b.(Capturer)
	rt.injector, _ = b.(Injector)
	rt.a11y, _ = b.(A11y)
	rt.executor, _ = b.(Executor)
	if o.Executor != nil {
		rt.executor = o.Executor
	}
	rt.clipboard, _ = b.(Clipboard)
	rt.windows, _ = b.(Windows)
	rt.launcher, _ = b.(Launcher)
	rt.pointer, _ = b.(PointerReporter)
	rt.watcher, _ = b.(ChangeWatcher)
	rt.settler, _ = b.(Settler)
	o.SettleCap = settleCap(o.SettleCap)
	rt.platform = aci.PlatformLinux
	if p, ok := b.(PlatformReporter); ok {
		rt.platform = p.Platform()
	}
	rt.ctx, rt.cancel = context.WithCancel(context.Background())
	rt.casts = newCastRegistry()
	rt.caps = rt.capabilities()
	rt.verbs = map[aci.Verb]bool{}
	for _, v := range rt.caps.Verbs {
		rt.verbs[v] = true
	}
	return rt
}

func defaultDur(d *time.Duration, v time.Duration) {
	if *d <= 0 {
		*d = v
	}
}

func defaultInt(i *int, v int) {
	if *i <= 0 {
		*i = v
	}
}

// Capabilities returns what the welcome advertises: exactly the verbs,
// targets and observation types this runtime and its backend provide.
func (rt *Runtime) Capabilities() aci.Capabilities { return rt.caps }

func (rt *Runtime) capabilities() aci.Capabilities {
	c := aci.Capabilities{
		Verbs:            []aci.Verb{},
		Targets:          []aci.TargetKind{},
		ObservationTypes: []aci.ObservationType{},
		MaxLongEdge:      rt.opts.MaxLongEdge,
		BinaryFrames:     true,
	}
	add := func(ok bool, vs ...aci.Verb) {
		if ok {
			c.Verbs = append(c.Verbs, vs...)
		}
	}
	in := rt.injector != nil
	add(in, aci.VerbClick, aci.VerbDoubleClick, aci.VerbRightClick, aci.VerbMove, aci.VerbDrag, aci.VerbMouseDown, aci.VerbMouseUp, aci.VerbScroll, aci.VerbTypeText, aci.VerbKey)
	add(rt.capturer != nil, aci.VerbScreenshot, aci.VerbStartScreencast, aci.VerbStopScreencast)
	add(true, aci.VerbWait)
	add(rt.a11y != nil, aci.VerbObserve, aci.VerbInvokeAction, aci.VerbSetValue)
	add(rt.executor != nil, aci.VerbExec)
	add(rt.clipboard != nil, aci.VerbClipboardGet, aci.VerbClipboardSet)
	add(rt.launcher != nil, aci.VerbLaunchApp)
	add(rt.windows != nil, aci.VerbActivateWindow)
	if in {
		c.Targets = append(c.Targets, aci.TargetPointPx, aci.TargetPointNorm)
	}
	if rt.a11y != nil {
		c.Targets = append(c.Targets, aci.TargetElementRef)
		c.ObservationTypes = append(c.ObservationTypes, aci.ObsA11y)
		c.StructuredObservation = true
	}
	if rt.capturer != nil {
		c.ObservationTypes = append(c.ObservationTypes, aci.ObsScreenshot, aci.ObsScreencast)
		c.ImageFormats = []aci.ImageFormat{aci.FormatPNG, aci.FormatJPEG}
		c.FrameDedup = true
		c.ObserveAfterAct = true
	}
	return c
}

// ServeHTTP upgrades the request to a WebSocket and serves one ACI session
// on it until the client leaves or the Runtime closes.
func (rt *Runtime) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Add before Close can Wait: both happen under mu.
	rt.mu.Lock()
	if rt.closed.Load() {
		rt.mu.Unlock()
		http.Error(w, "shinken: runtime closed", http.StatusServiceUnavailable)
		return
	}
	rt.conns.Add(1)
	rt.mu.Unlock()
	defer rt.conns.Done()
	if rt.Draining() {
		rt.emit(Event{Kind: EventHelloRefused, Outcome: "draining"})
		http.Error(w, "shinken: runtime draining", http.StatusServiceUnavailable)
		return
	}
	sw := &stallWriter{ResponseWriter: w, limit: rt.opts.ReadTimeout}
	ws, err := websocket.Accept(sw, r, &websocket.AcceptOptions{OriginPatterns: rt.opts.OriginPatterns})
	if err != nil {
		rt.log.Debug("websocket accept failed", "remote", r.RemoteAddr, logtext.Err(err))
		return
	}
	unix := false
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && a.Network() == "unix" {
		unix = true
	}
	c := newConn(rt, ws, r.RemoteAddr, unix)
	c.stall = sw.conn
	rt.mu.Lock()
	rt.live[c] = struct{}{}
	rt.mu.Unlock()
	defer func() {
		rt.mu.Lock()
		delete(rt.live, c)
		rt.mu.Unlock()
	}()
	c.serve(r.Context())
}

// Serve accepts connections on l and serves the ACI at every path until
// Close is called or l fails. It closes l when it returns.
func (rt *Runtime) Serve(l net.Listener) error {
	if rt.closed.Load() {
		l.Close()
		return aci.ErrClosed
	}
	srv := &http.Server{Handler: rt, ReadHeaderTimeout: 10 * time.Second}
	rt.mu.Lock()
	rt.listeners[l] = struct{}{}
	rt.mu.Unlock()
	stop := context.AfterFunc(rt.ctx, func() { srv.Close() })
	defer stop()
	err := srv.Serve(l)
	rt.mu.Lock()
	delete(rt.listeners, l)
	rt.mu.Unlock()
	if rt.closed.Load() {
		return nil
	}
	return err
}

// Close closes every connection with 1001 (going away), kills every exec
// the runtime started, stops every screencast, and waits for the work to
// end. It is safe to call more than once. Drain is the gentle form, which
// lets the calls in flight finish first.
func (rt *Runtime) Close() error {
	rt.mu.Lock()
	if !rt.closed.CompareAndSwap(false, true) {
		rt.mu.Unlock()
		return nil
	}
	rt.mu.Unlock()
	rt.cancel()
	rt.conns.Wait()
	rt.casts.close()
	return nil
}

// tokenOK compares in constant time: both sides are hashed first so that not
// even the token's length leaks through timing.
func (rt *Runtime) tokenOK(got string, unix bool) bool {
	token := *rt.token.Load()
	if token == "" {
		return unix
	}
	a := sha256.Sum256([]byte(got))
	b := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

func (rt *Runtime) display(ctx context.Context) (Display, error) {
	if rt.capturer == nil {
		return Display{}, aci.Errorf(aci.CodeUnsupported, "the backend has no display")
	}
	d, err := rt.capturer.Display(ctx)
	if err != nil {
		return d, err
	}
	if d.DPR <= 0 {
		d.DPR = 1
	}
	return d, nil
}
