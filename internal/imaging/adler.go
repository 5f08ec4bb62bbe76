package imaging

import "encoding/binary"

// adlerMod is the Adler-32 modulus, the largest prime below 2¹⁶.
const adlerMod = 65521

// adler32Update returns the Adler-32 checksum (RFC 1950) of p appended to
// data whose checksum is adler; adler32Update(1, p) is hash/adler32's
// Checksum(p).
//
// It runs at about twice hash/adler32's speed, which matters because the
// PNG encoder checksums every filtered byte. The byte sums are kept per
// byte position in the 16-bit lanes of two uint64s, eight bytes per step;
// the weighted sums that give the checksum's upper half are rebuilt from
// them. Every 16 words the lanes are widened into 32-bit ones before they
// can overflow, and every blockWords words everything is reduced modulo
// adlerMod.
func adler32Update(adler uint32, p []byte) uint32 {
	s1, s2 := uint64(adler&0xffff), uint64(adler>>16)
	for len(p) >= 8*16 {
		n := min(len(p)/8, adlerBlockWords) &^ 15
		s1, s2 = adlerBlock(s1, s2, p[:8*n])
		p = p[8*n:]
	}
	for _, b := range p {
		s1 += uint64(b)
		s2 += s1
	}
	return uint32(s2%adlerMod<<16 | s1%adlerMod)
}

// adlerBlockWords bounds one block: its 32-bit weighted lane sums reach
// 255·N·(N+1)/2 for N words, which must stay below 2³².
const adlerBlockWords = 4096

// adlerBlock folds p, a whole number of 16-word groups of at most
// adlerBlockWords words, into the sums s1 and s2 and reduces them.
//
// For N words b[k][j] (k the word, j the byte position), the checksum needs
// S = Σ b[k][j] and W = Σ b[k][j]·(8(N-k) - j), since every byte adds the
// running sum to s2 once for itself and once for each byte after it. The
// lanes hold, per position j, A[j] = Σ_k b[k][j] and T[j] = Σ_k (N-k)·b[k][j],
// the latter by adding A to T after each word.
func adlerBlock(s1, s2 uint64, p []byte) (uint64, uint64) {
	const (
		bytes16 = 0x00ff00ff00ff00ff
		lanes32 = 0x0000ffff0000ffff
	)
	// Global sums in 32-bit lanes: a0 holds positions 0 and 4, a1 2 and 6,
	// a2 1 and 5, a3 3 and 7; t0–t3 likewise.
	var a0, a1, a2, a3, t0, t1, t2, t3 uint64
	n := uint64(len(p) / 8)
	for len(p) >= 128 {
		// Sums over 16 words in 16-bit lanes: lo holds the even
		// positions, hi the odd; at most 255·16·17/2 = 34680 per lane.
		var alo, ahi, tlo, thi uint64
		for i := 0; i < 128; i += 8 {
			v := binary.LittleEndian.Uint64(p[i : i+8])
			alo += v & bytes16
			ahi += v >> 8 & bytes16
			tlo += alo
			thi += ahi
		}
		// Each of the 16 steps would also have added the earlier groups'
		// A to T.
		t0 += tlo&lanes32 + a0<<4
		t1 += tlo>>16&lanes32 + a1<<4
		t2 += thi&lanes32 + a2<<4
		t3 += thi>>16&lanes32 + a3<<4
		a0 += alo & lanes32
		a1 += alo >> 16 & lanes32
		a2 += ahi & lanes32
		a3 += ahi >> 16 & lanes32
		p = p[128:]
	}
	lane := func(v uint64, hi bool) uint64 {
		if hi {
			return v >> 32
		}
		return v & 0xffffffff
	}
	// Positions of the lanes of a0…a3 (and t0…t3), low lane then high.
	pos := [4][2]uint64{{0, 4}, {2, 6}, {1, 5}, {3, 7}}
	as, ts := [4]uint64{a0, a1, a2, a3}, [4]uint64{t0, t1, t2, t3}
	var sum, weighted uint64
	for i := range 4 {
		for h := range 2 {
			a, t := lane(as[i], h == 1), lane(ts[i], h == 1)
			sum += a
			weighted += 8*t - pos[i][h]*a
		}
	}
	s2 += 8*n*s1 + weighted
	s1 += sum
	return s1 % adlerMod, s2 % adlerMod
}
