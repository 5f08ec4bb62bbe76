// Package imaging is the pixel pipeline behind screenshots and screencasts:
// downscaling, the frame hash, PNG and JPEG encoding, dirty tiles and their
// compositing. Every function is pure, takes no context and works on
// *image.RGBA.
//
// # The pipeline
//
// The Runtime captures a frame, downscales it once ([Downscale], to the
// size [FitSize] gives), hashes the result ([FrameHash]) and compares the
// hash with the request's if_none_match before it encodes anything, so a
// not_modified reply costs a capture and a hash. Only then does it encode
// ([EncodePNG], [EncodeJPEG]) into a pooled [Buffer]. A screencast diffs the
// frame against the last one delivered ([DiffTiles]), encodes the changed
// tiles cut out with [Crop], and the client puts them back with
// [Composite].
//
// # Bounds
//
// Any *image.RGBA is accepted, including sub-images whose Rect.Min is not
// the origin and whose Stride exceeds their width: functions read
// img.Rect through PixOffset and Stride, and what they produce (a PNG, a
// hash, a new image) starts at (0, 0). The exceptions are stated where
// they apply: [DiffTiles] returns rectangles in its input's coordinates so
// they can be handed to [Crop], and [Composite] places a tile at a point of
// its destination.
//
// # Downscaling
//
// Area averaging, because agents read text in screenshots: every source
// pixel contributes by the fraction of it a destination pixel covers, so a
// one-pixel stroke becomes a lighter stroke rather than disappearing or
// breaking up as it would under nearest-neighbour or point-sampled bilinear
// filtering. Weights are exact areas quantised to 1/4096 per axis (the
// error against a float64 reference stays within one level), solid areas
// keep their exact colour and a 2:1 reduction is the rounded mean of each
// 2×2 block. The filter is separable and runs on two channels at once in
// the 32-bit lanes of a uint64; bands of rows run on all cores. Without
// SIMD this is close to the limit of the approach: 1920×1080 to 1280×720
// takes about 3.8 ms on two cores (7 ms on one). An exact 2:1 reduction
// averages 2×2 blocks directly: 3840×2160 to 1920×1080 in about 3 ms.
//
// # The frame hash
//
// XXH3-128 of the raw RGB bytes, seeded with the dimensions; the exact
// definition, which is on the wire, is in [FrameHash]'s documentation. The
// RGBA to RGB conversion, not the hash, is the expensive part, so it is
// done a few rows at a time into a buffer that stays in cache and, on large
// frames, split with a helper goroutine: about 0.6 ms for 1920×1080.
//
// # PNG
//
// image/png takes 50 ms (BestSpeed) to 80 ms (default) for a 1080p desktop
// here. [EncodePNG] takes about 5 ms for an output of the same size as
// BestSpeed's, by these choices:
//
//   - Opaque frames, which every capture is, are written as RGB, a quarter
//     fewer bytes to filter, checksum and compress; RGBA only when some
//     alpha is not 255.
//   - One filter, Up, for every row but the first: on UI content it came
//     within 1.5% of choosing per row among all five filters, and it costs
//     one bytewise subtraction, done eight bytes at a time and fused with
//     the RGBA to RGB conversion.
//   - Deflate by github.com/klauspost/compress at its fastest level, in
//     bands of about 512 KiB of filtered rows compressed concurrently, each
//     an independent deflate stream ended by a sync flush (the last by the
//     final block) so that their concatenation is one valid stream; each
//     band is its own IDAT chunk. The Adler-32 of the whole stream is
//     combined from the bands' own, computed by a SWAR checksum at about
//     1.5 times hash/adler32's speed.
//   - That level stores a window outright when it finds no match, which is
//     what grainy photographs look like after filtering; a band left mostly
//     uncompressed is therefore compressed again with Huffman coding alone
//     and the smaller kept. A 1080p frame of photo grain encodes in about
//     7 ms to 4.0 MB, against image/png's 3.9 MB in 150 ms.
//
// The output is plain PNG, checked pixel for pixel against image/png's
// decoder by the tests and a fuzz target.
//
// # JPEG
//
// [EncodeJPEG] is image/jpeg writing into a caller's buffer. It is single
// threaded and, at about 29 ms for a 1080p desktop, several times slower
// than [EncodePNG]: lossy frames save bytes, not time.
//
// # Tiles
//
// [DiffTiles] compares two frames in 64-pixel tiles row by row with
// bytes.Equal: an unchanged row costs one comparison across the whole
// width, and a tile already found changed is not read again. It is bound
// by memory bandwidth, about 0.16 ms for two 1080p frames with few
// changes. Tiles are cut out with [Crop], which shares pixels, so encoding
// one copies nothing.
package imaging
