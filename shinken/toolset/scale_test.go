package toolset_test

import (
	"errors"
	"image"
	"testing"

	"shinken.dev/go/shinken/toolset"
)

// Every model pixel, at every downscale of common screen widths, maps to a
// screen pixel that maps back to it: a click at a pixel of the screenshot
// lands in the screen pixels that pixel shows.
func TestScaleRoundTripsAtEveryScale(t *testing.T) {
	for _, n := range []int{600, 640, 768, 800, 900, 1001, 1024, 1080, 1200, 1280, 1366, 1440, 1600, 1920, 2560} {
		for d := 1; d <= n; d++ {
			sc := toolset.Scale{Screen: image.Pt(n, 1), Image: image.Pt(d, 1)}
			prev := -1
			for m := range d {
				p, err := sc.ToScreen(image.Pt(m, 0))
				if err != nil {
					t.Fatal(err)
				}
				if back := sc.ToModel(p); back.X != m {
					t.Fatalf("screen %d, image %d: model %d → screen %d → model %d", n, d, m, p.X, back.X)
				}
				if p.X <= prev || p.X >= n {
					t.Fatalf("screen %d, image %d: model %d → screen %d after %d", n, d, m, p.X, prev)
				}
				prev = p.X
			}
		}
	}
}

func TestScaleRefusesPointsOutsideTheImage(t *testing.T) {
	sc := toolset.Scale{Screen: image.Pt(1920, 1080), Image: image.Pt(1024, 576), Model: image.Pt(1024, 768)}
	for _, p := range []image.Point{{-1, 0}, {0, -1}, {1024, 0}, {0, 576}, {10, 700}} {
		if _, err := sc.ToScreen(p); !errors.Is(err, toolset.ErrOutside) {
			t.Errorf("%v: %v, want ErrOutside", p, err)
		}
	}
	if p, _ := sc.ToScreen(image.Pt(1023, 575)); p != image.Pt(1919, 1079) {
		t.Errorf("the last model pixel maps to %v", p)
	}
	if r := sc.RectToScreen(image.Rect(0, 0, 1024, 576)); r != image.Rect(0, 0, 1920, 1080) {
		t.Errorf("the whole image maps to %v", r)
	}
}

func TestGrid(t *testing.T) {
	for _, size := range []image.Point{{1280, 800}, {1920, 1080}, {800, 600}, {3840, 2160}} {
		for _, g := range []toolset.Grid{{Screen: size, Size: 1000, Max: 999}, {Screen: size, Size: 1000}} {
			hi := max(g.Max, g.Size)
			if g.Max != 0 {
				hi = g.Max
			}
			for v := 0; v <= hi; v++ {
				p, err := g.ToScreen(v, v)
				if err != nil || p.X < 0 || p.X >= size.X || p.Y < 0 || p.Y >= size.Y {
					t.Fatalf("%v grid %d: %d → %v, %v", size, hi, v, p, err)
				}
				// Where the screen is finer than the grid, a grid point maps
				// back to itself.
				if x, _ := g.ToGrid(p); size.X >= 1000 && v < 1000 && x != v {
					t.Fatalf("%v: grid %d → %v → %d", size, v, p, x)
				}
			}
			if _, err := g.ToScreen(hi+1, 0); !errors.Is(err, toolset.ErrOutside) {
				t.Fatalf("%d on a 0–%d grid: %v", hi+1, hi, err)
			}
		}
	}
}
