package shinken

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"shinken.dev/go/internal/logtext"
	"shinken.dev/go/shinken/aci"
)

// conn is one client session: one reader (serve), one writer (writeLoop),
// one input lane (inputLoop) that keeps this client's input in order, and a
// goroutine per concurrent request.
type conn struct {
	rt     *Runtime
	ws     *websocket.Conn
	stall  *stallConn // the connection underneath, which follows the client's frames
	remote string
	unix   bool
	log    *slog.Logger

	ctx    context.Context // cancelled when the connection ends
	cancel context.CancelCauseFunc

	binary bool // negotiated binary frames

	out   chan outgoing // the writer's queue
	input chan *aci.ActionMsg

	work  sync.WaitGroup // request goroutines
	slots chan struct{}  // bounds concurrent requests

	execs int32 // running execs; guarded by mu
	mu    sync.Mutex

	obs *Observer // structured observation state of this session

	closeOnce sync.Once
	open      atomic.Bool  // the hello was accepted
	over      atomic.Bool  // serve has returned
	active    atomic.Int64 // unix nanoseconds of the last read or write, for keepAlive

	held map[Button][]string // buttons pressed by mouse_down, with the keys held until their mouse_up; touched by the input lane only
	// holding is set while held may be non-empty (from before a press),
	// for the reader: a client's close frame begins the departure of a
	// session that holds something (see departures).
	holding    atomic.Bool
	departOnce sync.Once

	// id and client name the session in the feed; settleRep is the settle
	// of the input lane's last action, for the feed.
	id, client string
	settleRep  SettleReport

	// queued counts the bytes waiting in out. The reader reads no new
	// request while it is over the runtime's MaxQueuedBytes, so a client
	// that stops reading its replies stops being served, instead of
	// growing the runtime's memory.
	qmu    sync.Mutex
	qcond  *sync.Cond
	queued int64
}

func newConn(rt *Runtime, ws *websocket.Conn, remote string, unix bool) *conn {
	c := &conn{
		rt:     rt,
		ws:     ws,
		remote: remote,
		unix:   unix,
		log:    rt.log.With("remote", remote),
		out:    make(chan outgoing, rt.opts.WriteQueue),
		input:  make(chan *aci.ActionMsg, maxInFlight),
		slots:  make(chan struct{}, maxInFlight),
	}
	c.obs = NewObserver(rt.backend)
	if rt.emitting() {
		c.obs.onSettle = func(d time.Duration) { c.emit(Event{Kind: EventSettle, DurationMS: ms(d)}) }
	}
	c.qcond = sync.NewCond(&c.qmu)
	c.held = map[Button][]string{}
	c.id = fmt.Sprintf("s%d", rt.sessions.Add(1))
	return c
}

// closeErr carries the WebSocket close code a connection ends with. peer
// is set when the client ended it (a close frame, or the connection lost):
// the calls it leaves unanswered are then the client's doing, not the
// backend's (see closedCause).
type closeErr struct {
	code   websocket.StatusCode
	reason string
	peer   bool
}

func (e *closeErr) Error() string { return fmt.Sprintf("close %d: %s", e.code, e.reason) }

// depart counts the session among the departures, once: when the client's
// close frame arrives while it holds a button, or when its reader ends.
func (c *conn) depart() { c.departOnce.Do(c.rt.departing.begin) }

func (c *conn) serve(parent context.Context) {
	defer c.finish()
	ws := c.ws
	ws.SetReadLimit(c.rt.opts.ReadLimit)
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	c.ctx, c.cancel = ctx, cancel
	if c.stall != nil {
		c.stall.onStall(c.stalledRead)
		c.stall.onClosing(func() {
			if c.holding.Load() {
				c.depart()
			}
		})
		defer c.stall.stop()
	}
	// Reads never take a cancellable context (cancelling one makes the
	// WebSocket library drop the connection without a close frame): the
	// connection is ended by a close handshake, which ends the read.
	stop := context.AfterFunc(c.rt.ctx, func() {
		why := c.rt.closeReason()
		cancel(why)
		c.closeWS(why.code, why.reason)
	})
	defer stop()

	if !c.handshake() {
		return
	}
	c.emit(Event{Kind: EventSessionOpened})
	defer c.emit(Event{Kind: EventSessionClosed})
	c.touch()
	keepAliveDone := make(chan struct{})
	go func() {
		defer close(keepAliveDone)
		if c.rt.opts.KeepAlive > 0 {
			c.keepAlive()
		}
	}()
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.writeLoop()
	}()
	inputDone := make(chan struct{})
	go func() {
		defer close(inputDone)
		c.inputLoop()
	}()
	c.readLoop()

	// The reader is done: cancel in-flight work, let it finish (its sends
	// fail fast once the context is done), then stop the writer. Other
	// sessions' input waits until what this one held is released.
	c.depart()
	cancel(context.Cause(ctx))
	close(c.input)
	<-inputDone
	c.releaseHeld()
	c.rt.departing.end()
	c.work.Wait()
	c.rt.casts.detach(c)
	<-writerDone
	code, reason := websocket.StatusNormalClosure, ""
	var ce *closeErr
	if errors.As(context.Cause(ctx), &ce) {
		code, reason = ce.code, ce.reason
	}
	c.closeWS(code, reason)
	<-keepAliveDone
}

// stalledRead closes a connection whose client stopped sending in the middle
// of a message (see RuntimeOptions.ReadTimeout). Nothing more is read from
// it: the read waiting for the rest of the frame ends at once, and so does
// the library's wait for the client's close frame, which would follow
// that rest. The close frame goes out all the same.
func (c *conn) stalledRead() {
	reason := fmt.Sprintf("message not completed within the %v read timeout", c.rt.opts.ReadTimeout)
	c.log.Info("client stalled in the middle of a message: closing", "read_timeout", c.rt.opts.ReadTimeout)
	c.cancel(&closeErr{code: websocket.StatusPolicyViolation, reason: reason, peer: true})
	c.stall.Conn.SetReadDeadline(time.Now())
	go c.closeWS(websocket.StatusPolicyViolation, reason)
}

// closeWS starts the close handshake once.
func (c *conn) closeWS(code websocket.StatusCode, reason string) {
	c.closeOnce.Do(func() { c.ws.Close(code, reason) })
}

// handshake reads the hello, checks it and answers with the welcome.
func (c *conn) handshake() bool {
	var timedOut atomic.Bool
	timer := time.AfterFunc(c.rt.opts.HandshakeTimeout, func() {
		timedOut.Store(true)
		c.closeWS(websocket.StatusPolicyViolation, "no hello within the handshake timeout")
	})
	defer timer.Stop()
	typ, data, err := c.ws.Read(context.Background())
	if err != nil {
		if timedOut.Load() {
			c.rt.emit(Event{Kind: EventHelloRefused, Outcome: "timeout"})
		}
		c.ws.CloseNow()
		return false
	}
	refuse := func(outcome string, reason string) bool {
		c.rt.emit(Event{Kind: EventHelloRefused, Outcome: outcome})
		c.ws.Close(websocket.StatusPolicyViolation, reason)
		return false
	}
	// Not c.ctx: a shutdown that cancels it mid-write would make the
	// WebSocket library drop the connection without its 1001 close frame.
	ctx, cancel := context.WithTimeout(context.Background(), c.rt.opts.WriteTimeout)
	defer cancel()
	if typ != websocket.MessageText {
		return refuse("bad_hello", "the first message must be a text hello")
	}
	m, err := aci.Unmarshal(data)
	if err != nil {
		return refuse("bad_hello", truncateReason("bad hello: "+err.Error()))
	}
	hello, ok := m.(*aci.Hello)
	if !ok {
		return refuse("bad_hello", "the first message must be a hello, not "+m.MessageType())
	}
	if !c.rt.tokenOK(hello.Token, c.unix) {
		// Anyone who can connect can send these, as fast as they like: a
		// few are logged, the rest counted into the next one.
		if ok, unlogged := c.rt.refusedLog.Allow(); ok {
			c.log.Warn("hello refused: bad token", logtext.String("client", hello.Client.Name), "unlogged", unlogged)
		}
		return refuse("unauthorized", "unauthorized: bad or missing token")
	}
	// Open before the welcome, and the token checked again once open: a
	// SetToken either finds this session open and ends it, or stored its
	// new token before the check below, which then refuses the old one. So
	// no session is welcomed with a token that has been replaced.
	c.open.Store(true)
	if !c.rt.tokenOK(hello.Token, c.unix) {
		c.open.Store(false)
		return refuse("unauthorized", "unauthorized: the token changed")
	}
	c.binary = hello.Accept != nil && hello.Accept.BinaryFrames
	w := &aci.Welcome{Server: aci.ServerInfo{Name: c.rt.opts.Name, Version: aci.Version, Platform: c.rt.platform}, Capabilities: c.rt.caps}
	data, err = aci.Marshal(w)
	if err == nil {
		err = c.ws.Write(ctx, websocket.MessageText, data)
	}
	if err != nil {
		c.open.Store(false)
		c.ws.CloseNow()
		return false
	}
	c.client = logtext.Cut(hello.Client.Name) // events and recordings keep it
	c.log = c.log.With(logtext.String("client", hello.Client.Name))
	c.log.Debug("session open", "binary", c.binary)
	return true
}

func truncateReason(s string) string {
	// A close reason must fit in a control frame (123 bytes).
	if len(s) > 120 {
		s = s[:117]
		for len(s) > 0 && s[len(s)-1]&0xc0 == 0x80 {
			s = s[:len(s)-1]
		}
		if len(s) > 0 && s[len(s)-1] >= 0xc0 {
			s = s[:len(s)-1]
		}
		s += "..."
	}
	return s
}
