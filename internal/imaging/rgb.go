package imaging

import "encoding/binary"

// packRGB writes the R, G and B bytes of every RGBA pixel in src to dst,
// dropping alpha. len(src) must be a multiple of 4 and len(dst) at least
// len(src)/4*3.
//
// Eight pixels go through three 64-bit stores per step: a byte loop costs
// about five times as much, and this conversion sits on the path of every
// hash and every opaque PNG.
func packRGB(dst, src []byte) {
	for len(src) >= 32 && len(dst) >= 24 {
		a := binary.LittleEndian.Uint64(src[0:8])
		b := binary.LittleEndian.Uint64(src[8:16])
		c := binary.LittleEndian.Uint64(src[16:24])
		d := binary.LittleEndian.Uint64(src[24:32])
		binary.LittleEndian.PutUint64(dst[0:8], a&0xffffff|(a>>32&0xffffff)<<24|b<<48)
		binary.LittleEndian.PutUint64(dst[8:16], b>>16&0xff|(b>>32&0xffffff)<<8|(c&0xffffff)<<32|(c>>32)<<56)
		binary.LittleEndian.PutUint64(dst[16:24], c>>40&0xffff|(d&0xffffff)<<16|(d>>32&0xffffff)<<40)
		src = src[32:]
		dst = dst[24:]
	}
	for len(src) >= 4 && len(dst) >= 3 {
		dst[0], dst[1], dst[2] = src[0], src[1], src[2]
		src = src[4:]
		dst = dst[3:]
	}
}
