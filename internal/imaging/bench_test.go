package imaging

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"
)

// The benchmarks run on 1920×1080 frames from desktopFrame (windows, flat
// fills, gradients, anti-aliased and bitmap text, a photo) unless named
// otherwise; photo1080 is the worst case for lossless encoding.

func BenchmarkFrameHash(b *testing.B) {
	img := desktop1080()
	b.SetBytes(int64(len(img.Pix)))
	for b.Loop() {
		FrameHash(img)
	}
}

func BenchmarkDownscale(b *testing.B) {
	cases := []struct {
		name string
		src  func() *image.RGBA
		max  int
	}{
		{"1920x1080-to-1280x720", desktop1080, 1280},
		{"1920x1080-to-1024x576", desktop1080, 1024},
		{"3840x2160-to-1920x1080", func() *image.RGBA { return desktopFrame(3840, 2160) }, 1920},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			src := c.src()
			w, h := FitSize(src.Rect.Dx(), src.Rect.Dy(), c.max)
			dst := image.NewRGBA(image.Rect(0, 0, w, h))
			b.ResetTimer()
			for b.Loop() {
				ResizeInto(dst, src)
			}
		})
	}
}

type stdPool struct{ e *png.EncoderBuffer }

func (p *stdPool) Get() *png.EncoderBuffer  { return p.e }
func (p *stdPool) Put(e *png.EncoderBuffer) { p.e = e }

func BenchmarkEncodePNG(b *testing.B) {
	frames := []struct {
		name string
		img  func() *image.RGBA
	}{
		{"desktop", desktop1080},
		{"photo", photo1080},
		{"tile64", func() *image.RGBA { return Crop(desktop1080(), image.Rect(256, 192, 320, 256)) }},
	}
	for _, f := range frames {
		img := f.img()
		for _, level := range []struct {
			name  string
			level png.CompressionLevel
		}{{"stdlib-default", png.DefaultCompression}, {"stdlib-bestspeed", png.BestSpeed}} {
			b.Run(f.name+"/"+level.name, func(b *testing.B) {
				enc := png.Encoder{CompressionLevel: level.level, BufferPool: new(stdPool)}
				var buf bytes.Buffer
				for b.Loop() {
					buf.Reset()
					if err := enc.Encode(&buf, img); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(buf.Len()), "bytes")
			})
		}
		b.Run(f.name+"/imaging", func(b *testing.B) {
			var out []byte
			for b.Loop() {
				var err error
				if out, err = EncodePNG(out[:0], img); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(out)), "bytes")
		})
	}
}

func BenchmarkEncodeJPEG(b *testing.B) {
	for _, f := range []struct {
		name string
		img  *image.RGBA
	}{
		{"desktop", desktop1080()},
		{"tile64", Crop(desktop1080(), image.Rect(256, 192, 320, 256))},
	} {
		b.Run(f.name+"/q75", func(b *testing.B) {
			var out []byte
			for b.Loop() {
				var err error
				if out, err = EncodeJPEG(out[:0], f.img, 75); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(out)), "bytes")
		})
	}
}

func BenchmarkDiffTiles(b *testing.B) {
	prev := desktop1080()
	typed := cloneRGBA(prev)
	// A few characters typed into a field: two or three tiles.
	fill(typed, image.Rect(440, 668, 520, 690), color.RGBA{20, 20, 20, 255})
	other := photo1080()
	for _, c := range []struct {
		name string
		cur  *image.RGBA
	}{{"identical", cloneRGBA(prev)}, {"typing", typed}, {"all-changed", other}} {
		b.Run(c.name, func(b *testing.B) {
			var tiles []image.Rectangle
			for b.Loop() {
				tiles = DiffTiles(prev, c.cur, TileSize, tiles)
			}
			b.ReportMetric(float64(len(tiles)), "tiles")
		})
	}
}

func BenchmarkComposite(b *testing.B) {
	dst := cloneRGBA(desktop1080())
	rgba := Crop(photo1080(), image.Rect(0, 0, 64, 64))
	data, err := EncodeJPEG(nil, rgba, 75)
	if err != nil {
		b.Fatal(err)
	}
	ycbcr, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		tile image.Image
	}{{"rgba64", rgba}, {"ycbcr64", ycbcr}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Composite(dst, c.tile, image.Pt(640, 320))
			}
		})
	}
}
