//go:build robotgo

package robotgo

import (
	"slices"
	"testing"
)

func TestBGRXToRGBA(t *testing.T) {
	// 64-byte buffers are word-aligned; one byte in, they are not.
	src := make([]byte, 64)
	copy(src[1:], []byte{1, 2, 3, 0, 10, 20, 30, 99, 0xff, 0, 0x80, 7, 5})
	want := []byte{3, 2, 1, 0xff, 30, 20, 10, 0xff, 0x80, 0, 0xff, 0xff}
	for _, shift := range []int{0, 1} {
		for _, le := range []bool{true, false} {
			saved := littleEndian
			littleEndian = le
			dst := make([]byte, 64)
			bgrxToRGBA(dst[shift:shift+13], src[1:14])
			littleEndian = saved
			if !slices.Equal(dst[shift:shift+12], want) || dst[shift+12] != 0 {
				t.Errorf("offset %d, word-wise %v: %v, want %v and a last byte untouched", shift, le, dst[shift:shift+13], want)
			}
		}
	}
	bgrxToRGBA(nil, src) // nothing to write: no panic
}

func BenchmarkBGRXToRGBA1080p(b *testing.B) {
	src := make([]byte, 1920*1080*4)
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		bgrxToRGBA(dst, src)
	}
}
