package imaging

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/image/font/gofont/goregular"
)

// wantTiles returns the tiles DiffTiles should report, computed pixel by
// pixel: every tile containing a pixel whose four bytes differ.
func wantTiles(prev, cur *image.RGBA, size int) []image.Rectangle {
	var out []image.Rectangle
	for ty := cur.Rect.Min.Y; ty < cur.Rect.Max.Y; ty += size {
		for tx := cur.Rect.Min.X; tx < cur.Rect.Max.X; tx += size {
			r := image.Rect(tx, ty, tx+size, ty+size).Intersect(cur.Rect)
			differs := false
			for y := r.Min.Y; y < r.Max.Y && !differs; y++ {
				for x := r.Min.X; x < r.Max.X && !differs; x++ {
					p := prev.RGBAAt(x-cur.Rect.Min.X+prev.Rect.Min.X, y-cur.Rect.Min.Y+prev.Rect.Min.Y)
					differs = p != cur.RGBAAt(x, y)
				}
			}
			if differs {
				out = append(out, r)
			}
		}
	}
	return out
}

func TestDiffTiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	prev := randomImage(rng, image.Point{}, 200, 130, false) // edge tiles 8 wide, 2 tall
	edits := []struct {
		name string
		at   []image.Point
		want []image.Rectangle
	}{
		{"none", nil, nil},
		{"origin", []image.Point{{0, 0}}, []image.Rectangle{image.Rect(0, 0, 64, 64)}},
		{"tile corner", []image.Point{{63, 63}}, []image.Rectangle{image.Rect(0, 0, 64, 64)}},
		{"next tile", []image.Point{{64, 64}}, []image.Rectangle{image.Rect(64, 64, 128, 128)}},
		{"right edge", []image.Point{{199, 5}}, []image.Rectangle{image.Rect(192, 0, 200, 64)}},
		{"bottom edge", []image.Point{{70, 129}}, []image.Rectangle{image.Rect(64, 128, 128, 130)}},
		{"corner", []image.Point{{199, 129}}, []image.Rectangle{image.Rect(192, 128, 200, 130)}},
		{"two in a row", []image.Point{{1, 1}, {130, 60}}, []image.Rectangle{image.Rect(0, 0, 64, 64), image.Rect(128, 0, 192, 64)}},
		{"same tile twice", []image.Point{{5, 70}, {60, 120}}, []image.Rectangle{image.Rect(0, 64, 64, 128)}},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			cur := cloneRGBA(prev)
			for _, p := range e.at {
				cur.Pix[cur.PixOffset(p.X, p.Y)] ^= 0x40
			}
			got := DiffTiles(prev, cur, 64, nil)
			if !slices.Equal(got, e.want) {
				t.Fatalf("DiffTiles = %v, want %v", got, e.want)
			}
		})
	}

	t.Run("alpha only", func(t *testing.T) {
		cur := cloneRGBA(prev)
		cur.Pix[cur.PixOffset(100, 100)+3] = 0
		if got := DiffTiles(prev, cur, 0, nil); !slices.Equal(got, []image.Rectangle{image.Rect(64, 64, 128, 128)}) {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("random edits", func(t *testing.T) {
		for range 50 {
			cur := cloneRGBA(prev)
			for range rng.IntN(6) {
				cur.Pix[rng.IntN(len(cur.Pix))]++
			}
			size := []int{16, 64, 100, 7}[rng.IntN(4)]
			if got, want := DiffTiles(prev, cur, size, nil), wantTiles(prev, cur, size); !slices.Equal(got, want) {
				t.Fatalf("size %d: got %v, want %v", size, got, want)
			}
		}
	})

	t.Run("sub-images", func(t *testing.T) {
		a := inset(rng, 150, 90, false)
		b := cloneRGBA(a)
		b = Crop(b, b.Rect) // same pixels, a different Min and Stride from a's parent
		b.Pix[b.PixOffset(b.Rect.Min.X+149, b.Rect.Min.Y+89)]++
		moved := &image.RGBA{Pix: b.Pix, Stride: b.Stride, Rect: b.Rect.Sub(b.Rect.Min)} // bounds from (0, 0)
		want := []image.Rectangle{image.Rect(128, 64, 150, 90)}
		if got := DiffTiles(a, moved, 64, nil); !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		// Rectangles are in cur's coordinates.
		want = []image.Rectangle{image.Rect(128, 64, 150, 90).Add(a.Rect.Min)}
		if got := DiffTiles(moved, a, 64, nil); !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})

	t.Run("everything differs", func(t *testing.T) {
		all := DiffTiles(nil, prev, 64, nil)
		if len(all) != 4*3 || all[0] != image.Rect(0, 0, 64, 64) || all[11] != image.Rect(192, 128, 200, 130) {
			t.Fatalf("no previous frame: %v", all)
		}
		other := randomImage(rng, image.Point{}, 201, 130, false)
		if got := DiffTiles(other, prev, 64, nil); !slices.Equal(got, all) {
			t.Fatalf("size change: %v", got)
		}
		if got := DiffTiles(prev, image.NewRGBA(image.Rectangle{}), 64, nil); len(got) != 0 {
			t.Fatalf("empty frame: %v", got)
		}
	})

	t.Run("reuses dst", func(t *testing.T) {
		dst := make([]image.Rectangle, 3, 100)
		got := DiffTiles(prev, prev, 64, dst)
		if len(got) != 0 || cap(got) != 100 {
			t.Fatalf("len %d cap %d", len(got), cap(got))
		}
	})
}

func TestDiffTilesLargeFrame(t *testing.T) {
	// Large frames compare tile rows in parallel.
	prev := desktop1080()
	cur := cloneRGBA(prev)
	for _, p := range []image.Point{{0, 0}, {1919, 1079}, {1000, 500}, {1023, 511}, {1024, 512}} {
		cur.SetRGBA(p.X, p.Y, color.RGBA{1, 2, 3, 4})
	}
	want := wantTiles(prev, cur, 64)
	if len(want) != 4 {
		t.Fatalf("test setup: %d tiles", len(want))
	}
	if got := DiffTiles(prev, cur, 64, nil); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestDeltasComposite plays a screencast: tiles that differ are cut out,
// encoded, decoded and composited onto the previous frame, which must then
// equal the new frame pixel for pixel.
func TestDeltasComposite(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	prev := desktop1080()
	cur := cloneRGBA(prev)
	// Type some text into the dialog's field, move the "clock", and scribble
	// across a tile boundary and the bottom-right edge tile.
	text(cur, image.Rect(430, 664, 800, 694), newFace(goregular.TTF, 13), color.RGBA{20, 20, 20, 255}, 684, 0, "typed by the agent")
	fill(cur, image.Rect(950, 0, 1100, 28), color.RGBA{43, 43, 43, 255})
	fill(cur, image.Rect(1900, 1070, 1920, 1080), color.RGBA{255, 0, 0, 255})
	for range 200 {
		cur.Pix[cur.PixOffset(600+rng.IntN(100), 100+rng.IntN(30))] = uint8(rng.IntN(256))
	}

	tiles := DiffTiles(prev, cur, TileSize, nil)
	if len(tiles) == 0 || len(tiles) > 40 {
		t.Fatalf("%d tiles changed", len(tiles))
	}
	client := cloneRGBA(prev)
	for _, r := range tiles {
		data, err := EncodePNG(nil, Crop(cur, r))
		if err != nil {
			t.Fatal(err)
		}
		tile, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		Composite(client, tile, r.Min)
	}
	if !bytes.Equal(client.Pix, cur.Pix) {
		t.Fatal("composited frame differs from the captured one")
	}
	if FrameHash(client) != FrameHash(cur) {
		t.Fatal("hashes differ")
	}
}

func TestComposite(t *testing.T) {
	dst := solidImage(10, 10, color.RGBA{9, 9, 9, 255})

	// Replaces rather than blends, whatever the tile's alpha.
	clear := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	Composite(dst, clear, image.Pt(1, 1))
	if c := dst.RGBAAt(1, 1); c != (color.RGBA{}) {
		t.Fatalf("transparent tile blended: %v", c)
	}
	if c := dst.RGBAAt(3, 3); c != (color.RGBA{9, 9, 9, 255}) {
		t.Fatalf("outside the tile: %v", c)
	}

	// A tile with a non-zero origin lands by its top-left pixel; one that
	// overhangs the frame is clipped.
	tile := solidImage(4, 4, color.RGBA{200, 100, 50, 255})
	tile = Crop(tile, image.Rect(1, 1, 4, 4))
	Composite(dst, tile, image.Pt(8, 8))
	for _, p := range []image.Point{{8, 8}, {9, 9}} {
		if c := dst.RGBAAt(p.X, p.Y); c != (color.RGBA{200, 100, 50, 255}) {
			t.Fatalf("%v = %v", p, c)
		}
	}
	if c := dst.RGBAAt(7, 7); c != (color.RGBA{9, 9, 9, 255}) {
		t.Fatalf("(7,7) = %v", c)
	}

	// A JPEG tile decodes to YCbCr and still lands in place.
	var buf []byte
	buf, err := EncodeJPEG(buf, solidImage(16, 16, color.RGBA{0, 0, 255, 255}), 90)
	if err != nil {
		t.Fatal(err)
	}
	j, err := jpeg.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatal(err)
	}
	Composite(dst, j, image.Pt(-8, -8))
	if c := dst.RGBAAt(4, 4); c.B < 240 || c.R > 15 || c.G > 15 {
		t.Fatalf("JPEG tile: %v", c)
	}
}

func TestCrop(t *testing.T) {
	img := randomImage(rand.New(rand.NewPCG(35, 36)), image.Point{}, 20, 20, false)
	c := Crop(img, image.Rect(15, 15, 30, 30))
	if c.Rect != image.Rect(15, 15, 20, 20) {
		t.Fatalf("not clipped: %v", c.Rect)
	}
	c.Pix[c.PixOffset(15, 15)] ^= 0xff
	if img.Pix[img.PixOffset(15, 15)] != c.Pix[c.PixOffset(15, 15)] {
		t.Fatal("Crop copied the pixels")
	}
	if !Crop(img, image.Rect(30, 30, 40, 40)).Rect.Empty() {
		t.Fatal("disjoint crop is not empty")
	}
}
