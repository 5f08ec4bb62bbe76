package aci

import (
	"bytes"
	"strings"
	"testing"
)

// A frame header written into the headroom before an image decodes to the
// same header and the image; one too long for the headroom is copied in
// front of the image instead.
func TestPutFrameHeader(t *testing.T) {
	payload := []byte("\x89PNG image bytes")
	for _, cause := range []string{"c1", strings.Repeat("c", 2*FrameHeadroom)} {
		buf := append(make([]byte, FrameHeadroom), payload...)
		hdr := &BinaryFrameHeader{ObsID: "o1", CallID: cause,
			Image: &BinaryImage{Off: 0, Len: len(payload), W: 1, H: 1, Scope: ScopeScreen, Format: FormatPNG}}
		frame, err := PutFrameHeader(buf, FrameHeadroom, hdr)
		if err != nil {
			t.Fatal(err)
		}
		m, p, err := DecodeBinaryFrame(frame)
		if err != nil {
			t.Fatalf("cause of %d bytes: %v", len(cause), err)
		}
		got := m.(*BinaryFrameHeader)
		if got.CallID != cause || got.ObsID != "o1" || !bytes.Equal(ByteRange{Off: got.Image.Off, Len: got.Image.Len}.Bytes(p), payload) {
			t.Errorf("cause of %d bytes: decoded %+v, payload %q", len(cause), got, ByteRange{Off: got.Image.Off, Len: got.Image.Len}.Bytes(p))
		}
		want, _ := AppendBinaryFrame(nil, hdr, payload)
		if !bytes.Equal(frame, want) {
			t.Errorf("cause of %d bytes: the frame differs from AppendBinaryFrame's", len(cause))
		}
	}
}
