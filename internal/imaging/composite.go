package imaging

import (
	"image"
	"image/draw"
)

// Composite writes tile into dst with the tile's top-left pixel at the point
// at of dst, clipped to dst's bounds: how a screencast client applies a
// delta's tiles to the keyframe it holds.
//
// Pixels are replaced, not blended: a tile carries the complete new content
// of its area, including any translucency. tile may be any image; the
// types the decoders return for this package's encodings (image.RGBA and
// image.NRGBA from PNG, image.YCbCr from JPEG) take image/draw's fast paths.
func Composite(dst *image.RGBA, tile image.Image, at image.Point) {
	b := tile.Bounds()
	draw.Draw(dst, image.Rectangle{at, at.Add(b.Size())}, tile, b.Min, draw.Src)
}
