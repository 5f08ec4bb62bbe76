// Package client is the agent's side of the Agent-Computer Interface: it
// dials a Shinken runtime (or any ACI v0 runtime) and drives the desktop it
// serves.
//
// Drive it by name: a [Locator] finds an element by its role and name anew
// at each use and waits until it can act; an [Expectation] waits until a
// condition holds.
//
//	c, err := client.Dial(ctx, "ws://127.0.0.1:7040/aci", &client.DialOptions{Token: token})
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	if err := c.ByRole("text", "Name").Fill(ctx, "Ada"); err != nil {
//		return err
//	}
//	if err := c.ByRole("push button", "Submit").Click(ctx); err != nil {
//		return err
//	}
//	summary := c.Locate(client.By{Role: "label", NameContains: "Submitted"})
//	if err := summary.Expect().ToBeVisible(ctx); err != nil {
//		return err // says what was expected, what was seen, and the tree
//	}
//
// Underneath are the verbs of ACI v0: the observation of the accessibility
// tree, whose elements carry refs, and actions by ref.
//
//	obs, err := c.Observe(ctx, nil) // the accessibility tree, as refs
//	if err != nil {
//		return err
//	}
//	name, err := obs.Find("text", "Name") // by role and name; aci.ErrNoMatch if none
//	if err != nil {
//		return err
//	}
//	return c.SetValue(ctx, aci.Ref(name.Ref), "Ada")
//
// A method acting on an element or a place takes an [*aci.Target]:
// aci.Ref(el.Ref), aci.Px(x, y) or aci.Norm(x, y) (a fraction of the
// screen). Each verb and query of ACI v0 is a typed method; [Client.Do] and
// [Client.Batch] send any action. Files, commands, a shell and window
// geometry, over [Client.Exec], are package machine's.
//
// Runtime errors are *aci.Error values: match them with errors.Is against
// the aci sentinels (aci.ErrPermissionDenied...), or read their Code.
//
// A Client is safe for concurrent use; a cancelled call does not end the
// session, and [Client.Reconnect] replaces a lost connection.
package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"shinken.dev/go/shinken/aci"
)

// DialOptions configure a Client. A nil *DialOptions means defaults.
type DialOptions struct {
	Token string // the runtime's bearer token
	// Name and Version identify the client in the hello; default
	// "shinken-go" and this library's version.
	Name, Version string
	TextFrames    bool // images as base64 inside JSON, not binary frames
	NoFrameCache  bool // no screenshot cache: never send if_none_match
	// HTTPClient and HTTPHeader are used for the WebSocket handshake.
	HTTPClient *http.Client
	HTTPHeader http.Header
	ReadLimit  int64        // bounds one incoming message; default 256 MiB
	Logger     *slog.Logger // the client's logs; default discarded
}

// A Client is the agent's side of an ACI session, safe for concurrent use.
type Client struct {
	url   string // as given to Dial
	wsURL string // what the handshake asks for
	opts  DialOptions
	log   *slog.Logger

	mu      sync.Mutex
	sess    *session // the live connection; replaced by Reconnect
	nextID  atomic.Uint64
	cache   frameCache
	casts   map[string]*Screencast // by stream id
	closed  bool
	welcome *aci.Welcome
}

// session is one WebSocket connection of a Client.
type session struct {
	ws      *websocket.Conn
	binary  bool
	welcome *aci.Welcome

	mu      sync.Mutex
	pending map[string]*call
	execs   map[string]*ExecStream
	pings   map[float64]chan struct{}
	err     error // why the session ended
	done    chan struct{}

	// After a reconnect the runtime numbers elements anew, so "e3" may
	// name another element than it did. A reconnected session only sends
	// the refs its own observations have shown.
	renumbered bool
	refs       map[string]struct{}
}

// A call is one request awaiting its reply (and, for observe-after-act or a
// screenshot, its observation).
type call struct {
	wantObs bool
	ch      chan reply // buffered: the reader never blocks on it
}

type reply struct {
	ack     *aci.Ack
	result  *aci.Result
	obs     *aci.Observation
	payload []byte // a binary frame's payload
	bin     *aci.BinaryFrameHeader
	err     error // the session ended
}

// Dial connects to the runtime at url (ws://, wss://, or unix:PATH for a
// unix socket, whose handshake asks for path /aci) and waits for its
// welcome.
func Dial(ctx context.Context, url string, opts *DialOptions) (*Client, error) {
	c := &Client{url: url, casts: map[string]*Screencast{}}
	if opts != nil {
		c.opts = *opts
	}
	if sock, ok := strings.CutPrefix(url, "unix:"); ok {
		sock = strings.TrimPrefix(sock, "//")
		if sock == "" {
			return nil, fmt.Errorf("shinken: dial %s: no socket path", url)
		}
		if c.opts.HTTPClient != nil {
			return nil, fmt.Errorf("shinken: dial %s: DialOptions.HTTPClient cannot be used with a unix socket", url)
		}
		var d net.Dialer
		c.opts.HTTPClient = &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return d.DialContext(ctx, "unix", sock)
			},
		}}
		c.wsURL = "ws://unix/aci"
	} else {
		c.wsURL = url
	}
	if c.opts.Name == "" {
		c.opts.Name = "shinken-go"
	}
	if c.opts.Version == "" {
		c.opts.Version = aci.Version
	}
	if c.opts.ReadLimit <= 0 {
		c.opts.ReadLimit = 256 << 20
	}
	c.log = c.opts.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	s, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	c.sess = s
	c.welcome = s.welcome
	return c, nil
}

func (c *Client) dial(ctx context.Context) (*session, error) {
	ws, _, err := websocket.Dial(ctx, c.wsURL, &websocket.DialOptions{HTTPClient: c.opts.HTTPClient, HTTPHeader: c.opts.HTTPHeader})
	if err != nil {
		return nil, fmt.Errorf("shinken: dial %s: %w", c.url, err)
	}
	ws.SetReadLimit(c.opts.ReadLimit)
	hello := &aci.Hello{Client: aci.ClientInfo{Name: c.opts.Name, Version: c.opts.Version}, Token: c.opts.Token}
	if !c.opts.TextFrames {
		hello.Accept = &aci.Accept{BinaryFrames: true}
	}
	data, _ := aci.Marshal(hello)
	if err := ws.Write(ctx, websocket.MessageText, data); err != nil {
		ws.CloseNow()
		return nil, fmt.Errorf("shinken: send hello: %w", err)
	}
	_, data, err = ws.Read(ctx)
	if err != nil {
		ws.CloseNow()
		if cs := websocket.CloseStatus(err); cs == websocket.StatusPolicyViolation {
			var ce websocket.CloseError
			errors.As(err, &ce)
			return nil, &aci.Error{Code: aci.CodeUnauthorized, Detail: "the runtime refused the hello: " + ce.Reason, Err: err}
		}
		return nil, fmt.Errorf("shinken: read welcome: %w", err)
	}
	m, err := aci.Unmarshal(data)
	if err != nil {
		ws.CloseNow()
		return nil, fmt.Errorf("shinken: bad welcome: %w", err)
	}
	w, ok := m.(*aci.Welcome)
	if !ok {
		ws.CloseNow()
		return nil, fmt.Errorf("shinken: expected a welcome, got %s", m.MessageType())
	}
	s := &session{
		ws: ws, welcome: w, binary: !c.opts.TextFrames && w.Capabilities.BinaryFrames,
		pending: map[string]*call{}, execs: map[string]*ExecStream{}, pings: map[float64]chan struct{}{},
		done: make(chan struct{}),
	}
	go c.readLoop(s)
	return s, nil
}

// Welcome returns the runtime's welcome: its name, platform and
// capabilities.
func (c *Client) Welcome() *aci.Welcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.welcome
}

// Close closes the session with a normal closure. Calls in flight fail with
// an error wrapping ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	s := c.sess
	c.mu.Unlock()
	s.releaseExecs()
	err := s.ws.Close(websocket.StatusNormalClosure, "")
	<-s.done
	var ce websocket.CloseError
	if errors.As(err, &ce) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// ErrDesktopRestarted is wrapped by the closed error of a session ended to
// restart the desktop (code 1012, not 1001): reconnect and observe anew.
var ErrDesktopRestarted = errors.New("shinken: the desktop was restarted: reconnect")

// ErrRenumbered is wrapped by the stale_element_ref error a reconnected
// Client returns, sending nothing, for a ref from an older connection.
var ErrRenumbered = errors.New("shinken: element refs are numbered anew after a reconnect")

// Reconnect replaces a lost (or live) connection with a new one, with the
// same options. Calls in flight on the old one fail; screencasts resume on
// the new one (Screencast.Next reconnects by itself). The runtime numbers
// elements per connection, so the Client refuses, with a stale_element_ref
// error wrapping ErrRenumbered, any ref that no observation on the new
// connection has shown: observe again.
func (c *Client) Reconnect(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return aci.ErrClosed
	}
	old := c.sess
	c.mu.Unlock()
	old.releaseExecs()
	old.ws.CloseNow()
	<-old.done
	s, err := c.dial(ctx)
	if err != nil {
		return err
	}
	s.renumbered = true
	c.mu.Lock()
	c.sess = s
	c.welcome = s.welcome
	casts := make([]*Screencast, 0, len(c.casts))
	for _, sc := range c.casts {
		casts = append(casts, sc)
	}
	c.mu.Unlock()
	for _, sc := range casts {
		sc.resume(ctx)
	}
	return nil
}

func (c *Client) session() *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess
}

func (s *session) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	s.err = err
	for id, cl := range s.pending {
		cl.ch <- reply{err: err}
		delete(s.pending, id)
	}
	for id, x := range s.execs {
		x.end(nil, err)
		delete(s.execs, id)
	}
	for t, ch := range s.pings {
		close(ch)
		delete(s.pings, t)
	}
}

// readMessage reads one message whole into scratch, which grows to the
// largest message read (up to maxScratch, past which it is not kept), and
// returns a copy of exactly its size. websocket.Conn.Read grows a buffer
// from 512 bytes instead: a screenshot cost a dozen copies of itself and
// twice its size in garbage.
func (s *session) readMessage(scratch *[]byte) (websocket.MessageType, []byte, error) {
	typ, r, err := s.ws.Reader(context.Background())
	if err != nil {
		return 0, nil, err
	}
	buf := (*scratch)[:0]
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(len(buf), 4096))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, nil, err
		}
	}
	if cap(buf) <= maxScratch {
		*scratch = buf
	}
	return typ, bytes.Clone(buf), nil
}

// maxScratch bounds the read buffer a session keeps between messages.
const maxScratch = 8 << 20

func (c *Client) readLoop(s *session) {
	defer close(s.done)
	var scratch []byte
	for {
		typ, data, err := s.readMessage(&scratch)
		if err != nil {
			detail := "connection lost: " + err.Error()
			if websocket.CloseStatus(err) == websocket.StatusServiceRestart {
				err = fmt.Errorf("%w (%w)", ErrDesktopRestarted, err)
			}
			s.fail(&aci.Error{Code: aci.CodeClosed, Detail: detail, Err: err})
			return
		}
		if typ == websocket.MessageBinary {
			c.binaryFrame(s, data)
			continue
		}
		m, err := aci.Unmarshal(data)
		if err != nil {
			c.log.Warn("bad message from runtime", "err", err)
			continue
		}
		switch m := m.(type) {
		case *aci.Ack:
			s.deliver(m.CallID, reply{ack: m}, !m.OK)
		case *aci.Result:
			s.deliver(m.CallID, reply{result: m}, true)
		case *aci.Observation:
			if m.Stream != "" {
				c.castFrame(m, nil, nil)
				continue
			}
			s.sawRefs(m)
			s.deliver(m.CallID, reply{obs: m}, true)
		case *aci.ExecOutput:
			data, err := base64.StdEncoding.DecodeString(m.DataB64)
			if err == nil {
				s.execChunk(m.CallID, m.Seq, m.Channel, data)
			}
		case *aci.ExecExit:
			s.mu.Lock()
			x := s.execs[m.CallID]
			delete(s.execs, m.CallID)
			s.mu.Unlock()
			if x != nil {
				var err error
				if m.Error != "" {
					err = aci.ParseWireError(m.Error)
				}
				x.end(m, err)
			}
		case *aci.Pong:
			if m.T != nil {
				s.mu.Lock()
				if ch, ok := s.pings[*m.T]; ok {
					close(ch)
					delete(s.pings, *m.T)
				}
				s.mu.Unlock()
			}
		}
	}
}

func (c *Client) binaryFrame(s *session, data []byte) {
	m, payload, err := aci.DecodeBinaryFrame(data)
	if err != nil {
		c.log.Warn("bad binary frame from runtime", "err", err)
		return
	}
	switch h := m.(type) {
	case *aci.BinaryFrameHeader:
		if h.Stream != "" {
			c.castFrame(nil, h, payload)
			return
		}
		s.deliver(h.CallID, reply{bin: h, payload: payload}, true)
	case *aci.BinaryExecOutputHeader:
		s.execChunk(h.CallID, h.Seq, h.Channel, h.Data.Bytes(payload))
	}
}

// deliver hands a reply to its call. final says the call is complete; an
// ok ack of a call that wants an observation is not.
func (s *session) deliver(id string, r reply, final bool) {
	s.mu.Lock()
	cl, ok := s.pending[id]
	if ok && (final || !cl.wantObs || r.ack == nil) {
		delete(s.pending, id)
	}
	s.mu.Unlock()
	if ok {
		select {
		case cl.ch <- r:
		default: // a duplicate reply; the call already has what it needs
		}
	}
}

func (c *Client) newID(prefix string) string {
	return prefix + strconv.FormatUint(c.nextID.Add(1), 10)
}

// roundTrip sends m and waits for the first reply to callID. When wantObs is
// set the call stays registered for the observation that follows an ok ack.
func (c *Client) roundTrip(ctx context.Context, callID string, m aci.Message, wantObs bool) (*session, *call, reply, error) {
	s := c.session()
	cl := &call{wantObs: wantObs, ch: make(chan reply, 2)}
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return s, nil, reply{}, err
	}
	if err := s.checkRefs(m); err != nil {
		s.mu.Unlock()
		return s, nil, reply{}, err
	}
	s.pending[callID] = cl
	s.mu.Unlock()
	data, err := aci.Marshal(m)
	if err == nil {
		err = s.write(data)
	}
	if err != nil {
		s.forget(callID)
		return s, nil, reply{}, fmt.Errorf("shinken: send: %w", err)
	}
	r, err := s.wait(ctx, callID, cl)
	return s, cl, r, err
}

func (s *session) wait(ctx context.Context, callID string, cl *call) (reply, error) {
	select {
	case r := <-cl.ch:
		if r.err != nil {
			return r, r.err
		}
		return r, nil
	case <-ctx.Done():
		s.forget(callID)
		return reply{}, ctx.Err()
	}
}

// clientWriteTimeout bounds the write of one message. Writes do not take
// the caller's context: the WebSocket library closes the connection when a
// write's context ends, and one call's cancellation must not end the
// session.
const clientWriteTimeout = 30 * time.Second

func (s *session) write(data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), clientWriteTimeout)
	defer cancel()
	err := s.ws.Write(ctx, websocket.MessageText, data)
	if err != nil {
		// A write fails when the connection closed under it, and the
		// reader then ends with why (the runtime's close code, such as
		// ErrDesktopRestarted's): that is the call's error, typed.
		select {
		case <-s.done:
		case <-ctx.Done():
		}
		s.mu.Lock()
		why := s.err
		s.mu.Unlock()
		if why != nil {
			return why
		}
	}
	return err
}

func (s *session) forget(callID string) {
	s.mu.Lock()
	delete(s.pending, callID)
	s.mu.Unlock()
}

// Reply is everything the runtime answered to one action.
type Reply struct {
	Ack    *aci.Ack
	Result *aci.Result
	// Observation answers a screenshot or observe, or follows an Observe ack.
	Observation *aci.Observation
	// Image is Observation's image bytes, from either framing (nil if none).
	Image []byte
}

// Do sends one action and waits for all of its answer: an ack, a result or
// an observation, and with Observe the observation after the ack. A refusal
// is an *aci.Error, returned with the Reply.
func (c *Client) Do(ctx context.Context, a *aci.Action) (*Reply, error) {
	callID := c.newID("c")
	wantObs := a.Observe != nil
	s, cl, r, err := c.roundTrip(ctx, callID, &aci.ActionMsg{CallID: callID, Action: *a}, wantObs)
	if err != nil {
		return nil, err
	}
	rep := &Reply{}
	if err := rep.take(r); err != nil {
		return rep, err
	}
	if wantObs && r.ack != nil {
		r, err = s.wait(ctx, callID, cl)
		if err != nil {
			return rep, err
		}
		if err := rep.take(r); err != nil {
			return rep, fmt.Errorf("shinken: observation after %s: %w", a.Verb, err)
		}
	}
	return rep, nil
}

func (rep *Reply) take(r reply) error {
	switch {
	case r.ack != nil:
		rep.Ack = r.ack
		if !r.ack.OK {
			return aci.ParseWireError(r.ack.Error)
		}
	case r.result != nil:
		rep.Result = r.result
		if !r.result.OK {
			return aci.ParseWireError(r.result.Error)
		}
	case r.obs != nil:
		rep.Observation = r.obs
		if r.obs.Image != nil {
			b, err := base64.StdEncoding.DecodeString(r.obs.Image.Ref)
			if err != nil {
				return aci.Errorf(aci.CodeInvalidMessage, "image ref is not base64: %v", err)
			}
			rep.Image = b
		}
	case r.bin != nil:
		h := r.bin
		rep.Observation = &aci.Observation{ObsID: h.ObsID, CallID: h.CallID, Display: h.Display, FrameHash: h.FrameHash, Pointer: h.Pointer}
		if h.Image != nil {
			rep.Observation.Image = &aci.ImageRef{W: h.Image.W, H: h.Image.H, Scope: h.Image.Scope, Format: h.Image.Format}
			rep.Image = aci.ByteRange{Off: h.Image.Off, Len: h.Image.Len}.Bytes(r.payload)
		}
	}
	return nil
}

// Batch runs b's actions one by one, each its own action message (batch_id
// and stop_on_error never go on the wire), stopping at the first failure
// unless StopOnError is false; it returns a Reply per action run and the
// errors joined.
func (c *Client) Batch(ctx context.Context, b *aci.ActionBatch) ([]*Reply, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	stop := b.StopOnError == nil || *b.StopOnError
	var out []*Reply
	var errs []error
	for i := range b.Actions {
		r, err := c.Do(ctx, &b.Actions[i])
		out = append(out, r)
		if err != nil {
			errs = append(errs, fmt.Errorf("action %d (%s): %w", i, b.Actions[i].Verb, err))
			if stop || ctx.Err() != nil {
				break
			}
		}
	}
	return out, errors.Join(errs...)
}

// Query asks the runtime q and decodes the value into v.
func (c *Client) Query(ctx context.Context, q aci.QueryKind, v any) error {
	callID := c.newID("q")
	_, _, r, err := c.roundTrip(ctx, callID, &aci.Query{CallID: callID, Q: q}, false)
	if err != nil {
		return err
	}
	if r.result == nil {
		return aci.Errorf(aci.CodeInvalidMessage, "query %s was not answered with a result", q)
	}
	if !r.result.OK {
		return aci.ParseWireError(r.result.Error)
	}
	if err := json.Unmarshal(r.result.Value, v); err != nil {
		return aci.Errorf(aci.CodeInvalidMessage, "query %s: %v", q, err)
	}
	return nil
}

// Ping measures a round trip.
func (c *Client) Ping(ctx context.Context) error {
	s := c.session()
	t := float64(c.nextID.Add(1))
	ch := make(chan struct{})
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return s.err
	}
	s.pings[t] = ch
	s.mu.Unlock()
	data, _ := aci.Marshal(&aci.Ping{T: &t})
	if err := s.write(data); err != nil {
		return err
	}
	select {
	case <-ch:
		s.mu.Lock()
		err := s.err
		s.mu.Unlock()
		return err
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.pings, t)
		s.mu.Unlock()
		return ctx.Err()
	}
}

// sawRefs records the refs an observation showed.
func (s *session) sawRefs(o *aci.Observation) {
	if len(o.Elements) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refs == nil {
		s.refs = make(map[string]struct{}, len(o.Elements))
	}
	for _, e := range o.Elements {
		s.refs[e.Ref] = struct{}{}
	}
}

// checkRefs refuses, on a reconnected session, an element ref that none of
// its observations showed: it came from before the reconnect, and the
// runtime may have given it to another element since. s.mu must be held.
func (s *session) checkRefs(m aci.Message) error {
	if !s.renumbered {
		return nil
	}
	am, ok := m.(*aci.ActionMsg)
	if !ok {
		return nil
	}
	for _, t := range []*aci.Target{am.Action.Target, am.Action.To} {
		if t == nil || t.Kind != aci.TargetElementRef {
			continue
		}
		if _, ok := s.refs[t.Ref]; !ok {
			return &aci.Error{Code: aci.CodeStaleElementRef, Detail: t.Ref + " is from before the reconnect: a new session numbers elements anew, observe again", Err: ErrRenumbered}
		}
	}
	return nil
}
