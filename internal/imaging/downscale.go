package imaging

import (
	"encoding/binary"
	"image"
	"sync"
)

// FitSize returns the size at which a w×h frame is delivered under a
// max_long_edge of maxLongEdge: unchanged when its longer edge already fits
// (or maxLongEdge ≤ 0, meaning no limit); otherwise the longer edge becomes
// maxLongEdge and the shorter keeps the aspect ratio, rounded to the nearest
// pixel (halves up) and at least 1. A square frame keeps both edges equal.
func FitSize(w, h, maxLongEdge int) (int, int) {
	if maxLongEdge <= 0 || max(w, h) <= maxLongEdge {
		return w, h
	}
	scale := func(short, long int) int {
		return max(1, int((2*int64(short)*int64(maxLongEdge)+int64(long))/(2*int64(long))))
	}
	if w >= h {
		return maxLongEdge, scale(h, w)
	}
	return scale(w, h), maxLongEdge
}

// Downscale returns src reduced by [ResizeInto] to the size [FitSize]
// gives, in a new image whose bounds start at (0, 0). When src already fits
// it returns src itself, whatever its bounds, and allocates nothing.
func Downscale(src *image.RGBA, maxLongEdge int) *image.RGBA {
	w, h := src.Rect.Dx(), src.Rect.Dy()
	dw, dh := FitSize(w, h, maxLongEdge)
	if dw == w && dh == h {
		return src
	}
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	ResizeInto(dst, src)
	return dst
}

// ResizeInto fills all of dst.Rect with src.Rect resampled by area
// averaging: each destination pixel is the mean of the source area it
// covers, source pixels weighted by the exact fraction of them that falls
// inside it (quantised to 1/4096 on each axis; the result is rounded to
// nearest). A solid area stays exactly its colour and an exact
// 2:1 reduction is the rounded mean of each 2×2 block. Both images may be
// sub-images. It is meant for reductions; enlarging works but blurs like a
// bilinear filter would. An empty src leaves dst transparent black.
//
// Area averaging, unlike nearest-neighbour or point-sampled bilinear
// filtering, lets every source pixel count, so one-pixel strokes of UI text
// turn into lighter strokes instead of vanishing or breaking up.
//
// The filter is separable: each destination row first averages its source
// rows vertically, then horizontally, two channels at a time in the 32-bit
// lanes of a uint64. An exact 2:1 reduction (a HiDPI screen to its logical
// size) takes a path that averages 2×2 blocks directly, five times faster,
// with the same result. Bands of rows run on all cores.
func ResizeInto(dst, src *image.RGBA) {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	dw, dh := dst.Rect.Dx(), dst.Rect.Dy()
	if dw <= 0 || dh <= 0 {
		return
	}
	if sw <= 0 || sh <= 0 {
		for y := range dh {
			clear(dst.Pix[dst.PixOffset(dst.Rect.Min.X, dst.Rect.Min.Y+y):][:4*dw])
		}
		return
	}
	bands := max(1, min(dh, sw*sh/(128<<10)))
	if sw == 2*dw && sh == 2*dh {
		parallel(bands, func(i int) {
			for y := dh * i / bands; y < dh*(i+1)/bands; y++ {
				halveRow(dst, src, y)
			}
		})
		return
	}
	resizeArea(dst, src, bands)
}

// resizeArea is ResizeInto's general path, for non-empty images.
func resizeArea(dst, src *image.RGBA, bands int) {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	dw, dh := dst.Rect.Dx(), dst.Rect.Dy()
	xs := areaWeights(sw, dw, weightBits)
	ys := areaWeights(sh, dh, weightBits)
	parallel(bands, func(i int) {
		p := rowAccs.Get().(*[]uint64)
		if cap(*p) < 2*sw {
			*p = make([]uint64, 2*sw)
		}
		acc := (*p)[:2*sw]
		for y := dh * i / bands; y < dh*(i+1)/bands; y++ {
			verticalPass(acc, src, ys, y)
			off := dst.PixOffset(dst.Rect.Min.X, dst.Rect.Min.Y+y)
			horizontalPass(dst.Pix[off:off+4*dw], acc, xs)
		}
		rowAccs.Put(p)
	})
}

var rowAccs = sync.Pool{New: func() any { return new([]uint64) }}

// halveRow writes destination row y of an exact 2:1 reduction: each pixel
// is the rounded mean of a 2×2 block, (sum + 2) / 4 per channel. Two pixels
// of a source row load as one uint64 whose even and odd bytes separate into
// 16-bit lanes, where four channel values (at most 1020) add up without
// overflow.
func halveRow(dst, src *image.RGBA, y int) {
	const bytes16 = 0x00ff00ff00ff00ff
	dw := dst.Rect.Dx()
	off := src.PixOffset(src.Rect.Min.X, src.Rect.Min.Y+2*y)
	r0 := src.Pix[off : off+8*dw]
	r1 := src.Pix[off+src.Stride : off+src.Stride+8*dw]
	off = dst.PixOffset(dst.Rect.Min.X, dst.Rect.Min.Y+y)
	out := dst.Pix[off : off+4*dw]
	for len(r0) >= 8 && len(r1) >= 8 && len(out) >= 4 {
		a, b := binary.LittleEndian.Uint64(r0), binary.LittleEndian.Uint64(r1)
		even := a&bytes16 + b&bytes16 // R, B of the left pixel, then the right
		odd := a>>8&bytes16 + b>>8&bytes16
		// Fold the right pixel onto the left, round, and divide by four;
		// the mask drops the bits the shift moves across lanes.
		rb := (even + even>>32 + 0x00020002) >> 2 & 0x00ff00ff
		ga := (odd + odd>>32 + 0x00020002) >> 2 & 0x00ff00ff
		binary.LittleEndian.PutUint32(out, uint32(rb|ga<<8))
		r0, r1, out = r0[8:], r1[8:], out[4:]
	}
}

// axisWeights says, for each destination pixel along one axis, which source
// pixels it covers and with what weight. Every destination pixel has the
// same number of taps, padded with zero weights, so the inner loops have a
// fixed trip count the compiler can unroll for the common cases.
type axisWeights struct {
	taps  int
	start []int    // first source pixel of destination pixel i
	w     []uint32 // weights of destination pixel i at [i·taps, (i+1)·taps), summing to 1<<bits
}

// areaWeights returns the area-averaging weights for reducing n source
// pixels to m, in fixed point with the given number of fraction bits.
// Destination pixel i covers [i·n, (i+1)·n) and source pixel j covers
// [j·m, (j+1)·m), both scaled by m·n; weights are the overlaps. They are
// quantised from cumulative sums so that each pixel's add up exactly.
func areaWeights(n, m int, bits uint) axisWeights {
	n64, m64, one := int64(n), int64(m), int64(1)<<bits
	aw := axisWeights{start: make([]int, m)}
	for i := range m {
		lo, hi := int64(i)*n64, int64(i+1)*n64
		first, last := lo/m64, (hi-1)/m64
		aw.taps = max(aw.taps, int(last-first+1))
	}
	aw.w = make([]uint32, m*aw.taps)
	for i := range m {
		lo, hi := int64(i)*n64, int64(i+1)*n64
		first := lo / m64
		// Near the right edge, start earlier so that all taps stay inside
		// the source; the extra leading taps weigh nothing.
		start := min(first, n64-int64(aw.taps))
		aw.start[i] = int(start)
		w := aw.w[i*aw.taps : (i+1)*aw.taps]
		var cum, prev int64
		for j := first; j*m64 < hi; j++ {
			cum += min(hi, (j+1)*m64) - max(lo, j*m64)
			q := (cum*one + n64/2) / n64
			w[j-start] = uint32(q - prev)
			prev = q
		}
	}
	return aw
}

// weightBits is the fixed-point precision of the weights on each axis. A
// channel (8 bits) times a vertical and a horizontal weight (12 bits each)
// uses the 32 bits of a lane: 255·4096·4096 + 2²³ < 2³².
const weightBits = 12

// spreadRB and spreadGA move the channels of an RGBA pixel into the two
// 32-bit lanes of a uint64: R and B, or G and A, each in the low byte of
// its lane. Working on two channels per uint64 halves the arithmetic of a
// per-channel loop without assembly.
func spreadRB(p uint32) uint64 {
	x := uint64(p & 0x00ff00ff)
	return (x | x<<16) & 0x000000ff000000ff
}

func spreadGA(p uint32) uint64 {
	x := uint64(p >> 8 & 0x00ff00ff)
	return (x | x<<16) & 0x000000ff000000ff
}

// verticalPass sets acc[2x] and acc[2x+1] to the weighted sums, channel by
// channel in 32-bit lanes, of column x over the source rows that
// destination row y covers: R and B, then G and A. Weights sum to
// 1<<weightBits, so a lane stays below 2²⁰. Keeping a pixel's two words
// side by side lets the horizontal pass fetch a tap with one bounds check
// and one cache line.
func verticalPass(acc []uint64, src *image.RGBA, ys axisWeights, y int) {
	sw := len(acc) / 2
	row := func(k int) []byte {
		off := src.PixOffset(src.Rect.Min.X, src.Rect.Min.Y+ys.start[y]+k)
		return src.Pix[off : off+4*sw]
	}
	w := ys.w[y*ys.taps : (y+1)*ys.taps]
	var k int
	switch {
	case ys.taps == 2:
		verticalTwo(acc, row(0), row(1), uint64(w[0]))
		k = 2
	default:
		verticalOne(acc, row(0), uint64(w[0]))
		k = 1
	}
	for ; k < ys.taps; k++ {
		if w[k] != 0 {
			verticalAdd(acc, row(k), uint64(w[k]))
		}
	}
}

// The inner loops of verticalPass are separate functions so that each gets
// the registers to itself (inlined together, they spilled), and they advance
// their slices rather than index them, so that the compiler proves every
// access in bounds.

// verticalTwo sets acc to w0·r0 + (one - w0)·r1, with one multiply per word
// instead of two. The lanes of a0 - a1 may borrow from each other, but the
// sum is an integer identity and every lane of the result is in range, so
// wrapping arithmetic still yields the exact lanes.
func verticalTwo(acc []uint64, r0, r1 []byte, w0 uint64) {
	n := min(len(acc)/2, len(r0)/4, len(r1)/4)
	acc, r0, r1 = acc[:2*n], r0[:4*n], r1[:4*n]
	for x := range n {
		p0 := binary.LittleEndian.Uint32(r0[4*x:])
		p1 := binary.LittleEndian.Uint32(r1[4*x:])
		a0, a1 := spreadRB(p0), spreadRB(p1)
		acc[2*x] = a1<<weightBits + w0*(a0-a1)
		b0, b1 := spreadGA(p0), spreadGA(p1)
		acc[2*x+1] = b1<<weightBits + w0*(b0-b1)
	}
}

// verticalOne sets acc to w·r.
func verticalOne(acc []uint64, r []byte, w uint64) {
	for len(r) >= 4 && len(acc) >= 2 {
		p := binary.LittleEndian.Uint32(r)
		acc[0] = w * spreadRB(p)
		acc[1] = w * spreadGA(p)
		r, acc = r[4:], acc[2:]
	}
}

// verticalAdd adds w·r to acc.
func verticalAdd(acc []uint64, r []byte, w uint64) {
	for len(r) >= 4 && len(acc) >= 2 {
		p := binary.LittleEndian.Uint32(r)
		acc[0] += w * spreadRB(p)
		acc[1] += w * spreadGA(p)
		r, acc = r[4:], acc[2:]
	}
}

// horizontalPass writes one destination row from the vertical sums.
func horizontalPass(out []byte, acc []uint64, xs axisWeights) {
	const half = 1<<23 | 1<<55 // rounds both lanes to nearest
	// pack gathers the rounded bytes: R, G at bits 0 and 8, B, A at 32
	// and 40, then folds the upper half down.
	pack := func(rb, ga uint64) uint32 {
		t := rb>>24&0x000000ff000000ff | ga>>16&0x0000ff000000ff00
		return uint32(t | t>>16)
	}
	starts := xs.start[:len(out)/4]
	switch xs.taps {
	case 2:
		// As in verticalPass, the last weight is implied.
		w := xs.w[:2*len(starts)]
		for _, s := range starts {
			a := acc[2*s:][:4]
			w0 := uint64(w[0])
			binary.LittleEndian.PutUint32(out, pack(
				half+a[2]<<weightBits+w0*(a[0]-a[2]),
				half+a[3]<<weightBits+w0*(a[1]-a[3])))
			out, w = out[4:], w[2:]
		}
	case 3:
		w := xs.w[:3*len(starts)]
		for _, s := range starts {
			a := acc[2*s:][:6]
			w0, w1 := uint64(w[0]), uint64(w[1])
			binary.LittleEndian.PutUint32(out, pack(
				half+a[4]<<weightBits+w0*(a[0]-a[4])+w1*(a[2]-a[4]),
				half+a[5]<<weightBits+w0*(a[1]-a[5])+w1*(a[3]-a[5])))
			out, w = out[4:], w[3:]
		}
	default:
		t := xs.taps
		for i, s := range starts {
			a := acc[2*s:][:2*t]
			sr, sg := uint64(half), uint64(half)
			for k, w := range xs.w[t*i:][:t] {
				sr += uint64(w) * a[2*k]
				sg += uint64(w) * a[2*k+1]
			}
			binary.LittleEndian.PutUint32(out[4*i:], pack(sr, sg))
		}
	}
}
