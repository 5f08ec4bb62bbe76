package shinken

import (
	"bufio"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// A client that sends part of a frame and stops holds its session (and the
// reader goroutine waiting for the rest) for as long as the connection
// lives: the keepalive cannot find it, since a pong cannot arrive before
// the end of the frame ahead of it, and without the keepalive nothing
// looks. So the connection under each session follows the client's frames
// as their bytes arrive, and a frame that has begun, or a message sent in
// fragments, must be whole within RuntimeOptions.ReadTimeout, counted from
// its first byte. Between messages nothing is bounded: an idle session
// stays open (the keepalive finds a client that is gone).
//
// The same scan sees the client's close frame arrive, before the WebSocket
// library reads it and answers: the session's departure begins there, so
// that a client that has seen its close handshake complete and opens
// another session finds the departure already counted (see departures).

// stallConn is the connection under a session's WebSocket.
type stallConn struct {
	net.Conn
	limit time.Duration

	mu      sync.Mutex
	scan    frameScan
	timer   *time.Timer // running while a frame or a message is under way
	stalled func()      // called when the timer fires; set by the session
	closing func()      // called once when a whole close frame has arrived; set by the session
}

// Read reads from the connection, following the frames it carries.
func (c *stallConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.arrived(p[:n])
	}
	return n, err
}

// arrived follows the bytes b, starting the timer at the first byte of a
// frame and stopping it at the end of a message.
// A limit of zero or less starts no timer. When a whole close frame has
// arrived, it calls what onClosing set, once.
func (c *stallConn) arrived(b []byte) {
	c.mu.Lock()
	busy := c.scan.feed(b)
	switch {
	case busy && c.timer == nil && c.limit > 0:
		c.timer = time.AfterFunc(c.limit, c.fire)
	case !busy && c.timer != nil:
		c.timer.Stop()
		c.timer = nil
	}
	var closing func()
	if c.scan.closeSeen && c.closing != nil {
		closing, c.closing = c.closing, nil
	}
	c.mu.Unlock()
	if closing != nil {
		closing()
	}
}

func (c *stallConn) fire() {
	c.mu.Lock()
	f := c.stalled
	c.mu.Unlock()
	if f != nil {
		f()
	}
}

// onStall sets what a stall does.
func (c *stallConn) onStall(f func()) {
	c.mu.Lock()
	c.stalled = f
	c.mu.Unlock()
}

// onClosing sets what the arrival of the client's close frame does.
func (c *stallConn) onClosing(f func()) {
	c.mu.Lock()
	c.closing = f
	c.mu.Unlock()
}

// stop stops the timer, once the session is over.
func (c *stallConn) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	c.stalled, c.closing = nil, nil
}

// stallWriter hands the WebSocket library a stallConn when it hijacks the
// connection.
type stallWriter struct {
	http.ResponseWriter
	limit time.Duration
	conn  *stallConn // set by Hijack
}

// Hijack implements http.Hijacker.
func (w *stallWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("shinken: the http.ResponseWriter cannot be hijacked")
	}
	nc, brw, err := h.Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.conn = &stallConn{Conn: nc, limit: w.limit}
	// What the server read ahead is read first (the library reads it
	// from brw), so it is followed first.
	if n := brw.Reader.Buffered(); n > 0 {
		ahead, _ := brw.Reader.Peek(n)
		w.conn.arrived(ahead)
	}
	return w.conn, brw, nil
}

// Unwrap returns the ResponseWriter underneath, for http.ResponseController.
func (w *stallWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// frameScan follows WebSocket frames from a client (RFC 6455 §5.2) by their
// headers alone: where each frame ends, and whether a fragmented data
// message goes on past the current frame. It checks nothing: the WebSocket
// library refuses what is malformed.
type frameScan struct {
	hdr        [14]byte
	have, need int    // header bytes held, and the header's length (2 until the second byte is known)
	left       uint64 // payload bytes still to come
	inPayload  bool
	fragmented bool // a data message continues in later frames
	op         byte // the current frame's opcode
	closeSeen  bool // a whole close frame has arrived
}

// feed follows b and reports whether a frame or a fragmented message is
// under way at its end.
func (f *frameScan) feed(b []byte) bool {
	for len(b) > 0 {
		if f.inPayload {
			k := uint64(len(b))
			if k > f.left {
				k = f.left
			}
			f.left -= k
			b = b[k:]
			if f.left == 0 {
				f.inPayload, f.have = false, 0
				f.closeSeen = f.closeSeen || f.op == 8
			}
			continue
		}
		if f.have == 0 {
			f.need = 2
		}
		k := copy(f.hdr[f.have:f.need], b)
		f.have += k
		b = b[k:]
		if f.have == 2 && f.need == 2 {
			f.need = 2 + extLen(f.hdr[1]&0x7f)
			if f.hdr[1]&0x80 != 0 {
				f.need += 4 // the mask key
			}
		}
		if f.have < f.need {
			continue
		}
		// A whole header.
		switch op := f.hdr[0] & 0x0f; {
		case op < 8: // continuation, text, binary
			f.fragmented = f.hdr[0]&0x80 == 0
		}
		f.op = f.hdr[0] & 0x0f
		switch n := f.hdr[1] & 0x7f; n {
		case 126:
			f.left = uint64(binary.BigEndian.Uint16(f.hdr[2:4]))
		case 127:
			f.left = binary.BigEndian.Uint64(f.hdr[2:10])
		default:
			f.left = uint64(n)
		}
		if f.left > 0 {
			f.inPayload = true
		} else {
			f.have = 0
			f.closeSeen = f.closeSeen || f.op == 8
		}
	}
	return f.have > 0 || f.inPayload || f.fragmented
}

// extLen is the length of the extended payload length that a frame's 7-bit
// length n announces.
func extLen(n byte) int {
	switch n {
	case 126:
		return 2
	case 127:
		return 8
	}
	return 0
}
