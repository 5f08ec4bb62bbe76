package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
	"time"

	"shinken.dev/go/shinken/aci"
)

// ScreencastRequest tunes Client.Screencast.
type ScreencastRequest struct {
	FPS         float64 // 0.1 to 30; 0 means the runtime's default
	Scope       aci.Scope
	MaxLongEdge int
	Format      aci.ImageFormat
	Quality     int
	// Delta asks for dirty-tile frames; Next still yields whole images.
	Delta bool
}

// A CastFrame is one screencast frame, composited into a whole image.
type CastFrame struct {
	Image    *image.RGBA // the caller's own copy
	Stream   string
	Seq      uint64
	Keyframe bool // a whole image arrived, rather than tiles
	Tiles    int  // the number of tiles a delta frame carried
	// Bytes: the encoded image or tiles of the frames since the last Next.
	Bytes   int
	Display aci.CoordinateSpace
	Gap     bool // on the first frame after a resume that lost frames
}

// A Screencast is a live stream of frames, one per Client at a time. It
// survives reconnects: after Client.Reconnect (which Next calls when the
// connection drops) it resumes the same stream.
type Screencast struct {
	c   *Client
	req ScreencastRequest

	notify chan struct{} // signalled on each composited frame

	// Guarded by c.mu.
	id      string
	canvas  *image.RGBA
	seq     uint64
	have    bool // a frame was composited since the last Next
	keyNext bool
	tiles   int
	bytes   int
	display aci.CoordinateSpace
	gap     bool
	stopped bool
	lastSeq int64
}

// Screencast starts a screencast.
func (c *Client) Screencast(ctx context.Context, req *ScreencastRequest) (*Screencast, error) {
	sc := &Screencast{c: c, notify: make(chan struct{}, 1), lastSeq: -1}
	if req != nil {
		sc.req = *req
	}
	c.mu.Lock()
	if _, busy := c.casts[""]; busy || len(c.casts) > 0 {
		c.mu.Unlock()
		return nil, aci.Errorf(aci.CodeInvalidAction, "this client already runs a screencast")
	}
	c.casts[""] = sc // the runtime names the stream in its first frame
	c.mu.Unlock()
	if err := sc.start(ctx, ""); err != nil {
		c.mu.Lock()
		for k, v := range c.casts {
			if v == sc {
				delete(c.casts, k)
			}
		}
		c.mu.Unlock()
		return nil, err
	}
	return sc, nil
}

func (sc *Screencast) start(ctx context.Context, resume string) error {
	r := sc.req
	a := &aci.Action{Verb: aci.VerbStartScreencast, Scope: r.Scope, Format: r.Format, Delta: r.Delta, ResumeStream: resume}
	if r.FPS > 0 {
		a.FPS = &r.FPS
	}
	if r.MaxLongEdge > 0 {
		a.MaxLongEdge = &r.MaxLongEdge
	}
	if r.Quality > 0 {
		a.Quality = &r.Quality
	}
	return sc.c.ack(ctx, a)
}

func (sc *Screencast) resume(ctx context.Context) {
	sc.c.mu.Lock()
	id := sc.id
	stopped := sc.stopped
	sc.c.mu.Unlock()
	if stopped {
		return
	}
	if err := sc.start(ctx, id); err != nil {
		sc.c.log.Warn("screencast resume failed", "stream", id, "err", err)
	}
}

// castFrame composites one stream frame (text or binary) into its
// screencast. It runs on the reader goroutine, which keeps deltas in order.
func (c *Client) castFrame(o *aci.Observation, h *aci.BinaryFrameHeader, payload []byte) {
	var stream string
	var seq uint64
	var display *aci.CoordinateSpace
	var whole []byte
	var format aci.ImageFormat
	type tile struct {
		at   image.Point
		data []byte
	}
	var tiles []tile
	if o != nil {
		stream, display = o.Stream, o.Display
		if o.Seq != nil {
			seq = *o.Seq
		}
		if o.Image != nil {
			whole, _ = base64.StdEncoding.DecodeString(o.Image.Ref)
			format = o.Image.Format
		}
		for _, t := range o.Tiles {
			b, _ := base64.StdEncoding.DecodeString(t.Ref)
			tiles = append(tiles, tile{image.Pt(t.X, t.Y), b})
		}
	} else {
		stream, display = h.Stream, h.Display
		if h.Seq != nil {
			seq = *h.Seq
		}
		if h.Image != nil {
			whole = aci.ByteRange{Off: h.Image.Off, Len: h.Image.Len}.Bytes(payload)
			format = h.Image.Format
		}
		for _, t := range h.Tiles {
			tiles = append(tiles, tile{image.Pt(t.X, t.Y), aci.ByteRange{Off: t.Off, Len: t.Len}.Bytes(payload)})
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	sc := c.casts[stream]
	if sc == nil {
		// The first frame of a new stream names it.
		for k, v := range c.casts {
			sc = v
			delete(c.casts, k)
		}
		if sc == nil {
			return
		}
		if sc.id != "" && sc.id != stream {
			sc.gap = true // the runtime lost the old stream: continuity broke
		}
		sc.id = stream
		c.casts[stream] = sc
	}
	if sc.stopped {
		return
	}
	if int64(seq) != sc.lastSeq+1 && sc.lastSeq >= 0 {
		sc.gap = true
	}
	sc.lastSeq = int64(seq)
	if display != nil {
		sc.display = *display
	}
	if whole != nil {
		img, err := decodeImage(whole, format)
		if err != nil {
			c.log.Warn("screencast keyframe undecodable", "err", err)
			return
		}
		sc.canvas = toRGBA(img)
		sc.keyNext, sc.tiles = true, 0
		sc.bytes += len(whole)
	} else if sc.canvas != nil {
		for _, t := range tiles {
			img, err := decodeImage(t.data, sc.req.Format)
			if err != nil {
				c.log.Warn("screencast tile undecodable", "err", err)
				continue
			}
			draw.Draw(sc.canvas, img.Bounds().Sub(img.Bounds().Min).Add(t.at), img, img.Bounds().Min, draw.Src)
			sc.bytes += len(t.data)
		}
		sc.tiles += len(tiles)
	} else {
		return // a delta without a keyframe: wait for one
	}
	sc.seq = seq
	sc.have = true
	select {
	case sc.notify <- struct{}{}:
	default:
	}
}

func decodeImage(b []byte, f aci.ImageFormat) (image.Image, error) {
	if f == aci.FormatJPEG {
		return jpeg.Decode(bytes.NewReader(b))
	}
	return png.Decode(bytes.NewReader(b))
}

func toRGBA(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok && r.Rect.Min == (image.Point{}) {
		return r
	}
	b := img.Bounds()
	r := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(r, r.Rect, img, b.Min, draw.Src)
	return r
}

// Next returns the newest frame after the last one returned, composited
// (frames that came meanwhile coalesce), resuming the stream on a reconnect,
// until ctx is done.
func (sc *Screencast) Next(ctx context.Context) (*CastFrame, error) {
	backoff := 50 * time.Millisecond
	for {
		c := sc.c
		c.mu.Lock()
		if sc.stopped {
			c.mu.Unlock()
			return nil, aci.ErrClosed
		}
		if sc.have {
			f := &CastFrame{Image: cloneRGBA(sc.canvas), Stream: sc.id, Seq: sc.seq, Keyframe: sc.keyNext,
				Tiles: sc.tiles, Bytes: sc.bytes, Display: sc.display, Gap: sc.gap}
			sc.have, sc.keyNext, sc.tiles, sc.bytes, sc.gap = false, false, 0, 0, false
			c.mu.Unlock()
			return f, nil
		}
		closed := c.closed
		s := c.sess
		c.mu.Unlock()
		if closed {
			return nil, aci.ErrClosed
		}
		select {
		case <-sc.notify:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.done:
			if err := c.Reconnect(ctx); err != nil {
				t := time.NewTimer(backoff)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return nil, ctx.Err()
				}
				backoff = min(backoff*2, 2*time.Second)
			}
		}
	}
}

// Stop stops the screencast. No frame follows its ack.
func (sc *Screencast) Stop(ctx context.Context) error {
	c := sc.c
	c.mu.Lock()
	sc.stopped = true
	for k, v := range c.casts {
		if v == sc {
			delete(c.casts, k)
		}
	}
	c.mu.Unlock()
	return c.ack(ctx, &aci.Action{Verb: aci.VerbStopScreencast})
}

func cloneRGBA(m *image.RGBA) *image.RGBA {
	if m == nil {
		return nil
	}
	return &image.RGBA{Pix: bytes.Clone(m.Pix), Stride: m.Stride, Rect: m.Rect}
}
