package mcpserver

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Images, over stdio and HTTP.
//
// MCP carries an image as base64 inside the JSON-RPC answer. The SDK
// encodes a tool result with encoding/json, which re-scans the output of
// every MarshalJSON it calls to compact it, and the SDK nests three of
// them around an image (the content, the tool result, the JSON-RPC
// response): a screenshot's hundred kilobytes of base64 were scanned three
// times after being made, which cost a screenshot more than the capture's
// whole encoding.
//
// Where the Server writes the answers itself (Run's stdio transport, its
// HTTP handler), it therefore keeps image bytes out of encoding/json. The
// tool result holds a placeholder image, a few random bytes, whose base64
// (the marker) the SDK encodes like any other; the writer of the answer
// (an imageSplicer on stdio, an imageResponseWriter over HTTP) finds the
// marker in the message the SDK writes and puts the image's base64 in its
// place, encoding it straight into the message. The message on the wire is
// the one the SDK would have written; only the work is less. A marker is
// random (144 bits), held only where the answer is written, and spliced
// once.

// markerBytes is the size of a placeholder: a multiple of 3, so that its
// base64 has no padding and cannot run into what follows it.
const markerBytes = 18

// An answer is written as soon as its tool returns, so an image is held
// for moments; one whose answer was never written (its client left) is
// dropped after maxHeldAge, or when maxHeld images are held, the oldest
// first.
const (
	maxHeldAge = time.Minute
	maxHeld    = 1024
)

// maxLineBuffer bounds the buffer an imageSplicer keeps between lines.
const maxLineBuffer = 8 << 20

// heldImages are the images of answers not yet written, by marker.
type heldImages struct {
	mu    sync.Mutex
	held  map[string][]byte // marker → the image's bytes
	order []heldMarker      // oldest first
}

type heldMarker struct {
	marker string
	at     time.Time
}

// hold keeps data for the next line that carries the returned placeholder
// (as base64, the way encoding/json writes a []byte). A nil data marks the
// message that carries the placeholder as one not to write at all.
func (h *heldImages) hold(data []byte) []byte {
	placeholder := make([]byte, markerBytes)
	rand.Read(placeholder)
	marker := base64.StdEncoding.EncodeToString(placeholder)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		h.held = map[string][]byte{}
	}
	now := time.Now()
	for len(h.order) > 0 && (len(h.order) >= maxHeld || now.Sub(h.order[0].at) > maxHeldAge) {
		delete(h.held, h.order[0].marker)
		h.order = h.order[1:]
	}
	h.held[marker] = data
	h.order = append(h.order, heldMarker{marker, now})
	return placeholder
}

// splice is one marker found in a message.
type splice struct {
	at     int
	marker string
}

// splice returns p with every held image whose marker it carries in the
// marker's place, built in buf, and whether p carried any. Each image is
// spliced once. A message that carries the marker of a nil image is not
// to be written: splice returns nil and true.
func (h *heldImages) splice(buf, p []byte) ([]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.held) == 0 {
		return buf, false
	}
	var found []splice
	for _, m := range h.order {
		if i := bytes.Index(p, []byte(m.marker)); i >= 0 {
			found = append(found, splice{i, m.marker})
		}
	}
	if len(found) == 0 {
		return buf, false
	}
	for _, f := range found {
		if h.held[f.marker] == nil {
			h.forget(f.marker)
			return nil, true
		}
	}
	slices.SortFunc(found, func(a, b splice) int { return a.at - b.at })
	size := len(p)
	for _, f := range found {
		size += base64.StdEncoding.EncodedLen(len(h.held[f.marker])) - len(f.marker)
	}
	buf = slices.Grow(buf[:0], size)
	last := 0
	for _, f := range found {
		buf = append(buf, p[last:f.at]...)
		buf = base64.StdEncoding.AppendEncode(buf, h.held[f.marker])
		last = f.at + len(f.marker)
		h.forget(f.marker)
	}
	return append(buf, p[last:]...), true
}

// forget drops the image of marker; h.mu is held.
func (h *heldImages) forget(marker string) {
	delete(h.held, marker)
	h.order = slices.DeleteFunc(h.order, func(m heldMarker) bool { return m.marker == marker })
}

// drop forgets every held image.
func (h *heldImages) drop() {
	h.mu.Lock()
	clear(h.held)
	h.order = nil
	h.mu.Unlock()
}

// imageSplicer is the writer of a stdio transport: it passes lines
// through, splicing held images in place of their markers.
type imageSplicer struct {
	w      io.WriteCloser
	images heldImages

	mu  sync.Mutex
	buf []byte
}

func newImageSplicer(w io.WriteCloser) *imageSplicer {
	return &imageSplicer{w: w}
}

// hold keeps data for the line that carries the returned placeholder.
func (s *imageSplicer) hold(data []byte) []byte { return s.images.hold(data) }

// Write writes one line (the SDK's stdio connection writes each message
// with one Write), with every held image whose marker it carries spliced
// in.
func (s *imageSplicer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, ok := s.images.splice(s.buf, p)
	if !ok {
		return s.w.Write(p)
	}
	if out == nil {
		return len(p), nil // a cancelled call's answer
	}
	if cap(out) <= maxLineBuffer {
		s.buf = out
	} else {
		s.buf = nil
	}
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close closes the underlying writer and drops the held images.
func (s *imageSplicer) Close() error {
	s.images.drop()
	s.mu.Lock()
	s.buf = nil
	s.mu.Unlock()
	return s.w.Close()
}

// imageResponseWriter is the response writer of a request to Handler or
// TokenHandler: the SDK's streamable transport writes each message (an
// SSE event, or a JSON body) with one Write, which gets the Server's held
// images spliced in.
type imageResponseWriter struct {
	http.ResponseWriter
	images *heldImages
}

func (w *imageResponseWriter) Write(p []byte) (int, error) {
	out, ok := w.images.splice(nil, p)
	if !ok {
		return w.ResponseWriter.Write(p)
	}
	if out == nil {
		return len(p), nil // a cancelled call's answer
	}
	if _, err := w.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap gives http.ResponseController the writer underneath, to flush.
func (w *imageResponseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// heldImagesKey is the TokenInfo.Extra key under which the requests of
// TokenHandler carry the held images of the Server whose handler's
// writers splice them.
const heldImagesKey = "shinken.dev/held_images"

// spliced returns the transport Run serves t on: for the SDK's stdio
// transports, the same transport with an imageSplicer as its writer; any
// other transport as it is, with a nil splicer.
func spliced(t mcp.Transport) (mcp.Transport, *imageSplicer) {
	switch t := t.(type) {
	case *mcp.StdioTransport:
		sp := newImageSplicer(nopCloser{os.Stdout})
		return &mcp.IOTransport{Reader: os.Stdin, Writer: sp, MaxLineLength: t.MaxLineLength}, sp
	case *mcp.IOTransport:
		sp := newImageSplicer(t.Writer)
		return &mcp.IOTransport{Reader: t.Reader, Writer: sp, MaxLineLength: t.MaxLineLength}, sp
	}
	return t, nil
}

// nopCloser is os.Stdout as the SDK's StdioTransport writes it: closing
// the session does not close it.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// imageContent is the content of an image for the session of req: a
// placeholder the writer of its answer splices the image into, when it
// came through Run's stdio transport or the Server's HTTP handler, or else
// the image itself.
func (s *Server) imageContent(req *mcp.CallToolRequest, data []byte, mimeType string) *mcp.ImageContent {
	if h := s.heldFor(req); h != nil {
		return &mcp.ImageContent{Data: h.hold(data), MIMEType: mimeType}
	}
	return &mcp.ImageContent{Data: data, MIMEType: mimeType}
}

// heldFor is the store of held images whose writer writes the answer to
// req: that of Run's stdio transport or of the Server's HTTP handler; nil
// when the answer goes through a writer of the SDK's.
func (s *Server) heldFor(req *mcp.CallToolRequest) *heldImages {
	if req == nil {
		return nil
	}
	if req.Session != nil {
		if sp, ok := s.splicers.Load(req.Session); ok {
			return &sp.(*imageSplicer).images
		}
	}
	if x := req.Extra; x != nil && x.TokenInfo != nil {
		if h, ok := x.TokenInfo.Extra[heldImagesKey].(*heldImages); ok && h == &s.httpImages {
			return h
		}
	}
	return nil
}

// unanswered is the result of a call its client cancelled: the writer of
// its answer drops the message that carries it, since a cancelled request
// gets no response (MCP's cancellation rule). Where the Server does not
// write the answer itself, the client gets the cancelled tool error.
func (s *Server) unanswered(req *mcp.CallToolRequest, cancelled *mcp.CallToolResult) *mcp.CallToolResult {
	h := s.heldFor(req)
	if h == nil {
		return cancelled
	}
	marker := base64.StdEncoding.EncodeToString(h.hold(nil))
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: marker}}, IsError: true}
}
