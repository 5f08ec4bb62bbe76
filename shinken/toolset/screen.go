package toolset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"sync"
	"sync/atomic"

	xdraw "golang.org/x/image/draw"

	"shinken.dev/go/internal/imaging"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// An Image is a screenshot or a zoomed region, encoded, as the model is
// shown it.
type Image struct {
	Data      []byte // the encoded image
	MediaType string // "image/png"
	Width     int
	Height    int
}

// screen is what every vendor's tools share: the session, the bound the
// vendor puts on screenshots, and the scale of the last one.
type screen struct {
	c     *client.Client
	bound image.Point // the model's screen bound; 0 means the screen's size
	pad   bool        // pad every screenshot to exactly bound
	// exact, when set, gives every screenshot exactly this size, the
	// aspect ratio as near as it allows (Qwen2.5-VL's smart resize):
	// resampled here from the runtime's next larger one.
	exact func(screen image.Point) image.Point

	held    holdCap      // the runtime's hold bound, once seen
	waits   waitPart     // the longest wait asked in one action
	buttons atomic.Int64 // mouse_down sent without their mouse_up

	mu    sync.Mutex
	scale Scale
	edge  int // the max_long_edge that delivers scale.Image
}

// newScreen asks the runtime for the screen size and fixes the scale.
func newScreen(ctx context.Context, c *client.Client, bound image.Point, pad bool) (*screen, error) {
	if c == nil {
		return nil, errors.New("toolset: nil Client")
	}
	if bound.X < 0 || bound.Y < 0 || (bound.X == 0) != (bound.Y == 0) {
		return nil, fmt.Errorf("toolset: model screen size %d×%d: give both or neither", bound.X, bound.Y)
	}
	if pad && bound.X == 0 {
		return nil, errors.New("toolset: padding needs a model screen size")
	}
	s := &screen{c: c, bound: bound, pad: pad}
	sz, err := c.ScreenSize(ctx)
	if err != nil {
		return nil, fmt.Errorf("toolset: asking the screen size: %w", err)
	}
	s.setScreen(image.Pt(sz.W, sz.H))
	return s, nil
}

// newExactScreen is newScreen whose screenshots have exactly the size
// exact gives for the screen's.
func newExactScreen(ctx context.Context, c *client.Client, exact func(image.Point) image.Point) (*screen, error) {
	if c == nil {
		return nil, errors.New("toolset: nil Client")
	}
	s := &screen{c: c, exact: exact}
	sz, err := c.ScreenSize(ctx)
	if err != nil {
		return nil, fmt.Errorf("toolset: asking the screen size: %w", err)
	}
	s.setScreen(image.Pt(sz.W, sz.H))
	return s, nil
}

func (s *screen) runtimeCap() int {
	if w := s.c.Welcome(); w != nil {
		return w.Capabilities.MaxLongEdge
	}
	return 0
}

// setScreen recomputes the scale for a screen of size sz. The caller holds
// no lock.
func (s *screen) setScreen(sz image.Point) {
	if s.exact != nil {
		img := s.exact(sz)
		// The runtime's smallest screenshot that covers img on both axes.
		edge := max(sz.X, sz.Y)
		if r := s.runtimeCap(); r > 0 {
			edge = min(edge, r)
		}
		need := max(ceilDiv(img.X*max(sz.X, sz.Y), sz.X), ceilDiv(img.Y*max(sz.X, sz.Y), sz.Y))
		edge = min(edge, max(need, 1))
		s.mu.Lock()
		s.scale = Scale{Screen: sz, Image: img, Model: img}
		s.edge = edge
		s.mu.Unlock()
		return
	}
	edge, img := fit(sz, s.bound, s.runtimeCap())
	model := img
	if s.pad {
		model = s.bound
	}
	s.mu.Lock()
	s.scale = Scale{Screen: sz, Image: img, Model: model}
	s.edge = edge
	s.mu.Unlock()
}

func (s *screen) current() (Scale, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scale, s.edge
}

// point maps a model point to a point_px target.
func (s *screen) point(p image.Point) (*aci.Target, image.Point, error) {
	sc, _ := s.current()
	q, err := sc.ToScreen(p)
	if err != nil {
		return nil, image.Point{}, err
	}
	return aci.Px(float64(q.X), float64(q.Y)), q, nil
}

// screenshot captures the screen as the model is to see it.
func (s *screen) screenshot(ctx context.Context) (*Image, error) {
	sc, edge := s.current()
	shot, err := s.c.Screenshot(ctx, &client.ScreenshotRequest{Format: aci.FormatPNG, MaxLongEdge: edge})
	if err != nil {
		return nil, err
	}
	if d := shot.Display; d.W != sc.Screen.X || d.H != sc.Screen.Y {
		// The screen changed size: rescale and capture again, so the
		// image and the mapping agree.
		s.setScreen(image.Pt(d.W, d.H))
		sc, edge = s.current()
		if shot, err = s.c.Screenshot(ctx, &client.ScreenshotRequest{Format: aci.FormatPNG, MaxLongEdge: edge}); err != nil {
			return nil, err
		}
	}
	if s.exact != nil && (shot.Width != sc.Image.X || shot.Height != sc.Image.Y) {
		src, err := decodeRGBA(shot.Data)
		if err != nil {
			return nil, err
		}
		dst := image.NewRGBA(image.Rectangle{Max: sc.Image})
		xdraw.CatmullRom.Scale(dst, dst.Rect, src, src.Rect, xdraw.Src, nil)
		return encode(dst)
	}
	if shot.Width != sc.Image.X || shot.Height != sc.Image.Y {
		return nil, fmt.Errorf("%w: toolset: the runtime delivered %d×%d, expected %d×%d", aci.ErrInternal, shot.Width, shot.Height, sc.Image.X, sc.Image.Y)
	}
	if !s.pad || sc.Model == sc.Image {
		return &Image{Data: shot.Data, MediaType: "image/png", Width: shot.Width, Height: shot.Height}, nil
	}
	img, err := decodeRGBA(shot.Data)
	if err != nil {
		return nil, err
	}
	padded := image.NewRGBA(image.Rectangle{Max: sc.Model})
	draw.Draw(padded, padded.Rect, image.Black, image.Point{}, draw.Src)
	draw.Draw(padded, img.Rect, img, image.Point{}, draw.Src)
	return encode(padded)
}

// zoom captures region, given in the model's screenshot pixels, at the
// screen's native resolution, scaled to fill the model's screenshot size
// with its aspect ratio kept: a region larger than that is downscaled to
// fit, a smaller one enlarged (Catmull-Rom) until it fills the size on one
// axis, so that the model sees the region as large as its screen allows.
func (s *screen) zoom(ctx context.Context, region image.Rectangle) (*Image, error) {
	sc, _ := s.current()
	if region.Empty() {
		return nil, fmt.Errorf("toolset: zoom region %v is empty", region)
	}
	if !region.In(image.Rectangle{Max: sc.Image}) {
		return nil, fmt.Errorf("%w: zoom region [%d, %d, %d, %d] is not inside the %d×%d screenshot", ErrOutside,
			region.Min.X, region.Min.Y, region.Max.X, region.Max.Y, sc.Image.X, sc.Image.Y)
	}
	shot, err := s.c.Screenshot(ctx, &client.ScreenshotRequest{Format: aci.FormatPNG})
	if err != nil {
		return nil, err
	}
	full, err := decodeRGBA(shot.Data)
	if err != nil {
		return nil, err
	}
	if full.Rect.Dx() != sc.Screen.X || full.Rect.Dy() != sc.Screen.Y {
		return nil, fmt.Errorf("%w: toolset: the runtime delivered the screen at %d×%d, not its native %d×%d", aci.ErrInternal, full.Rect.Dx(), full.Rect.Dy(), sc.Screen.X, sc.Screen.Y)
	}
	r := sc.RectToScreen(region)
	crop := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(crop, crop.Rect, full, r.Min, draw.Src)
	bound := sc.Model
	if crop.Rect.Dx() > bound.X || crop.Rect.Dy() > bound.Y {
		edge, _ := fit(crop.Rect.Size(), bound, 0)
		return encode(imaging.Downscale(crop, edge))
	}
	// The region's aspect as the model drew it: the native pixels that
	// cover it may be a fraction larger.
	if size := fillSize(region.Size(), bound); size != crop.Rect.Size() {
		big := image.NewRGBA(image.Rectangle{Max: size})
		xdraw.CatmullRom.Scale(big, big.Rect, crop, crop.Rect, xdraw.Src, nil)
		crop = big
	}
	return encode(crop)
}

// fillSize is the largest size of src's aspect ratio within bound: one
// axis fills bound, the other is rounded to the nearest pixel.
func fillSize(src, bound image.Point) image.Point {
	if src.X*bound.Y >= src.Y*bound.X { // wider than bound: the width fills it
		return image.Pt(bound.X, max(1, min(bound.Y, (src.Y*bound.X+src.X/2)/src.X)))
	}
	return image.Pt(max(1, min(bound.X, (src.X*bound.Y+src.Y/2)/src.Y)), bound.Y)
}

// cursor reports the pointer's position in action pixels, as the runtime
// reports it with a screenshot (one pixel of one, so it costs a capture and
// little else).
func (s *screen) cursor(ctx context.Context) (image.Point, error) {
	shot, err := s.c.Screenshot(ctx, &client.ScreenshotRequest{Format: aci.FormatPNG, MaxLongEdge: 1})
	if err != nil {
		return image.Point{}, err
	}
	if shot.Pointer == nil {
		return image.Point{}, fmt.Errorf("toolset: the runtime does not report the pointer's position: %w", errors.ErrUnsupported)
	}
	return *shot.Pointer, nil
}

func decodeRGBA(data []byte) (*image.RGBA, error) {
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: toolset: decoding a screenshot: %w", aci.ErrInternal, err)
	}
	if rgba, ok := img.(*image.RGBA); ok && rgba.Rect.Min == (image.Point{}) {
		return rgba, nil
	}
	b := img.Bounds()
	rgba := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(rgba, rgba.Rect, img, b.Min, draw.Src)
	return rgba, nil
}

func encode(img *image.RGBA) (*Image, error) {
	data, err := imaging.EncodePNG(nil, img)
	if err != nil {
		return nil, fmt.Errorf("%w: toolset: encoding an image: %w", aci.ErrInternal, err)
	}
	return &Image{Data: data, MediaType: "image/png", Width: img.Rect.Dx(), Height: img.Rect.Dy()}, nil
}
