package shinken

import (
	"context"
	"encoding/base64"
	"errors"
	"image"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"shinken.dev/go/internal/imaging"
	"shinken.dev/go/shinken/aci"
)

// A DamageTracker tells cheaply whether the screen may have changed, so an
// idle screencast captures nothing (without one, it captures and hashes).
type DamageTracker interface {
	// DamageSeq returns a counter that increases whenever pixels may have
	// changed. It is a hint: the runtime still captures now and then to
	// catch changes the tracker missed.
	DamageSeq() uint64
}

// Screencast tuning.
const (
	tileSize = 64
	// keyframeEvery forces a keyframe periodically, so a client that lost
	// its state recovers without asking.
	keyframeEvery = 10 * time.Second
	// damageRecheck is how often a damage-tracked idle stream captures
	// anyway, because damage reports can miss changes.
	damageRecheck = 2 * time.Second
	// resumeTTL is how long a stream's state outlives its connection.
	resumeTTL  = 60 * time.Second
	defaultFPS = 5
)

// castStream is one logical screencast. Its state survives its connection
// for resumeTTL, so a reconnecting client can continue it.
type castStream struct {
	id string

	mu       sync.Mutex
	owner    *conn
	cancel   context.CancelFunc
	done     chan struct{}
	detached time.Time

	// Parameters, fixed at start.
	fps     float64
	scope   aci.Scope
	edge    int
	format  aci.ImageFormat
	quality *int
	delta   bool

	// Touched only by the stream's loop.
	seq       uint64
	delivered *image.RGBA // the frame the client holds (post-downscale)
	lastHash  imaging.Hash
	haveHash  bool
	lastRaw   *image.RGBA // the last raw capture, to spot an unchanged backend frame
	lastKey   time.Time
	needKey   bool
	damage    uint64
	lastCheck time.Time

	inflight atomic.Bool // a frame is queued and not yet written
	frames   atomic.Uint64
	ticks    atomic.Uint64
}

type castRegistry struct {
	mu      sync.Mutex
	streams map[string]*castStream
	nextID  atomic.Uint64
	ttl     time.Duration
	now     func() time.Time
}

func newCastRegistry() *castRegistry {
	return &castRegistry{streams: map[string]*castStream{}, ttl: resumeTTL, now: time.Now}
}

// gc forgets detached streams older than the TTL. r.mu must be held.
func (r *castRegistry) gc() {
	now := r.now()
	for id, s := range r.streams {
		s.mu.Lock()
		expired := s.owner == nil && !s.detached.IsZero() && now.Sub(s.detached) > r.ttl
		s.mu.Unlock()
		if expired {
			delete(r.streams, id)
		}
	}
}

func (c *conn) startScreencast(callID string, a *aci.Action) error {
	rt := c.rt
	fps := float64(defaultFPS)
	if a.FPS != nil {
		fps = *a.FPS
	}
	scope := a.Scope
	if scope == "" {
		scope = aci.ScopeScreen
	}
	format := a.Format
	if format == "" {
		format = aci.FormatPNG
	}
	edge := 0
	if a.MaxLongEdge != nil {
		edge = *a.MaxLongEdge
	}
	// Check the scope now, so that a bad one is an error on the ack rather
	// than a silent stream.
	if err := checkScope(scope); err != nil {
		return err
	}
	if _, err := rt.capturer.Capture(c.ctx, scope); err != nil {
		return err
	}
	if n := len(rt.casts.owned(c)); n >= rt.opts.MaxScreencasts {
		return aci.Errorf(aci.CodeInvalidAction, "this connection already runs %d screencasts; stop one first", n)
	}
	reg := rt.casts
	if a.ResumeStream != "" {
		reg.takeBack(a.ResumeStream, c)
	}
	reg.mu.Lock()
	reg.gc()
	var s *castStream
	if a.ResumeStream != "" {
		if old, ok := reg.streams[a.ResumeStream]; ok {
			old.mu.Lock()
			if old.owner == nil {
				s = old
			}
			old.mu.Unlock()
		}
	}
	if s == nil {
		s = &castStream{id: "s" + strconv.FormatUint(reg.nextID.Add(1), 10)}
		reg.streams[s.id] = s
	}
	s.fps, s.scope, s.edge, s.format, s.quality, s.delta = fps, scope, edge, format, a.Quality, a.Delta
	s.needKey = true // first frame, or the first after a resume
	s.haveHash = false
	s.lastRaw = nil
	ctx, cancel := context.WithCancel(c.ctx)
	s.mu.Lock()
	s.owner, s.cancel, s.done, s.detached = c, cancel, make(chan struct{}), time.Time{}
	s.mu.Unlock()
	reg.mu.Unlock()
	c.ack(callID)
	go s.run(ctx, c)
	return nil
}

// takeBack detaches stream id from a connection that is over but has not
// let go of it yet (it does once its calls in flight have ended), for c to
// resume it: a client that reconnects may resume before then. A stream
// whose connection still serves is not taken: a session cannot take
// another's live stream.
func (r *castRegistry) takeBack(id string, c *conn) {
	r.mu.Lock()
	s := r.streams[id]
	r.mu.Unlock()
	if s == nil {
		return
	}
	s.mu.Lock()
	owner := s.owner
	s.mu.Unlock()
	if owner == nil || owner == c || owner.ctx.Err() == nil {
		return
	}
	s.halt()
	s.mu.Lock()
	if s.owner == owner {
		s.owner, s.detached = nil, r.now()
	}
	s.mu.Unlock()
}

// stop ends c's streams and forgets them: an explicit stop is no pause.
func (r *castRegistry) stop(c *conn) {
	for _, s := range r.owned(c) {
		s.halt()
		r.mu.Lock()
		delete(r.streams, s.id)
		r.mu.Unlock()
	}
}

// detach ends c's streams but keeps their state for resuming.
func (r *castRegistry) detach(c *conn) {
	for _, s := range r.owned(c) {
		s.halt()
		s.mu.Lock()
		s.owner = nil
		s.detached = r.now()
		s.mu.Unlock()
	}
}

func (r *castRegistry) owned(c *conn) []*castStream {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*castStream
	for _, s := range r.streams {
		s.mu.Lock()
		if s.owner == c {
			out = append(out, s)
		}
		s.mu.Unlock()
	}
	return out
}

// forget drops a stream that ended by itself.
func (r *castRegistry) forget(s *castStream) {
	r.mu.Lock()
	delete(r.streams, s.id)
	r.mu.Unlock()
	s.mu.Lock()
	s.owner = nil
	s.mu.Unlock()
}

func (r *castRegistry) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.streams)
}

// halt stops the stream's loop and waits for it.
func (s *castStream) halt() {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

func (s *castStream) run(ctx context.Context, c *conn) {
	defer close(s.done)
	interval := time.Duration(float64(time.Second) / s.fps)
	t := time.NewTicker(interval)
	defer t.Stop()
	failures := 0
	for {
		if !s.inflight.Load() {
			err := s.tick(ctx, c)
			switch {
			case err == nil || ctx.Err() != nil:
				failures = 0
			case errors.Is(err, aci.ErrNoSuchWindow):
				// The window is gone for good (ids are never reused): the
				// stream ends and frees its slot.
				c.log.Info("screencast ended: its window is gone", "stream", s.id)
				c.rt.casts.forget(s)
				return
			default:
				// Log the first failure of a run, then one in a hundred.
				if failures%100 == 0 {
					c.log.Info("screencast frame failed", "stream", s.id, "err", err, "failures", failures+1)
				}
				failures++
			}
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// tick captures one frame and sends it unless nothing changed.
func (s *castStream) tick(ctx context.Context, c *conn) error {
	defer s.ticks.Add(1)
	rt := c.rt
	now := time.Now()
	if dt, ok := rt.backend.(DamageTracker); ok && !s.needKey && s.haveHash {
		seq := dt.DamageSeq()
		if seq == s.damage && now.Sub(s.lastCheck) < damageRecheck {
			return nil
		}
		s.damage = seq
	}
	s.lastCheck = now
	f, err := rt.capturer.Capture(ctx, s.scope)
	if err != nil {
		return err
	}
	if f.Image == s.lastRaw && !s.needKey && now.Sub(s.lastKey) < keyframeEvery {
		return nil // the backend says nothing changed: no hash, no encode
	}
	s.lastRaw = f.Image
	sh, err := rt.shape(f, s.scope, s.edge)
	if err != nil {
		return err
	}
	h := sh.hash
	if s.haveHash && h == s.lastHash && !s.needKey {
		return nil // idle suppression
	}
	key := !s.delta || s.needKey || s.delivered == nil || now.Sub(s.lastKey) >= keyframeEvery ||
		s.delivered.Rect.Size() != sh.img.Rect.Size()
	var tiles []image.Rectangle
	if !key {
		tiles = imaging.DiffTiles(s.delivered, sh.img, tileSize, nil)
		if len(tiles) == 0 {
			s.lastHash, s.haveHash = h, true
			return nil
		}
		// A large change costs less as one keyframe than as many tiles.
		area := 0
		for _, r := range tiles {
			area += r.Dx() * r.Dy()
		}
		if area*2 > sh.img.Rect.Dx()*sh.img.Rect.Dy() {
			key = true
		}
	}
	msg, err := s.frame(c, sh, key, tiles)
	if err != nil {
		return err
	}
	img := sh.img
	if len(msg.data) > rt.opts.MaxMessage {
		return aci.Errorf(aci.CodeTooLarge, "a %d-byte frame is over the %d-byte message cap", len(msg.data), rt.opts.MaxMessage)
	}
	s.inflight.Store(true)
	msg.done = func() { s.inflight.Store(false) }
	if !c.enqueue(msg) {
		return nil
	}
	kind := "delta"
	if key {
		kind = "key"
	}
	c.emit(Event{Kind: EventScreencastFrame, Outcome: kind, Bytes: len(msg.data)})
	s.delivered = img
	s.lastHash, s.haveHash = h, true
	s.needKey = false
	if key {
		s.lastKey = now
	}
	s.seq++
	s.frames.Add(1)
	return nil
}

// frame encodes one stream frame as a binary or text message.
func (s *castStream) frame(c *conn, sh *shot, key bool, tiles []image.Rectangle) (outgoing, error) {
	rt := c.rt
	seq := s.seq
	obsID := rt.nextObsID()
	w, h := sh.img.Rect.Dx(), sh.img.Rect.Dy()
	var parts []*imaging.Buffer
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	if key {
		b, err := rt.encode(sh.img, s.format, s.quality, 0)
		if err != nil {
			return outgoing{}, err
		}
		parts = append(parts, b)
	} else {
		for _, r := range tiles {
			b, err := rt.encode(imaging.Crop(sh.img, r), s.format, s.quality, 0)
			if err != nil {
				return outgoing{}, err
			}
			parts = append(parts, b)
		}
	}
	if c.binary {
		hdr := &aci.BinaryFrameHeader{ObsID: obsID, Stream: s.id, Seq: &seq, Display: &sh.space}
		size, off := 0, 0
		for _, p := range parts {
			size += len(p.B)
		}
		payload := make([][]byte, len(parts))
		if key {
			hdr.Image = &aci.BinaryImage{Off: 0, Len: len(parts[0].B), W: w, H: h, Scope: s.scope, Format: s.format}
			payload[0] = parts[0].B
		} else {
			for i, r := range tiles {
				hdr.Tiles = append(hdr.Tiles, aci.BinaryTile{X: r.Min.X, Y: r.Min.Y, W: r.Dx(), H: r.Dy(), Off: off, Len: len(parts[i].B)})
				payload[i] = parts[i].B
				off += len(parts[i].B)
			}
		}
		data, err := aci.AppendBinaryFrame(make([]byte, 0, size+256+64*len(tiles)), hdr, payload...)
		if err != nil {
			return outgoing{}, err
		}
		return outgoing{typ: websocket.MessageBinary, data: data}, nil
	}
	obs := &aci.Observation{ObsID: obsID, Stream: s.id, Seq: &seq, Display: &sh.space}
	if key {
		obs.Image = &aci.ImageRef{Ref: base64.StdEncoding.EncodeToString(parts[0].B), W: w, H: h, Scope: s.scope, Format: s.format}
	} else {
		for i, r := range tiles {
			obs.Tiles = append(obs.Tiles, aci.Tile{X: r.Min.X, Y: r.Min.Y, W: r.Dx(), H: r.Dy(), Ref: base64.StdEncoding.EncodeToString(parts[i].B)})
		}
	}
	data, err := aci.Marshal(obs)
	if err != nil {
		return outgoing{}, err
	}
	return outgoing{typ: websocket.MessageText, data: data}, nil
}
