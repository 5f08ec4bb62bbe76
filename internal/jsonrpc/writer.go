package jsonrpc

import (
	"io"
	"sync"
)

// DefaultMaxPending is how many bytes may wait to be written when Options
// leave it unset.
const DefaultMaxPending = 16 << 20

// lineWriter gathers lines and writes them from one goroutine, so that no
// caller ever blocks on a peer that does not read, and so that lines that
// arrive while a write is under way go out together in the next one.
type lineWriter struct {
	w   io.Writer
	max int

	mu      sync.Mutex
	buf     []byte // lines waiting
	err     error  // the write error that ended writing; sticky
	closing bool

	kick chan struct{} // capacity 1: something waits
	done chan struct{} // closed when the goroutine has ended
}

func newLineWriter(w io.Writer, max int) *lineWriter {
	if max <= 0 {
		max = DefaultMaxPending
	}
	lw := &lineWriter{w: w, max: max, kick: make(chan struct{}, 1), done: make(chan struct{})}
	go lw.loop()
	return lw
}

// add appends one line, built by fn, and its newline. It fails when writing
// has ended or when the backlog is over the limit (the line is not added).
func (lw *lineWriter) add(fn func([]byte) []byte) error {
	lw.mu.Lock()
	switch {
	case lw.err != nil:
		lw.mu.Unlock()
		return lw.err
	case lw.closing:
		lw.mu.Unlock()
		return ErrClosed
	case len(lw.buf) >= lw.max:
		lw.mu.Unlock()
		return ErrBackpressure
	}
	lw.buf = append(fn(lw.buf), '\n')
	lw.mu.Unlock()
	select {
	case lw.kick <- struct{}{}:
	default:
	}
	return nil
}

func (lw *lineWriter) loop() {
	defer close(lw.done)
	var spare []byte
	for range lw.kick {
		for {
			lw.mu.Lock()
			if len(lw.buf) == 0 {
				closing := lw.closing
				lw.mu.Unlock()
				if closing {
					return
				}
				break
			}
			out := lw.buf
			lw.buf = spare[:0]
			lw.mu.Unlock()

			_, err := lw.w.Write(out)
			if cap(out) > 1<<20 {
				out = nil // let a burst's memory go
			}
			spare = out
			if err != nil {
				lw.mu.Lock()
				lw.err = err
				lw.buf = nil
				lw.mu.Unlock()
				return
			}
		}
	}
}

// close stops taking lines, writes what waits, and returns once the
// goroutine has ended. A write blocked on a peer that never reads holds it
// up until the transport is closed.
func (lw *lineWriter) close() {
	lw.mu.Lock()
	lw.closing = true
	lw.mu.Unlock()
	select {
	case lw.kick <- struct{}{}:
	default:
	}
	<-lw.done
}
