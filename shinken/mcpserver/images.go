package mcpserver

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Images over stdio.
//
// MCP carries an image as base64 inside the JSON-RPC answer. The SDK
// encodes a tool result with encoding/json, which re-scans the output of
// every MarshalJSON it calls to compact it, and the SDK nests three of
// them around an image (the content, the tool result, the JSON-RPC
// response): a screenshot's hundred kilobytes of base64 were scanned three
// times after being made, which cost a screenshot more than the capture's
// whole encoding.
//
// On a stdio transport the Server therefore keeps image bytes out of
// encoding/json. The tool result holds a placeholder image, a few random
// bytes, whose base64 (the marker) the SDK encodes like any other; the
// transport's writer, an imageSplicer, finds the marker in the line the SDK
// writes and puts the image's base64 in its place, encoding it straight
// into the line. The line on the wire is the one the SDK would have
// written; only the work is less. A marker is random (144 bits), held only
// by the session whose result carries it, and spliced once.

// markerBytes is the size of a placeholder: a multiple of 3, so that its
// base64 has no padding and cannot run into what follows it.
const markerBytes = 18

// maxHeld bounds the images a session holds for answers not yet written
// (an answer is written as soon as its tool returns, so a few at most are
// ever held); past it the oldest is dropped.
const maxHeld = 64

// maxLineBuffer bounds the buffer an imageSplicer keeps between lines.
const maxLineBuffer = 8 << 20

// imageSplicer is the writer of a stdio transport: it passes lines
// through, splicing held images in place of their markers.
type imageSplicer struct {
	w io.WriteCloser

	mu    sync.Mutex
	held  map[string][]byte // marker → the image's bytes
	order []string          // markers, oldest first
	buf   []byte
}

func newImageSplicer(w io.WriteCloser) *imageSplicer {
	return &imageSplicer{w: w, held: map[string][]byte{}}
}

// hold keeps data for the next line that carries the returned placeholder
// (as base64, the way encoding/json writes a []byte).
func (s *imageSplicer) hold(data []byte) []byte {
	placeholder := make([]byte, markerBytes)
	rand.Read(placeholder)
	marker := base64.StdEncoding.EncodeToString(placeholder)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.order) >= maxHeld {
		delete(s.held, s.order[0])
		s.order = s.order[1:]
	}
	s.held[marker] = data
	s.order = append(s.order, marker)
	return placeholder
}

// splice is one marker found in a line.
type splice struct {
	at     int
	marker string
}

// Write writes one line (the SDK's stdio connection writes each message
// with one Write), with every held image whose marker it carries spliced
// in.
func (s *imageSplicer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.held) == 0 {
		return s.w.Write(p)
	}
	var found []splice
	for _, m := range s.order {
		if i := bytes.Index(p, []byte(m)); i >= 0 {
			found = append(found, splice{i, m})
		}
	}
	if len(found) == 0 {
		return s.w.Write(p)
	}
	slices.SortFunc(found, func(a, b splice) int { return a.at - b.at })
	size := len(p)
	for _, f := range found {
		size += base64.StdEncoding.EncodedLen(len(s.held[f.marker])) - len(f.marker)
	}
	buf := slices.Grow(s.buf[:0], size)
	last := 0
	for _, f := range found {
		buf = append(buf, p[last:f.at]...)
		buf = base64.StdEncoding.AppendEncode(buf, s.held[f.marker])
		last = f.at + len(f.marker)
		delete(s.held, f.marker)
		s.order = slices.DeleteFunc(s.order, func(m string) bool { return m == f.marker })
	}
	buf = append(buf, p[last:]...)
	if cap(buf) <= maxLineBuffer {
		s.buf = buf
	} else {
		s.buf = nil
	}
	if _, err := s.w.Write(buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close closes the underlying writer and drops the held images.
func (s *imageSplicer) Close() error {
	s.mu.Lock()
	clear(s.held)
	s.order = nil
	s.buf = nil
	s.mu.Unlock()
	return s.w.Close()
}

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
// placeholder its transport splices the image into, when it has a
// splicer, or else the image itself.
func (s *Server) imageContent(req *mcp.CallToolRequest, data []byte, mimeType string) *mcp.ImageContent {
	if req != nil && req.Session != nil {
		if sp, ok := s.splicers.Load(req.Session); ok {
			return &mcp.ImageContent{Data: sp.(*imageSplicer).hold(data), MIMEType: mimeType}
		}
	}
	return &mcp.ImageContent{Data: data, MIMEType: mimeType}
}
