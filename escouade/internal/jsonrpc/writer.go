package jsonrpc

import (
	"io"
	"sync"
)

// DefaultMaxPending is how many bytes may wait to be written when Options
// leave it unset.
const DefaultMaxPending = 16 << 20

// lineWriter gathers lines and writes them so that no caller ever blocks on
// a peer that does not read.
//
// When nothing waits and no write is under way, the caller writes its line
// itself, in one attempt that never waits (when the transport can make such
// an attempt: see tryWriterFor): this saves a goroutine hand-off and the
// wake-up of another thread on every message, the larger part of a round
// trip's cost. Whatever that attempt leaves, and every line that arrives
// while a write is under way, goes to the writing goroutine, which writes
// what waits in one write.
type lineWriter struct {
	w   io.Writer
	try func([]byte) (int, error) // one write attempt that never waits; nil when the transport has none
	max int

	mu      sync.Mutex
	buf     []byte // lines waiting
	spare   []byte // a buffer for the next direct line
	writing bool   // a write is under way, by a caller or by the goroutine
	err     error  // the write error that ended writing; sticky
	closing bool

	kick chan struct{} // capacity 1: something waits
	done chan struct{} // closed when the goroutine has ended
}

func newLineWriter(w io.Writer, max int) *lineWriter {
	if max <= 0 {
		max = DefaultMaxPending
	}
	lw := &lineWriter{w: w, try: tryWriterFor(w), max: max, kick: make(chan struct{}, 1), done: make(chan struct{})}
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
	if lw.try != nil && !lw.writing && len(lw.buf) == 0 {
		lw.writing = true
		line := append(fn(lw.spare[:0]), '\n')
		lw.spare = nil
		lw.mu.Unlock()
		lw.direct(line)
		return nil
	}
	lw.buf = append(fn(lw.buf), '\n')
	lw.mu.Unlock()
	lw.wake()
	return nil
}

// direct writes line from the caller, in one attempt, and hands what is
// left to the goroutine. It is called with writing set.
func (lw *lineWriter) direct(line []byte) {
	n, err := lw.try(line)
	lw.mu.Lock()
	lw.writing = false
	switch {
	case err != nil:
		lw.err = err
		lw.buf = nil
	case n < len(line):
		// The rest goes first: it is older than anything added meanwhile.
		lw.buf = append(line[n:len(line):len(line)], lw.buf...)
	default:
		if cap(line) <= 64<<10 {
			lw.spare = line[:0]
		}
	}
	more := len(lw.buf) > 0 || lw.closing
	lw.mu.Unlock()
	if more {
		lw.wake()
	}
}

func (lw *lineWriter) wake() {
	select {
	case lw.kick <- struct{}{}:
	default:
	}
}

func (lw *lineWriter) loop() {
	defer close(lw.done)
	var spare []byte
	for range lw.kick {
		for {
			lw.mu.Lock()
			if lw.writing {
				// A caller is writing; it wakes this goroutine when it is
				// done and something waits.
				lw.mu.Unlock()
				break
			}
			if len(lw.buf) == 0 || lw.err != nil {
				closing := lw.closing || lw.err != nil
				lw.mu.Unlock()
				if closing {
					return
				}
				break
			}
			out := lw.buf
			lw.buf = spare[:0]
			lw.writing = true
			lw.mu.Unlock()

			_, err := lw.w.Write(out)
			if cap(out) > 1<<20 {
				out = nil // let a burst's memory go
			}
			spare = out
			lw.mu.Lock()
			lw.writing = false
			if err != nil {
				lw.err = err
				lw.buf = nil
				lw.mu.Unlock()
				return
			}
			lw.mu.Unlock()
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
	lw.wake()
	<-lw.done
}
