package imaging

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
	"math"
	"testing"
)

func TestEncodeJPEG(t *testing.T) {
	src := Crop(desktop1080(), image.Rect(1250, 80, 1850, 500)) // the photo
	var sizes []int
	for _, q := range []int{10, 75, 95} {
		data, err := EncodeJPEG([]byte("pre"), src, q)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte("pre\xff\xd8")) {
			t.Fatalf("q%d: output does not follow dst", q)
		}
		img, err := jpeg.Decode(bytes.NewReader(data[3:]))
		if err != nil {
			t.Fatalf("q%d: %v", q, err)
		}
		if img.Bounds().Size() != src.Rect.Size() {
			t.Fatalf("q%d: decoded %v", q, img.Bounds())
		}
		// Lossy, but close: mean absolute error per channel.
		var sum float64
		for y := range src.Rect.Dy() {
			for x := range src.Rect.Dx() {
				r0, g0, b0, _ := src.At(src.Rect.Min.X+x, src.Rect.Min.Y+y).RGBA()
				r1, g1, b1, _ := img.At(x, y).RGBA()
				sum += math.Abs(float64(r0>>8)-float64(r1>>8)) + math.Abs(float64(g0>>8)-float64(g1>>8)) + math.Abs(float64(b0>>8)-float64(b1>>8))
			}
		}
		if mae := sum / float64(3*src.Rect.Dx()*src.Rect.Dy()); mae > 12 {
			t.Fatalf("q%d: mean error %.1f", q, mae)
		}
		sizes = append(sizes, len(data))
	}
	if !(sizes[0] < sizes[1] && sizes[1] < sizes[2]) {
		t.Fatalf("sizes do not grow with quality: %v", sizes)
	}

	// Quality outside 1–100: the default below, 100 above.
	def, _ := EncodeJPEG(nil, src, 0)
	q75, _ := EncodeJPEG(nil, src, 75)
	over, _ := EncodeJPEG(nil, src, 1000)
	q100, _ := EncodeJPEG(nil, src, 100)
	if !bytes.Equal(def, q75) || !bytes.Equal(over, q100) {
		t.Fatal("quality is not normalised")
	}

	if out, err := EncodeJPEG([]byte("x"), image.NewRGBA(image.Rect(0, 0, 0, 3)), 75); !errors.Is(err, ErrEmptyImage) || string(out) != "x" {
		t.Fatalf("empty image: %q, %v", out, err)
	}
	if _, err := EncodeJPEG(nil, image.NewRGBA(image.Rect(0, 0, 65536, 1)), 75); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("65536 wide: %v, want ErrTooLarge", err)
	}
}
