package headless

import (
	_ "embed"
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

// The fallback fonts, subsets made by fonts/subset.py (see fonts/README.md):
// DejaVu Sans for the symbols the Go fonts lack (✓, arrows, shapes), Noto
// Sans CJK for kana, Hangul and the common ideographs.
var (
	//go:embed fonts/DejaVuSans-Symbols.ttf
	dejavuTTF []byte
	//go:embed fonts/DejaVuSans-Bold-Symbols.ttf
	dejavuBoldTTF []byte
	//go:embed fonts/NotoSansCJK-Subset.otf
	notoCJKOTF []byte
)

// A fontChain is the fonts of one weight in the order a rune is looked up:
// the Go font, then the fallbacks. embolden marks a regular font standing
// in for a bold one (the CJK subset has one weight).
type fontChain struct {
	fonts    []*sfnt.Font
	embolden []bool
}

// parsedFonts parses the fonts once per process: parsing costs milliseconds
// and the parsed fonts are read-only, so every desktop shares them. Faces,
// which hold scratch buffers, are per desktop.
var parsedFonts = sync.OnceValues(func() ([2]fontChain, error) {
	var chains [2]fontChain
	parsed := map[*byte]*sfnt.Font{}
	for i, weight := range [][][]byte{
		{goregular.TTF, dejavuTTF, notoCJKOTF},
		{gobold.TTF, dejavuBoldTTF, notoCJKOTF},
	} {
		for j, data := range weight {
			f, ok := parsed[&data[0]]
			if !ok {
				var err error
				if f, err = sfnt.Parse(data); err != nil {
					return chains, fmt.Errorf("headless: parsing font %d of weight %d: %w", j, i, err)
				}
				parsed[&data[0]] = f
			}
			chains[i].fonts = append(chains[i].fonts, f)
			chains[i].embolden = append(chains[i].embolden, i == 1 && j == 2)
		}
	}
	return chains, nil
})

// A glyph is a rasterised rune, kept so that text is rasterised once per
// desktop: redrawing a widget then costs one mask blit per rune.
type glyph struct {
	mask *image.Alpha // coverage, with its origin at the glyph's top left
	off  image.Point  // top left of mask relative to the dot on the baseline
	adv  int          // advance in whole pixels
}

// A face draws and measures text in one weight at one size. Glyphs are
// placed on whole pixels with full hinting, so that text is crisp and the
// same string always gives the same pixels. A rune the Go font lacks is
// drawn from the first fallback font that has it, at the same size and on
// the same baseline. It is not safe for concurrent use: the desktop's lock
// guards it.
type face struct {
	faces   []font.Face // one per font of the chain
	chain   fontChain
	buf     sfnt.Buffer
	size    float64
	ascent  int // pixels above the baseline
	descent int // pixels below the baseline
	height  int // line height
	glyphs  map[rune]*glyph
}

// newFace returns a face of the regular (bold false) or bold fonts at size
// pixels.
func newFace(bold bool, size float64) *face {
	chains, err := parsedFonts()
	if err != nil {
		// The fonts are compiled into the binary: failing to parse them is
		// a broken build, not a runtime condition.
		panic(err)
	}
	i := 0
	if bold {
		i = 1
	}
	fc := &face{chain: chains[i], size: size, glyphs: map[rune]*glyph{}}
	for _, f := range fc.chain.fonts {
		ff, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
		if err != nil {
			panic(fmt.Errorf("headless: making a %v px face: %w", size, err))
		}
		fc.faces = append(fc.faces, ff)
	}
	m := fc.faces[0].Metrics()
	fc.ascent, fc.descent, fc.height = m.Ascent.Ceil(), m.Descent.Ceil(), m.Height.Ceil()
	return fc
}

// glyph returns r's glyph, rasterising it on first use. A rune no font has
// gets a missing-glyph box, as a real toolkit would draw.
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
	var g *glyph
	for i, f := range fc.chain.fonts {
		if idx, err := f.GlyphIndex(&fc.buf, r); err != nil || idx == 0 {
			continue
		}
		dr, mask, mp, adv, ok := fc.faces[i].Glyph(fixed.P(0, 0), r)
		g = &glyph{adv: adv.Round()}
		if ok && !dr.Empty() {
			// The face reuses its mask buffer: copy the coverage out.
			a := image.NewAlpha(image.Rect(0, 0, dr.Dx(), dr.Dy()))
			draw.Draw(a, a.Bounds(), mask, mp, draw.Src)
			g.mask, g.off = a, dr.Min
			if fc.chain.embolden[i] {
				g.mask = embolden(a, fc.size)
			}
		}
		break
	}
	if g == nil {
		g = fc.tofu(r)
	}
	fc.glyphs[r] = g
	return g
}

// embolden thickens a glyph's strokes to stand in for a bold weight the
// font lacks, as toolkits synthesise bold: the coverage is spread right by
// about a fourteenth of the size, keeping the glyph's origin and advance.
func embolden(a *image.Alpha, size float64) *image.Alpha {
	n := max(1, int(math.Round(size/14)))
	b := a.Bounds()
	out := image.NewAlpha(image.Rect(0, 0, b.Dx()+n, b.Dy()))
	for y := range b.Dy() {
		src := a.Pix[y*a.Stride : y*a.Stride+b.Dx()]
		dst := out.Pix[y*out.Stride : y*out.Stride+b.Dx()+n]
		for x, v := range src {
			for k := 0; k <= n; k++ {
				dst[x+k] = max(dst[x+k], v)
			}
		}
	}
	return out
}

// tofu returns the glyph drawn for a rune the fonts lack: an empty box, as
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
