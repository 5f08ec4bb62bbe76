package headless

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"strings"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// parsedFonts parses the Go fonts once per process: parsing costs
// milliseconds and the parsed fonts are read-only, so every desktop shares
// them. Faces, which hold scratch buffers, are per desktop.
var parsedFonts = sync.OnceValues(func() ([2]*opentype.Font, error) {
	var fonts [2]*opentype.Font
	for i, ttf := range [][]byte{goregular.TTF, gobold.TTF} {
		f, err := opentype.Parse(ttf)
		if err != nil {
			return fonts, fmt.Errorf("headless: parsing the Go fonts: %w", err)
		}
		fonts[i] = f
	}
	return fonts, nil
})

// A glyph is a rasterised rune, kept so that text is rasterised once per
// desktop: redrawing a widget then costs one mask blit per rune.
type glyph struct {
	mask *image.Alpha // coverage, with its origin at the glyph's top left
	off  image.Point  // top left of mask relative to the dot on the baseline
	adv  int          // advance in whole pixels
}

// A face draws and measures text in one font at one size. Glyphs are placed
// on whole pixels with full hinting, so that text is crisp and the same
// string always gives the same pixels. It is not safe for concurrent use:
// the desktop's lock guards it.
type face struct {
	f       font.Face
	font    *sfnt.Font
	buf     sfnt.Buffer
	size    float64
	ascent  int // pixels above the baseline
	descent int // pixels below the baseline
	height  int // line height
	glyphs  map[rune]*glyph
}

// newFace returns a face of the regular (bold false) or bold Go font at size
// pixels.
func newFace(bold bool, size float64) *face {
	fonts, err := parsedFonts()
	if err != nil {
		// The fonts are compiled into the binary: failing to parse them is
		// a broken build, not a runtime condition.
		panic(err)
	}
	i := 0
	if bold {
		i = 1
	}
	f, err := opentype.NewFace(fonts[i], &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		panic(fmt.Errorf("headless: making a %v px face: %w", size, err))
	}
	m := f.Metrics()
	return &face{
		f:       f,
		font:    fonts[i],
		size:    size,
		ascent:  m.Ascent.Ceil(),
		descent: m.Descent.Ceil(),
		height:  m.Height.Ceil(),
		glyphs:  map[rune]*glyph{},
	}
}

// glyph returns r's glyph, rasterising it on first use. A rune the font
// lacks gets the font's missing-glyph box, as a real toolkit would draw.
func (fc *face) glyph(r rune) *glyph {
	if g, ok := fc.glyphs[r]; ok {
		return g
	}
	if r == '\t' {
		// A tab advances like four spaces and draws nothing.
		g := &glyph{adv: 4 * fc.glyph(' ').adv}
		fc.glyphs[r] = g
		return g
	}
	if idx, err := fc.font.GlyphIndex(&fc.buf, r); err != nil || idx == 0 {
		g := fc.tofu(r)
		fc.glyphs[r] = g
		return g
	}
	dr, mask, mp, adv, ok := fc.f.Glyph(fixed.P(0, 0), r)
	g := &glyph{adv: adv.Round()}
	if ok && !dr.Empty() {
		// The face reuses its mask buffer: copy the coverage out.
		a := image.NewAlpha(image.Rect(0, 0, dr.Dx(), dr.Dy()))
		draw.Draw(a, a.Bounds(), mask, mp, draw.Src)
		g.mask, g.off = a, dr.Min
	}
	fc.glyphs[r] = g
	return g
}

// tofu returns the glyph drawn for a rune the font lacks: an empty box, as
// wide as an ideograph for the wide scripts, so that a person looking at
// the screen sees that something was typed there.
func (fc *face) tofu(r rune) *glyph {
	w := int(math.Round(fc.size * 0.55))
	if r >= 0x2e80 {
		w = int(math.Round(fc.size * 0.95))
	}
	h := int(math.Round(float64(fc.ascent) * 0.85))
	t := max(1, int(math.Round(fc.size/14)))
	a := image.NewAlpha(image.Rect(0, 0, w-2, h))
	draw.Draw(a, a.Bounds(), image.Opaque, image.Point{}, draw.Src)
	draw.Draw(a, a.Bounds().Inset(t), image.Transparent, image.Point{}, draw.Src)
	return &glyph{mask: a, off: image.Pt(1, -h), adv: w}
}

// width returns the advance of s in pixels.
func (fc *face) width(s string) int {
	w := 0
	for _, r := range s {
		w += fc.glyph(r).adv
	}
	return w
}

// advances returns the x offset of each rune boundary of rs: len(rs)+1
// values, starting at 0.
func (fc *face) advances(rs []rune) []int {
	xs := make([]int, len(rs)+1)
	for i, r := range rs {
		xs[i+1] = xs[i] + fc.glyph(r).adv
	}
	return xs
}

// draw draws s with its baseline starting at (x, y), clipped to dst's
// bounds. It returns the x after the last rune.
func (fc *face) draw(dst *image.RGBA, x, y int, s string, c color.RGBA) int {
	src := image.NewUniform(c)
	clip := dst.Bounds()
	for _, r := range s {
		g := fc.glyph(r)
		if g.mask != nil && x < clip.Max.X {
			gr := g.mask.Rect.Add(g.off).Add(image.Pt(x, y))
			if gr.Overlaps(clip) {
				draw.DrawMask(dst, gr, src, image.Point{}, g.mask, image.Point{}, draw.Over)
			}
		}
		x += g.adv
	}
	return x
}

// wrap breaks text into lines no wider than width, at spaces where it can
// and inside a word where a word alone is too wide. Newlines always break.
func (fc *face) wrap(text string, width int) []string {
	var lines []string
	for para := range strings.SplitSeq(text, "\n") {
		line, lineW := "", 0
		for word := range strings.SplitSeq(para, " ") {
			ww := fc.width(word)
			sep := 0
			if line != "" {
				sep = fc.glyph(' ').adv
			}
			if line != "" && lineW+sep+ww > width {
				lines = append(lines, line)
				line, lineW, sep = "", 0, 0
			}
			for ww > width && line == "" && len([]rune(word)) > 1 {
				head, rest := fc.fit(word, width)
				lines = append(lines, head)
				word = rest
				ww = fc.width(word)
			}
			if line != "" {
				line += " "
			}
			line += word
			lineW += sep + ww
		}
		lines = append(lines, line)
	}
	return lines
}

// fit splits s after the most runes (at least one) that fit in width.
func (fc *face) fit(s string, width int) (head, rest string) {
	w := 0
	for i, r := range s {
		adv := fc.glyph(r).adv
		if w+adv > width && i > 0 {
			return s[:i], s[i:]
		}
		w += adv
	}
	return s, ""
}
