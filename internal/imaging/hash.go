package imaging

import (
	"encoding/hex"
	"image"
	"runtime"
	"sync"

	"github.com/zeebo/xxh3"
)

// A Hash identifies a frame's pixels; see [FrameHash].
type Hash [16]byte

// String returns h as 32 lowercase hexadecimal digits, the form a frame_hash
// takes on the wire.
func (h Hash) String() string {
	var b [32]byte
	hex.Encode(b[:], h[:])
	return string(b[:])
}

// FrameHash returns the content hash of img's pixels. It is the frame_hash
// of the protocol, so its definition is part of the wire contract:
//
//   - the input is the raw pixels of img.Bounds() in row-major order, three
//     bytes per pixel (R, G, B), alpha dropped, with no padding between rows;
//   - the function is XXH3-128 with seed uint64(w)<<32 | uint64(h), where w
//     and h are the width and height of img.Bounds();
//   - the 128-bit result is written high 64 bits first, each half big-endian
//     (the canonical XXH128 byte order), and [Hash.String] renders it as 32
//     lowercase hex digits.
//
// Clients treat the value as opaque and only echo it back, so the definition
// can change with the protocol; two runtimes that share it dedup each
// other's frames. Hashing raw pixels rather than encoded bytes makes the hash
// independent of the codec, its level and its parallelism.
//
// The RGBA to RGB conversion costs about five times the hash itself. It is
// done a few rows at a time into a pooled buffer that stays in cache, so a
// small frame is never copied whole; on a large frame, helper goroutines
// convert the later rows into pooled buffers meanwhile.
func FrameHash(img *image.RGBA) Hash {
	r := img.Rect
	w, h := r.Dx(), r.Dy()
	seed := uint64(uint32(w))<<32 | uint64(uint32(h))
	if w <= 0 || h <= 0 {
		return Hash(xxh3.Hash128Seed(nil, seed).Bytes())
	}
	st := hashStates.Get().(*hashState)
	defer hashStates.Put(st)
	rowRGB := 3 * w
	rowsPerChunk := max(1, hashChunk/rowRGB)
	if cap(st.buf) < rowsPerChunk*rowRGB {
		st.buf = make([]byte, rowsPerChunk*rowRGB)
	}
	if rowsPerChunk >= h {
		buf := st.buf[:h*rowRGB]
		packRows(buf, img, 0, h)
		return Hash(xxh3.Hash128Seed(buf, seed).Bytes())
	}

	// On a large frame, helpers convert the later parts into whole buffers
	// while this goroutine converts and hashes the first part through the
	// small chunk buffer; it then hashes the helpers' parts in order.
	parts := 1
	if w*h >= parallelHashPixels {
		parts = min(runtime.GOMAXPROCS(0), maxHashParts, h/rowsPerChunk)
	}
	var bufs [maxHashParts]*[]byte
	var wg sync.WaitGroup
	// This goroutine also hashes everything, about a fifth of the cost of
	// converting it, so it takes a smaller first part: with two parts, 40%
	// of the rows.
	first := h * max(1, 6-parts) / (5 * parts)
	bounds := func(i int) (int, int) {
		if i == 0 {
			return 0, first
		}
		return first + (h-first)*(i-1)/(parts-1), first + (h-first)*i/(parts-1)
	}
	for i := 1; i < parts; i++ {
		y0, y1 := bounds(i)
		bufs[i] = getBytes((y1 - y0) * rowRGB)
		wg.Go(func() { packRows(*bufs[i], img, y0, y1) })
	}
	st.hasher.ResetSeed(seed)
	_, end := bounds(0)
	for y := 0; y < end; y += rowsPerChunk {
		n := min(rowsPerChunk, end-y)
		buf := st.buf[:n*rowRGB]
		packRows(buf, img, y, y+n)
		st.hasher.Write(buf)
	}
	wg.Wait()
	for _, b := range bufs[1:parts] {
		st.hasher.Write(*b)
		putBytes(b)
	}
	return Hash(st.hasher.Sum128().Bytes())
}

const (
	// parallelHashPixels is the frame size from which FrameHash splits the
	// conversion across goroutines; below it the hand-off costs more than
	// it saves.
	parallelHashPixels = 512 << 10
	maxHashParts       = 8
)

// hashChunk is the RGB bytes converted per hasher write: small enough to stay
// in the first-level caches between the conversion and the hash.
const hashChunk = 24 << 10

type hashState struct {
	hasher xxh3.Hasher128
	buf    []byte
}

var hashStates = sync.Pool{New: func() any { return new(hashState) }}

// packRows writes rows [y0, y1) of img, counted from img.Rect.Min.Y, to dst
// as packed RGB.
func packRows(dst []byte, img *image.RGBA, y0, y1 int) {
	w := img.Rect.Dx()
	off := img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y0)
	for y := y0; y < y1; y++ {
		packRGB(dst[:3*w], img.Pix[off:off+4*w])
		dst = dst[3*w:]
		off += img.Stride
	}
}
