package toolset

import (
	"context"
	"errors"
	"image"

	"shinken.dev/go/shinken/aci"
)

// px is a point_px target at a screen point.
func px(p image.Point) *aci.Target { return aci.Px(float64(p.X), float64(p.Y)) }

// drag presses button at path[0] with keys held, moves through every
// point, and releases at the last. Two points are one drag action; more
// are mouse_down, moves and mouse_up, the button (and keys) released even
// when a move fails.
func (s *screen) drag(ctx context.Context, path []image.Point, button aci.PointerButton, keys string) (err error) {
	if len(path) < 2 {
		return errors.New("toolset: a drag needs at least two points")
	}
	if button == aci.PointerLeft {
		button = ""
	}
	if len(path) == 2 {
		return s.do(ctx, &aci.Action{Verb: aci.VerbDrag, Target: px(path[0]), To: px(path[1]), Button: button, Keys: keys})
	}
	if err := s.do(ctx, &aci.Action{Verb: aci.VerbMove, Target: px(path[0])}); err != nil {
		return err
	}
	if err := s.do(ctx, &aci.Action{Verb: aci.VerbMouseDown, Target: px(path[0]), Button: button, Keys: keys}); err != nil {
		return err
	}
	last := path[len(path)-1]
	defer func() {
		uerr := s.do(context.WithoutCancel(ctx), &aci.Action{Verb: aci.VerbMouseUp, Target: px(last), Button: button})
		if err == nil {
			err = uerr
		}
	}()
	for _, p := range path[1:] {
		if err := s.do(ctx, &aci.Action{Verb: aci.VerbMove, Target: px(p)}); err != nil {
			return err
		}
	}
	return nil
}

// scroll scrolls dx, dy wheel notches at screen point p with keys held,
// in actions the runtime takes whole (it clamps one scroll's notches). No
// notches at all is a move there.
func (s *screen) scroll(ctx context.Context, p image.Point, dx, dy float64, keys string) error {
	if dx == 0 && dy == 0 {
		return s.do(ctx, &aci.Action{Verb: aci.VerbMove, Target: px(p)})
	}
	return s.scrollNotches(ctx, &aci.Action{Verb: aci.VerbScroll, Target: px(p), DX: dx, DY: dy, Keys: keys})
}

// platform is the runtime's platform, linux when it does not say.
func (s *screen) platform() aci.Platform {
	if w := s.c.Welcome(); w != nil && w.Server.Platform != "" {
		return w.Server.Platform
	}
	return aci.PlatformLinux
}

// backForward returns the platform's keys for a browser's or a file
// manager's back and forward.
func (s *screen) backForward(forward bool) string {
	if s.platform() == aci.PlatformMacOS {
		if forward {
			return "cmd+bracketright"
		}
		return "cmd+bracketleft"
	}
	if forward {
		return "alt+Right"
	}
	return "alt+Left"
}
