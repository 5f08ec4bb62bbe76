package headless_test

import (
	"image"
	"testing"
)

// crop returns a copy of r of img.
func crop(img *image.RGBA, r image.Rectangle) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	for y := r.Min.Y; y < r.Max.Y; y++ {
		copy(out.Pix[(y-r.Min.Y)*out.Stride:], img.Pix[img.PixOffset(r.Min.X, y):img.PixOffset(r.Max.X, y)])
	}
	return out
}

func equalPixels(a, b *image.RGBA) bool { return string(a.Pix) == string(b.Pix) }

// TestTypedGlyphsDrawn types accents, a check mark and CJK into an entry
// and checks by pixels that every character is drawn with a glyph of its
// own, none with the missing-glyph box.
func TestTypedGlyphsDrawn(t *testing.T) {
	const text = "héllo ✓ 日本 한글 かな ×→★"
	u, a := newEditApp(t)
	u.click("text", "Entry")
	u.typeText(text)
	if got := u.find("text", "Entry").Value; got != text {
		t.Fatalf("the entry's value is %q, want %q", got, text)
	}
	a.win.Focus(a.ok) // no caret in the crops below
	box := u.find("text", "Entry").BBox
	show := func(s string) *image.RGBA {
		a.entry.SetText(s)
		return crop(u.screen(), box)
	}
	empty := show("")
	// Private-use and unassigned code points are in no font: they show
	// the missing-glyph box, narrow or wide.
	tofu := []*image.RGBA{show("\u0378"), show("\ue000")}
	for _, img := range tofu {
		if equalPixels(img, empty) {
			t.Fatal("a missing glyph draws nothing; the test cannot tell it from a drawn one")
		}
	}
	seen := map[string]rune{}
	for _, r := range text {
		if r == ' ' {
			continue
		}
		img := show(string(r))
		switch {
		case equalPixels(img, empty):
			t.Errorf("%q draws nothing", r)
		case equalPixels(img, tofu[0]) || equalPixels(img, tofu[1]):
			t.Errorf("%q draws the missing-glyph box", r)
		}
		if o, dup := seen[string(img.Pix)]; dup && o != r {
			t.Errorf("%q and %q draw the same pixels", o, r)
		}
		seen[string(img.Pix)] = r
	}
}
