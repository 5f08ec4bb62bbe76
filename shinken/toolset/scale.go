package toolset

import (
	"fmt"
	"image"

	"shinken.dev/go/internal/imaging"
)

// A Scale maps between the screen's action pixels and the pixels of the
// screenshots a model is shown. The screenshot is the screen downscaled,
// aspect ratio kept, to Image; when the vendor asks for a fixed size the
// image is padded with black at the right and the bottom to Model.
//
// Each axis is mapped on its own, exactly: model pixel m covers the screen
// pixels s with floor(s·Image/Screen) = m, and [Scale.ToScreen] picks the
// one of them nearest the model pixel's centre, so that
// ToModel(ToScreen(p)) == p for every p in the image.
type Scale struct {
	Screen image.Point // the screen (global action space) in action pixels
	Image  image.Point // the screenshot as downscaled, before any padding
	Model  image.Point // the screenshot the model sees: Image, or the padded size
}

// ErrOutside reports a model coordinate that lies outside the screenshot,
// padding included. It wraps nothing; match it with errors.Is.
var ErrOutside = fmt.Errorf("toolset: coordinate outside the screenshot")

// ToScreen maps a point of the model's screenshot to action pixels. A point
// outside the image (in the padding, or beyond) is an error wrapping
// [ErrOutside].
func (s Scale) ToScreen(p image.Point) (image.Point, error) {
	if p.X < 0 || p.Y < 0 || p.X >= s.Image.X || p.Y >= s.Image.Y {
		return image.Point{}, fmt.Errorf("%w: (%d, %d) is outside the %d×%d screenshot", ErrOutside, p.X, p.Y, s.Image.X, s.Image.Y)
	}
	return image.Pt(toScreen(p.X, s.Screen.X, s.Image.X), toScreen(p.Y, s.Screen.Y, s.Image.Y)), nil
}

// ToModel maps a point in action pixels to the model's screenshot, clamped
// to the image.
func (s Scale) ToModel(p image.Point) image.Point {
	return image.Pt(toModel(p.X, s.Screen.X, s.Image.X), toModel(p.Y, s.Screen.Y, s.Image.Y))
}

// RectToScreen maps a rectangle of the model's screenshot, given by its
// pixel edges (Max exclusive), to the smallest rectangle of action pixels
// that covers it.
func (s Scale) RectToScreen(r image.Rectangle) image.Rectangle {
	return image.Rect(
		floorDiv(r.Min.X*s.Screen.X, s.Image.X), floorDiv(r.Min.Y*s.Screen.Y, s.Image.Y),
		ceilDiv(r.Max.X*s.Screen.X, s.Image.X), ceilDiv(r.Max.Y*s.Screen.Y, s.Image.Y),
	).Intersect(image.Rectangle{Max: s.Screen})
}

// toScreen maps model pixel m of an axis of d model pixels onto an axis of
// n screen pixels: the screen pixel inside m's span nearest its centre.
func toScreen(m, n, d int) int {
	if d <= 0 || n <= 0 {
		return 0
	}
	lo := ceilDiv(m*n, d)
	hi := ceilDiv((m+1)*n, d) - 1
	c := (2*m + 1) * n / (2 * d)
	if lo > hi { // the model is finer than the screen: no screen pixel lies wholly inside
		return min(n-1, m*n/d)
	}
	return max(lo, min(hi, c))
}

// toModel maps screen pixel s of an axis of n pixels onto d model pixels.
func toModel(s, n, d int) int {
	if n <= 0 {
		return 0
	}
	return max(0, min(d-1, floorDiv(s*d, n)))
}

func ceilDiv(a, b int) int { return -floorDiv(-a, b) }
func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// fit returns the largest long edge under which the runtime delivers a
// screen of size screen within bound (never larger than the screen), and the
// size it delivers.
func fit(screen, bound image.Point, runtimeCap int) (edge int, img image.Point) {
	edge = max(screen.X, screen.Y)
	if runtimeCap > 0 {
		edge = min(edge, runtimeCap)
	}
	if bound.X > 0 && bound.Y > 0 {
		edge = min(edge, max(bound.X, bound.Y))
	}
	for ; edge > 1; edge-- {
		w, h := imaging.FitSize(screen.X, screen.Y, edge)
		if (bound.X <= 0 || w <= bound.X) && (bound.Y <= 0 || h <= bound.Y) {
			return edge, image.Pt(w, h)
		}
	}
	w, h := imaging.FitSize(screen.X, screen.Y, 1)
	return 1, image.Pt(w, h)
}

// A Grid maps a model's normalised coordinates (0 to Size on each axis,
// whatever the screenshot's size) to action pixels, as Gemini's 0–999 and
// Qwen's 0–1000 grids.
type Grid struct {
	Screen image.Point // the screen in action pixels
	Size   int         // the grid's extent: 1000 for both 0–999 and 0–1000
	Max    int         // the largest coordinate accepted: 999 or 1000; 0 means Size
}

// ToScreen maps a grid point to action pixels: the screen pixel under the
// grid cell's centre. Coordinates outside [0, Max] are an error wrapping
// [ErrOutside]; Size itself lands on the last pixel.
func (g Grid) ToScreen(x, y int) (image.Point, error) {
	hi := g.Max
	if hi == 0 {
		hi = g.Size
	}
	if x < 0 || y < 0 || x > hi || y > hi {
		return image.Point{}, fmt.Errorf("%w: (%d, %d) is outside the 0–%d grid", ErrOutside, x, y, hi)
	}
	return image.Pt(g.axis(x, g.Screen.X), g.axis(y, g.Screen.Y)), nil
}

func (g Grid) axis(v, n int) int { return min(n-1, toScreen(v, n, g.Size)) }

// ToGrid maps action pixels to the grid.
func (g Grid) ToGrid(p image.Point) (x, y int) {
	return toModel(p.X, g.Screen.X, g.Size), toModel(p.Y, g.Screen.Y, g.Size)
}
