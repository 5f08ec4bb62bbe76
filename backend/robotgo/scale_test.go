package robotgo

import (
	"image"
	"testing"
)

// The mapping is checked with fake scales: robotgo's units on a Retina Mac
// (2), a 3× display, and the identity that X11 and Windows use.

func TestToPointsToPixels(t *testing.T) {
	for _, tc := range []struct {
		unit   int
		px, pt image.Point
	}{
		{1, image.Pt(0, 0), image.Pt(0, 0)},
		{1, image.Pt(1919, 1079), image.Pt(1919, 1079)},
		{1, image.Pt(-5, 7), image.Pt(-5, 7)},
		{2, image.Pt(0, 0), image.Pt(0, 0)},
		{2, image.Pt(1, 1), image.Pt(0, 0)},
		{2, image.Pt(2, 3), image.Pt(1, 1)},
		{2, image.Pt(2879, 1799), image.Pt(1439, 899)}, // last pixel of a 2880×1800 panel
		{2, image.Pt(-1, -2), image.Pt(-1, -1)},        // left of the primary screen
		{2, image.Pt(-3, -4), image.Pt(-2, -2)},
		{3, image.Pt(8, 9), image.Pt(2, 3)},
		{3, image.Pt(-1, 0), image.Pt(-1, 0)},
	} {
		if got := toPoints(tc.px, tc.unit); got != tc.pt {
			t.Errorf("toPoints(%v, %d) = %v, want %v", tc.px, tc.unit, got, tc.pt)
		}
	}
	for _, unit := range []int{1, 2, 3} {
		for y := -7; y <= 7; y++ {
			for x := -7; x <= 7; x++ {
				q := image.Pt(x, y)
				p := toPixels(q, unit)
				if back := toPoints(p, unit); back != q {
					t.Errorf("unit %d: toPoints(toPixels(%v)) = %v", unit, q, back)
				}
				// Every pixel of the unit maps back to it, and no other.
				for dy := range unit {
					for dx := range unit {
						if got := toPoints(p.Add(image.Pt(dx, dy)), unit); got != q {
							t.Errorf("unit %d: pixel %v of unit %v maps to %v", unit, p.Add(image.Pt(dx, dy)), q, got)
						}
					}
				}
			}
		}
	}
}

func TestPointsCovering(t *testing.T) {
	for _, tc := range []struct {
		unit int
		px   image.Rectangle
		pt   image.Rectangle
	}{
		{1, image.Rect(10, 20, 30, 40), image.Rect(10, 20, 30, 40)},
		{2, image.Rect(0, 0, 2880, 1800), image.Rect(0, 0, 1440, 900)},
		{2, image.Rect(1, 1, 3, 3), image.Rect(0, 0, 2, 2)}, // straddles four units
		{2, image.Rect(2, 2, 4, 4), image.Rect(1, 1, 2, 2)},
		{2, image.Rect(-3, -1, 1, 1), image.Rect(-2, -1, 1, 1)},
		{3, image.Rect(4, 4, 5, 5), image.Rect(1, 1, 2, 2)},
		{2, image.Rectangle{}, image.Rectangle{}},
	} {
		got := pointsCovering(tc.px, tc.unit)
		if got != tc.pt {
			t.Errorf("pointsCovering(%v, %d) = %v, want %v", tc.px, tc.unit, got, tc.pt)
		}
		if covered := (image.Rectangle{Min: toPixels(got.Min, tc.unit), Max: toPixels(got.Max, tc.unit)}); !tc.px.In(covered) {
			t.Errorf("pointsCovering(%v, %d) = %v covers pixels %v only", tc.px, tc.unit, got, covered)
		}
	}
}

// TestUnitFor pins where robotgo's coordinates are device pixels whatever
// the scale it reports, so that nobody multiplies clicks by it.
func TestUnitFor(t *testing.T) {
	for _, tc := range []struct {
		goos  string
		scale float64
		want  int
	}{
		{"linux", 1.0409836, 1}, // Xvfb's millimetres
		{"linux", 2, 1},         // Xft.dpi 192: X11 is still in pixels
		{"freebsd", 1.5, 1},
		{"windows", 1.25, 1},
		{"windows", 2, 1},
		{"darwin", 1, 1},
		{"darwin", 2, 2},
		{"darwin", 3, 3},
		{"darwin", 1.9999, 2},
		{"darwin", 0, 1},
		{"darwin", -2, 1},
	} {
		if got := unitFor(tc.goos, tc.scale); got != tc.want {
			t.Errorf("unitFor(%s, %v) = %d, want %d", tc.goos, tc.scale, got, tc.want)
		}
	}
}

func TestDPRFor(t *testing.T) {
	for _, tc := range []struct{ scale, want float64 }{
		{1.0409836, 1}, {0.958, 1}, {1.25, 1.25}, {1.5, 1.5}, {1.74, 1.75}, {2, 2}, {3, 3},
		{0, 1}, {-1, 1}, {0.05, 0.25}, {1e9, 1},
	} {
		if got := dprFor(tc.scale); got != tc.want {
			t.Errorf("dprFor(%v) = %v, want %v", tc.scale, got, tc.want)
		}
	}
}

func TestFloorDiv(t *testing.T) {
	for _, tc := range []struct{ a, b, want int }{{7, 2, 3}, {-7, 2, -4}, {-8, 2, -4}, {0, 3, 0}, {-1, 3, -1}, {6, 3, 2}} {
		if got := floorDiv(tc.a, tc.b); got != tc.want {
			t.Errorf("floorDiv(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
