package jsonrpc

import (
	"bufio"
	"errors"
	"io"
)

// DefaultMaxLine is the byte cap on one line when Options leave it unset.
const DefaultMaxLine = 1 << 20

// slabSize is the size of the blocks lines are copied into: one allocation
// serves many short lines, and a line stays valid for as long as something
// holds it.
const slabSize = 32 << 10

// A LineReader reads newline-terminated lines with a byte cap that holds
// before anything is decoded: a line past the cap is discarded as it
// streams by, never held in memory.
type LineReader struct {
	r    *bufio.Reader
	max  int
	acc  []byte // a line longer than the bufio buffer, being gathered
	slab []byte
	err  error // an error to return after the last partial line
}

// NewLineReader returns a LineReader over r with a cap of max bytes per line
// (newline excluded); max <= 0 means DefaultMaxLine.
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	size := 64 << 10
	if max+1 < size {
		size = max + 1
	}
	if size < 16 {
		size = 16
	}
	return &LineReader{r: bufio.NewReaderSize(r, size), max: max}
}

// A TooLongError is returned for a line that passed the cap. It wraps
// ErrLineTooLong.
type TooLongError struct {
	Size int64 // the line's full length, newline excluded
	Max  int
}

// Error says how long the line was, and the cap.
func (e *TooLongError) Error() string {
	return "jsonrpc: line of " + itoa(e.Size) + " bytes is over the cap of " + itoa(int64(e.Max))
}

// Unwrap returns ErrLineTooLong.
func (e *TooLongError) Unwrap() error { return ErrLineTooLong }

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	if n == 0 {
		return "0"
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// Next returns the next line without its newline (a final line may lack
// one). The slice is the caller's to keep. A line past the cap is consumed
// and reported as a *TooLongError; reading may go on after it. At the end of
// the input Next returns io.EOF, or the error that ended it.
func (l *LineReader) Next() ([]byte, error) {
	if l.err != nil {
		return nil, l.err
	}
	var skipped int64 // bytes of an overlong line, discarded
	for {
		frag, err := l.r.ReadSlice('\n')
		complete := err == nil
		if complete {
			frag = frag[:len(frag)-1]
		}
		switch {
		case skipped > 0:
			skipped += int64(len(frag))
		case len(l.acc)+len(frag) > l.max:
			skipped = int64(len(l.acc) + len(frag))
			l.acc = l.acc[:0]
		case !complete && err == bufio.ErrBufferFull:
			l.acc = l.gather(frag)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if !complete {
			l.err = err
			if errors.Is(err, io.EOF) {
				l.err = io.EOF
			}
			if skipped == 0 && len(l.acc)+len(frag) == 0 {
				return nil, l.err
			}
		}
		if skipped > 0 {
			return nil, &TooLongError{Size: skipped, Max: l.max}
		}
		if len(l.acc) > 0 {
			// The gathered line is handed over whole, not copied again.
			line := l.gather(frag)
			l.acc = nil
			return line, nil
		}
		return l.keep(frag), nil
	}
}

// gather appends frag to the line being gathered, doubling its room when
// it must grow (within the cap), so that a line of n bytes costs at most
// about 2n bytes of allocations, and is never copied once gathered.
func (l *LineReader) gather(frag []byte) []byte {
	if need := len(l.acc) + len(frag); need > cap(l.acc) {
		room := min(max(2*cap(l.acc), need, 64<<10), l.max)
		acc := make([]byte, len(l.acc), max(room, need))
		copy(acc, l.acc)
		l.acc = acc
	}
	return append(l.acc, frag...)
}

// Buffered reports whether more input was read than Next has returned:
// another line, or part of one, is already here.
func (l *LineReader) Buffered() bool { return l.r.Buffered() > 0 }

// keep copies b into the slab, or into a slice of its own when large.
func (l *LineReader) keep(b []byte) []byte {
	n := len(b)
	if n > slabSize/4 {
		return append([]byte(nil), b...)
	}
	if cap(l.slab)-len(l.slab) < n {
		l.slab = make([]byte, 0, slabSize)
	}
	start := len(l.slab)
	l.slab = append(l.slab, b...)
	return l.slab[start : start+n : start+n]
}
