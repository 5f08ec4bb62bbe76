package mcpserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"
)

// nopWriteCloser collects what is written.
type nopWriteCloser struct{ bytes.Buffer }

func (*nopWriteCloser) Close() error { return nil }

// TestImageSplicer checks that the splicer writes exactly the line
// encoding/json would have written with the images in it, splices each
// image once, passes other lines through untouched, and bounds what it
// holds.
func TestImageSplicer(t *testing.T) {
	var out nopWriteCloser
	sp := newImageSplicer(&out)
	img1, img2 := bytes.Repeat([]byte{1, 2, 3, 250}, 1000), []byte("a small image")
	type content struct {
		Data []byte `json:"data"`
		Text string `json:"text"`
	}
	p1, p2 := sp.hold(img1), sp.hold(img2)
	line, _ := json.Marshal([]content{{Data: p2, Text: "x"}, {Data: p1}})
	want, _ := json.Marshal([]content{{Data: img2, Text: "x"}, {Data: img1}})
	line, want = append(line, '\n'), append(want, '\n')
	if n, err := sp.Write(line); err != nil || n != len(line) {
		t.Fatalf("Write: %d, %v; want %d", n, err, len(line))
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("spliced\n%s\nwant\n%s", out.Bytes(), want)
	}
	if len(sp.images.held) != 0 || len(sp.images.order) != 0 {
		t.Fatalf("%d images still held after their line", len(sp.images.held))
	}
	// Once spliced, a marker is text like any other.
	out.Reset()
	again := []byte(base64.StdEncoding.EncodeToString(p1) + "\n")
	sp.Write(again)
	if !bytes.Equal(out.Bytes(), again) {
		t.Fatalf("a spent marker was spliced: %q", out.Bytes())
	}
	// Lines that carry no held marker pass through.
	sp.hold(img1)
	out.Reset()
	plain := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")
	sp.Write(plain)
	if !bytes.Equal(out.Bytes(), plain) {
		t.Fatalf("a plain line became %q", out.Bytes())
	}
	// Images whose answer is never written do not pile up.
	for range 2 * maxHeld {
		sp.hold(img2)
	}
	if len(sp.images.held) != maxHeld || len(sp.images.order) != maxHeld {
		t.Fatalf("%d images held (order %d), at most %d", len(sp.images.held), len(sp.images.order), maxHeld)
	}
	sp.Close()
	if len(sp.images.held) != 0 {
		t.Fatal("Close kept the images")
	}
}
