package imaging

import "sync"

// A Buffer is a byte slice on loan from the package's pool, for encoder
// output that is written to a connection and then dropped:
//
//	buf := imaging.GetBuffer()
//	defer buf.Release()
//	buf.B, err = imaging.EncodePNG(buf.B[:0], img)
//
// Pooling saves a multi-megabyte allocation, and the garbage collection it
// causes, on every screenshot.
type Buffer struct {
	// B is the loaned slice. Append to B[:0] and store the result back in B
	// so the grown slice is what returns to the pool.
	B []byte
}

// maxPooledBytes bounds what the pools keep: a rare giant frame should not
// pin its buffer for the life of the process. It fits an uncompressed 4K
// RGBA frame.
const maxPooledBytes = 64 << 20

var buffers = sync.Pool{New: func() any { return new(Buffer) }}

// GetBuffer returns an empty Buffer from the pool.
func GetBuffer() *Buffer {
	b := buffers.Get().(*Buffer)
	b.B = b.B[:0]
	return b
}

// Release returns b to the pool. Neither b nor any slice of b.B may be used
// afterwards.
func (b *Buffer) Release() {
	if cap(b.B) > maxPooledBytes {
		b.B = nil
	}
	buffers.Put(b)
}

// scratch pools the package's internal byte slices.
var scratch sync.Pool

// getBytes returns a pooled slice of length n; its contents are undefined.
func getBytes(n int) *[]byte {
	if p, ok := scratch.Get().(*[]byte); ok {
		if cap(*p) >= n {
			*p = (*p)[:n]
			return p
		}
		scratch.Put(p)
	}
	b := make([]byte, n)
	return &b
}

// putBytes returns p to the pool.
func putBytes(p *[]byte) {
	if cap(*p) <= maxPooledBytes {
		scratch.Put(p)
	}
}
