// Package record writes and reads session recordings: one file holding
// what a Runtime's [shinken.Feed] reported (the [shinken.Event] kinds its
// subscription asked for; a replay wants the actions with their outcomes
// and settle times, the observations with their tree texts, the execs and
// takeovers) and the screen, as keyframes plus the 64-pixel tiles that
// changed between them, every entry with its time.
//
// A recording is small enough to keep for every run: the screen costs
// nothing while it does not change, a change costs its tiles, and tree
// texts are kept only when they differ from the last one kept (see
// BENCHMARKS.md for bytes per minute of typing and of idling).
//
// # Format
//
// All integers are little-endian. The file starts with the 8 bytes
// "SHINKREC" and a uint32 version (1). Entries follow, each
//
//	kind   uint8   'h' header, 'k' keyframe, 't' tiles, 'e' event
//	t      uint32  milliseconds since the recording started
//	len    uint32  payload bytes
//	payload
//
// The header (first entry) is JSON: {"start": RFC 3339 time, "w": W, "h":
// H}. A keyframe is uint16 width, uint16 height, then a PNG of the whole
// screen. Tiles are a uint16 count, then per tile uint16 x, uint16 y,
// uint32 length and a PNG: each replaces the pixels at (x, y) of the frame
// before it. An event is the JSON of a [shinken.Event]. The page of
// cmd/example replays this format with a scrubber.
package record

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"sync"
	"time"

	"shinken.dev/go/internal/imaging"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// Magic opens every recording; Version follows it.
const (
	Magic   = "SHINKREC"
	Version = 1
)

// Kind says what an entry holds.
type Kind byte

// Entry kinds.
const (
	KindHeader   Kind = 'h'
	KindKeyframe Kind = 'k'
	KindTiles    Kind = 't'
	KindEvent    Kind = 'e'
)

// TileSize is the edge of the tiles a recording stores.
const TileSize = 64

// maxEdge bounds a keyframe's sides, as a Runtime bounds a screen's.
const maxEdge = 8192

// MaxEntry bounds one entry's payload; a reader refuses larger ones.
const MaxEntry = 64 << 20

// ErrFormat is wrapped by each error a Reader returns for a malformed file.
var ErrFormat = errors.New("record: not a well-formed recording")

// Header is the first entry of a recording.
type Header struct {
	Start time.Time `json:"start"`
	W     int       `json:"w"`
	H     int       `json:"h"`
}

// WriterOptions tune a Writer. A nil *WriterOptions means defaults.
type WriterOptions struct {
	// KeyEvery is the least time between keyframes: a frame that changes
	// after it has passed is stored whole; default 30 s. Idle time costs
	// no keyframes.
	KeyEvery time.Duration
}

// A Writer writes one recording. It is safe for concurrent use.
type Writer struct {
	mu       sync.Mutex
	w        *bufio.Writer
	start    time.Time
	keyEvery time.Duration
	started  bool
	err      error

	prev     *image.RGBA // the last frame written, a private copy
	lastKey  time.Time
	lastTree string
	rects    []image.Rectangle
	enc      png.Encoder // tiles: small, so the best compression is cheap
	keyEnc   png.Encoder // keyframes: the default level, 15× faster than the best for 11% more bytes
	buf      bytes.Buffer
}

// NewWriter starts a recording on w, whose time zero is start.
func NewWriter(w io.Writer, start time.Time, opts *WriterOptions) *Writer {
	rw := &Writer{w: bufio.NewWriterSize(w, 64<<10), start: start, keyEvery: 30 * time.Second}
	if opts != nil && opts.KeyEvery > 0 {
		rw.keyEvery = opts.KeyEvery
	}
	rw.enc.CompressionLevel = png.BestCompression
	return rw
}

func (w *Writer) entry(kind Kind, t time.Time, payload ...[]byte) {
	if w.err != nil {
		return
	}
	n := 0
	for _, p := range payload {
		n += len(p)
	}
	ms := max(t.Sub(w.start).Milliseconds(), 0)
	var hdr [9]byte
	hdr[0] = byte(kind)
	binary.LittleEndian.PutUint32(hdr[1:], uint32(ms))
	binary.LittleEndian.PutUint32(hdr[5:], uint32(n))
	_, w.err = w.w.Write(hdr[:])
	for _, p := range payload {
		if w.err == nil {
			_, w.err = w.w.Write(p)
		}
	}
}

func (w *Writer) header(width, height int) {
	if w.started {
		return
	}
	w.started = true
	var v [4]byte
	binary.LittleEndian.PutUint32(v[:], Version)
	if _, w.err = w.w.WriteString(Magic); w.err == nil {
		_, w.err = w.w.Write(v[:])
	}
	h, _ := json.Marshal(Header{Start: w.start, W: width, H: height})
	w.entry(KindHeader, w.start, h)
}

func (w *Writer) png(enc *png.Encoder, img *image.RGBA) ([]byte, error) {
	w.buf.Reset()
	if err := enc.Encode(&w.buf, img); err != nil {
		return nil, err
	}
	return w.buf.Bytes(), nil
}

// Frame records the screen at time t: nothing when it equals the last
// frame, the changed tiles, or a keyframe (the first frame, a new size, a
// change after KeyEvery, or a change of most of the screen). img is not
// retained.
func (w *Writer) Frame(t time.Time, img *image.RGBA) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := img.Rect
	w.header(b.Dx(), b.Dy())
	if w.err != nil {
		return w.err
	}
	cols, rows := (b.Dx()+TileSize-1)/TileSize, (b.Dy()+TileSize-1)/TileSize
	w.rects = imaging.DiffTiles(w.prev, img, TileSize, w.rects)
	if len(w.rects) == 0 {
		return nil
	}
	key := w.prev == nil || t.Sub(w.lastKey) >= w.keyEvery || len(w.rects) > cols*rows/2
	if key {
		data, err := w.png(&w.keyEnc, img)
		if err != nil {
			return err
		}
		var size [4]byte
		binary.LittleEndian.PutUint16(size[0:], uint16(b.Dx()))
		binary.LittleEndian.PutUint16(size[2:], uint16(b.Dy()))
		w.entry(KindKeyframe, t, size[:], data)
		w.lastKey = t
	} else {
		parts := make([][]byte, 0, 1+2*len(w.rects))
		var count [2]byte
		binary.LittleEndian.PutUint16(count[:], uint16(len(w.rects)))
		parts = append(parts, count[:])
		for _, r := range w.rects {
			data, err := w.png(&w.enc, imaging.Crop(img, r))
			if err != nil {
				return err
			}
			var th [8]byte
			binary.LittleEndian.PutUint16(th[0:], uint16(r.Min.X-b.Min.X))
			binary.LittleEndian.PutUint16(th[2:], uint16(r.Min.Y-b.Min.Y))
			binary.LittleEndian.PutUint32(th[4:], uint32(len(data)))
			parts = append(parts, th[:], bytes.Clone(data))
		}
		w.entry(KindTiles, t, parts...)
	}
	if w.prev == nil || w.prev.Rect.Size() != b.Size() {
		w.prev = image.NewRGBA(image.Rectangle{Max: b.Size()})
	}
	// Keep a copy: the caller, or its backend, may reuse img.
	for y := range b.Dy() {
		src := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):][:4*b.Dx()]
		copy(w.prev.Pix[y*w.prev.Stride:], src)
	}
	return w.err
}

// Event records a feed event, at its own time. Its tree text is kept only
// when it differs from the last one kept.
func (w *Writer) Event(e shinken.Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started {
		w.header(0, 0)
	}
	if e.TreeText != "" {
		if e.TreeText == w.lastTree {
			e.TreeText = ""
		} else {
			w.lastTree = e.TreeText
		}
	}
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	w.entry(KindEvent, e.Time, data)
	return w.err
}

// Flush writes what is buffered.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}

// Options tune [Record]. A nil *Options means defaults.
type Options struct {
	// FPS is how often the screen is captured between actions; default
	// 5, at most 60. The screen is also captured after every mutating
	// action that succeeded, as its (settled) answer left it.
	FPS float64
	// Writer configures the Writer.
	Writer *WriterOptions
	// Keep, when set, says which events to record; default all.
	Keep func(shinken.Event) bool
}

// Record records the screen of c and the events of sub (at their own
// times) to w until ctx ends or sub is closed, then the events still
// buffered and the screen once more, and flushes.
func Record(ctx context.Context, w io.Writer, c shinken.Capturer, sub *shinken.Subscription, opts *Options) error {
	fps := 5.0
	var wo *WriterOptions
	keep := func(shinken.Event) bool { return true }
	if opts != nil && opts.Keep != nil {
		keep = opts.Keep
	}
	if opts != nil {
		if opts.FPS > 0 {
			fps = min(opts.FPS, 60)
		}
		wo = opts.Writer
	}
	rw := NewWriter(w, time.Now(), wo)
	tick := time.NewTicker(time.Duration(float64(time.Second) / fps))
	defer tick.Stop()
	capture := func(ctx context.Context) error {
		f, err := c.Capture(ctx, aci.ScopeScreen)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		return rw.Frame(time.Now(), f.Image)
	}
	// finish keeps the events already published and the screen as it is
	// at the end.
	finish := func() error {
	drain:
		for {
			select {
			case e, ok := <-sub.Events():
				if !ok {
					break drain
				}
				if keep(e) {
					rw.Event(e)
				}
			default:
				break drain
			}
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := capture(fctx); err != nil {
			rw.Flush()
			return err
		}
		return rw.Flush()
	}
	err := capture(ctx)
	for err == nil {
		select {
		case <-ctx.Done():
			return finish()
		case e, ok := <-sub.Events():
			if !ok {
				return finish()
			}
			if keep(e) {
				err = rw.Event(e)
			}
			if err == nil && e.Kind == shinken.EventAction && e.OK && e.Verb.Mutating() {
				err = capture(ctx)
			}
		case <-tick.C:
			err = capture(ctx)
		}
	}
	rw.Flush()
	return err
}

// An Entry is one entry of a recording, decoded.
type Entry struct {
	Kind Kind
	// T is the time since the recording started.
	T      time.Duration
	Header *Header        // KindHeader
	Event  *shinken.Event // KindEvent
	// Image is a keyframe's whole screen; Tiles are a tiles entry's.
	Image image.Image
	Tiles []Tile
}

// A Tile is one changed tile: its pixels go at At.
type Tile struct {
	At    image.Point
	Image image.Image
}

// A Reader reads a recording entry by entry.
type Reader struct {
	r      *bufio.Reader
	opened bool
	size   image.Point
}

// NewReader returns a Reader of the recording r.
func NewReader(r io.Reader) *Reader { return &Reader{r: bufio.NewReaderSize(r, 64<<10)} }

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
}

// Next returns the next entry, or io.EOF after the last. An error other
// than io.EOF wraps [ErrFormat] or is the underlying reader's.
func (r *Reader) Next() (*Entry, error) {
	if !r.opened {
		var m [12]byte
		if _, err := io.ReadFull(r.r, m[:]); err != nil {
			return nil, formatErr("no magic: %v", err)
		}
		if string(m[:8]) != Magic {
			return nil, formatErr("bad magic %q", m[:8])
		}
		if v := binary.LittleEndian.Uint32(m[8:]); v != Version {
			return nil, formatErr("version %d; this reader reads %d", v, Version)
		}
		r.opened = true
	}
	var h [9]byte
	if _, err := io.ReadFull(r.r, h[:1]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, err
	}
	if _, err := io.ReadFull(r.r, h[1:]); err != nil {
		return nil, formatErr("truncated entry header")
	}
	n := binary.LittleEndian.Uint32(h[5:])
	if n > MaxEntry {
		return nil, formatErr("an entry of %d bytes; at most %d", n, MaxEntry)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r.r, payload); err != nil {
		return nil, formatErr("truncated entry of %d bytes", n)
	}
	e := &Entry{Kind: Kind(h[0]), T: time.Duration(binary.LittleEndian.Uint32(h[1:])) * time.Millisecond}
	switch e.Kind {
	case KindHeader:
		e.Header = &Header{}
		if err := json.Unmarshal(payload, e.Header); err != nil {
			return nil, formatErr("header: %v", err)
		}
	case KindEvent:
		e.Event = &shinken.Event{}
		if err := json.Unmarshal(payload, e.Event); err != nil {
			return nil, formatErr("event: %v", err)
		}
	case KindKeyframe:
		if len(payload) < 4 {
			return nil, formatErr("short keyframe")
		}
		w, hh := int(binary.LittleEndian.Uint16(payload)), int(binary.LittleEndian.Uint16(payload[2:]))
		if w > maxEdge || hh > maxEdge {
			return nil, formatErr("a keyframe of %dx%d; at most %d on a side", w, hh, maxEdge)
		}
		img, err := decodePNG(payload[4:], w, hh)
		if err != nil {
			return nil, err
		}
		if b := img.Bounds(); b.Dx() != w || b.Dy() != hh {
			return nil, formatErr("keyframe of %dx%d says %dx%d", b.Dx(), b.Dy(), w, hh)
		}
		e.Image, r.size = img, image.Pt(w, hh)
	case KindTiles:
		if len(payload) < 2 {
			return nil, formatErr("short tiles entry")
		}
		count := int(binary.LittleEndian.Uint16(payload))
		p := payload[2:]
		for range count {
			if len(p) < 8 {
				return nil, formatErr("short tile header")
			}
			at := image.Pt(int(binary.LittleEndian.Uint16(p)), int(binary.LittleEndian.Uint16(p[2:])))
			l := binary.LittleEndian.Uint32(p[4:])
			if uint32(len(p)-8) < l {
				return nil, formatErr("a tile of %d bytes past the entry's end", l)
			}
			img, err := decodePNG(p[8:8+l], TileSize, TileSize)
			if err != nil {
				return nil, err
			}
			if !at.In(image.Rectangle{Max: r.size}) {
				return nil, formatErr("a tile at %v outside the %v screen", at, r.size)
			}
			e.Tiles = append(e.Tiles, Tile{At: at, Image: img})
			p = p[8+l:]
		}
		if len(p) != 0 {
			return nil, formatErr("%d bytes after the last tile", len(p))
		}
	default:
		return nil, formatErr("unknown entry kind %q", h[0])
	}
	return e, nil
}

// decodePNG decodes a PNG no larger than w×h (checked before decoding,
// so a hostile header cannot make it allocate much).
func decodePNG(data []byte, w, h int) (image.Image, error) {
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, formatErr("image: %v", err)
	}
	if cfg.Width > w || cfg.Height > h || cfg.Width == 0 || cfg.Height == 0 {
		return nil, formatErr("an image of %dx%d where at most %dx%d fits", cfg.Width, cfg.Height, w, h)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, formatErr("image: %v", err)
	}
	return img, nil
}

// A Player composites a recording's frames.
type Player struct {
	// Events collects the events read so far.
	Events []shinken.Event
	// Header is the recording's header, once read.
	Header Header
	r      *Reader
	screen *image.RGBA
}

// NewPlayer returns a Player of the recording r.
func NewPlayer(r io.Reader) *Player { return &Player{r: NewReader(r)} }

// NextFrame reads on to the next keyframe or tiles entry, collecting the
// events before it, and returns its time and the screen composited so far.
// The image is the Player's own, changed by the next call. It returns
// io.EOF after the last frame.
func (p *Player) NextFrame() (time.Duration, *image.RGBA, error) {
	for {
		e, err := p.r.Next()
		if err != nil {
			return 0, nil, err
		}
		switch e.Kind {
		case KindHeader:
			p.Header = *e.Header
		case KindEvent:
			p.Events = append(p.Events, *e.Event)
		case KindKeyframe:
			b := e.Image.Bounds()
			if p.screen == nil || p.screen.Rect.Size() != b.Size() {
				p.screen = image.NewRGBA(image.Rectangle{Max: b.Size()})
			}
			imaging.Composite(p.screen, e.Image, image.Point{})
			return e.T, p.screen, nil
		case KindTiles:
			if p.screen == nil {
				return 0, nil, formatErr("tiles before the first keyframe")
			}
			for _, t := range e.Tiles {
				imaging.Composite(p.screen, t.Image, t.At)
			}
			return e.T, p.screen, nil
		}
	}
}
