// Package jsonrpc is a strict JSON-RPC 2.0 peer over newline-delimited
// lines: one message, or one batch, per line.
//
// Strict means: a byte cap on each line, checked before anything is decoded;
// UTF-8 only; keys matched case-sensitively and never twice in one object;
// no member the specification does not name. A line that is not JSON is
// answered with CodeParse, a message that is not JSON-RPC 2.0 with
// CodeInvalidRequest, both with a null id when no id can be trusted.
//
// A Conn is both a client and a server, as each side of a plugin protocol
// calls the other. Responses are routed on the reading goroutine. A request
// that arrives when nothing else is being handled is served on the reading
// goroutine itself, which lends its reading to the handler: a new goroutine
// takes over reading when the handler calls the other side or runs past a
// millisecond. Other requests run on a bounded pool of workers that answers
// at once when it is full and never blocks the reader; notifications run
// one at a time in arrival order. A line is written by its caller when
// nothing else waits, in one attempt that never blocks (on a non-blocking
// file); otherwise, and for whatever that attempt leaves, one goroutine
// gathers whatever is waiting into one write. No caller ever blocks on a
// peer that does not read, and no message starts a timer.
package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"runtime/debug"

	"shinken.dev/go/internal/logtext"
	"shinken.dev/go/internal/strictjson"
)

// A Request is a call or a notification received from the other side.
type Request struct {
	Method string
	Params []byte // raw JSON object or array; nil when absent
	ID     []byte // raw JSON id; nil for a notification
}

// Notification reports whether r expects no answer.
func (r *Request) Notification() bool { return r.ID == nil }

// A Handler serves the other side's requests and notifications.
//
// The result is encoded with encoding/json, except a json.RawMessage, which
// is written as it is and must be valid JSON. An error that is, or wraps, an
// *Error is answered with its code and message; any other error is answered
// CodeInternal with a generic message and reported as an EventHandler.
// A notification's result is dropped and its error reported as an
// EventHandler. A handler that panics is answered and reported as one
// that failed, its panic and stack in the event's error: the connection
// and the process go on.
type Handler interface {
	Handle(ctx context.Context, req *Request) (result any, err error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req *Request) (any, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (any, error) { return f(ctx, req) }

// EventKind says what an Event reports.
type EventKind uint8

// Event kinds: the other side's misbehaviour and this side's refusals, for
// a journal.
const (
	EventParse        EventKind = iota + 1 // a line that is not JSON, answered CodeParse
	EventInvalid                           // a message that is not JSON-RPC 2.0, answered CodeInvalidRequest
	EventTooLong                           // a line over the cap, discarded and answered CodeInvalidRequest
	EventUnknownReply                      // a response to no waiting call: late, repeated or made up
	EventBusy                              // a request answered Options.Busy: every worker was taken
	EventDropped                           // a notification dropped: too many were waiting
	EventHandler                           // a handler failed with an error that is not an *Error
	EventWrite                             // an answer that could not be queued for writing
)

var eventNames = [...]string{
	EventParse:        "parse",
	EventInvalid:      "invalid",
	EventTooLong:      "too long",
	EventUnknownReply: "unknown reply",
	EventBusy:         "busy",
	EventDropped:      "dropped",
	EventHandler:      "handler",
	EventWrite:        "write",
}

// String returns the kind's name, for a journal.
func (k EventKind) String() string {
	if int(k) < len(eventNames) && eventNames[k] != "" {
		return eventNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// An Event is something a journal should hear about.
type Event struct {
	Kind   EventKind
	Method string // the method concerned, when there is one
	ID     string // the id concerned, as raw JSON, when there is one
	Err    error  // what went wrong
}

// Options configure a Conn. The zero value, or a nil *Options, gives the
// defaults documented on each field.
type Options struct {
	// MaxLine is the byte cap on a line read; 0 means DefaultMaxLine.
	MaxLine int
	// MaxPending is how many bytes may wait to be written before messages
	// are refused with ErrBackpressure; 0 means DefaultMaxPending.
	MaxPending int
	// Workers is how many requests are handled at once; 0 means 16.
	Workers int
	// Backlog is how many notifications may wait to be handled before more
	// are dropped; 0 means 1024.
	Backlog int
	// Busy is the error answered to a request that finds every worker
	// taken; nil means CodeInternal with the message "busy".
	Busy *Error
	// Timeout gives each method's timeout, both for calls made (the call
	// fails with ErrTimeout) and for requests handled (the handler's context
	// ends). nil, or a result of 0, means none beyond the context's.
	Timeout func(method string) time.Duration
	// OnEvent hears of the other side's misbehaviour. It is called from the
	// reading goroutine and must not block; nil means nobody listens.
	OnEvent func(Event)
}

// A Conn is one side of a JSON-RPC 2.0 connection over lines.
type Conn struct {
	lr    *LineReader
	w     *lineWriter
	h     Handler
	opts  Options
	work  chan job // to an idle worker
	notes *noteQueue

	ctx    context.Context // the handlers' context; ends at Close
	cancel context.CancelFunc

	mu       sync.Mutex
	nextID   int64
	pending  map[int64]*call
	closed   bool
	nworkers int
	wg       sync.WaitGroup // the workers, and a request served inline

	// active counts the requests being handled, by workers or inline, and
	// those on their way to a worker.
	active atomic.Int32
	// lent is set while the goroutine that reads is serving a request
	// inline; whoever clears it (the handler's watchdog, a call that waits
	// for an answer) starts a new reading goroutine: see serveInline.
	lent    atomic.Bool
	readEnd chan error // the input's end, from the goroutine that read last

	// inlineSince is when the request being served inline began (unix
	// nanoseconds), 0 when none is; the watchdog, one timer for the
	// connection's life, moves reading on when it has run inlineBudget.
	inlineSince atomic.Int64
	wdMu        sync.Mutex
	watchdog    *time.Timer
	wdArmed     bool

	// expiry fires at the earliest deadline of the calls waiting (armedFor;
	// zero when unarmed): one timer for all calls, instead of one per call.
	// Guarded by mu.
	expiry   *time.Timer
	armedFor time.Time

	closeOnce sync.Once
}

type reply struct {
	result []byte
	err    error
}

// A call waits for its reply. Whoever removes it from Conn.pending sends it
// its one reply: the reader, the expiry timer or Close.
type call struct {
	ch       chan reply // capacity 1
	method   string
	timeout  time.Duration
	deadline time.Time // zero: none
}

// NewConn returns a Conn that reads the other side's lines from r and writes
// its own to w. Writing starts at once; reading starts with Run. h may be
// nil: every request is then answered CodeMethodNotFound.
func NewConn(r io.Reader, w io.Writer, h Handler, opts *Options) *Conn {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Workers <= 0 {
		o.Workers = 16
	}
	if o.Backlog <= 0 {
		o.Backlog = 1024
	}
	if o.Busy == nil {
		o.Busy = &Error{Code: CodeInternal, Message: "busy"}
	}
	if h == nil {
		h = HandlerFunc(func(_ context.Context, req *Request) (any, error) {
			return nil, Errorf(CodeMethodNotFound, "method not found: %s", logtext.Cut(req.Method))
		})
	}
	c := &Conn{
		lr:      NewLineReader(r, o.MaxLine),
		w:       newLineWriter(w, o.MaxPending),
		h:       h,
		opts:    o,
		work:    make(chan job),
		pending: make(map[int64]*call),
		readEnd: make(chan error, 1),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.notes = newNoteQueue(c, o.Backlog)
	return c
}

// Run reads and serves lines until the input ends, then closes c (see
// Close) and returns nil at io.EOF or the error that ended the input. It
// must be called once. When ctx is done c is closed, but the read under way
// lasts until the transport is closed: closing it is the owner's job.
func (c *Conn) Run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, c.Close)
	defer stop()
	if err, moved := c.read(); !moved {
		return err
	}
	// Reading moved to another goroutine while this one served a request.
	return <-c.readEnd
}

// follow takes over reading from a goroutine that lent it to a handler.
func (c *Conn) follow() {
	if err, moved := c.read(); !moved {
		c.readEnd <- err
	}
}

// read reads and serves lines until the input ends, which it returns, or
// until reading moved to another goroutine (moved is then true).
func (c *Conn) read() (err error, moved bool) {
	items := make([]Item, 0, 1)
	for {
		line, err := c.lr.Next()
		if err != nil {
			if tl := (*TooLongError)(nil); errors.As(err, &tl) {
				c.event(Event{Kind: EventTooLong, Err: err})
				e := Errorf(CodeInvalidRequest, "invalid request: a line of %d bytes is over the cap of %d", tl.Size, tl.Max)
				c.send(nil, func(b []byte) []byte { return AppendError(b, nil, e) })
				continue
			}
			c.Close()
			if err == io.EOF {
				return nil, false
			}
			return err, false
		}
		if len(line) == 0 || strictjson.SkipSpace(line, 0) == len(line) {
			continue // a blank line carries nothing to answer
		}
		if items, moved = c.serveLine(line, items[:0]); moved {
			return nil, true
		}
		if c.active.Load() > 0 && !c.lr.Buffered() {
			// Let the workers just handed a request run before the next
			// read: on a blocking descriptor it keeps this goroutine's P
			// while it waits, and they would wait for the scheduler to
			// take it back.
			runtime.Gosched()
		}
	}
}

func (c *Conn) serveLine(line []byte, items []Item) ([]Item, bool) {
	items, batch, perr := Parse(line, items)
	if perr != nil {
		kind := EventInvalid
		if perr.Code == CodeParse {
			kind = EventParse
		}
		c.event(Event{Kind: kind, Err: perr})
		c.send(nil, func(b []byte) []byte { return AppendError(b, nil, perr) })
		return items, false
	}
	if !batch && items[0].Err == nil && items[0].Kind == KindRequest && c.active.Load() == 0 && !c.lr.Buffered() {
		it := items[0]
		items[0] = Item{}
		return items, c.serveInline(&Request{Method: it.Method, Params: it.Params, ID: it.ID})
	}
	var br *batchReply
	if batch {
		br = &batchReply{c: c, left: 1}
	}
	for i := range items {
		c.serveItem(&items[i], br)
		items[i] = Item{} // let the line go once served
	}
	if br != nil {
		br.done(nil, nil)
	}
	return items, false
}

// inlineBudget is how long a request served inline may hold the reading
// goroutine before another goroutine takes over reading.
const inlineBudget = time.Millisecond

// serveInline serves req on the reading goroutine, when no other request is
// being handled and no other line waits to be read. Handing a request to a
// worker wakes another thread, which costs a round trip more than the rest
// of its work; served inline, a request is read, handled and answered on
// one thread. Reading must not
// wait for the handler, though: a handler that calls the other side needs
// the answer routed, and a slow one must not hold up the requests and
// notifications behind it. So reading is only lent: a call that waits for
// an answer, or a watchdog after inlineBudget, starts a new reading
// goroutine, and this one then ends when its handler returns. It reports
// whether reading moved.
func (c *Conn) serveInline(req *Request) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false // no answer: the connection is closing
	}
	c.wg.Add(1)
	c.mu.Unlock()
	c.active.Add(1)
	c.lent.Store(true)
	c.inlineSince.Store(time.Now().UnixNano())
	c.armWatchdog()
	c.serve(req, nil)
	c.inlineSince.Store(0)
	c.wg.Done()
	return !c.lent.CompareAndSwap(true, false)
}

// armWatchdog makes sure the watchdog will look at the request being served
// inline. Once armed, it re-arms itself while requests keep being served
// inline, so that a busy connection touches no timer per request: adding
// one wakes a thread when none waits in the poller, which would cost more
// than the request.
func (c *Conn) armWatchdog() {
	c.wdMu.Lock()
	if !c.wdArmed {
		c.wdArmed = true
		if c.watchdog == nil {
			c.watchdog = time.AfterFunc(inlineBudget, c.watch)
		} else {
			c.watchdog.Reset(inlineBudget)
		}
	}
	c.wdMu.Unlock()
}

// watch moves reading on when the request served inline has run for
// inlineBudget, and otherwise waits for the rest of the budget, or disarms
// when nothing is served inline.
func (c *Conn) watch() {
	c.wdMu.Lock()
	since := c.inlineSince.Load()
	if since == 0 {
		c.wdArmed = false
		c.wdMu.Unlock()
		return
	}
	if left := inlineBudget - time.Duration(time.Now().UnixNano()-since); left > 0 {
		c.watchdog.Reset(left)
		c.wdMu.Unlock()
		return
	}
	c.wdArmed = false
	c.wdMu.Unlock()
	c.takeOver()
}

// takeOver starts a new reading goroutine if reading is lent to a handler.
func (c *Conn) takeOver() {
	if c.lent.Load() && c.lent.CompareAndSwap(true, false) {
		go c.follow()
	}
}

func (c *Conn) serveItem(it *Item, br *batchReply) {
	if it.Err != nil {
		c.event(Event{Kind: EventInvalid, ID: string(it.ID), Err: it.Err})
		br.add()
		c.reply(br, it.ID, AppendError(nil, it.ID, it.Err))
		return
	}
	switch it.Kind {
	case KindResponse:
		c.route(it)
	case KindNotification:
		if !c.notes.push(&Request{Method: it.Method, Params: it.Params}) {
			c.event(Event{Kind: EventDropped, Method: it.Method, Err: errors.New("too many notifications waiting")})
		}
	case KindRequest:
		br.add()
		c.dispatch(job{&Request{Method: it.Method, Params: it.Params, ID: it.ID}, br})
	}
}

// A job is a request for a worker.
type job struct {
	req *Request
	br  *batchReply
}

// dispatch hands j to an idle worker, or to a new one while there are fewer
// than Options.Workers, or answers Options.Busy at once. Workers live as
// long as the connection: a new goroutine per request would grow its stack
// anew each time, which costs more than the request.
func (c *Conn) dispatch(j job) {
	// A slot is taken before the request is handed on, so that requests
	// served inline and by workers together stay within Options.Workers.
	if c.active.Add(1) > int32(c.opts.Workers) {
		c.active.Add(-1)
		c.busy(j)
		return
	}
	select {
	case c.work <- j:
		return
	default:
	}
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		c.active.Add(-1)
		c.reply(j.br, nil, nil)
		return
	case c.nworkers >= c.opts.Workers:
		// Every worker exists, and the slot taken above says one of them
		// serves nothing: it is on its way back, with nothing between it
		// and the queue that can block (its answer is queued, not
		// written). Wait for it rather than answer busy.
		c.mu.Unlock()
		select {
		case c.work <- j:
		case <-c.ctx.Done():
			c.active.Add(-1)
			c.reply(j.br, nil, nil)
		}
		return
	}
	c.nworkers++
	c.wg.Add(1)
	c.mu.Unlock()
	go c.worker(j)
}

func (c *Conn) busy(j job) {
	c.event(Event{Kind: EventBusy, Method: j.req.Method, ID: string(j.req.ID), Err: c.opts.Busy})
	c.reply(j.br, j.req.ID, AppendError(nil, j.req.ID, c.opts.Busy))
}

func (c *Conn) worker(j job) {
	defer c.wg.Done()
	for {
		c.serve(j.req, j.br)
		select {
		case j = <-c.work:
		case <-c.ctx.Done():
			return
		}
	}
}

// serve handles req and answers it, giving its slot back first: the peer,
// answered, may send the next request at once, and must find the slot
// free (a batch's answer is the last of its requests' answers).
func (c *Conn) serve(req *Request, br *batchReply) {
	ctx := c.ctx
	if t := c.timeout(req.Method); t > 0 {
		hc := newHandlerContext(c.ctx, time.Now().Add(t))
		defer hc.release()
		ctx = hc
	}
	res, err := c.handle(ctx, req)
	line := c.answer(req, res, err)
	c.active.Add(-1)
	c.reply(br, req.ID, line) // never blocks: the writer queues
}

// handle runs the handler on req. A handler that panics fails with an
// error that says so, with its stack: the request is answered internal and
// the panic reported as an EventHandler, as net/http does, so that what a
// peer sent can never take the process down through a handler's bug.
func (c *Conn) handle(ctx context.Context, req *Request) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("jsonrpc: the handler of %s panicked: %v\n%s", logtext.Cut(req.Method), r, debug.Stack())
		}
	}()
	return c.h.Handle(ctx, req)
}

// answer encodes the response to req.
func (c *Conn) answer(req *Request, res any, err error) []byte {
	if err == nil {
		raw, merr := marshal(res)
		if merr == nil {
			return AppendResult(nil, req.ID, raw)
		}
		err = merr
	}
	var e *Error
	if !errors.As(err, &e) {
		c.event(Event{Kind: EventHandler, Method: req.Method, ID: string(req.ID), Err: err})
		e = &Error{Code: CodeInternal, Message: "internal error"}
	}
	return AppendError(nil, req.ID, e)
}

func marshal(v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return v, nil
	}
	return json.Marshal(v)
}

// reply sends line, the answer to id, or hands it to br when the request
// came in a batch. A nil line is a request that gets no answer after all.
func (c *Conn) reply(br *batchReply, id, line []byte) {
	if br != nil {
		br.done(id, line)
		return
	}
	if line != nil {
		c.send(nil, func(b []byte) []byte { return append(b, line...) })
	}
}

func (c *Conn) send(req *Request, fn func([]byte) []byte) {
	if err := c.w.add(fn); err != nil && !errors.Is(err, ErrClosed) {
		ev := Event{Kind: EventWrite, Err: err}
		if req != nil {
			ev.Method, ev.ID = req.Method, string(req.ID)
		}
		c.event(ev)
	}
}

func (c *Conn) event(ev Event) {
	if c.opts.OnEvent != nil {
		c.opts.OnEvent(ev)
	}
}

func (c *Conn) timeout(method string) time.Duration {
	if c.opts.Timeout == nil {
		return 0
	}
	return c.opts.Timeout(method)
}

// route hands a response to the call waiting for it.
func (c *Conn) route(it *Item) {
	id, err := strictjson.Int(it.ID)
	var cl *call
	if err == nil {
		c.mu.Lock()
		cl = c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
	}
	if cl == nil {
		c.event(Event{Kind: EventUnknownReply, ID: string(it.ID), Err: errors.New("a response to no call waiting: late, repeated or unknown id")})
		return
	}
	if it.Error != nil {
		cl.ch <- reply{err: it.Error}
		return
	}
	cl.ch <- reply{result: it.Result}
}

// errBatchAnswer replaces an answer that does not fit in its batch's line.
var errBatchAnswer = &Error{Code: CodeInternal, Message: fmt.Sprintf("answer too large for a batch (over %d bytes in all): call it alone", MaxBatchAnswer)}

// batchReply gathers a batch's answers into one array line.
type batchReply struct {
	c     *Conn
	mu    sync.Mutex
	left  int
	size  int // bytes of lines
	lines [][]byte
}

// add counts one more answer to wait for. It is only called from the
// reader, which holds one count of its own until it has dispatched the
// whole batch.
func (br *batchReply) add() {
	if br == nil {
		return
	}
	br.mu.Lock()
	br.left++
	br.mu.Unlock()
}

// done adds line, the answer to id; one that would take the batch's answer
// past MaxBatchAnswer is replaced by an error saying so.
func (br *batchReply) done(id, line []byte) {
	br.mu.Lock()
	if line != nil {
		if br.size+len(line)+1 > MaxBatchAnswer {
			line = AppendError(nil, id, errBatchAnswer)
		}
		br.size += len(line) + 1
		br.lines = append(br.lines, line)
	}
	br.left--
	last := br.left == 0
	br.mu.Unlock()
	if !last || len(br.lines) == 0 {
		return // a batch of notifications gets no answer at all
	}
	br.c.send(nil, func(b []byte) []byte {
		b = append(b, '[')
		for i, l := range br.lines {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, l...)
		}
		return append(b, ']')
	})
}

// Call calls method with params and returns the raw JSON result. params is
// encoded with encoding/json, except a json.RawMessage, which is sent as it
// is; nil leaves "params" out. An error answer is returned as an *Error.
// The call ends with ErrTimeout when the method's timeout passes, with
// ctx's error when ctx ends, and with ErrClosed when the connection ends.
func (c *Conn) Call(ctx context.Context, method string, params any) ([]byte, error) {
	p, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	cl := &call{ch: make(chan reply, 1), method: method, timeout: c.timeout(method)}
	id, err := c.register(cl)
	if err != nil {
		return nil, err
	}
	if err := c.w.add(func(b []byte) []byte { return AppendRequest(b, id, method, p) }); err != nil {
		c.forget(id)
		return nil, err
	}
	c.takeOver() // the answer needs a reader
	select {
	case r := <-cl.ch:
		return r.result, r.err
	case <-ctx.Done():
		c.forget(id)
		return nil, ctx.Err()
	}
}

// register gives cl an id and, when its method has a timeout, a deadline
// the expiry timer keeps.
func (c *Conn) register(cl *call) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, ErrClosed
	}
	c.nextID++
	c.pending[c.nextID] = cl
	if cl.timeout > 0 {
		now := time.Now()
		cl.deadline = now.Add(cl.timeout)
		// A later deadline than the one armed, the common case of calls
		// with the same timeout, touches no timer.
		if c.armedFor.IsZero() || cl.deadline.Before(c.armedFor) {
			c.armedFor = cl.deadline
			if c.expiry == nil {
				c.expiry = time.AfterFunc(cl.timeout, c.expire)
			} else {
				c.expiry.Reset(cl.timeout)
			}
		}
	}
	return c.nextID, nil
}

// expire fails the calls whose deadline has passed with ErrTimeout, and
// arms the timer for the next deadline.
func (c *Conn) expire() {
	now := time.Now()
	var late []*call
	var next time.Time
	c.mu.Lock()
	for id, cl := range c.pending {
		switch {
		case cl.deadline.IsZero():
		case !cl.deadline.After(now):
			delete(c.pending, id)
			late = append(late, cl)
		case next.IsZero() || cl.deadline.Before(next):
			next = cl.deadline
		}
	}
	c.armedFor = next
	if !next.IsZero() && !c.closed {
		c.expiry.Reset(next.Sub(now))
	}
	c.mu.Unlock()
	for _, cl := range late {
		cl.ch <- reply{err: fmt.Errorf("%w: %s answered nothing within %v", ErrTimeout, cl.method, cl.timeout)}
	}
}

func (c *Conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func marshalParams(params any) ([]byte, error) {
	p, err := marshal(params)
	if err != nil {
		return nil, err
	}
	if p != nil {
		if k := strictjson.KindOf(p); k != strictjson.KindObject && k != strictjson.KindArray {
			return nil, fmt.Errorf("jsonrpc: params must be an object or an array, not %s", p)
		}
	}
	return p, nil
}

// Notify sends a notification. params is as for Call.
func (c *Conn) Notify(method string, params any) error {
	p, err := marshalParams(params)
	if err != nil {
		return err
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return c.w.add(func(b []byte) []byte { return AppendNotification(b, method, p) })
}

// A BatchCall is one message of a batch.
type BatchCall struct {
	Method string
	Params any  // as for Call
	Notify bool // a notification: no answer is awaited

	Result []byte // the raw result, set by Batch
	Err    error  // the call's error, set by Batch
}

// Batch sends calls as one batch and waits for every answer, each landing in
// its BatchCall. It returns an error only when the batch could not be sent;
// the calls' own failures are in their Err. The batch waits as long as the
// longest timeout of its methods. More than MaxBatch calls go as several
// batches, one after the other.
func (c *Conn) Batch(ctx context.Context, calls []BatchCall) error {
	if len(calls) == 0 {
		return nil
	}
	for len(calls) > MaxBatch {
		if err := c.Batch(ctx, calls[:MaxBatch]); err != nil {
			return err
		}
		calls = calls[MaxBatch:]
	}
	params := make([][]byte, len(calls))
	for i := range calls {
		p, err := marshalParams(calls[i].Params)
		if err != nil {
			return err
		}
		params[i] = p
	}
	ids := make([]int64, len(calls))
	chans := make([]chan reply, len(calls))
	var longest time.Duration
	for i := range calls {
		if calls[i].Notify {
			continue
		}
		chans[i] = make(chan reply, 1)
		// The batch keeps its own timer, for its longest timeout.
		id, err := c.register(&call{ch: chans[i], method: calls[i].Method})
		if err != nil {
			c.forgetAll(ids[:i])
			return err
		}
		ids[i] = id
		longest = max(longest, c.timeout(calls[i].Method))
	}
	err := c.w.add(func(b []byte) []byte {
		b = append(b, '[')
		for i := range calls {
			if i > 0 {
				b = append(b, ',')
			}
			if calls[i].Notify {
				b = AppendNotification(b, calls[i].Method, params[i])
			} else {
				b = AppendRequest(b, ids[i], calls[i].Method, params[i])
			}
		}
		return append(b, ']')
	})
	if err != nil {
		c.forgetAll(ids)
		return err
	}
	c.takeOver() // the answers need a reader
	var expired <-chan time.Time
	if longest > 0 {
		timer := time.NewTimer(longest)
		defer timer.Stop()
		expired = timer.C
	}
	for i := range calls {
		if chans[i] == nil {
			continue
		}
		select {
		case r := <-chans[i]:
			calls[i].Result, calls[i].Err = r.result, r.err
		case <-ctx.Done():
			c.forget(ids[i])
			calls[i].Err = ctx.Err()
		case <-expired:
			c.forget(ids[i])
			calls[i].Err = fmt.Errorf("%w: %s answered nothing within %v", ErrTimeout, calls[i].Method, longest)
		}
	}
	return nil
}

func (c *Conn) forgetAll(ids []int64) {
	c.mu.Lock()
	for _, id := range ids {
		delete(c.pending, id)
	}
	c.mu.Unlock()
}

// Close ends the connection: calls still waiting fail with ErrClosed, the
// handlers' context ends and Close waits for them, notifications still
// queued are dropped, and what waits to be written is written before Close
// returns. It does not close the transport. It is safe to call more than
// once, but not from a handler.
func (c *Conn) Close() {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		pending := c.pending
		c.pending = nil
		if c.expiry != nil {
			c.expiry.Stop()
		}
		c.mu.Unlock()
		c.wdMu.Lock()
		if c.watchdog != nil {
			c.watchdog.Stop()
		}
		c.wdMu.Unlock()
		for _, cl := range pending {
			cl.ch <- reply{err: ErrClosed}
		}
		c.cancel()
		c.notes.close()
		c.wg.Wait()
		c.w.close()
	})
}

// Done reports whether Close has begun.
func (c *Conn) Done() <-chan struct{} { return c.ctx.Done() }

// noteQueue runs notifications one at a time, in arrival order, on one
// goroutine of their own: a slow one holds up the next ones but never the
// reader, which must stay free to route the responses a handler may wait
// for.
type noteQueue struct {
	c    *Conn
	max  int
	mu   sync.Mutex
	q    []*Request
	stop bool
	kick chan struct{}
	done chan struct{}
}

func newNoteQueue(c *Conn, max int) *noteQueue {
	n := &noteQueue{c: c, max: max, kick: make(chan struct{}, 1), done: make(chan struct{})}
	go n.loop()
	return n
}

func (n *noteQueue) push(r *Request) bool {
	n.mu.Lock()
	if n.stop || len(n.q) >= n.max {
		n.mu.Unlock()
		return n.stop // a closing connection drops quietly
	}
	n.q = append(n.q, r)
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
	return true
}

func (n *noteQueue) loop() {
	defer close(n.done)
	var batch []*Request
	for range n.kick {
		for {
			n.mu.Lock()
			if n.stop {
				n.mu.Unlock()
				return
			}
			batch, n.q = n.q, batch[:0]
			n.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			for i, r := range batch {
				if _, err := n.c.handle(n.c.ctx, r); err != nil {
					// Nobody can be answered: the journal is the only one
					// to hear of it, whatever the error.
					n.c.event(Event{Kind: EventHandler, Method: r.Method, Err: err})
				}
				batch[i] = nil
			}
		}
	}
}

func (n *noteQueue) close() {
	n.mu.Lock()
	n.stop = true
	n.q = nil
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
	<-n.done
}
