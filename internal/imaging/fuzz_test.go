package imaging

import (
	"image"
	"testing"
)

// FuzzEncodePNG checks that every image EncodePNG writes decodes with
// image/png to exactly its pixels. The inputs choose the size, a sub-image
// offset (so Min and Stride vary), opacity, whether the image is tall enough
// to be split into several bands, and the pixel bytes, which repeat to fill
// the image.
func FuzzEncodePNG(f *testing.F) {
	f.Fuzz(func(t *testing.T, w, h, offX, offY uint8, opaque, tall bool, pix []byte) {
		width, height := int(w)%40+1, int(h)%40+1
		if tall {
			// Past one band (pngBandBytes) of RGBA rows of this width.
			width, height = 200+int(w)%56, 600+2*int(h)
		}
		dx, dy := int(offX)%4, int(offY)%4
		parent := image.NewRGBA(image.Rect(-2, -3, width+2, height+1))
		for i := 0; i < len(parent.Pix) && len(pix) > 0; i += 4 {
			for c := range 4 {
				parent.Pix[i+c] = pix[(i+c)%len(pix)]
			}
			if opaque {
				parent.Pix[i+3] = 255
			}
			for c := range 3 {
				// Premultiplied colour cannot exceed alpha.
				parent.Pix[i+c] = min(parent.Pix[i+c], parent.Pix[i+3])
			}
		}
		img := Crop(parent, image.Rect(-2+dx, -3+dy, -2+dx+width, -3+dy+height))
		if img.Rect.Dx() != width || img.Rect.Dy() != height {
			t.Fatalf("test setup: %v", img.Rect)
		}
		data, err := EncodePNG(nil, img)
		if err != nil {
			t.Fatal(err)
		}
		checkPNG(t, data, img)
	})
}
