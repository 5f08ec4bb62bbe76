package shinken

import (
	"context"
	"encoding/base64"
	"image"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"shinken.dev/go/internal/imaging"
	"shinken.dev/go/shinken/aci"
)

// A shot is one captured, scoped and downscaled frame, ready to hash and
// encode.
type shot struct {
	img   *image.RGBA // delivered pixels
	space aci.CoordinateSpace
	hash  imaging.Hash
}

// grab captures scope and downscales it to maxLongEdge (0: the runtime cap).
func (rt *Runtime) grab(ctx context.Context, scope aci.Scope, maxLongEdge int) (*shot, error) {
	if scope == "" {
		scope = aci.ScopeScreen
	}
	if err := checkScope(scope); err != nil {
		return nil, err
	}
	select {
	case rt.pixelSlots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-rt.pixelSlots }()
	f, err := rt.capturer.Capture(ctx, scope)
	if err != nil {
		return nil, err
	}
	return rt.shape(f, scope, maxLongEdge)
}

// shape downscales a captured frame and describes its coordinate space.
func (rt *Runtime) shape(f Frame, scope aci.Scope, maxLongEdge int) (*shot, error) {
	if f.Image == nil || f.Image.Rect.Empty() {
		return nil, aci.Errorf(aci.CodeBackend, "the backend captured an empty frame for %s", scope)
	}
	edge := rt.opts.MaxLongEdge
	if maxLongEdge > 0 {
		edge = min(edge, maxLongEdge)
	}
	img, hash := rt.frames.get(f.Image, edge)
	d := f.Display
	if d.DPR <= 0 {
		d.DPR = 1
	}
	src := f.Source
	if src.Empty() {
		src = image.Rect(0, 0, f.Image.Rect.Dx(), f.Image.Rect.Dy())
	}
	s := &shot{
		img:  img,
		hash: hash,
		space: aci.CoordinateSpace{
			Origin: "top-left", W: max(d.W, 1), H: max(d.H, 1), DPR: d.DPR,
			SourceRect: aci.CoordinateRect{X: src.Min.X, Y: src.Min.Y, W: src.Dx(), H: src.Dy()},
			Delivered:  aci.CoordinateSize{W: img.Rect.Dx(), H: img.Rect.Dy()},
		},
	}
	return s, nil
}

// shapeCache remembers the last frames it downscaled and hashed. Backends
// return the very same immutable image while nothing changes (the Frame
// contract), so a repeated screenshot of an unchanged screen costs a
// capture and a pointer comparison: no downscale, no hash.
type shapeCache struct {
	mu      sync.Mutex
	entries [4]shapeEntry
	next    int
}

type shapeEntry struct {
	src  *image.RGBA
	edge int
	img  *image.RGBA
	hash imaging.Hash
}

func (fc *shapeCache) get(src *image.RGBA, edge int) (*image.RGBA, imaging.Hash) {
	fc.mu.Lock()
	for _, e := range fc.entries {
		if e.src == src && e.edge == edge {
			fc.mu.Unlock()
			return e.img, e.hash
		}
	}
	fc.mu.Unlock()
	img := imaging.Downscale(src, edge)
	h := imaging.FrameHash(img)
	fc.mu.Lock()
	fc.entries[fc.next] = shapeEntry{src: src, edge: edge, img: img, hash: h}
	fc.next = (fc.next + 1) % len(fc.entries)
	fc.mu.Unlock()
	return img, h
}

// encode encodes img in format into a pooled buffer. The image starts at
// buf.B[headroom:]: the bytes before it are left for a binary frame's
// header, so that the frame is sent from the same buffer, without copying
// the image (see PutFrameHeader).
func (rt *Runtime) encode(img *image.RGBA, format aci.ImageFormat, quality *int, headroom int) (*imaging.Buffer, error) {
	rt.encodes.Add(1)
	rt.pixelSlots <- struct{}{}
	defer func() { <-rt.pixelSlots }()
	buf := imaging.GetBuffer()
	buf.B = slices.Grow(buf.B[:0], headroom)[:headroom]
	var err error
	if format == aci.FormatJPEG {
		q := rt.opts.JPEGQuality
		if quality != nil {
			q = *quality
		}
		buf.B, err = imaging.EncodeJPEG(buf.B, img, q)
	} else {
		buf.B, err = imaging.EncodePNG(buf.B, img)
	}
	if err != nil {
		buf.Release()
		return nil, aci.Errorf(aci.CodeInternal, "encode %s: %v", format, err)
	}
	return buf, nil
}

func (rt *Runtime) nextObsID() string {
	return "o" + strconv.FormatUint(rt.obsSeq.Add(1), 10)
}

func (c *conn) screenshot(callID string, a *aci.Action) error {
	return c.capture(callID, a.Scope, a.Format, a.Quality, a.MaxLongEdge, a.IfNoneMatch)
}

// capture answers a screenshot (or an observe-after-act) with an
// observation: not_modified when ifNoneMatch names the fresh frame's hash,
// with no encoding at all; otherwise the encoded image, as a binary frame on
// a binary session.
func (c *conn) capture(callID string, scope aci.Scope, format aci.ImageFormat, quality, maxLongEdge *int, ifNoneMatch string) error {
	rt := c.rt
	edge := 0
	if maxLongEdge != nil {
		edge = *maxLongEdge
	}
	s, err := rt.grab(c.ctx, scope, edge)
	if err != nil {
		return err
	}
	hash := s.hash.String()
	var ptr []int
	if rt.pointer != nil {
		if p, err := rt.pointer.PointerPosition(c.ctx); err == nil {
			ptr = []int{p.X, p.Y}
		}
	}
	obsID := rt.nextObsID()
	if ifNoneMatch != "" && ifNoneMatch == hash {
		c.send(&aci.Observation{ObsID: obsID, CallID: callID, NotModified: true, FrameHash: hash, Pointer: ptr})
		return nil
	}
	if format == "" {
		format = aci.FormatPNG
	}
	headroom := 0
	if c.binary {
		headroom = aci.FrameHeadroom
	}
	encStart := time.Now()
	buf, err := rt.encode(s.img, format, quality, headroom)
	if err != nil {
		return err
	}
	encoded := time.Since(encStart)
	size, wire := len(buf.B)-headroom, len(buf.B)-headroom
	if !c.binary {
		wire = base64.StdEncoding.EncodedLen(size)
	}
	if wire+aci.FrameHeadroom > rt.opts.MaxMessage {
		buf.Release()
		return aci.Errorf(aci.CodeTooLarge, "the %s image is %d bytes, which the %d-byte message cap does not take: ask for a smaller max_long_edge, or jpeg", format, size, rt.opts.MaxMessage)
	}
	c.emit(Event{Kind: EventScreenshot, CallID: callID, Outcome: string(format), Bytes: size, DurationMS: ms(encoded)})
	if scope == "" {
		scope = aci.ScopeScreen
	}
	w, h := s.img.Rect.Dx(), s.img.Rect.Dy()
	img := buf.B[headroom:]
	if c.binary {
		hdr := &aci.BinaryFrameHeader{
			ObsID: obsID, CallID: callID, Display: &s.space, FrameHash: hash, Pointer: ptr,
			Image: &aci.BinaryImage{Off: 0, Len: len(img), W: w, H: h, Scope: scope, Format: format},
		}
		frame, err := aci.PutFrameHeader(buf.B, headroom, hdr)
		if err != nil {
			buf.Release()
			return aci.Errorf(aci.CodeInternal, "encode frame header: %v", err)
		}
		c.enqueue(outgoing{typ: websocket.MessageBinary, data: frame, done: buf.Release})
		return nil
	}
	ref := base64.StdEncoding.EncodeToString(img)
	buf.Release()
	c.send(&aci.Observation{
		ObsID: obsID, CallID: callID, Display: &s.space, FrameHash: hash, Pointer: ptr,
		Image: &aci.ImageRef{Ref: ref, W: w, H: h, Scope: scope, Format: format},
	})
	return nil
}

// checkScope turns a well-formed scope whose window id no window can have
// into no_such_window, before a backend sees it.
func checkScope(s aci.Scope) error {
	if s == "" || s == aci.ScopeScreen || s == aci.ScopeActiveWindow {
		return nil
	}
	if _, ok := s.WindowID(); !ok {
		return aci.Errorf(aci.CodeNoSuchWindow, "no window has the id in %q", s)
	}
	return nil
}
