package headless

import (
	"testing"

	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
)

// BenchmarkParseFonts parses the fonts a process parses once, at its first
// New: the Go fonts alone, and with the fallback fonts.
func BenchmarkParseFonts(b *testing.B) {
	for _, bc := range []struct {
		name  string
		fonts [][]byte
	}{
		{"Go", [][]byte{goregular.TTF, gobold.TTF}},
		{"GoAndFallbacks", [][]byte{goregular.TTF, gobold.TTF, dejavuTTF, dejavuBoldTTF, notoCJKOTF}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				for _, data := range bc.fonts {
					if _, err := sfnt.Parse(data); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkFirstGlyphs rasterises, on a fresh face, the glyphs of a line
// of Latin, a check mark and CJK: the cost a desktop pays the first time
// it draws them.
func BenchmarkFirstGlyphs(b *testing.B) {
	for b.Loop() {
		fc := newFace(false, 14)
		fc.width("héllo ✓ 日本 한글")
	}
}
