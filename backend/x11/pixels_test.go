package x11

import (
	"encoding/binary"
	"image/color"
	"math/rand/v2"
	"testing"
)

// encodePixel lays out c in format f, the way a server would.
func encodePixel(f pixelFormat, c color.RGBA) []byte {
	enc := func(ch channel, v uint8) uint32 {
		x := uint32(v)
		if ch.bits < 8 {
			x >>= 8 - ch.bits
		} else {
			x <<= ch.bits - 8
		}
		return x << ch.shift & ch.mask
	}
	v := enc(f.r, c.R) | enc(f.g, c.G) | enc(f.b, c.B)
	b := make([]byte, 4)
	if f.msb {
		binary.BigEndian.PutUint32(b, v)
		return b[4-f.bpp/8:]
	}
	binary.LittleEndian.PutUint32(b, v)
	return b[:f.bpp/8]
}

func format(bpp int, msb bool, r, g, b uint32) pixelFormat {
	return pixelFormat{bpp: bpp, pad: 32, msb: msb, r: newChannel(r), g: newChannel(g), b: newChannel(b)}
}

// TestConvertFormats converts a random image in every layout a server may
// use, checks the colours (to the channels' precision) and checks each
// fast loop against the general one.
func TestConvertFormats(t *testing.T) {
	cases := []struct {
		name string
		f    pixelFormat
		lay  layout
		tol  int // largest error per channel
	}{
		{"bgrx", format(32, false, 0xff0000, 0xff00, 0xff), layoutBGRX, 0},
		{"xrgb-msb", format(32, true, 0xff0000, 0xff00, 0xff), layoutXRGB, 0},
		{"rgbx", format(32, false, 0xff, 0xff00, 0xff0000), layoutRGBX, 0},
		{"xbgr-msb", format(32, true, 0xff, 0xff00, 0xff0000), layoutGeneral, 0},
		{"rgb24", format(24, false, 0xff0000, 0xff00, 0xff), layoutGeneral, 0},
		{"rgb24-msb", format(24, true, 0xff0000, 0xff00, 0xff), layoutGeneral, 0},
		{"rgb565", format(16, false, 0xf800, 0x7e0, 0x1f), layoutGeneral, 8},
		{"rgb565-msb", format(16, true, 0xf800, 0x7e0, 0x1f), layoutGeneral, 8},
		{"rgb555", format(16, false, 0x7c00, 0x3e0, 0x1f), layoutGeneral, 8},
		{"rgb30", format(32, false, 0x3ff00000, 0xffc00, 0x3ff), layoutGeneral, 0},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.f.layout(); got != c.lay {
				t.Fatalf("layout %d, want %d", got, c.lay)
			}
			const w, h = 37, 5 // odd width: rows are padded
			stride := c.f.stride(w)
			if stride%4 != 0 || stride < w*c.f.bpp/8 {
				t.Fatalf("stride %d", stride)
			}
			src := make([]byte, stride*h)
			want := make([]color.RGBA, w*h)
			for y := range h {
				for x := range w {
					col := color.RGBA{uint8(rng.Uint32()), uint8(rng.Uint32()), uint8(rng.Uint32()), 255}
					want[y*w+x] = col
					copy(src[y*stride+x*c.f.bpp/8:], encodePixel(c.f, col))
				}
			}
			fast := make([]byte, 4*w*h)
			c.f.convert(fast, 4*w, src, stride, w, h)
			general := make([]byte, 4*w*h)
			for y := range h {
				c.f.convertGeneral(general[y*4*w:], src[y*stride:], w)
			}
			if string(fast) != string(general) {
				t.Fatal("fast path and general path differ")
			}
			for i, col := range want {
				got := fast[4*i : 4*i+4]
				for ch, v := range []uint8{col.R, col.G, col.B} {
					if d := int(got[ch]) - int(v); d < -c.tol || d > c.tol {
						t.Fatalf("pixel %d channel %d: got %d want %d", i, ch, got[ch], v)
					}
				}
				if got[3] != 255 {
					t.Fatalf("pixel %d alpha %d", i, got[3])
				}
			}
		})
	}
}

// TestConvertParallel checks that a frame large enough to be split between
// goroutines converts like one converted in one piece.
func TestConvertParallel(t *testing.T) {
	f := format(32, false, 0xff0000, 0xff00, 0xff)
	const w, h = 1000, 700
	src := make([]byte, 4*w*h)
	for i := range src {
		src[i] = byte(i * 7)
	}
	whole := make([]byte, 4*w*h)
	f.convertRows(whole, 4*w, src, 4*w, w, h)
	split := make([]byte, 4*w*h)
	f.convert(split, 4*w, src, 4*w, w, h)
	if string(whole) != string(split) {
		t.Fatal("parallel conversion differs")
	}
}

func BenchmarkConvert1080p(b *testing.B) {
	f := format(32, false, 0xff0000, 0xff00, 0xff)
	const w, h = 1920, 1080
	src := make([]byte, 4*w*h)
	dst := make([]byte, 4*w*h)
	b.SetBytes(4 * w * h)
	for b.Loop() {
		f.convert(dst, 4*w, src, 4*w, w, h)
	}
}
