package fence

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/coder/websocket"
	"shinken.dev/go/escouade/internal/fields"
	"shinken.dev/go/escouade/protocol"
)

// A socket is a WebSocket a plugin opened (ws/open).
type socket struct {
	id   int64
	r    *Instance
	conn *websocket.Conn

	mu      sync.Mutex
	queue   []wsOut
	pending int  // bytes waiting to be sent
	closing bool // nothing more is sent
	asked   bool // ws/close: the queue is sent, then the socket closed
	kick    chan struct{}

	// closeDone is closed once the close handshake ws/close asked for is
	// over, closeErr its outcome.
	closeDone chan struct{}
	closeErr  error
}

type wsOut struct {
	typ  websocket.MessageType
	data []byte
}

// wsOpenResult is the answer to ws/open.
type wsOpenResult struct {
	Socket int64 `json:"socket"`
}

// wsMessageParams are the params of ws/message: Text for a text message,
// DataBase64 for a binary one.
type wsMessageParams struct {
	Socket     int64   `json:"socket"`
	Text       *string `json:"text,omitempty"`
	DataBase64 *string `json:"dataBase64,omitempty"`
}

type wsClosedParams struct {
	Socket int64  `json:"socket"`
	Code   int    `json:"code"`
	Reason string `json:"reason"`
}

func wsOpen(ctx context.Context, r *Instance, c Call, params []byte) (any, error) {
	p := r.p
	var op struct {
		URL     string            `json:"url" wire:"required"`
		Headers map[string]string `json:"headers"`
	}
	if err := decodeParams(params, &op); err != nil {
		return nil, err
	}
	if err := checkHeaders(op.Headers); err != nil {
		return nil, err
	}
	raw, headers := op.URL, op.Headers
	u, err := p.judgeURL(ctx, raw, true)
	if err != nil {
		return nil, err
	}
	pn := p.network()
	if pn == nil {
		return nil, errorf(protocol.CodeFailed, "failed: the plugin is stopping")
	}
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		return nil, errorf(protocol.CodeFailed, "failed: the instance is ending")
	case len(r.sockets)+r.dialing >= maxSockets:
		r.mu.Unlock()
		return nil, errorf(protocol.CodeRefused, "refused: %d sockets at once at most", maxSockets)
	}
	r.dialing++
	id := r.nextID()
	r.mu.Unlock()

	h := http.Header{}
	for k, v := range headers {
		if !strings.EqualFold(k, "Host") {
			h.Set(k, v)
		}
	}
	// Its headers carry tokens: they are never journaled.
	conn, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{HTTPClient: pn.client, HTTPHeader: h})
	r.mu.Lock()
	r.dialing--
	if err == nil && r.closed {
		conn.CloseNow()
		err = errors.New("the instance is ending")
	}
	if err != nil {
		r.mu.Unlock()
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, errorf(protocol.CodeFailed, "failed: the server answered %d, not a WebSocket", resp.StatusCode)
		}
		return nil, netError(err, fetchTimeout)
	}
	conn.SetReadLimit(maxWSMessage)
	s := &socket{id: id, r: r, conn: conn, kick: make(chan struct{}, 1), closeDone: make(chan struct{})}
	r.sockets[id] = s
	r.wg.Add(2)
	r.mu.Unlock()
	go s.read(c.AfterAnswer())
	go s.write()
	return wsOpenResult{Socket: id}, nil
}

// read hands the messages received to the plugin, after the answer that
// names the socket, and ws/closed at the end.
func (s *socket) read(afterAnswer func(context.Context)) {
	defer s.r.wg.Done()
	afterAnswer(s.r.ctx)
	for {
		typ, data, err := s.conn.Read(s.r.ctx)
		if err != nil {
			s.closed(err)
			return
		}
		params := wsMessageParams{Socket: s.id}
		if typ == websocket.MessageText {
			text := string(data)
			params.Text = &text
		} else {
			b64 := base64.StdEncoding.EncodeToString(data)
			params.DataBase64 = &b64
		}
		s.r.notify("ws/message", params)
	}
}

// closed says how the socket ended: the peer's close code, 1009 for a
// message over 1 MiB, 1006 for a connection that broke.
func (s *socket) closed(err error) {
	r := s.r
	r.mu.Lock()
	delete(r.sockets, s.id)
	r.mu.Unlock()
	s.mu.Lock()
	s.closing = true
	s.queue, s.pending = nil, 0
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
	if !s.askedClose() {
		s.conn.CloseNow()
	}
	if r.ctx.Err() != nil {
		return // the instance is ending: nobody to tell
	}
	params := wsClosedParams{Socket: s.id, Code: 1006, Reason: "the connection broke"}
	var ce websocket.CloseError
	switch {
	case errors.Is(err, websocket.ErrMessageTooBig):
		params.Code, params.Reason = int(websocket.StatusMessageTooBig), "a message over 1 MiB"
	case errors.As(err, &ce):
		params.Code, params.Reason = int(ce.Code), ce.Reason
	case s.askedClose():
		// The handshake of ws/close may take the peer's close frame
		// before this read does: its outcome says how the socket ended.
		select {
		case <-s.closeDone:
			if s.closeErr == nil {
				params.Code, params.Reason = int(websocket.StatusNormalClosure), ""
			}
		case <-r.ctx.Done():
			return
		}
	}
	r.notify("ws/closed", params)
}

// write sends the queue, one message at a time; after ws/close, it closes
// the socket once the queue is sent. closeDone is closed when it ends,
// closeErr saying whether the close handshake went through.
func (s *socket) write() {
	defer s.r.wg.Done()
	s.closeErr = errors.New("the socket ended before its close handshake")
	defer close(s.closeDone)
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.closing {
			s.mu.Unlock()
			select {
			case <-s.kick:
			case <-s.r.ctx.Done():
				return
			}
			s.mu.Lock()
		}
		if len(s.queue) == 0 {
			asked := s.asked
			s.mu.Unlock()
			if asked {
				s.closeErr = s.conn.Close(websocket.StatusNormalClosure, "")
			} else {
				s.conn.CloseNow()
			}
			return
		}
		m := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		err := s.conn.Write(s.r.ctx, m.typ, m.data)
		s.mu.Lock()
		s.pending -= len(m.data)
		s.mu.Unlock()
		if err != nil {
			s.conn.CloseNow() // the reader says how it ended
			return
		}
	}
}

func (s *socket) askedClose() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked
}

func (r *Instance) socket(id int64) (*socket, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sockets[id]
	if !ok {
		return nil, errorf(protocol.CodeRefused, "refused: no socket %d is open", id)
	}
	return s, nil
}

func wsSend(_ context.Context, r *Instance, _ Call, params []byte) (any, error) {
	var sp struct {
		Socket     int64   `json:"socket" wire:"required"`
		Text       *string `json:"text"`
		DataBase64 *string `json:"dataBase64"`
	}
	if err := decodeParams(params, &sp); err != nil {
		return nil, err
	}
	id, text, b64 := sp.Socket, sp.Text, sp.DataBase64
	var m wsOut
	switch {
	case text != nil && b64 != nil:
		return nil, fields.Errorf("dataBase64", "text or dataBase64, not both")
	case text != nil:
		m = wsOut{typ: websocket.MessageText, data: []byte(*text)}
	case b64 != nil:
		data, err := base64.StdEncoding.Strict().DecodeString(*b64)
		if err != nil {
			return nil, fields.Errorf("dataBase64", "not base64")
		}
		m = wsOut{typ: websocket.MessageBinary, data: data}
	default:
		return nil, fields.Errorf("text", "a message: text or dataBase64")
	}
	if len(m.data) > maxWSMessage {
		return nil, errorf(protocol.CodeRefused, "refused: a message of %d bytes, over 1 MiB", len(m.data))
	}
	s, err := r.socket(id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closing:
		return nil, errorf(protocol.CodeRefused, "refused: socket %d is closing", id)
	case s.pending > 0 && s.pending+len(m.data) > maxWSQueue:
		return nil, errorf(protocol.CodeRefused, "refused: %d bytes wait to be sent on socket %d; past 256 KiB, wait", s.pending, id)
	}
	s.queue = append(s.queue, m)
	s.pending += len(m.data)
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return nil, nil
}

func wsClose(_ context.Context, r *Instance, _ Call, params []byte) (any, error) {
	var cp struct {
		Socket int64 `json:"socket" wire:"required"`
	}
	if err := decodeParams(params, &cp); err != nil {
		return nil, err
	}
	id := cp.Socket
	s, err := r.socket(id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.asked {
		s.mu.Unlock()
		return nil, errorf(protocol.CodeRefused, "refused: socket %d is closing", id)
	}
	s.closing, s.asked = true, true
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return nil, nil
}
