package imaging

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"
)

func TestFitSize(t *testing.T) {
	cases := []struct{ w, h, max, wantW, wantH int }{
		{1920, 1080, 1280, 1280, 720},
		{1080, 1920, 1280, 720, 1280},
		{1920, 1080, 1920, 1920, 1080}, // fits exactly
		{1920, 1080, 4000, 1920, 1080},
		{1920, 1080, 0, 1920, 1080}, // no limit
		{1920, 1080, -5, 1920, 1080},
		{1000, 1000, 500, 500, 500},
		{4, 2, 3, 3, 2},  // 1.5 rounds up
		{8, 3, 4, 4, 2},  // 1.5 rounds up
		{10, 3, 4, 4, 1}, // 1.2 rounds down
		{1000, 1, 10, 10, 1},
		{3, 1000, 10, 1, 10}, // 0.03 is at least 1
		{1920, 1080, 1, 1, 1},
		{2560, 1600, 1568, 1568, 980},
		{1366, 768, 1024, 1024, 576},
	}
	for _, c := range cases {
		if w, h := FitSize(c.w, c.h, c.max); w != c.wantW || h != c.wantH {
			t.Errorf("FitSize(%d, %d, %d) = %d×%d, want %d×%d", c.w, c.h, c.max, w, h, c.wantW, c.wantH)
		}
	}
}

func TestDownscaleReturnsSourceWhenItFits(t *testing.T) {
	img := Crop(solidImage(40, 30, color.RGBA{1, 2, 3, 255}), image.Rect(5, 5, 25, 15))
	for _, max := range []int{0, 20, 21, 1000} {
		if got := Downscale(img, max); got != img {
			t.Errorf("Downscale(20×10, %d) made a new image", max)
		}
	}
	got := Downscale(img, 10)
	if got.Rect != image.Rect(0, 0, 10, 5) {
		t.Fatalf("Downscale(20×10, 10) bounds %v", got.Rect)
	}
}

func TestDownscaleHalvesExactly(t *testing.T) {
	// An exact 2:1 reduction is the rounded mean of each 2×2 block.
	rng := rand.New(rand.NewPCG(21, 22))
	for _, alpha := range []bool{false, true} {
		src := randomImage(rng, image.Point{}, 64, 38, alpha)
		dst := Downscale(src, 32)
		if dst.Rect != image.Rect(0, 0, 32, 19) {
			t.Fatalf("bounds %v", dst.Rect)
		}
		for y := range 19 {
			for x := range 32 {
				for c := range 4 {
					sum := 0
					for _, p := range []image.Point{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
						sum += int(src.Pix[src.PixOffset(2*x+p.X, 2*y+p.Y)+c])
					}
					if got, want := dst.Pix[dst.PixOffset(x, y)+c], uint8((sum+2)/4); got != want {
						t.Fatalf("pixel (%d,%d) channel %d = %d, want %d", x, y, c, got, want)
					}
				}
			}
		}
	}
}

func TestDownscaleKeepsSolidColours(t *testing.T) {
	colours := []color.RGBA{{0, 0, 0, 255}, {255, 255, 255, 255}, {12, 200, 99, 255}, {1, 254, 128, 0}, {255, 255, 255, 255}}
	sizes := [][4]int{{1920, 1080, 1280, 720}, {1000, 333, 7, 5}, {97, 89, 13, 11}, {5, 3, 4, 3}, {3, 3, 1, 1}, {7, 5, 7, 2}}
	for _, c := range colours {
		for _, s := range sizes {
			src := solidImage(s[0], s[1], c)
			dst := image.NewRGBA(image.Rect(0, 0, s[2], s[3]))
			ResizeInto(dst, src)
			for i := 0; i < len(dst.Pix); i += 4 {
				if got := (color.RGBA{dst.Pix[i], dst.Pix[i+1], dst.Pix[i+2], dst.Pix[i+3]}); got != c {
					t.Fatalf("%v at %v→%v: pixel %d = %v", c, s[:2], s[2:], i/4, got)
				}
			}
		}
	}
}

// referenceResize is area averaging in float64, straight from the
// definition: each destination pixel is the mean of the source area it
// covers.
func referenceResize(src *image.RGBA, dw, dh int) [][4]float64 {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	sx, sy := float64(sw)/float64(dw), float64(sh)/float64(dh)
	out := make([][4]float64, dw*dh)
	for y := range dh {
		for x := range dw {
			var sum [4]float64
			y0, y1 := float64(y)*sy, float64(y+1)*sy
			x0, x1 := float64(x)*sx, float64(x+1)*sx
			for j := int(y0); float64(j) < y1 && j < sh; j++ {
				wy := math.Min(y1, float64(j+1)) - math.Max(y0, float64(j))
				for i := int(x0); float64(i) < x1 && i < sw; i++ {
					wx := math.Min(x1, float64(i+1)) - math.Max(x0, float64(i))
					p := src.Pix[src.PixOffset(src.Rect.Min.X+i, src.Rect.Min.Y+j):]
					for c := range 4 {
						sum[c] += wx * wy * float64(p[c])
					}
				}
			}
			for c := range 4 {
				out[y*dw+x][c] = sum[c] / (sx * sy)
			}
		}
	}
	return out
}

func TestResizeMatchesAreaAverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	sizes := [][4]int{{300, 200, 200, 133}, {97, 61, 13, 60}, {128, 128, 100, 100}, {1920, 1080, 1024, 576}, {101, 7, 100, 3}, {50, 50, 7, 1}, {10, 10, 30, 20}}
	for _, s := range sizes {
		t.Run(fmt.Sprint(s), func(t *testing.T) {
			src := inset(rng, s[0], s[1], true)
			dst := Crop(image.NewRGBA(image.Rect(-3, -3, s[2]+4, s[3]+5)), image.Rect(1, 2, 1+s[2], 2+s[3]))
			ResizeInto(dst, src)
			want := referenceResize(src, s[2], s[3])
			worst := 0.0
			for y := range s[3] {
				for x := range s[2] {
					p := dst.Pix[dst.PixOffset(dst.Rect.Min.X+x, dst.Rect.Min.Y+y):]
					for c := range 4 {
						worst = math.Max(worst, math.Abs(float64(p[c])-want[y*s[2]+x][c]))
					}
				}
			}
			// Rounding alone allows 0.5; weight quantisation a little more.
			if worst > 1 {
				t.Fatalf("worst channel error %.3f", worst)
			}
		})
	}
}

func TestDownscaleIsNotNearestNeighbour(t *testing.T) {
	// A one-pixel checkerboard halved must become an even grey, not black or
	// white, and a one-pixel line must survive as a fainter line.
	board := image.NewRGBA(image.Rect(0, 0, 90, 60))
	for y := range 60 {
		for x := range 90 {
			v := uint8(255 * ((x + y) % 2))
			board.SetRGBA(x, y, color.RGBA{v, v, v, 255})
		}
	}
	for _, p := range Downscale(board, 45).Pix {
		if p != 128 && p != 255 {
			t.Fatalf("checkerboard gave %d", p)
		}
	}
	line := solidImage(90, 60, color.RGBA{255, 255, 255, 255})
	for x := range 90 {
		line.SetRGBA(x, 31, color.RGBA{0, 0, 0, 255})
	}
	small := Downscale(line, 60)
	if v := small.RGBAAt(10, 20).R; v < 85 || v > 171 {
		t.Fatalf("a 1px line at 1.5:1 became %d, want a mid grey", v)
	}
}

func TestResizeIntoEmpty(t *testing.T) {
	dst := solidImage(3, 2, color.RGBA{1, 2, 3, 4})
	ResizeInto(dst, image.NewRGBA(image.Rectangle{}))
	for _, p := range dst.Pix {
		if p != 0 {
			t.Fatalf("an empty source left %v", dst.Pix)
		}
	}
	// An empty destination is left alone.
	ResizeInto(image.NewRGBA(image.Rect(0, 0, 0, 4)), solidImage(5, 5, color.RGBA{}))
}

func TestHalvingMatchesGeneralPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for _, alpha := range []bool{false, true} {
		src := inset(rng, 322, 86, alpha)
		fast := image.NewRGBA(image.Rect(0, 0, 161, 43))
		ResizeInto(fast, src)
		slow := image.NewRGBA(image.Rect(0, 0, 161, 43))
		resizeArea(slow, src, 3)
		if !bytes.Equal(fast.Pix, slow.Pix) {
			t.Fatalf("alpha %v: the 2:1 path and the general path differ", alpha)
		}
	}
}
