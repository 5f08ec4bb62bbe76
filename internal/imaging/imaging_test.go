package imaging

import (
	"image"
	"image/color"
	"math/rand/v2"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// randomImage returns a w×h image of random pixels with bounds starting at
// min. With alpha, pixels have random alpha and valid premultiplied colour
// (no channel above alpha), and some are fully transparent or opaque.
func randomImage(rng *rand.Rand, min image.Point, w, h int, alpha bool) *image.RGBA {
	img := image.NewRGBA(image.Rectangle{min, min.Add(image.Pt(w, h))})
	for i := 0; i < len(img.Pix); i += 4 {
		a := uint8(255)
		if alpha {
			switch rng.IntN(4) {
			case 0:
				a = 0
			case 1:
				a = 255
			default:
				a = uint8(rng.IntN(256))
			}
		}
		img.Pix[i+0] = uint8(rng.IntN(int(a) + 1))
		img.Pix[i+1] = uint8(rng.IntN(int(a) + 1))
		img.Pix[i+2] = uint8(rng.IntN(int(a) + 1))
		img.Pix[i+3] = a
	}
	return img
}

// solidImage returns a w×h image filled with c.
func solidImage(w, h int, c color.RGBA) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	return img
}

// cloneRGBA returns a copy of img with its own pixels and the same bounds.
func cloneRGBA(img *image.RGBA) *image.RGBA {
	out := image.NewRGBA(img.Rect)
	for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
		copy(out.Pix[out.PixOffset(out.Rect.Min.X, y):][:4*img.Rect.Dx()], img.Pix[img.PixOffset(img.Rect.Min.X, y):])
	}
	return out
}

// inset returns a sub-image of a larger random frame, so that its Min is not
// the origin and its Stride exceeds its width.
func inset(rng *rand.Rand, w, h int, alpha bool) *image.RGBA {
	big := randomImage(rng, image.Pt(-7, 11), w+13, h+5, alpha)
	return Crop(big, image.Rect(-2, 13, -2+w, 13+h))
}
