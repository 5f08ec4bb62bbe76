package imaging

import (
	"bytes"
	"image"
	"sync"
)

// TileSize is the edge of the screencast's dirty tiles.
const TileSize = 64

// DiffTiles appends to dst[:0] the tiles of cur whose pixels differ from the
// same tiles of prev, and returns the extended slice.
//
// Tiles are size×size squares (size ≤ 0 means [TileSize]) laid from
// cur.Rect.Min, so those on the right and bottom edges may be smaller. The
// rectangles are in cur's coordinates, ready for [Crop], and come in
// row-major order. prev is read at the same offsets from its own
// Rect.Min, so either image may be a sub-image. When prev is nil or not the
// same size as cur, every tile differs.
//
// All four bytes of each pixel are compared, row by row: a row equal in
// both frames is settled by one bytes.Equal over its whole width, and a tile
// already known to differ is not read again.
func DiffTiles(prev, cur *image.RGBA, size int, dst []image.Rectangle) []image.Rectangle {
	dst = dst[:0]
	if size <= 0 {
		size = TileSize
	}
	w, h := cur.Rect.Dx(), cur.Rect.Dy()
	if w <= 0 || h <= 0 {
		return dst
	}
	cols, rows := (w+size-1)/size, (h+size-1)/size
	tile := func(col, row int) image.Rectangle {
		min := cur.Rect.Min.Add(image.Pt(col*size, row*size))
		return image.Rectangle{min, min.Add(image.Pt(size, size))}.Intersect(cur.Rect)
	}
	if prev == nil || prev.Rect.Size() != cur.Rect.Size() {
		for row := range rows {
			for col := range cols {
				dst = append(dst, tile(col, row))
			}
		}
		return dst
	}

	p := tileFlags.Get().(*[]bool)
	if cap(*p) < rows*cols {
		*p = make([]bool, rows*cols)
	}
	changed := (*p)[:rows*cols]
	clear(changed)
	// Tile rows are independent; on a large frame they are compared on all
	// cores, since the comparison is bound by memory bandwidth and one core
	// does not saturate it.
	bands := 1
	if w*h >= 512<<10 {
		bands = rows
	}
	parallel(bands, func(i int) {
		for row := rows * i / bands; row < rows*(i+1)/bands; row++ {
			diffTileRow(prev, cur, size, row, changed[row*cols:(row+1)*cols])
		}
	})
	for i, c := range changed {
		if c {
			dst = append(dst, tile(i%cols, i/cols))
		}
	}
	tileFlags.Put(p)
	return dst
}

var tileFlags = sync.Pool{New: func() any { return new([]bool) }}

// diffTileRow sets changed[col] for every tile of tile row row that differs.
func diffTileRow(prev, cur *image.RGBA, size, row int, changed []bool) {
	w, h := cur.Rect.Dx(), cur.Rect.Dy()
	nchanged := 0
	for y := row * size; y < min(h, (row+1)*size) && nchanged < len(changed); y++ {
		po := prev.PixOffset(prev.Rect.Min.X, prev.Rect.Min.Y+y)
		co := cur.PixOffset(cur.Rect.Min.X, cur.Rect.Min.Y+y)
		pr, cr := prev.Pix[po:po+4*w], cur.Pix[co:co+4*w]
		if nchanged == 0 && bytes.Equal(pr, cr) {
			continue
		}
		for col, done := range changed {
			if done {
				continue
			}
			x0, x1 := 4*col*size, 4*min(w, (col+1)*size)
			if !bytes.Equal(pr[x0:x1], cr[x0:x1]) {
				changed[col] = true
				nchanged++
			}
		}
	}
}

// Crop returns the part of img inside r (clipped to img's bounds) as an
// image sharing img's pixels, with bounds r: what the encoders take to
// encode one tile without copying it.
func Crop(img *image.RGBA, r image.Rectangle) *image.RGBA {
	return img.SubImage(r).(*image.RGBA)
}
