//go:build robotgo

package robotgo

import (
	"context"
	"testing"

	"shinken.dev/go/backend/x11"
	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// The benchmarks run robotgo and the pure-Go X11 backend side by side on
// the same 1920×1080 Xvfb screen.

// benchBackends starts the session and opens both backends on it.
func benchBackends(b *testing.B) map[string]shinken.Backend {
	srv := session(b, &xvfb.Options{Width: 1920, Height: 1080, NoWM: true})
	rg := open(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	xb, err := x11.Open(ctx, &x11.Options{Display: srv.Display, Xauthority: srv.Xauthority})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { xb.Close() })
	return map[string]shinken.Backend{"robotgo": rg, "x11": xb}
}

// BenchmarkCapture1080p captures the whole screen: robotgo's XGetImage on a
// new connection per capture, against the X11 backend's MIT-SHM capture.
// Both include the conversion to RGBA.
func BenchmarkCapture1080p(b *testing.B) {
	backends := benchBackends(b)
	for _, name := range []string{"robotgo", "x11"} {
		c := backends[name].(shinken.Capturer)
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			b.SetBytes(1920 * 1080 * 4)
			for b.Loop() {
				f, err := c.Capture(ctx, aci.ScopeScreen)
				if err != nil {
					b.Fatal(err)
				}
				if f.Image.Bounds().Dx() != 1920 {
					b.Fatalf("captured %v", f.Image.Bounds())
				}
			}
		})
	}
}

// BenchmarkClick clicks the left button: move, press, release, each a
// round trip to the server (robotgo syncs after each; so does XTest in the
// X11 backend).
func BenchmarkClick(b *testing.B) {
	backends := benchBackends(b)
	for _, name := range []string{"robotgo", "x11"} {
		in := backends[name].(shinken.Injector)
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			i := 0
			for b.Loop() {
				x, y := 100+i%500, 100+i%300
				i++
				for _, kind := range []shinken.PointerKind{shinken.PointerMove, shinken.PointerDown, shinken.PointerUp} {
					if err := in.Pointer(ctx, shinken.PointerEvent{Kind: kind, X: x, Y: y}); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkType types ten characters, two of them outside ASCII: robotgo
// waits about 5 ms inside each key press and 7 ms after each remapped
// character; the X11 backend does not wait.
func BenchmarkType(b *testing.B) {
	backends := benchBackends(b)
	for _, name := range []string{"robotgo", "x11"} {
		in := backends[name].(shinken.Injector)
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				if err := in.Type(ctx, "Hello né ✓"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
