package imaging

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"testing"
)

// checkPNG decodes data with image/png and checks that it holds exactly
// img's pixels: the same bytes for an opaque image, and otherwise the
// straight-alpha form color.NRGBAModel gives for each pixel.
func checkPNG(t *testing.T, data []byte, img *image.RGBA) {
	t.Helper()
	got, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	w, h := img.Rect.Dx(), img.Rect.Dy()
	if got.Bounds() != image.Rect(0, 0, w, h) {
		t.Fatalf("decoded bounds %v, want %dx%d", got.Bounds(), w, h)
	}
	colourType := data[25]
	switch g := got.(type) {
	case *image.RGBA:
		if colourType != 2 {
			t.Fatalf("colour type %d decoded as RGBA", colourType)
		}
		for y := range h {
			want := img.Pix[img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y):][:4*w]
			if row := g.Pix[g.PixOffset(0, y):][:4*w]; !bytes.Equal(row, want) {
				t.Fatalf("row %d differs", y)
			}
		}
	case *image.NRGBA:
		if colourType != 6 {
			t.Fatalf("colour type %d decoded as NRGBA", colourType)
		}
		for y := range h {
			src := img.Pix[img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y):][:4*w]
			got := g.Pix[g.PixOffset(0, y):][:4*w]
			for x := range w {
				p, q := src[4*x:4*x+4], got[4*x:4*x+4]
				want := color.NRGBA{p[0], p[1], p[2], p[3]} // opaque: the same
				if p[3] != 255 {
					want = color.NRGBAModel.Convert(color.RGBA{p[0], p[1], p[2], p[3]}).(color.NRGBA)
				}
				if c := (color.NRGBA{q[0], q[1], q[2], q[3]}); c != want {
					t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, c, want)
				}
			}
		}
	default:
		t.Fatalf("decoded as %T", got)
	}
}

// idatStream returns the concatenated IDAT data of a PNG and the number of
// IDAT chunks.
func idatStream(t *testing.T, data []byte) ([]byte, int) {
	t.Helper()
	var stream []byte
	n := 0
	for p := data[8:]; len(p) >= 12; {
		l := int(binary.BigEndian.Uint32(p))
		if string(p[4:8]) == "IDAT" {
			stream = append(stream, p[8:8+l]...)
			n++
		}
		p = p[12+l:]
	}
	return stream, n
}

func TestEncodePNGRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	desk := desktop1080()
	cases := []struct {
		name string
		img  *image.RGBA
	}{
		{"1x1 opaque", solidImage(1, 1, color.RGBA{1, 2, 3, 255})},
		{"1x1 transparent", solidImage(1, 1, color.RGBA{})},
		{"1x1 translucent", solidImage(1, 1, color.RGBA{10, 20, 30, 40})},
		{"2x1", randomImage(rng, image.Point{}, 2, 1, false)},
		{"1x7", randomImage(rng, image.Point{}, 1, 7, false)},
		{"3x5", randomImage(rng, image.Point{}, 3, 5, false)},
		{"17x9 alpha", randomImage(rng, image.Point{}, 17, 9, true)},
		{"63x65", randomImage(rng, image.Point{}, 63, 65, false)},
		{"257x3 alpha", randomImage(rng, image.Point{}, 257, 3, true)},
		{"noise 640x480", randomImage(rng, image.Point{}, 640, 480, false)},
		{"noise alpha 333x555", randomImage(rng, image.Point{}, 333, 555, true)},
		{"negative origin", randomImage(rng, image.Pt(-50, -20), 31, 29, false)},
		{"sub-image", inset(rng, 45, 37, false)},
		{"sub-image alpha", inset(rng, 45, 37, true)},
		{"desktop", desk},
		{"desktop crop", Crop(desk, image.Rect(333, 77, 1111, 901))},
		{"desktop tile", Crop(desk, image.Rect(1856, 1024, 1920, 1080))},
		{"all transparent", solidImage(100, 100, color.RGBA{})},
		{"solid", solidImage(1000, 700, color.RGBA{200, 100, 50, 255})},
		{"tall alpha bands", randomImage(rng, image.Point{}, 150, 3000, true)},
		{"photo bands", Crop(photo1080(), image.Rect(0, 100, 1920, 500))},
	}
	// One translucent pixel in an opaque frame must switch to RGBA.
	hole := cloneRGBA(desk)
	hole.SetRGBA(1919, 1079, color.RGBA{0, 0, 0, 0})
	cases = append(cases, struct {
		name string
		img  *image.RGBA
	}{"desktop last pixel clear", hole})

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data, err := EncodePNG(nil, tc.img)
			if err != nil {
				t.Fatal(err)
			}
			checkPNG(t, data, tc.img)

			// The IDAT chunks must form one zlib stream whose checksum,
			// combined from the bands', is right: zlib verifies it at EOF.
			stream, chunks := idatStream(t, data)
			zr, err := zlib.NewReader(bytes.NewReader(stream))
			if err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(zr)
			if err != nil {
				t.Fatalf("zlib stream across %d chunks: %v", chunks, err)
			}
			bpp := 3
			if data[25] == 6 {
				bpp = 4
			}
			if want := tc.img.Rect.Dy() * (1 + bpp*tc.img.Rect.Dx()); len(raw) != want {
				t.Fatalf("%d filtered bytes, want %d", len(raw), want)
			}
		})
	}
}

func TestEncodePNGBands(t *testing.T) {
	// A frame larger than one band must be split, or the parallel path and
	// the checksum combination go untested.
	data, err := EncodePNG(nil, desktop1080())
	if err != nil {
		t.Fatal(err)
	}
	if _, n := idatStream(t, data); n < 2 {
		t.Fatalf("%d IDAT chunks for a 1080p frame, want several bands", n)
	}
}

func TestEncodePNGCompressesPhotos(t *testing.T) {
	// The fast level stores windows in which it finds no match; the band
	// then falls back to Huffman coding, which must shrink grainy pictures
	// well below their filtered size (1 + 3·1920 bytes a row).
	data, err := EncodePNG(nil, photo1080())
	if err != nil {
		t.Fatal(err)
	}
	raw := 1080 * (1 + 3*1920)
	if len(data) > raw*3/4 {
		t.Fatalf("%d bytes for %d filtered bytes of photo", len(data), raw)
	}
}

func TestEncodePNGAppends(t *testing.T) {
	img := randomImage(rand.New(rand.NewPCG(5, 6)), image.Point{}, 20, 10, false)
	prefix := []byte("prefix")
	data, err := EncodePNG(prefix, img)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("prefix\x89PNG")) {
		t.Fatalf("output does not follow dst: %q", data[:12])
	}
	checkPNG(t, data[len(prefix):], img)
	want := bytes.Clone(data[len(prefix):])
	again, err := EncodePNG(data[:0], img)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, want) {
		t.Fatal("encoding is not deterministic")
	}
}

func TestEncodePNGEmpty(t *testing.T) {
	for _, r := range []image.Rectangle{{}, image.Rect(0, 0, 0, 5), image.Rect(3, 3, 9, 3)} {
		out, err := EncodePNG([]byte("x"), image.NewRGBA(r))
		if !errors.Is(err, ErrEmptyImage) || string(out) != "x" {
			t.Errorf("%v: got %q, %v; want dst unchanged and ErrEmptyImage", r, out, err)
		}
	}
}

func TestEncodePNGTooLarge(t *testing.T) {
	// The size is checked before any pixel is read, so the image needs no
	// pixels to be rejected.
	huge := &image.RGBA{Rect: image.Rect(0, 0, 1<<27, 1), Stride: 1 << 29}
	if _, err := EncodePNG(nil, huge); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
}

func TestUnpremultiplyMatchesColorModel(t *testing.T) {
	for a := range 256 {
		for c := 0; c <= a; c++ {
			src := []byte{uint8(c), uint8(c / 2), uint8(a - c), uint8(a)}
			var got [4]byte
			unpremultiply(got[:], src)
			want := color.NRGBAModel.Convert(color.RGBA{src[0], src[1], src[2], src[3]}).(color.NRGBA)
			if got != [4]byte{want.R, want.G, want.B, want.A} {
				t.Fatalf("unpremultiply(%v) = %v, want %v", src, got, want)
			}
		}
	}
	// Not premultiplied: saturate rather than wrap.
	var got [4]byte
	unpremultiply(got[:], []byte{200, 0, 0, 100})
	if got != [4]byte{255, 0, 0, 100} {
		t.Fatalf("invalid pixel unpremultiplied to %v", got)
	}
}

func TestFilters(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 100} {
		cur := randomImage(rng, image.Point{}, n, 1, true).Pix
		prev := randomImage(rng, image.Point{}, n, 1, true).Pix
		up := make([]byte, 4*n)
		filterUp(up, cur, prev)
		rgb := make([]byte, 3*n)
		filterUpRGB(rgb, cur, prev)
		packed := make([]byte, 3*n)
		packRGB(packed, cur)
		for i := range n {
			for c := range 4 {
				if want := cur[4*i+c] - prev[4*i+c]; up[4*i+c] != want {
					t.Fatalf("n=%d: filterUp byte %d = %d, want %d", n, 4*i+c, up[4*i+c], want)
				}
			}
			for c := range 3 {
				if want := cur[4*i+c] - prev[4*i+c]; rgb[3*i+c] != want {
					t.Fatalf("n=%d: filterUpRGB byte %d = %d, want %d", n, 3*i+c, rgb[3*i+c], want)
				}
				if packed[3*i+c] != cur[4*i+c] {
					t.Fatalf("n=%d: packRGB byte %d wrong", n, 3*i+c)
				}
			}
		}
	}
}

func TestAdler32Combine(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 2, 100, 5552, 65520, 65521, 65522, 200000} {
		data := make([]byte, n)
		for i := range data {
			data[i] = uint8(rng.IntN(256))
		}
		if n > 1000 {
			// Long runs of 0xff push the sums towards the modulus.
			for i := range data[:n/2] {
				data[i] = 0xff
			}
		}
		for _, cut := range []int{0, n / 3, n / 2, n} {
			t.Run(fmt.Sprint(n, "/", cut), func(t *testing.T) {
				a1, a2 := adler32.Checksum(data[:cut]), adler32.Checksum(data[cut:])
				if got, want := adler32Combine(a1, a2, int64(n-cut)), adler32.Checksum(data); got != want {
					t.Fatalf("combine = %08x, want %08x", got, want)
				}
			})
		}
	}
}
