package x11

import (
	"context"
	"fmt"
	"image"
	"sync"

	"github.com/jezek/xgb/shm"
	"github.com/jezek/xgb/xproto"
	"golang.org/x/sys/unix"

	"shinken.dev/go/backend/x11/internal/xconn"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// bandBytes bounds the pixel data of one GetImage reply in the fallback
// path, so a capture is many modest replies converted while the next ones
// are in flight, with ctx checked between them.
const bandBytes = 256<<10 - 32

// bandsInFlight is how many GetImage requests are outstanding at once.
const bandsInFlight = 4

// maxCapturePixels refuses absurd window sizes before allocating for them.
const maxCapturePixels = 1 << 26

// captureState holds the shared-memory segment, attached once and reused.
type captureState struct {
	mu       sync.Mutex
	shm      bool // MIT-SHM is worth trying
	seg      shm.Seg
	mem      []byte // our mapping of the segment; nil when none
	shmError error  // why SHM was given up, for tests and diagnostics
}

func (c *captureState) init(b *Backend) {
	c.shm = !b.opts.DisableSHM && xconn.Init(b.conn, xconn.SHM) == nil
	if c.shm {
		if _, err := shm.QueryVersion(b.conn).Reply(); err != nil {
			c.shm = false
		}
	}
}

// usingSHM reports whether captures currently go through MIT-SHM.
func (b *Backend) usingSHM() bool {
	b.capture.mu.Lock()
	defer b.capture.mu.Unlock()
	return b.capture.shm
}

// ensureSegment makes sure a segment of at least size bytes is attached on
// both sides. xgb cannot pass file descriptors, so the segment is a SysV
// one: created here, attached by the server by id, then marked for removal
// so that it disappears with the last of us to detach, even after a crash.
func (c *captureState) ensureSegment(b *Backend, size int) error {
	if c.mem != nil && len(c.mem) >= size {
		return nil
	}
	c.detach(b)
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, size, unix.IPC_CREAT|0o600)
	if err != nil {
		return fmt.Errorf("x11: shmget: %w", err)
	}
	defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	mem, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		return fmt.Errorf("x11: shmat: %w", err)
	}
	seg, err := shm.NewSegId(b.conn)
	if err != nil {
		unix.SysvShmDetach(mem)
		return fmt.Errorf("x11: %w", err)
	}
	if err := shm.AttachChecked(b.conn, seg, uint32(id), false).Check(); err != nil {
		unix.SysvShmDetach(mem)
		return fmt.Errorf("x11: the server cannot attach the segment: %w", err)
	}
	c.seg, c.mem = seg, mem
	return nil
}

func (c *captureState) detach(b *Backend) {
	if c.mem == nil {
		return
	}
	shm.Detach(b.conn, c.seg)
	unix.SysvShmDetach(c.mem)
	c.mem = nil
}

func (c *captureState) close(b *Backend) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.detach(b)
	c.shm = false
}

// Display reports the size of the screen; DPR is 1 (X has none).
func (b *Backend) Display(ctx context.Context) (shinken.Display, error) {
	if err := b.check(ctx); err != nil {
		return shinken.Display{}, err
	}
	g, err := xproto.GetGeometry(b.conn, xproto.Drawable(b.root)).Reply()
	if err != nil {
		return shinken.Display{}, fmt.Errorf("x11: reading the screen size: %w", err)
	}
	return shinken.Display{W: int(g.Width), H: int(g.Height), DPR: 1}, nil
}

// Capture captures the screen, the active window or a window by id. A
// window's rectangle is its frame as the window manager draws it, less any
// client-side shadow; the part of it outside the screen reads as zero.
func (b *Backend) Capture(ctx context.Context, scope aci.Scope) (shinken.Frame, error) {
	disp, err := b.Display(ctx)
	if err != nil {
		return shinken.Frame{}, err
	}
	screen := image.Rect(0, 0, disp.W, disp.H)
	var src image.Rectangle
	switch scope {
	case aci.ScopeScreen:
		src = screen
	case aci.ScopeActiveWindow:
		id, err := b.activeWindow()
		if err != nil {
			return shinken.Frame{}, err
		}
		if id == 0 {
			return shinken.Frame{}, fmt.Errorf("%w: no window is active", aci.ErrNoSuchWindow)
		}
		if src, err = b.windowRect(ctx, id); err != nil {
			return shinken.Frame{}, err
		}
	default:
		id, ok := scope.WindowID()
		if !ok {
			return shinken.Frame{}, fmt.Errorf("%w: bad capture scope %q", aci.ErrInvalidAction, scope)
		}
		if src, err = b.windowRect(ctx, xproto.Window(id)); err != nil {
			return shinken.Frame{}, err
		}
	}
	if src.Dx()*src.Dy() > maxCapturePixels {
		return shinken.Frame{}, fmt.Errorf("%w: a %dx%d capture", aci.ErrTooLarge, src.Dx(), src.Dy())
	}
	img := image.NewRGBA(image.Rect(0, 0, src.Dx(), src.Dy()))
	if vis := src.Intersect(screen); !vis.Empty() {
		if err := b.grab(ctx, vis, img, vis.Min.Sub(src.Min)); err != nil {
			return shinken.Frame{}, err
		}
	}
	return shinken.Frame{Image: img, Source: src, Display: disp}, nil
}

// grab reads the screen rectangle r (inside the screen) into dst at at.
func (b *Backend) grab(ctx context.Context, r image.Rectangle, dst *image.RGBA, at image.Point) error {
	c := &b.capture
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shm {
		err := b.grabSHM(r, dst, at)
		if err == nil {
			return nil
		}
		// A server that cannot share memory with us (another host, another
		// IPC namespace) is not going to start; fall back for good.
		c.detach(b)
		c.shm, c.shmError = false, err
	}
	return b.grabBands(ctx, r, dst, at)
}

func (b *Backend) grabSHM(r image.Rectangle, dst *image.RGBA, at image.Point) error {
	c := &b.capture
	stride := b.pix.stride(r.Dx())
	// Size the segment for the whole screen at once, so that window
	// captures never reallocate it.
	full := b.pix.stride(int(b.screen.WidthInPixels)) * int(b.screen.HeightInPixels)
	if err := c.ensureSegment(b, max(full, stride*r.Dy())); err != nil {
		return err
	}
	_, err := shm.GetImage(b.conn, xproto.Drawable(b.root), int16(r.Min.X), int16(r.Min.Y),
		uint16(r.Dx()), uint16(r.Dy()), 0xffffffff, xproto.ImageFormatZPixmap, c.seg, 0).Reply()
	if err != nil {
		return fmt.Errorf("x11: shm GetImage: %w", err)
	}
	b.pix.convert(dst.Pix[at.Y*dst.Stride+4*at.X:], dst.Stride, c.mem, stride, r.Dx(), r.Dy())
	return nil
}

// grabBands reads r through plain GetImage, a band of rows at a time, with
// a few bands in flight so the transfer overlaps the conversion.
func (b *Backend) grabBands(ctx context.Context, r image.Rectangle, dst *image.RGBA, at image.Point) error {
	stride := b.pix.stride(r.Dx())
	rows := max(1, bandBytes/stride)
	type band struct {
		y, h   int
		cookie xproto.GetImageCookie
	}
	var queue []band
	next := r.Min.Y
	issue := func() {
		for len(queue) < bandsInFlight && next < r.Max.Y {
			h := min(rows, r.Max.Y-next)
			cookie := xproto.GetImage(b.conn, xproto.ImageFormatZPixmap, xproto.Drawable(b.root),
				int16(r.Min.X), int16(next), uint16(r.Dx()), uint16(h), 0xffffffff)
			queue = append(queue, band{next, h, cookie})
			next += h
		}
	}
	issue()
	var firstErr error
	for len(queue) > 0 {
		bd := queue[0]
		queue = queue[1:]
		reply, err := bd.cookie.Reply() // always read, so no reply is left behind
		if firstErr != nil {
			continue
		}
		switch {
		case err != nil:
			firstErr = fmt.Errorf("x11: GetImage: %w", err)
		case len(reply.Data) < stride*bd.h:
			firstErr = fmt.Errorf("x11: GetImage returned %d bytes for %d rows", len(reply.Data), bd.h)
		default:
			off := (at.Y+bd.y-r.Min.Y)*dst.Stride + 4*at.X
			b.pix.convert(dst.Pix[off:], dst.Stride, reply.Data, stride, r.Dx(), bd.h)
			if err := ctx.Err(); err != nil {
				firstErr = err
			} else {
				issue()
			}
		}
	}
	return firstErr
}
