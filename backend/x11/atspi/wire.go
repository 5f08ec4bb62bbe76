package atspi

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// This file holds the data plane: a small D-Bus client that pipelines method
// calls on one socket and decodes the few reply shapes AT-SPI walks need.
//
// Why not godbus here: measured against gtk3-demo and a 2,000-node GTK list,
// godbus spends ~17 µs of client CPU per call (12 µs of it decoding one
// reply through reflection, one syscall per message), which makes the client,
// not the application, the bottleneck of a walk. Encoding calls by hand into
// one buffer, writing a window of them with one syscall and decoding replies
// straight from a buffered reader costs a few µs per call. godbus still
// carries the control plane (bus discovery, registration, events, actions
// that need no throughput).

// Message types and header field codes of the D-Bus wire protocol.
const (
	msgMethodCall   = 1
	msgMethodReturn = 2
	msgError        = 3
	msgSignal       = 4

	fieldPath        = 1
	fieldInterface   = 2
	fieldMember      = 3
	fieldErrorName   = 4
	fieldReplySerial = 5
	fieldDestination = 6
	fieldSignature   = 8
)

// maxMessage caps a message we accept. The protocol allows 128 MiB; a reply
// that large from an application is a fault, not a tree.
const maxMessage = 64 << 20

// errShortBody says a reply ended before the data its signature promised.
var errShortBody = errors.New("atspi: malformed D-Bus message")

// A CallError is an error reply from an application or the bus: Name is the
// D-Bus error name, such as org.freedesktop.DBus.Error.UnknownObject.
type CallError struct {
	Name    string
	Message string
}

// Error returns "atspi: name: message".
func (e *CallError) Error() string {
	if e.Message == "" {
		return "atspi: " + e.Name
	}
	return "atspi: " + e.Name + ": " + e.Message
}

// gone reports whether the error says the object or its application no
// longer exists, rather than that a call was wrong.
func (e *CallError) gone() bool {
	switch e.Name {
	case "org.freedesktop.DBus.Error.UnknownObject",
		"org.freedesktop.DBus.Error.ServiceUnknown",
		"org.freedesktop.DBus.Error.NameHasNoOwner",
		"org.freedesktop.DBus.Error.Disconnected",
		"org.freedesktop.DBus.Error.NoReply":
		return true
	}
	return false
}

// encoder appends a D-Bus message in little-endian byte order. Alignment is
// relative to base, the start of the message in b: the body starts on an
// 8-byte boundary, so aligning from the message start aligns the body too.
type encoder struct {
	b    []byte
	base int
}

func (e *encoder) pad(n int) {
	for (len(e.b)-e.base)%n != 0 {
		e.b = append(e.b, 0)
	}
}

func (e *encoder) byte(v byte) { e.b = append(e.b, v) }

func (e *encoder) u32(v uint32) {
	e.pad(4)
	e.b = binary.LittleEndian.AppendUint32(e.b, v)
}

func (e *encoder) i32(v int32) { e.u32(uint32(v)) }

func (e *encoder) bool(v bool) {
	if v {
		e.u32(1)
	} else {
		e.u32(0)
	}
}

func (e *encoder) f64(v float64) {
	e.pad(8)
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v))
}

// str appends a string or an object path.
func (e *encoder) str(s string) {
	e.u32(uint32(len(s)))
	e.b = append(e.b, s...)
	e.b = append(e.b, 0)
}

func (e *encoder) sig(s string) {
	e.b = append(e.b, byte(len(s)))
	e.b = append(e.b, s...)
	e.b = append(e.b, 0)
}

// array appends an array of elements aligned to align, written by elems.
func (e *encoder) array(align int, elems func()) {
	e.pad(4)
	at := len(e.b)
	e.b = append(e.b, 0, 0, 0, 0)
	e.pad(align)
	start := len(e.b)
	if elems != nil {
		elems()
	}
	binary.LittleEndian.PutUint32(e.b[at:], uint32(len(e.b)-start))
}

// headerField appends one (yv) header field whose value is a string-like
// type with signature typ ("s", "o" or "g").
func (e *encoder) headerField(code byte, typ string, v string) {
	e.pad(8)
	e.byte(code)
	e.sig(typ)
	if typ == "g" {
		e.sig(v)
	} else {
		e.str(v)
	}
}

// A methodCall describes one call. args writes the body, whose signature is
// sig; both are empty for a call without arguments.
type methodCall struct {
	dest, path, iface, member string
	sig                       string
	args                      func(e *encoder)
}

// appendCall appends c as a message with the given serial.
func appendCall(b []byte, serial uint32, c *methodCall) []byte {
	e := encoder{b: b, base: len(b)}
	e.b = append(e.b, 'l', msgMethodCall, 0, 1)
	e.b = append(e.b, 0, 0, 0, 0) // body length, patched below
	e.b = binary.LittleEndian.AppendUint32(e.b, serial)
	fieldsAt := len(e.b)
	e.b = append(e.b, 0, 0, 0, 0) // header fields length, patched below
	fieldsStart := len(e.b)
	e.headerField(fieldPath, "o", c.path)
	if c.iface != "" {
		e.headerField(fieldInterface, "s", c.iface)
	}
	e.headerField(fieldMember, "s", c.member)
	if c.dest != "" {
		e.headerField(fieldDestination, "s", c.dest)
	}
	if c.sig != "" {
		e.headerField(fieldSignature, "g", c.sig)
	}
	binary.LittleEndian.PutUint32(e.b[fieldsAt:], uint32(len(e.b)-fieldsStart))
	e.pad(8)
	bodyStart := len(e.b)
	if c.args != nil {
		c.args(&e)
	}
	binary.LittleEndian.PutUint32(e.b[e.base+4:], uint32(len(e.b)-bodyStart))
	return e.b
}

// decoder reads values from a message body. Its first error sticks: every
// later read returns a zero value, so callers check err once at the end.
// Offsets are relative to the body, which starts 8-aligned in its message.
type decoder struct {
	b     []byte
	off   int
	order binary.ByteOrder
	err   error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errShortBody
	}
	d.off = len(d.b)
}

func (d *decoder) align(n int) {
	off := (d.off + n - 1) / n * n
	if off > len(d.b) {
		d.fail()
		return
	}
	d.off = off
}

func (d *decoder) take(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b)-d.off {
		d.fail()
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

func (d *decoder) byte() byte {
	p := d.take(1)
	if p == nil {
		return 0
	}
	return p[0]
}

func (d *decoder) u32() uint32 {
	d.align(4)
	p := d.take(4)
	if p == nil {
		return 0
	}
	return d.order.Uint32(p)
}

func (d *decoder) i32() int32 { return int32(d.u32()) }

func (d *decoder) f64() float64 {
	d.align(8)
	p := d.take(8)
	if p == nil {
		return 0
	}
	return math.Float64frombits(d.order.Uint64(p))
}

// str reads a string or an object path.
func (d *decoder) str() string {
	n := d.u32()
	p := d.take(int(n) + 1)
	if p == nil {
		return ""
	}
	return string(p[:n])
}

func (d *decoder) sig() string {
	n := d.byte()
	p := d.take(int(n) + 1)
	if p == nil {
		return ""
	}
	return string(p[:n])
}

// array reads an array's length, aligns to its elements and returns the
// offset at which the array ends.
func (d *decoder) array(align int) int {
	n := d.u32()
	d.align(align)
	if d.err != nil || int(n) > len(d.b)-d.off {
		d.fail()
		return d.off
	}
	return d.off + int(n)
}

// ref reads an object reference, the (so) struct AT-SPI uses everywhere.
func (d *decoder) ref() (bus, path string) {
	d.align(8)
	bus = d.str()
	path = d.str()
	return bus, path
}

// alignOf returns the alignment of the type that starts sig.
func alignOf(c byte) int {
	switch c {
	case 'y', 'g', 'v':
		return 1
	case 'n', 'q':
		return 2
	case 'x', 't', 'd', '(', '{':
		return 8
	}
	return 4
}

// typeEnd returns the index just past the single complete type that starts
// at sig[i], or -1 when sig is malformed there.
func typeEnd(sig string, i int) int {
	if i >= len(sig) {
		return -1
	}
	switch sig[i] {
	case 'a':
		return typeEnd(sig, i+1)
	case '(', '{':
		close := byte(')')
		if sig[i] == '{' {
			close = '}'
		}
		j := i + 1
		for j < len(sig) && sig[j] != close {
			j = typeEnd(sig, j)
			if j < 0 {
				return -1
			}
		}
		if j >= len(sig) || j == i+1 {
			return -1
		}
		return j + 1
	case 'y', 'b', 'n', 'q', 'i', 'u', 'x', 't', 'd', 's', 'o', 'g', 'v', 'h':
		return i + 1
	}
	return -1
}

// skip reads past one value of every complete type in sig.
func (d *decoder) skip(sig string) {
	for i := 0; i < len(sig) && d.err == nil; {
		j := typeEnd(sig, i)
		if j < 0 {
			d.fail()
			return
		}
		d.skipOne(sig[i:j], 0)
		i = j
	}
}

// skipOne reads past one value of the single complete type t. depth bounds
// the recursion through variants, which the signature does not bound.
func (d *decoder) skipOne(t string, depth int) {
	if depth > 64 {
		d.fail()
		return
	}
	switch t[0] {
	case 'y':
		d.take(1)
	case 'n', 'q':
		d.align(2)
		d.take(2)
	case 'b', 'i', 'u', 'h':
		d.u32()
	case 'x', 't', 'd':
		d.align(8)
		d.take(8)
	case 's', 'o':
		d.str()
	case 'g':
		d.sig()
	case 'v':
		s := d.sig()
		if d.err == nil && (s == "" || typeEnd(s, 0) != len(s)) {
			d.fail()
			return
		}
		if d.err == nil {
			d.skipOne(s, depth+1)
		}
	case 'a':
		end := d.array(alignOf(t[1]))
		if d.err == nil {
			d.off = end
		}
	case '(', '{':
		d.align(8)
		inner := t[1 : len(t)-1]
		for i := 0; i < len(inner) && d.err == nil; {
			j := typeEnd(inner, i)
			d.skipOne(inner[i:j], depth)
			i = j
		}
	default:
		d.fail()
	}
}

// A message is a received message; body is valid until the next read.
type message struct {
	typ         byte
	serial      uint32
	replySerial uint32
	errName     string
	sig         string
	body        decoder
}

// wireConn is one D-Bus connection used by a single goroutine at a time:
// a peer-to-peer socket to an application, or a connection to the bus.
type wireConn struct {
	c      net.Conn
	r      *bufio.Reader
	serial uint32
	wbuf   []byte
	rbuf   []byte
	dead   error // set once the connection is unusable
	// received counts the messages read, to tell a connection that broke
	// before it was used from one that broke during a walk.
	received int
}

// dialWire connects to a D-Bus address (unix:path= or unix:abstract=) and
// authenticates with EXTERNAL. When hello is set it also registers with the
// bus, as a bus connection must before it may call anything.
func dialWire(ctx context.Context, address string, hello bool) (*wireConn, error) {
	var lastErr error
	for _, a := range strings.Split(address, ";") {
		sockPath, err := unixSocketPath(a)
		if err != nil {
			lastErr = err
			continue
		}
		var dialer net.Dialer
		c, err := dialer.DialContext(ctx, "unix", sockPath)
		if err != nil {
			lastErr = err
			continue
		}
		w := &wireConn{c: c, r: bufio.NewReaderSize(c, 64<<10)}
		if err := w.auth(ctx); err != nil {
			c.Close()
			lastErr = err
			continue
		}
		if hello {
			if err := w.hello(ctx); err != nil {
				c.Close()
				lastErr = err
				continue
			}
		}
		return w, nil
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("atspi: empty D-Bus address")
	}
	return nil, lastErr
}

// unixSocketPath returns the socket path of one D-Bus address entry; an
// abstract socket gets the leading '@' that Go maps to the abstract namespace.
func unixSocketPath(entry string) (string, error) {
	transport, params, ok := strings.Cut(entry, ":")
	if !ok || transport != "unix" {
		return "", fmt.Errorf("atspi: unsupported D-Bus address %q", entry)
	}
	for _, kv := range strings.Split(params, ",") {
		k, v, _ := strings.Cut(kv, "=")
		v, err := unescapeAddress(v)
		if err != nil {
			return "", err
		}
		switch k {
		case "path":
			return v, nil
		case "abstract":
			return "@" + v, nil
		}
	}
	return "", fmt.Errorf("atspi: D-Bus address %q names no socket", entry)
}

// unescapeAddress undoes the %xx escaping of D-Bus address values.
func unescapeAddress(v string) (string, error) {
	if !strings.Contains(v, "%") {
		return v, nil
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '%' {
			b.WriteByte(v[i])
			continue
		}
		if i+2 >= len(v) {
			return "", fmt.Errorf("atspi: bad escape in D-Bus address value %q", v)
		}
		n, err := strconv.ParseUint(v[i+1:i+3], 16, 8)
		if err != nil {
			return "", fmt.Errorf("atspi: bad escape in D-Bus address value %q", v)
		}
		b.WriteByte(byte(n))
		i += 2
	}
	return b.String(), nil
}

// auth runs the EXTERNAL authentication handshake.
func (w *wireConn) auth(ctx context.Context) error {
	stop := w.bound(ctx, time.Now().Add(5*time.Second))
	defer stop()
	uid := strconv.Itoa(os.Geteuid())
	if _, err := io.WriteString(w.c, "\x00AUTH EXTERNAL "+hex.EncodeToString([]byte(uid))+"\r\n"); err != nil {
		return fmt.Errorf("atspi: D-Bus auth: %w", err)
	}
	line, err := w.r.ReadString('\n')
	if err != nil {
		return fmt.Errorf("atspi: D-Bus auth: %w", err)
	}
	if !strings.HasPrefix(line, "OK ") {
		return fmt.Errorf("atspi: D-Bus auth refused: %q", strings.TrimSpace(line))
	}
	if _, err := io.WriteString(w.c, "BEGIN\r\n"); err != nil {
		return fmt.Errorf("atspi: D-Bus auth: %w", err)
	}
	return nil
}

// hello registers a bus connection and discards its unique name.
func (w *wireConn) hello(ctx context.Context) error {
	p := newPipeline(ctx, w, time.Now().Add(5*time.Second), 5*time.Second, 1)
	var err error
	p.call(&methodCall{dest: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
		iface: "org.freedesktop.DBus", member: "Hello"}, func(m *message, e error) { err = e })
	if runErr := p.run(); runErr != nil {
		return runErr
	}
	return err
}

// bound makes blocking I/O on w return when ctx is done or at deadline.
// The returned function undoes the context hook.
func (w *wireConn) bound(ctx context.Context, deadline time.Time) func() {
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	w.c.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { w.c.SetDeadline(time.Unix(1, 0)) })
	return func() { stop() }
}

// readMessage reads the next whole message.
func (w *wireConn) readMessage() (*message, error) {
	var fixed [16]byte
	if _, err := io.ReadFull(w.r, fixed[:]); err != nil {
		return nil, err
	}
	var order binary.ByteOrder
	switch fixed[0] {
	case 'l':
		order = binary.LittleEndian
	case 'B':
		order = binary.BigEndian
	default:
		return nil, errShortBody
	}
	bodyLen := order.Uint32(fixed[4:])
	fieldsLen := order.Uint32(fixed[12:])
	if bodyLen > maxMessage || fieldsLen > maxMessage {
		return nil, fmt.Errorf("atspi: D-Bus message of %d bytes is too long", bodyLen+fieldsLen)
	}
	headerLen := (16 + int(fieldsLen) + 7) &^ 7
	total := headerLen - 16 + int(bodyLen)
	if cap(w.rbuf) < total {
		w.rbuf = make([]byte, total)
	}
	rest := w.rbuf[:total]
	if _, err := io.ReadFull(w.r, rest); err != nil {
		return nil, err
	}
	w.received++
	m := &message{typ: fixed[1], serial: order.Uint32(fixed[8:])}
	// Header fields are an a(yv) starting at message offset 16, which is
	// 8-aligned, so a decoder over rest aligns them correctly.
	h := decoder{b: rest[:fieldsLen], order: order}
	for h.off < len(h.b) && h.err == nil {
		h.align(8)
		code := h.byte()
		s := h.sig()
		switch {
		case code == fieldReplySerial && s == "u":
			m.replySerial = h.u32()
		case code == fieldErrorName && s == "s":
			m.errName = h.str()
		case code == fieldSignature && s == "g":
			m.sig = h.sig()
		case s != "" && typeEnd(s, 0) == len(s):
			h.skipOne(s, 0)
		default:
			h.fail()
		}
	}
	if h.err != nil {
		return nil, h.err
	}
	m.body = decoder{b: rest[headerLen-16:], order: order}
	return m, nil
}

// A pipeline keeps up to window calls in flight on one connection. Replies
// run their callbacks on the caller's goroutine, which may queue more calls:
// a walk is written as callbacks that discover the next work.
type pipeline struct {
	w           *wireConn
	ctx         context.Context
	deadline    time.Time     // the whole pipeline's limit
	callTimeout time.Duration // longest wait for any reply: a hung app's limit
	window      int
	queue       []pending
	inflight    map[uint32]func(*message, error)
	// sent, when set, counts the calls sent.
	sent *atomic.Uint64
}

type pending struct {
	c    *methodCall
	done func(*message, error)
}

func newPipeline(ctx context.Context, w *wireConn, deadline time.Time, callTimeout time.Duration, window int) *pipeline {
	return &pipeline{w: w, ctx: ctx, deadline: deadline, callTimeout: callTimeout, window: window,
		inflight: map[uint32]func(*message, error){}}
}

// call queues c; done runs with the reply (m nil on error). An error reply
// arrives as a *CallError.
func (p *pipeline) call(c *methodCall, done func(m *message, err error)) {
	p.queue = append(p.queue, pending{c, done})
}

// run sends and receives until nothing is queued or in flight. An error
// means the connection failed or timed out; the connection is then closed,
// because replies to the abandoned calls could still arrive on it.
func (p *pipeline) run() error {
	if p.w.dead != nil {
		return p.w.dead
	}
	stop := context.AfterFunc(p.ctx, func() { p.w.c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	for len(p.queue) > 0 || len(p.inflight) > 0 {
		if err := p.ctx.Err(); err != nil {
			return p.abort(err)
		}
		for len(p.inflight) < p.window && len(p.queue) > 0 {
			q := p.queue[0]
			p.queue[0] = pending{}
			p.queue = p.queue[1:]
			p.w.serial++
			if p.w.serial == 0 {
				p.w.serial = 1
			}
			p.w.wbuf = appendCall(p.w.wbuf, p.w.serial, q.c)
			p.inflight[p.w.serial] = q.done
			if p.sent != nil {
				p.sent.Add(1)
			}
		}
		if len(p.queue) == 0 {
			p.queue = nil // let the backing array go
		}
		if len(p.w.wbuf) > 0 {
			p.w.c.SetWriteDeadline(p.deadline)
			_, err := p.w.c.Write(p.w.wbuf)
			p.w.wbuf = p.w.wbuf[:0]
			if err != nil {
				return p.abort(err)
			}
		}
		// Read every reply already buffered before writing again, so that
		// both directions move in batches.
		for first := true; len(p.inflight) > 0 && (first || p.w.r.Buffered() > 0); first = false {
			rd := time.Now().Add(p.callTimeout)
			if p.deadline.Before(rd) {
				rd = p.deadline
			}
			p.w.c.SetReadDeadline(rd)
			m, err := p.w.readMessage()
			if err != nil {
				return p.abort(err)
			}
			if m.typ != msgMethodReturn && m.typ != msgError {
				continue // signals and stray calls are not ours to answer
			}
			done, ok := p.inflight[m.replySerial]
			if !ok {
				continue
			}
			delete(p.inflight, m.replySerial)
			if m.typ == msgError {
				ce := &CallError{Name: m.errName}
				if m.sig != "" && m.sig[0] == 's' {
					ce.Message = m.body.str()
				}
				done(nil, ce)
				continue
			}
			done(m, nil)
		}
	}
	return nil
}

func (p *pipeline) abort(err error) error {
	if p.ctx.Err() != nil {
		err = p.ctx.Err()
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		err = fmt.Errorf("atspi: no reply within %v: %w", p.callTimeout, context.DeadlineExceeded)
	}
	p.w.dead = err
	p.w.c.Close()
	p.queue = nil
	clear(p.inflight)
	return err
}

// expect checks that a reply carries signature sig and returns its body.
func expect(m *message, sig string) (*decoder, error) {
	if m.sig != sig {
		return nil, fmt.Errorf("atspi: reply signature %q, want %q", m.sig, sig)
	}
	return &m.body, nil
}
