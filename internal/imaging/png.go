package imaging

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/flate"
)

var (
	// ErrEmptyImage is returned when asked to encode an image with no pixels,
	// which neither PNG nor JPEG can represent.
	ErrEmptyImage = errors.New("imaging: empty image")
	// ErrTooLarge is returned for an image whose dimensions exceed what the
	// format can carry.
	ErrTooLarge = errors.New("imaging: image too large")
)

// EncodePNG appends the PNG encoding of img to dst and returns the extended
// slice. The encoding is lossless: decoding it gives back img's pixels
// exactly when img is opaque, and otherwise gives the straight-alpha
// (image.NRGBA) form of each pixel exactly as color.NRGBAModel converts it.
//
// An opaque image (every alpha 255, the case of every screen capture) is
// written as 8-bit RGB, colour type 2; any other as 8-bit RGBA, colour type
// 6. Every row but the first uses the Up filter, and the filtered rows are
// compressed at deflate's fastest level in bands of rows, on all cores at
// once, each band its own IDAT chunk; see the package documentation for the
// reasons and the figures.
//
// img may be a sub-image (see [Crop]): only img.Rect is encoded, its top-left
// pixel becoming the PNG's origin.
func EncodePNG(dst []byte, img *image.RGBA) ([]byte, error) {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	if w <= 0 || h <= 0 {
		return dst, ErrEmptyImage
	}
	if w > math.MaxInt32 || h > math.MaxInt32 || 1+4*w > maxPNGRow {
		return dst, ErrTooLarge
	}
	opaque := isOpaque(img)
	bpp, colourType := 3, byte(2)
	if !opaque {
		bpp, colourType = 4, 6
	}
	rowLen := 1 + w*bpp
	rowsPerBand := max(1, pngBandBytes/rowLen)
	nbands := (h + rowsPerBand - 1) / rowsPerBand
	bands := make([]*pngBand, nbands)
	parallel(nbands, func(i int) {
		b := pngBands.Get().(*pngBand)
		bands[i] = b
		b.encode(img, h*i/nbands, h*(i+1)/nbands, opaque)
	})

	size := len(pngSignature) + 12 + 13 + 12 + 4
	for _, b := range bands {
		size += 12 + len(b.out)
	}
	dst = slices.Grow(dst, size)
	dst = append(dst, pngSignature...)
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:4], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:8], uint32(h))
	ihdr[8] = 8 // bits per sample
	ihdr[9] = colourType
	dst = appendChunk(dst, "IHDR", ihdr[:])

	// One zlib stream runs across the IDAT chunks: its header leads the
	// first, each band ends on a sync flush (the last on the final block),
	// and the Adler-32 of all filtered bytes, combined from the bands'
	// own, closes the last chunk.
	sum := uint32(1)
	for i, b := range bands {
		sum = adler32Combine(sum, b.adler, b.n)
		n := len(b.out)
		if i == 0 {
			n += len(zlibHeader)
		}
		if i == nbands-1 {
			n += 4
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(n))
		start := len(dst)
		dst = append(dst, "IDAT"...)
		if i == 0 {
			dst = append(dst, zlibHeader...)
		}
		dst = append(dst, b.out...)
		if i == nbands-1 {
			dst = binary.BigEndian.AppendUint32(dst, sum)
		}
		dst = binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:]))
		pngBands.Put(b)
	}
	return appendChunk(dst, "IEND", nil), nil
}

const (
	// pngBandBytes is the filtered size of one band. Bands much smaller than
	// this lose compression at every restart and cost a flush each; larger
	// ones balance poorly across cores when content is uneven.
	pngBandBytes = 512 << 10
	// pngBatchBytes is how much filtered data a band hands the compressor
	// at a time: enough to amortise the call, small enough to stay in
	// cache for the checksum and the compressor.
	pngBatchBytes = 64 << 10
	// maxPNGRow bounds one filtered row so that one band, whatever its
	// content, fits an IDAT chunk (at most 2³¹-1 bytes).
	maxPNGRow = 1 << 28
	// pngLevel is the deflate level: klauspost's level 1 is the fastest
	// that still finds matches; see the package documentation.
	pngLevel = flate.BestSpeed
)

var (
	pngSignature = []byte("\x89PNG\r\n\x1a\n")
	// zlibHeader: deflate with a 32 KiB window, "fastest" level flag, no
	// dictionary; 0x7801 is a multiple of 31 as RFC 1950 requires.
	zlibHeader = []byte{0x78, 0x01}
)

func appendChunk(dst []byte, typ string, data []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(data)))
	start := len(dst)
	dst = append(dst, typ...)
	dst = append(dst, data...)
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:]))
}

// A pngBand compresses one band of rows into its own deflate stream. Bands
// are pooled with their compressors, whose tables are the costly part.
type pngBand struct {
	fast  *flate.Writer // pngLevel
	huff  *flate.Writer // Huffman only, made when first needed
	sink  appender      // where the compressor writes
	out   []byte        // the band's compressed bytes
	spare []byte        // the output of the attempt not kept
	adler uint32        // Adler-32 of the band's filtered bytes alone
	n     int64         // number of filtered bytes
	batch []byte
	cur   []byte // straight-alpha rows, for images with alpha
	prev  []byte
}

var pngBands = sync.Pool{New: func() any {
	fw, err := flate.NewWriter(nil, pngLevel)
	if err != nil {
		panic("imaging: " + err.Error()) // only for an invalid level
	}
	return &pngBand{fast: fw}
}}

// encode filters and compresses rows [y0, y1) of img, counted from
// img.Rect.Min.Y, into b.out.
//
// The fast level stores a 64 KiB window outright when it finds no match in
// it, which is what photographs and video with grain look like after
// filtering. Huffman coding alone still shrinks those by a third, so when
// the fast attempt leaves the band mostly uncompressed the band is filtered
// again and compressed with Huffman coding only, and the smaller result
// kept. Flat UI content never pays for the second attempt.
func (b *pngBand) encode(img *image.RGBA, y0, y1 int, opaque bool) {
	b.out = b.deflate(b.out[:0], b.fast, img, y0, y1, opaque)
	if int64(len(b.out)) < b.n*7/8 {
		return
	}
	if b.huff == nil {
		fw, err := flate.NewWriter(nil, flate.HuffmanOnly)
		if err != nil {
			panic("imaging: " + err.Error())
		}
		b.huff = fw
	}
	b.spare = b.deflate(b.spare[:0], b.huff, img, y0, y1, opaque)
	if len(b.spare) < len(b.out) {
		b.out, b.spare = b.spare, b.out
	}
}

// deflate appends to dst the filtered rows [y0, y1) compressed by fw and
// sets b.adler and b.n. The last band of the image ends its stream with the
// final block; every other ends on a sync flush so the next band's stream
// can follow it byte-aligned.
func (b *pngBand) deflate(dst []byte, fw *flate.Writer, img *image.RGBA, y0, y1 int, opaque bool) []byte {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	bpp := 4
	if opaque {
		bpp = 3
	}
	rowLen := 1 + w*bpp
	batchLen := max(1, pngBatchBytes/rowLen) * rowLen
	if cap(b.batch) < batchLen {
		b.batch = make([]byte, batchLen)
	}
	batch := b.batch[:batchLen]
	var cur, prev []byte // straight-alpha rows y and y-1
	if !opaque {
		if cap(b.cur) < 4*w {
			b.cur, b.prev = make([]byte, 4*w), make([]byte, 4*w)
		}
		cur, prev = b.cur[:4*w], b.prev[:4*w]
	}
	row := func(y int) []byte {
		off := img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y)
		return img.Pix[off : off+4*w : off+4*w]
	}
	if !opaque && y0 > 0 {
		unpremultiply(prev, row(y0-1))
	}

	b.sink.b = dst
	fw.Reset(&b.sink)
	b.adler, b.n = 1, 0
	pos := 0
	for y := y0; y < y1; y++ {
		out := batch[pos : pos+rowLen]
		// Up, not Sub or Paeth: on desktop frames it compressed within 1.5%
		// of a per-row choice among all filters, and costs one subtraction
		// per byte with no dependency along the row.
		switch {
		case opaque && y == 0:
			out[0] = 0
			packRGB(out[1:], row(y))
		case opaque:
			out[0] = 2
			filterUpRGB(out[1:], row(y), row(y-1))
		case y == 0:
			out[0] = 0
			unpremultiply(out[1:], row(y))
			copy(cur, out[1:])
		default:
			out[0] = 2
			unpremultiply(cur, row(y))
			filterUp(out[1:], cur, prev)
		}
		cur, prev = prev, cur
		pos += rowLen
		if pos == len(batch) || y == y1-1 {
			b.adler = adler32Update(b.adler, batch[:pos])
			// The compressor writes to memory only: it cannot fail.
			fw.Write(batch[:pos])
			b.n += int64(pos)
			pos = 0
		}
	}
	if y1 == h {
		fw.Close()
	} else {
		fw.Flush()
	}
	dst = b.sink.b
	b.sink.b = nil
	return dst
}

// adler32Combine returns the Adler-32 of the concatenation of two byte
// strings, given the checksum of each and the length of the second (zlib's
// adler32_combine, derived from the definition: for A = 1 + Σ bytes and
// B = Σ of A after each byte, appending n2 bytes adds n2·(A1 - 1) to B).
func adler32Combine(adler1, adler2 uint32, n2 int64) uint32 {
	const mod = adlerMod
	rem := uint64(n2 % mod)
	a1, b1 := uint64(adler1&0xffff), uint64(adler1>>16)
	a2, b2 := uint64(adler2&0xffff), uint64(adler2>>16)
	a := (a1 + a2 + mod - 1) % mod
	b := (b1 + b2 + rem*a1 + mod - rem) % mod
	return uint32(b<<16 | a)
}

// isOpaque reports whether every alpha byte of img is 255, eight bytes at a
// time, across cores on a large image.
func isOpaque(img *image.RGBA) bool {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	parts := max(1, min(h, w*h/(256<<10)))
	var translucent atomic.Bool
	parallel(parts, func(i int) {
		for y := h * i / parts; y < h*(i+1)/parts && !translucent.Load(); y++ {
			off := img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y)
			if !rowOpaque(img.Pix[off : off+4*w]) {
				translucent.Store(true)
			}
		}
	})
	return !translucent.Load()
}

func rowOpaque(p []byte) bool {
	const alpha = 0xff000000ff000000
	acc := uint64(alpha)
	for len(p) >= 32 {
		acc &= binary.LittleEndian.Uint64(p[0:8]) & binary.LittleEndian.Uint64(p[8:16]) &
			binary.LittleEndian.Uint64(p[16:24]) & binary.LittleEndian.Uint64(p[24:32])
		p = p[32:]
	}
	for ; len(p) >= 4; p = p[4:] {
		if p[3] != 255 {
			return false
		}
	}
	return acc&alpha == alpha
}
