package fence

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"shinken.dev/go/escouade/internal/fields"
	"shinken.dev/go/escouade/protocol"
)

// A stream is a response read in pieces (net/stream): the Host reads no
// further than the plugin's credit allows.
type stream struct {
	id     int64
	r      *Instance
	body   io.ReadCloser
	ctx    context.Context
	cancel context.CancelFunc
	sse    bool

	mu         sync.Mutex
	changed    chan struct{}
	unconsumed int  // bytes sent and not yet credited
	canceled   bool // net/cancel: nothing more is sent, not even net/end
}

// netStreamResult is the answer to net/stream, once the headers are read.
type netStreamResult struct {
	Stream  int64             `json:"stream"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
}

// netChunkParams are the params of net/chunk: Data when the piece is
// UTF-8, DataBase64 otherwise.
type netChunkParams struct {
	Stream     int64   `json:"stream"`
	Data       *string `json:"data,omitempty"`
	DataBase64 *string `json:"dataBase64,omitempty"`
}

type netEndParams struct {
	Stream int64  `json:"stream"`
	Error  string `json:"error,omitempty"`
}

func netStream(ctx context.Context, r *Instance, c Call, params []byte) (any, error) {
	p := r.p
	nr, u, pn, err := p.judgedRequest(ctx, params, true)
	if err != nil {
		return nil, err
	}
	limit, _ := p.fetchLimits()
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		return nil, errorf(protocol.CodeFailed, "failed: the instance is ending")
	case len(r.streams)+r.opening >= maxStreams:
		r.mu.Unlock()
		return nil, errorf(protocol.CodeRefused, "refused: %d streams at once at most", maxStreams)
	}
	r.opening++
	id := r.nextID()
	r.mu.Unlock()

	// The stream outlives this request: its context is the instance's,
	// and only its headers are bound by the limit.
	sctx, cancel := context.WithCancel(r.ctx)
	timer := time.AfterFunc(limit, cancel)
	req, err := p.newRequest(sctx, nr, u)
	var resp *http.Response
	if err == nil {
		resp, err = pn.client.Do(req)
	}
	inTime := timer.Stop()
	r.mu.Lock()
	r.opening--
	switch {
	case err != nil:
	case !inTime:
		err = context.DeadlineExceeded
	case r.closed:
		err = errors.New("the instance is ending")
	}
	if err != nil {
		r.mu.Unlock()
		if resp != nil {
			resp.Body.Close()
		}
		cancel()
		var fe *protocol.FieldError
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, netError(err, limit)
	}
	s := &stream{id: id, r: r, body: resp.Body, ctx: sctx, cancel: cancel, sse: nr.sse, changed: make(chan struct{})}
	r.streams[id] = s
	r.wg.Add(1)
	r.mu.Unlock()
	go s.pump(c.AfterAnswer())
	return netStreamResult{Stream: id, Status: resp.StatusCode, Headers: responseHeaders(resp.Header)}, nil
}

// pump reads the body within the credit, and sends it in pieces, after the
// answer that names the stream.
func (s *stream) pump(afterAnswer func(context.Context)) {
	defer s.r.wg.Done()
	defer s.body.Close()
	defer s.cancel()
	afterAnswer(s.ctx)
	idle := s.r.p.cfg.StreamIdle
	if idle <= 0 {
		idle = streamIdle
	}
	buf := make([]byte, streamChunk+utf8Carry)
	carry := 0
	for {
		room, ok := s.waitCredit(carry)
		if !ok {
			return
		}
		var silent atomic.Bool
		var t *time.Timer
		if !s.sse {
			t = time.AfterFunc(idle, func() { silent.Store(true); s.cancel() })
		}
		n, err := s.body.Read(buf[carry : carry+min(streamChunk, room)])
		if t != nil {
			t.Stop()
		}
		data := buf[:carry+n]
		cut := len(data)
		if err == nil {
			cut = utf8Cut(data)
		}
		if cut > 0 && !s.send(data[:cut]) {
			return
		}
		carry = copy(buf, data[cut:])
		if err != nil {
			why := ""
			switch {
			case silent.Load():
				why = "no byte for " + idle.String()
			case errors.Is(err, io.EOF):
			default:
				why = netError(err, idle).(*protocol.Error).Message
			}
			s.end(why)
			return
		}
	}
}

// waitCredit waits until more than carry bytes may be sent, and returns
// how many more may be read; false when the stream is let go.
func (s *stream) waitCredit(carry int) (int, bool) {
	for {
		s.mu.Lock()
		if s.canceled {
			s.mu.Unlock()
			return 0, false
		}
		room := streamWindow - s.unconsumed - carry
		ch := s.changed
		s.mu.Unlock()
		if room > 0 {
			return room, true
		}
		select {
		case <-ch:
		case <-s.ctx.Done():
			return 0, false
		}
	}
}

// send sends one piece and counts it against the credit.
func (s *stream) send(data []byte) bool {
	params := netChunkParams{Stream: s.id}
	if text, b64, ok := textOrBase64(data); ok {
		params.Data = &text
	} else {
		params.DataBase64 = &b64
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.canceled {
		return false
	}
	s.unconsumed += len(data)
	return s.r.notify("net/chunk", params) == nil
}

// end sends net/end, unless the plugin let go of the stream or the
// instance is ending, and forgets the stream.
func (s *stream) end(why string) {
	s.r.mu.Lock()
	delete(s.r.streams, s.id)
	s.r.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.canceled || s.r.ctx.Err() != nil {
		return
	}
	s.canceled = true
	s.r.notify("net/end", netEndParams{Stream: s.id, Error: why})
}

func (r *Instance) stream(id int64) *stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.streams[id]
}

func netCredit(_ context.Context, r *Instance, _ Call, params []byte) (any, error) {
	var cp struct {
		Stream int64 `json:"stream" wire:"required"`
		Bytes  int64 `json:"bytes" wire:"required"`
	}
	if err := decodeParams(params, &cp); err != nil {
		return nil, err
	}
	if cp.Bytes < 0 {
		return nil, fields.Errorf("bytes", "want a count of bytes, not a negative number")
	}
	id, n := cp.Stream, cp.Bytes
	// A credit for a stream that ended is late, not wrong.
	if s := r.stream(id); s != nil {
		s.mu.Lock()
		s.unconsumed = max(0, s.unconsumed-int(min(n, streamWindow)))
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
	}
	return nil, nil
}

func netCancel(_ context.Context, r *Instance, _ Call, params []byte) (any, error) {
	var cp struct {
		Stream int64 `json:"stream" wire:"required"`
	}
	if err := decodeParams(params, &cp); err != nil {
		return nil, err
	}
	id := cp.Stream
	r.mu.Lock()
	s := r.streams[id]
	delete(r.streams, id)
	r.mu.Unlock()
	if s != nil {
		s.mu.Lock()
		s.canceled = true
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
		s.cancel() // its connection closes
	}
	return nil, nil
}
