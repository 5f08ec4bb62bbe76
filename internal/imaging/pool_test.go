package imaging

import (
	"image/color"
	"testing"
)

func TestBuffer(t *testing.T) {
	img := solidImage(50, 50, color.RGBA{1, 2, 3, 255})
	buf := GetBuffer()
	if len(buf.B) != 0 {
		t.Fatalf("new buffer holds %d bytes", len(buf.B))
	}
	var err error
	buf.B, err = EncodePNG(buf.B[:0], img)
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, buf.B, img)
	buf.Release()

	again := GetBuffer()
	if len(again.B) != 0 {
		t.Fatalf("reused buffer holds %d bytes", len(again.B))
	}
	again.B = make([]byte, 0, maxPooledBytes+1)
	again.Release() // an oversized slice is dropped, not pooled
	if b := GetBuffer(); cap(b.B) > maxPooledBytes {
		t.Fatal("an oversized buffer came back from the pool")
	}
}

func TestScratchBytes(t *testing.T) {
	p := getBytes(100)
	if len(*p) != 100 {
		t.Fatalf("len %d", len(*p))
	}
	putBytes(p)
	q := getBytes(10)
	if len(*q) != 10 {
		t.Fatalf("len %d", len(*q))
	}
	putBytes(q)
	if r := getBytes(1000); len(*r) != 1000 {
		t.Fatalf("len %d", len(*r))
	}
}
