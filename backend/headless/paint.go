package headless

import (
	"image"
	"image/color"
	"image/draw"
	"math"

	"golang.org/x/image/vector"
)

// Colours of the desktop theme: a light toolkit look on a blue desktop, so a
// screenshot reads as an ordinary desktop to a person and to a model.
var (
	colWallTop      = color.RGBA{0x1d, 0x3b, 0x5c, 0xff}
	colWallBottom   = color.RGBA{0x3f, 0x7c, 0x9a, 0xff}
	colWindow       = color.RGBA{0xf6, 0xf5, 0xf4, 0xff}
	colFrame        = color.RGBA{0x6a, 0x6f, 0x76, 0xff}
	colTitleActive  = color.RGBA{0x2c, 0x5f, 0xa3, 0xff}
	colTitleIdle    = color.RGBA{0xd8, 0xd8, 0xd8, 0xff}
	colTitleText    = color.RGBA{0xff, 0xff, 0xff, 0xff}
	colTitleIdleTxt = color.RGBA{0x5e, 0x5c, 0x64, 0xff}
	colText         = color.RGBA{0x2e, 0x34, 0x36, 0xff}
	colTextDim      = color.RGBA{0x92, 0x95, 0x95, 0xff}
	colAccent       = color.RGBA{0x35, 0x84, 0xe4, 0xff}
	colAccentDark   = color.RGBA{0x1c, 0x71, 0xd8, 0xff}
	colOnAccent     = color.RGBA{0xff, 0xff, 0xff, 0xff}
	colButton       = color.RGBA{0xe8, 0xe8, 0xe7, 0xff}
	colButtonDown   = color.RGBA{0xcf, 0xcf, 0xcd, 0xff}
	colBorder       = color.RGBA{0xb6, 0xb5, 0xb2, 0xff}
	colField        = color.RGBA{0xff, 0xff, 0xff, 0xff}
	colDisabled     = color.RGBA{0xf0, 0xf0, 0xef, 0xff}
	colTaskbar      = color.RGBA{0x1e, 0x21, 0x28, 0xff}
	colTaskActive   = color.RGBA{0x45, 0x4c, 0x5a, 0xff}
	colTaskIdle     = color.RGBA{0x2d, 0x31, 0x3a, 0xff}
	colTaskText     = color.RGBA{0xe6, 0xe6, 0xe6, 0xff}
)

// metrics are the theme's sizes in device pixels, scaled from UI points by
// the desktop's DPR.
type metrics struct {
	title    int // title bar height
	border   int // window frame width
	shadow   int // drop shadow reach
	pad      int // content padding
	gap      int // space between widgets
	control  int // height of buttons and entries
	box      int // check box side
	row      int // list row height
	taskbar  int // taskbar height
	radius   int // corner radius of controls
	inset    int // text inset inside controls
	caret    int // caret width
	focus    int // focus ring width
	minWidth int // minimum button width
}

// newMetrics scales the theme's point sizes by dpr.
func newMetrics(dpr float64) metrics {
	px := func(v float64) int { return max(1, int(math.Round(v*dpr))) }
	return metrics{
		title: px(32), border: px(1), shadow: px(10), pad: px(14), gap: px(8),
		control: px(34), box: px(18), row: px(28), taskbar: px(40), radius: px(5),
		inset: px(9), caret: px(1), focus: px(2), minWidth: px(84),
	}
}

// fill paints r with the opaque colour c, clipped to dst.
func fill(dst *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(dst, r, &image.Uniform{c}, image.Point{}, draw.Src)
}

// blend paints r with c over what is there, clipped to dst. c is
// alpha-premultiplied.
func blend(dst *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(dst, r, &image.Uniform{c}, image.Point{}, draw.Over)
}

// cornerCoverage returns the coverage of each pixel in a rad×rad top-left
// corner of a rounded rectangle, sampled 4×4 per pixel.
func cornerCoverage(rad int) []uint8 {
	cov := make([]uint8, rad*rad)
	r := float64(rad)
	for j := range rad {
		for i := range rad {
			n := 0
			for sy := range 4 {
				for sx := range 4 {
					x := float64(i) + (float64(sx)+0.5)/4 - r
					y := float64(j) + (float64(sy)+0.5)/4 - r
					if x*x+y*y <= r*r {
						n++
					}
				}
			}
			cov[j*rad+i] = uint8(n * 255 / 16)
		}
	}
	return cov
}

// roundRect paints r with the opaque colour c and anti-aliased corners of
// radius rad, clipped to dst.
func roundRect(dst *image.RGBA, r image.Rectangle, rad int, c color.RGBA) {
	rad = min(rad, r.Dx()/2, r.Dy()/2)
	if rad <= 0 {
		fill(dst, r, c)
		return
	}
	cov := cornerCoverage(rad)
	clip := r.Intersect(dst.Bounds())
	for y := clip.Min.Y; y < clip.Max.Y; y++ {
		j := min(y-r.Min.Y, r.Max.Y-1-y)
		if j >= rad {
			fill(dst, image.Rect(clip.Min.X, y, clip.Max.X, y+1), c)
			continue
		}
		for x := clip.Min.X; x < clip.Max.X; x++ {
			i := min(x-r.Min.X, r.Max.X-1-x)
			if i >= rad {
				// The middle of a corner row is solid: fill it at once.
				end := min(clip.Max.X, r.Max.X-rad)
				fill(dst, image.Rect(x, y, end, y+1), c)
				x = end - 1
				continue
			}
			blendPixel(dst, x, y, c, cov[j*rad+i])
		}
	}
}

// blendPixel paints the opaque colour c over the pixel at (x, y) with
// coverage a.
func blendPixel(dst *image.RGBA, x, y int, c color.RGBA, a uint8) {
	if a == 0 {
		return
	}
	p := dst.Pix[dst.PixOffset(x, y):]
	ia := 255 - uint32(a)
	p[0] = uint8((uint32(c.R)*uint32(a) + uint32(p[0])*ia + 127) / 255)
	p[1] = uint8((uint32(c.G)*uint32(a) + uint32(p[1])*ia + 127) / 255)
	p[2] = uint8((uint32(c.B)*uint32(a) + uint32(p[2])*ia + 127) / 255)
	p[3] = 0xff
}

// outlined paints a rounded control: a border of width bw in edge, filled
// with body.
func outlined(dst *image.RGBA, r image.Rectangle, rad, bw int, edge, body color.RGBA) {
	roundRect(dst, r, rad, edge)
	roundRect(dst, r.Inset(bw), max(0, rad-bw), body)
}

// shadow paints a soft drop shadow around r reaching out n pixels, shifted
// down by a third of n as if lit from above.
func shadow(dst *image.RGBA, r image.Rectangle, n int) {
	r = r.Add(image.Pt(0, n/3))
	for i := n; i >= 1; i-- {
		t := 1 - float64(i)/float64(n+1)
		a := uint8(math.Round(44 * t * t))
		ring := r.Inset(-i)
		inner := r.Inset(-(i - 1))
		c := color.RGBA{A: a}
		blend(dst, image.Rect(ring.Min.X, ring.Min.Y, ring.Max.X, inner.Min.Y), c)
		blend(dst, image.Rect(ring.Min.X, inner.Max.Y, ring.Max.X, ring.Max.Y), c)
		blend(dst, image.Rect(ring.Min.X, inner.Min.Y, inner.Min.X, inner.Max.Y), c)
		blend(dst, image.Rect(inner.Max.X, inner.Min.Y, ring.Max.X, inner.Max.Y), c)
	}
}

// checkMark returns the coverage of a check mark drawn in a side×side box.
func checkMark(side int) *image.Alpha {
	s := float32(side)
	var z vector.Rasterizer
	z.Reset(side, side)
	// The mark is a thick polyline, drawn as a closed outline.
	w := s * 0.11
	pts := [][2]float32{{0.22, 0.52}, {0.42, 0.72}, {0.78, 0.30}}
	z.MoveTo(pts[0][0]*s-w*0.7, pts[0][1]*s+w*0.7)
	z.LineTo(pts[0][0]*s+w*0.7, pts[0][1]*s-w*0.7)
	z.LineTo(pts[1][0]*s, pts[1][1]*s-w*1.4)
	z.LineTo(pts[2][0]*s-w*0.75, pts[2][1]*s-w*0.65)
	z.LineTo(pts[2][0]*s+w*0.75, pts[2][1]*s+w*0.65)
	z.LineTo(pts[1][0]*s, pts[1][1]*s+w*1.4)
	z.ClosePath()
	a := image.NewAlpha(image.Rect(0, 0, side, side))
	z.Draw(a, a.Bounds(), image.Opaque, image.Point{})
	return a
}

// lerp mixes a and b: t=0 gives a, t=1 gives b.
func lerp(a, b color.RGBA, t float64) color.RGBA {
	m := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + (float64(y)-float64(x))*t)) }
	return color.RGBA{m(a.R, b.R), m(a.G, b.G), m(a.B, b.B), 0xff}
}

// wallpaper paints the desktop background of a w×h screen: a vertical
// gradient crossed by a soft diagonal glow, computed once per desktop.
func wallpaper(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	glowCol := color.RGBA{0xb8, 0xd8, 0xe8, 0xff}
	// The glow's weight depends only on the distance from a diagonal line,
	// so one table indexed by that distance in pixels serves every row.
	weight := make([]int32, 2*w+1)
	for i := range weight {
		d := float64(i-w) / float64(max(1, w-1))
		weight[i] = int32(math.Round(256 * 0.16 * math.Exp(-d*d*9)))
	}
	for y := range h {
		fy := float64(y) / float64(max(1, h-1))
		base := lerp(colWallTop, colWallBottom, fy)
		x0 := int(math.Round((0.35 + (fy-0.4)*0.5) * float64(max(1, w-1))))
		row := img.Pix[img.PixOffset(0, y):img.PixOffset(w, y)]
		for x := range w {
			k := weight[min(max(x-x0+w, 0), 2*w)]
			row[4*x] = uint8(int32(base.R) + (int32(glowCol.R)-int32(base.R))*k/256)
			row[4*x+1] = uint8(int32(base.G) + (int32(glowCol.G)-int32(base.G))*k/256)
			row[4*x+2] = uint8(int32(base.B) + (int32(glowCol.B)-int32(base.B))*k/256)
			row[4*x+3] = 0xff
		}
	}
	return img
}

// drawMask paints c through the coverage mask at r, clipped to dst.
func drawMask(dst *image.RGBA, r image.Rectangle, mask *image.Alpha, c color.RGBA) {
	draw.DrawMask(dst, r, &image.Uniform{c}, image.Point{}, mask, image.Point{}, draw.Over)
}
