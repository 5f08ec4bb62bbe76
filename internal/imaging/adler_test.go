package imaging

import (
	"hash/adler32"
	"math/rand/v2"
	"testing"
)

func TestAdler32Update(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	lengths := []int{0, 1, 7, 8, 127, 128, 129, 255, 5552, 8 * adlerBlockWords, 8*adlerBlockWords + 1, 100000, 1 << 20}
	for _, n := range lengths {
		for _, fill := range []string{"random", "ff", "zero"} {
			p := make([]byte, n)
			for i := range p {
				switch fill {
				case "random":
					p[i] = uint8(rng.IntN(256))
				case "ff":
					p[i] = 0xff // the largest lane sums
				}
			}
			if got, want := adler32Update(1, p), adler32.Checksum(p); got != want {
				t.Errorf("%d %s bytes: %08x, want %08x", n, fill, got, want)
			}
			// Continuing from a previous checksum, as a band does.
			cut := n / 3
			if got, want := adler32Update(adler32Update(1, p[:cut]), p[cut:]), adler32.Checksum(p); got != want {
				t.Errorf("%d %s bytes in two calls: %08x, want %08x", n, fill, got, want)
			}
		}
	}
}

func BenchmarkAdler32(b *testing.B) {
	p := make([]byte, 64<<10)
	for i := range p {
		p[i] = byte(i * 7)
	}
	b.Run("imaging", func(b *testing.B) {
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			adler32Update(1, p)
		}
	})
	b.Run("stdlib", func(b *testing.B) {
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			adler32.Checksum(p)
		}
	})
}
