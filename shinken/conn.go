package shinken

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"shinken.dev/go/internal/logtext"
	"shinken.dev/go/internal/strictjson"
	"shinken.dev/go/shinken/aci"
)

// conn is one client session: one reader (serve), one writer (writeLoop),
// one input lane (inputLoop) that keeps this client's input in order, and a
// goroutine per concurrent request.
type conn struct {
	rt     *Runtime
	ws     *websocket.Conn
	stall  *stallConn // the connection underneath, when ReadTimeout bounds its reads
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

type outgoing struct {
	typ  websocket.MessageType
	data []byte
	done func() // called after the write, or when it is dropped
}

// maxInFlight bounds the concurrent requests of one connection; past it the
// reader waits, which pushes back on the client.
const maxInFlight = 16

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

func (c *conn) serve(parent context.Context) {
	defer c.finish()
	ws := c.ws
	ws.SetReadLimit(c.rt.opts.ReadLimit)
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	c.ctx, c.cancel = ctx, cancel
	if c.stall != nil {
		c.stall.onStall(c.stalledRead)
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
	c.rt.departing.begin()
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

func (c *conn) readLoop() {
	wake := context.AfterFunc(c.ctx, func() {
		c.qmu.Lock()
		c.qcond.Broadcast()
		c.qmu.Unlock()
	})
	defer wake()
	for {
		if !c.waitForRoom() {
			return
		}
		typ, data, err := c.ws.Read(context.Background())
		c.touch()
		if err != nil {
			var ce websocket.CloseError
			switch {
			case errors.As(err, &ce):
				c.cancel(&closeErr{code: websocket.StatusNormalClosure, peer: true})
			case strings.Contains(err.Error(), "read limited at"):
				c.cancel(&closeErr{code: websocket.StatusMessageTooBig, reason: fmt.Sprintf("message over the %d-byte read limit", c.rt.opts.ReadLimit)})
			case c.ctx.Err() != nil:
			default:
				// The connection was lost: the client is gone.
				c.cancel(&closeErr{code: websocket.StatusNormalClosure, peer: true})
			}
			return
		}
		if typ != websocket.MessageText {
			c.cancel(&closeErr{code: websocket.StatusUnsupportedData, reason: "clients send text messages only"})
			return
		}
		if !c.dispatch(data) {
			return
		}
	}
}

// dispatch routes one message. It returns false when the connection must
// close.
func (c *conn) dispatch(data []byte) bool {
	m, err := aci.Unmarshal(data)
	if err != nil {
		callID, _ := strictjson.TopString(data, "call_id")
		if callID == "" {
			c.cancel(&closeErr{code: websocket.StatusInvalidFramePayloadData, reason: truncateReason(err.Error())})
			return false
		}
		typ, _ := strictjson.TopString(data, "type")
		verb, streamed := aci.Verb(""), false
		if typ == "action" {
			verb, streamed = peekVerb(data)
		}
		c.log.Info("invalid message", logtext.String("call_id", callID), logtext.Err(err))
		if streamed {
			c.send(&aci.Ack{CallID: callID, OK: false, Error: aci.WireError(err)})
			return true
		}
		c.fail(callID, typ, verb, err)
		return true
	}
	switch m := m.(type) {
	case *aci.Ping:
		c.send(&aci.Pong{T: m.T})
	case *aci.Query:
		if !c.rt.admit() {
			c.fail(m.CallID, "query", "", errDraining)
			return true
		}
		c.goWork(func() { c.query(m) })
	case *aci.ActionMsg:
		v := m.Action.Verb
		if !c.rt.verbs[v] {
			err := aci.Errorf(aci.CodeUnsupportedVerb, "%s is not supported by this runtime's backend", v)
			if v == "exec" {
				err = aci.Errorf(aci.CodeUnsupportedVerb, "exec is not supported by this runtime's backend: the runtime has no executor; set RuntimeOptions.Executor (e.g. osexec.New)")
			}
			c.emitAction(m, time.Now(), time.Time{}, err)
			c.fail(m.CallID, "action", v, err)
			return true
		}
		if !c.rt.admit() {
			c.emitAction(m, time.Now(), time.Time{}, errDraining)
			c.fail(m.CallID, "action", v, errDraining)
			return true
		}
		// Mutations, and the screencast switches, keep this client's order:
		// a stop sent after a start must find the stream started.
		if v.Mutating() || v == aci.VerbStartScreencast || v == aci.VerbStopScreencast {
			select {
			case c.input <- m:
			case <-c.ctx.Done():
				c.rt.callDone()
				return false
			}
			return true
		}
		c.goWork(func() { c.act(m) })
	case *aci.Hello:
		c.cancel(&closeErr{code: websocket.StatusPolicyViolation, reason: "hello sent twice"})
		return false
	default:
		c.cancel(&closeErr{code: websocket.StatusPolicyViolation, reason: "clients do not send " + m.MessageType() + " messages"})
		return false
	}
	return true
}

// peekVerb finds the verb of an action message that failed to decode, and
// whether it asked for a streamed exec, to answer in the right shape. Keys
// match exactly, as everywhere on this wire.
func peekVerb(data []byte) (aci.Verb, bool) {
	action, ok := strictjson.TopRaw(data, "action")
	if !ok {
		return "", false
	}
	v, _ := strictjson.TopString(action, "verb")
	stream, _ := strictjson.TopRaw(action, "stream")
	return aci.Verb(v), aci.Verb(v) == aci.VerbExec && string(stream) == "true"
}

// goWork runs the call f on its own goroutine, at most maxInFlight at
// once: past that the reader waits, which pushes back on the client. The
// call was admitted (Runtime.admit); it is counted out when f returns.
func (c *conn) goWork(f func()) {
	select {
	case c.slots <- struct{}{}:
	case <-c.ctx.Done():
		c.rt.callDone()
		return
	}
	c.work.Add(1)
	go func() {
		defer func() { <-c.slots; c.work.Done(); c.rt.callDone() }()
		defer c.recover()
		f()
	}()
}

// recoverCall turns a panic in a handler into an internal_error reply, so
// the call is answered and the process stays up.
func (c *conn) recoverCall(callID, typ string, verb aci.Verb) {
	if r := recover(); r != nil {
		c.log.Error("handler panic", logtext.String("call_id", callID), "panic", r, "stack", string(debug.Stack()))
		c.fail(callID, typ, verb, aci.Errorf(aci.CodeInternal, "the runtime failed handling this call (%v)", r))
	}
}

func (c *conn) recover() {
	if r := recover(); r != nil {
		c.log.Error("handler panic", "panic", r, "stack", string(debug.Stack()))
	}
}

func (c *conn) inputLoop() {
	for m := range c.input {
		if c.ctx.Err() != nil {
			c.rt.callDone()
			continue // drain
		}
		func() {
			defer c.rt.callDone()
			defer c.recover()
			c.act(m)
		}()
	}
}

// send queues a message for the writer. It waits while the queue is full
// (replies are never dropped) and gives up only when the connection ends.
func (c *conn) send(m aci.Message) bool {
	data, err := aci.Marshal(m)
	if err != nil {
		c.log.Error("encode failed", "type", m.MessageType(), "err", err)
		return false
	}
	if len(data) > c.rt.opts.MaxMessage {
		return c.sendTooLarge(m, len(data))
	}
	return c.enqueue(outgoing{typ: websocket.MessageText, data: data})
}

// waitForRoom waits while the queued replies are over the byte budget. It
// reports false when the connection ended meanwhile.
func (c *conn) waitForRoom() bool {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	for c.queued > c.rt.opts.MaxQueuedBytes && c.ctx.Err() == nil {
		c.qcond.Wait()
	}
	return c.ctx.Err() == nil
}

func (c *conn) account(n int) {
	c.qmu.Lock()
	c.queued += int64(n)
	if n < 0 {
		c.qcond.Broadcast()
	}
	c.qmu.Unlock()
}

func (c *conn) enqueue(o outgoing) bool {
	c.account(len(o.data))
	select {
	case c.out <- o:
		return true
	case <-c.ctx.Done():
		c.account(-len(o.data))
		if o.done != nil {
			o.done()
		}
		return false
	}
}

func (c *conn) writeLoop() {
	for {
		select {
		case o := <-c.out:
			if !c.write(o) {
				return
			}
		case <-c.ctx.Done():
			// Flush what is already queued, so the replies to work that
			// finished are not lost, then stop.
			for {
				select {
				case o := <-c.out:
					if !c.write(o) {
						return
					}
				default:
					return
				}
			}
		}
	}
}

func (c *conn) write(o outgoing) bool {
	ctx, cancel := context.WithTimeout(context.Background(), c.rt.opts.WriteTimeout)
	defer cancel()
	err := c.ws.Write(ctx, o.typ, o.data)
	c.touch()
	c.account(-len(o.data))
	if o.done != nil {
		o.done()
	}
	if err != nil {
		c.cancel(&closeErr{code: websocket.StatusGoingAway, reason: "write failed", peer: true})
		return false
	}
	return true
}

// errClientClosed stands, in the runtime's records, for the error of a call
// the client left before its answer: its outcome is OutcomeClientClosed.
var errClientClosed = errors.New("shinken: the client closed the connection")

// closedCause is what a call's error err stands for in the runtime's
// records. A call that failed once the connection was over failed because
// it was (its context was cancelled): that is the client's doing when the
// client left, and the runtime's closing otherwise, never the backend's
// error.
func (c *conn) closedCause(err error) error {
	if err != nil && c.ctx.Err() != nil {
		var ce *closeErr
		if errors.As(context.Cause(c.ctx), &ce) && ce.peer {
			return errClientClosed
		}
		return aci.ErrClosed
	}
	return err
}

// fail answers a request with ok=false, in the shape its verb answers with.
func (c *conn) fail(callID, typ string, verb aci.Verb, err error) {
	msg := aci.WireError(err)
	if typ == "query" || verb == aci.VerbClipboardGet || verb == aci.VerbExec {
		c.send(&aci.Result{CallID: callID, OK: false, Error: msg})
		return
	}
	c.send(&aci.Ack{CallID: callID, OK: false, Error: msg})
}

func (c *conn) ack(callID string) { c.send(&aci.Ack{CallID: callID, OK: true}) }

func (c *conn) result(callID string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		c.send(&aci.Result{CallID: callID, OK: false, Error: aci.WireError(aci.Errorf(aci.CodeInternal, "encode result: %v", err))})
		return
	}
	c.send(&aci.Result{CallID: callID, OK: true, Value: data})
}

func (c *conn) query(q *aci.Query) {
	defer c.recoverCall(q.CallID, "query", "")
	ctx := c.ctx
	switch q.Q {
	case aci.QueryPlatform:
		c.result(q.CallID, c.rt.platform)
	case aci.QueryScreenSize:
		d, err := c.rt.display(ctx)
		if err != nil {
			c.fail(q.CallID, "query", "", err)
			return
		}
		c.result(q.CallID, aci.ScreenSize{W: d.W, H: d.H})
	case aci.QueryReady:
		ready := true
		if c.rt.capturer != nil {
			_, err := c.rt.capturer.Display(ctx)
			ready = err == nil
		}
		c.result(q.CallID, ready)
	case aci.QueryListWindows:
		if c.rt.windows == nil {
			c.fail(q.CallID, "query", "", aci.Errorf(aci.CodeUnsupported, "the backend cannot list windows"))
			return
		}
		ws, err := c.rt.windows.Windows(ctx)
		if err != nil {
			c.fail(q.CallID, "query", "", err)
			return
		}
		out := make([]aci.WindowInfo, 0, len(ws))
		for _, w := range ws {
			out = append(out, windowInfo(w))
		}
		c.result(q.CallID, out)
	}
}

func windowInfo(w Window) aci.WindowInfo {
	wi := aci.WindowInfo{ID: w.ID, Title: w.Title, App: w.App, PID: w.PID}
	if !w.BBox.Empty() {
		wi.BBox = []int{w.BBox.Min.X, w.BBox.Min.Y, w.BBox.Dx(), w.BBox.Dy()}
	}
	active := w.Active
	wi.Active = &active
	return wi
}

// act runs one action and answers it.
func (c *conn) act(m *aci.ActionMsg) {
	a := &m.Action
	defer c.recoverCall(m.CallID, "action", a.Verb)
	if err := honoured(a); err != nil {
		c.fail(m.CallID, "action", a.Verb, err)
		return
	}
	start := time.Now()
	var err error
	var answered time.Time
	if c.rt.emitting() {
		if a.Verb.Mutating() {
			c.settleRep = SettleReport{} // the input lane's own
		}
		defer func() { c.emitAction(m, start, answered, err) }()
	}
	switch a.Verb {
	case aci.VerbScreenshot:
		err = c.screenshot(m.CallID, a)
		if err == nil {
			return
		}
	case aci.VerbStartScreencast:
		// It acks itself, before its first frame can be queued.
		if err = c.startScreencast(m.CallID, a); err == nil {
			return
		}
	case aci.VerbStopScreencast:
		c.rt.casts.stop(c)
	case aci.VerbWait:
		if err = c.rt.checkWait(a.MS); err != nil {
			break
		}
		t := time.NewTimer(time.Duration(a.MS) * time.Millisecond)
		select {
		case <-t.C:
		case <-c.ctx.Done():
			t.Stop()
			err = c.ctx.Err() // unanswered: recorded as the connection's end
			return
		}
	case aci.VerbObserve:
		err = c.observe(m.CallID, a)
		if err == nil {
			return
		}
	case aci.VerbExec:
		err = c.exec(m.CallID, a)
		return
	case aci.VerbClipboardGet:
		var text string
		text, err = c.rt.clipboard.ClipboardText(c.ctx)
		if err == nil && len(text) > c.rt.opts.MaxClipboard {
			err = aci.Errorf(aci.CodeTooLarge, "the clipboard holds %d bytes of text; at most %d are returned", len(text), c.rt.opts.MaxClipboard)
		}
		if err != nil {
			c.fail(m.CallID, "action", a.Verb, err)
			return
		}
		c.result(m.CallID, aci.ClipboardValue{Text: text})
		return
	default:
		err = c.mutate(m.CallID, a)
	}
	if err != nil {
		c.log.Debug("action failed", logtext.String("call_id", m.CallID), "verb", a.Verb, logtext.Err(err))
		c.fail(m.CallID, "action", a.Verb, err)
		return
	}
	answered = time.Now()
	c.ack(m.CallID)
	c.log.Debug("action", logtext.String("call_id", m.CallID), "verb", a.Verb, "took", time.Since(start))
	if a.Observe != nil && a.Verb.Mutating() {
		o := a.Observe
		if err := c.capture(m.CallID, o.Scope, o.Format, o.Quality, o.MaxLongEdge, ""); err != nil {
			// The action was done and acked; the observation the ack
			// promised cannot come, so a second ack, not ok, says why.
			c.log.Info("observe-after-act capture failed", logtext.String("call_id", m.CallID), logtext.Err(err))
			c.send(&aci.Ack{CallID: m.CallID, OK: false, Error: aci.WireError(err)})
		}
	}
}
