package imaging

import (
	"image"
	"image/color"
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/zeebo/xxh3"
)

// referenceHash is FrameHash written straight from its documented
// definition, with no streaming, pooling or parallelism.
func referenceHash(img *image.RGBA) Hash {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	rgb := make([]byte, 0, 3*w*h)
	for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
		row := img.Pix[img.PixOffset(img.Rect.Min.X, y):][:4*w]
		for x := range w {
			rgb = append(rgb, row[4*x], row[4*x+1], row[4*x+2])
		}
	}
	u := xxh3.Hash128Seed(rgb, uint64(w)<<32|uint64(h))
	var out Hash
	for i := range 8 {
		out[i] = byte(u.Hi >> (56 - 8*i))
		out[8+i] = byte(u.Lo >> (56 - 8*i))
	}
	return out
}

// goldenImage is a fixed 3×2 image: pixel (x, y) is (10x+y, 20+x, 30+y, 255).
func goldenImage() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	for y := range 2 {
		for x := range 3 {
			img.SetRGBA(x, y, color.RGBA{uint8(10*x + y), uint8(20 + x), uint8(30 + y), 255})
		}
	}
	return img
}

func TestFrameHashGolden(t *testing.T) {
	// The value is on the wire: a change here breaks dedup against frames
	// hashed by other builds, and must be a deliberate protocol decision.
	const want = "aff97e9a35e7ff6639db66af123b4d5a"
	got := FrameHash(goldenImage()).String()
	if got != want {
		t.Fatalf("FrameHash(golden) = %s, want %s", got, want)
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(got) {
		t.Fatalf("%q is not 32 lowercase hex digits", got)
	}
}

func TestFrameHashMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	desk := desktop1080()
	cases := map[string]*image.RGBA{
		"1x1":            randomImage(rng, image.Point{}, 1, 1, false),
		"3x2":            goldenImage(),
		"odd":            randomImage(rng, image.Point{}, 37, 23, true),
		"one chunk":      randomImage(rng, image.Point{}, 300, 27, false),
		"several chunks": randomImage(rng, image.Point{}, 300, 200, false),
		"sub-image":      inset(rng, 301, 203, false),
		"wide row":       randomImage(rng, image.Point{}, 9000, 3, false),
		"desktop":        desk,
		"desktop crop":   Crop(desk, image.Rect(1, 3, 1900, 1077)),
		"photo":          photo1080(),
	}
	for name, img := range cases {
		if got, want := FrameHash(img), referenceHash(img); got != want {
			t.Errorf("%s: FrameHash = %s, definition gives %s", name, got, want)
		}
	}
}

func TestFrameHashSensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	base := randomImage(rng, image.Point{}, 64, 48, false)
	h0 := FrameHash(base)
	for _, p := range []image.Point{{0, 0}, {63, 47}, {31, 20}} {
		for c := range 3 {
			img := cloneRGBA(base)
			img.Pix[img.PixOffset(p.X, p.Y)+c]++
			if FrameHash(img) == h0 {
				t.Errorf("changing channel %d of %v left the hash unchanged", c, p)
			}
		}
		img := cloneRGBA(base)
		img.Pix[img.PixOffset(p.X, p.Y)+3] = 7
		if FrameHash(img) != h0 {
			t.Errorf("changing the alpha of %v changed the hash", p)
		}
	}

	// The same RGB bytes in other dimensions hash differently.
	a := randomImage(rng, image.Point{}, 6, 4, false)
	b := &image.RGBA{Pix: a.Pix, Stride: 4 * 4, Rect: image.Rect(0, 0, 4, 6)}
	c := &image.RGBA{Pix: a.Pix, Stride: 4 * 24, Rect: image.Rect(0, 0, 24, 1)}
	if FrameHash(a) == FrameHash(b) || FrameHash(a) == FrameHash(c) || FrameHash(b) == FrameHash(c) {
		t.Error("dimensions do not change the hash")
	}

	// Position does not matter, only pixels: a sub-image hashes like a copy.
	sub := inset(rng, 20, 10, false)
	if FrameHash(sub) != FrameHash(cloneRGBA(sub)) {
		t.Error("a sub-image and its copy hash differently")
	}
	empty := FrameHash(image.NewRGBA(image.Rectangle{}))
	if empty == (Hash{}) || empty != referenceHash(image.NewRGBA(image.Rectangle{})) {
		t.Errorf("empty image hash %s", empty)
	}
}
