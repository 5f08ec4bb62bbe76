package imaging

import "encoding/binary"

// The PNG row filters work eight bytes at a time: subBytes subtracts the
// bytes of two words lane by lane, so one Up-filtered word costs a load of
// each row and five ALU operations.

// subBytes returns the bytewise difference x - y modulo 256 in each of the
// eight byte lanes, without borrows crossing lanes.
func subBytes(x, y uint64) uint64 {
	const h = 0x8080808080808080
	return ((x | h) - (y &^ h)) ^ ((x ^ ^y) & h)
}

// filterUpRGB writes the PNG Up filter of an opaque RGBA row cur against the
// row above, prev, as packed RGB: dst[i] = rgb(cur)[i] - rgb(prev)[i]. It
// fuses the RGBA to RGB conversion of [packRGB] into the filter.
func filterUpRGB(dst, cur, prev []byte) {
	for len(cur) >= 32 && len(prev) >= 32 && len(dst) >= 24 {
		a := subBytes(binary.LittleEndian.Uint64(cur[0:8]), binary.LittleEndian.Uint64(prev[0:8]))
		b := subBytes(binary.LittleEndian.Uint64(cur[8:16]), binary.LittleEndian.Uint64(prev[8:16]))
		c := subBytes(binary.LittleEndian.Uint64(cur[16:24]), binary.LittleEndian.Uint64(prev[16:24]))
		d := subBytes(binary.LittleEndian.Uint64(cur[24:32]), binary.LittleEndian.Uint64(prev[24:32]))
		binary.LittleEndian.PutUint64(dst[0:8], a&0xffffff|(a>>32&0xffffff)<<24|b<<48)
		binary.LittleEndian.PutUint64(dst[8:16], b>>16&0xff|(b>>32&0xffffff)<<8|(c&0xffffff)<<32|(c>>32)<<56)
		binary.LittleEndian.PutUint64(dst[16:24], c>>40&0xffff|(d&0xffffff)<<16|(d>>32&0xffffff)<<40)
		cur, prev, dst = cur[32:], prev[32:], dst[24:]
	}
	for len(cur) >= 4 && len(prev) >= 4 && len(dst) >= 3 {
		dst[0], dst[1], dst[2] = cur[0]-prev[0], cur[1]-prev[1], cur[2]-prev[2]
		cur, prev, dst = cur[4:], prev[4:], dst[3:]
	}
}

// filterUp writes the PNG Up filter of row cur against the row above, prev:
// dst[i] = cur[i] - prev[i].
func filterUp(dst, cur, prev []byte) {
	for len(cur) >= 8 && len(prev) >= 8 && len(dst) >= 8 {
		x := binary.LittleEndian.Uint64(cur)
		y := binary.LittleEndian.Uint64(prev)
		binary.LittleEndian.PutUint64(dst, subBytes(x, y))
		cur, prev, dst = cur[8:], prev[8:], dst[8:]
	}
	for i := range min(len(dst), len(cur), len(prev)) {
		dst[i] = cur[i] - prev[i]
	}
}

// unpremultiply converts a row of premultiplied RGBA pixels (image.RGBA) to
// straight alpha (what PNG stores), exactly as color.NRGBAModel does for
// valid pixels. A colour byte above its alpha, which premultiplied colour
// cannot hold, saturates at 255.
func unpremultiply(dst, src []byte) {
	for len(src) >= 8 && len(dst) >= 8 {
		v := binary.LittleEndian.Uint64(src)
		if v&0xff000000ff000000 == 0xff000000ff000000 {
			binary.LittleEndian.PutUint64(dst, v)
		} else {
			unpremultiplyPixel(dst[0:4], src[0:4])
			unpremultiplyPixel(dst[4:8], src[4:8])
		}
		src, dst = src[8:], dst[8:]
	}
	if len(src) >= 4 && len(dst) >= 4 {
		unpremultiplyPixel(dst[0:4], src[0:4])
	}
}

func unpremultiplyPixel(dst, src []byte) {
	_, _ = dst[3], src[3]
	switch a := uint32(src[3]); a {
	case 255:
		copy(dst, src)
	case 0:
		dst[0], dst[1], dst[2], dst[3] = 0, 0, 0, 0
	default:
		// color.NRGBAModel computes (c·0x101·0xffff)/(a·0x101) >> 8 on
		// 16-bit values; the 0x101 factors cancel exactly.
		for i := range 3 {
			dst[i] = uint8(min(255, uint32(src[i])*0xffff/a>>8))
		}
		dst[3] = uint8(a)
	}
}
