package shinken_test

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
)

// rawWS is a WebSocket client written by hand, so that a test can send a
// frame in pieces and stop.
type rawWS struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

// dialRaw upgrades a TCP connection to the runtime at url (ws://host/...)
// by hand.
func dialRaw(t *testing.T, url string) *rawWS {
	t.Helper()
	host := strings.TrimPrefix(url, "ws://")
	nc, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	req := "GET /aci HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(nc, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	return &rawWS{t: t, nc: nc, br: br}
}

// frame encodes a masked client frame.
func frame(fin bool, op byte, payload []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	var h []byte
	if len(payload) < 126 {
		h = []byte{b0, 0x80 | byte(len(payload))}
	} else {
		h = []byte{b0, 0x80 | 126, 0, 0}
		binary.BigEndian.PutUint16(h[2:], uint16(len(payload)))
	}
	key := []byte{1, 2, 3, 4}
	h = append(h, key...)
	for i, c := range payload {
		h = append(h, c^key[i%4])
	}
	return h
}

func (w *rawWS) send(b []byte) {
	w.t.Helper()
	if _, err := w.nc.Write(b); err != nil {
		w.t.Fatal(err)
	}
}

// read reads one server frame: its opcode and payload.
func (w *rawWS) read() (byte, []byte) {
	w.t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(w.br, h[:]); err != nil {
		w.t.Fatalf("read frame: %v", err)
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var ext [2]byte
		io.ReadFull(w.br, ext[:])
		n = uint64(binary.BigEndian.Uint16(ext[:]))
	case 127:
		var ext [8]byte
		io.ReadFull(w.br, ext[:])
		n = binary.BigEndian.Uint64(ext[:])
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(w.br, p); err != nil {
		w.t.Fatalf("read payload: %v", err)
	}
	return h[0] & 0x0f, p
}

// hello opens the session.
func (w *rawWS) hello() {
	w.t.Helper()
	w.send(frame(true, 1, []byte(`{"type":"hello","v":0,"client":{"name":"raw","version":"1"},"token":"test-token"}`)))
	op, p := w.read()
	if op != 1 || !strings.Contains(string(p), `"welcome"`) {
		w.t.Fatalf("welcome: %d %s", op, p)
	}
	schematest.Valid(w.t, "", p)
}

// closed reads up to the close frame the runtime sends (the messages
// before it checked against the schema) and returns its code and reason.
func (w *rawWS) closed() (websocket.StatusCode, string) {
	w.t.Helper()
	for {
		op, p := w.read()
		if op == 1 {
			schematest.Valid(w.t, "", p)
			continue
		}
		if op != 8 || len(p) < 2 {
			w.t.Fatalf("got frame %d %q, want a close frame", op, p)
		}
		return websocket.StatusCode(binary.BigEndian.Uint16(p)), string(p[2:])
	}
}

// TestStalledFrame: with the keepalive off, a client that sends part of a
// frame (a header alone, half a payload, or the first fragments of a
// message) and stops is closed with 1008 once the read timeout has passed
// since the frame began; a session idle between messages stays open.
func TestStalledFrame(t *testing.T) {
	ping := []byte(`{"type":"ping","t":1}`)
	action := []byte(`{"type":"action","call_id":"a","action":{"verb":"wait","ms":1}}`)
	cases := []struct {
		name string
		sent []byte
		// hold: the client keeps its end open after the close frame, as a
		// stalled client does: the runtime drops the connection itself.
		hold bool
	}{
		{"one header byte", frame(true, 1, ping)[:1], false},
		{"header without payload", frame(true, 1, ping)[:6], false},
		{"half a payload", frame(true, 1, action)[:6+len(action)/2], true},
		{"a message, then half a frame", append(frame(true, 1, ping), frame(true, 1, ping)[:9]...), false},
		{"first fragments", append(frame(false, 1, action[:10]), frame(false, 0, action[10:20])...), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := newEvents()
			e := newEnv(t, &shinken.RuntimeOptions{Recorder: ev, KeepAlive: -1, ReadTimeout: 200 * time.Millisecond})
			idle := dialRaw(t, e.srv)
			idle.hello()
			w := dialRaw(t, e.srv)
			w.hello()
			w.send(tc.sent)
			code, reason := w.closed()
			if code != websocket.StatusPolicyViolation || !strings.Contains(reason, "read timeout") {
				t.Fatalf("closed with %d %q, want 1008 naming the read timeout", code, reason)
			}
			if !tc.hold {
				w.nc.Close()
			}
			<-ev.closed
			// The idle session, opened first and silent since, is served.
			idle.send(frame(true, 1, ping))
			if op, p := idle.read(); op != 1 || !strings.Contains(string(p), `"pong"`) {
				t.Fatalf("idle session: %d %s", op, p)
			}
		})
	}
}

// TestSlowWholeMessage: a message sent a byte at a time (the scan of
// frames fed byte by byte) is read whole and answered.
func TestSlowWholeMessage(t *testing.T) {
	e := newEnv(t, &shinken.RuntimeOptions{KeepAlive: -1, ReadTimeout: time.Minute})
	w := dialRaw(t, e.srv)
	w.hello()
	f := frame(true, 1, []byte(`{"type":"ping","t":2}`))
	for i := range f {
		w.send(f[i : i+1])
	}
	if op, p := w.read(); op != 1 || !strings.Contains(string(p), `"pong"`) {
		t.Fatalf("%d %s", op, p)
	}
}
