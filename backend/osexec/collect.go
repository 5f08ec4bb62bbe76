package osexec

import (
	"io"
	"strings"
	"unicode/utf8"

	"shinken.dev/go/shinken"
)

// DefaultBudget is the per-channel budget of the buffered exec form when
// the runtime is not configured otherwise: 1 MiB.
const DefaultBudget = 1 << 20

// Output is the buffered result of a process: what [Collect] kept of each
// channel, whether it had to cut, and how the process ended.
type Output struct {
	Stdout, Stderr []byte
	// StdoutTruncated and StderrTruncated are set when the channel wrote
	// more than the budget: exactly then, never as a guess.
	StdoutTruncated, StderrTruncated bool
	// StdoutBytes and StderrBytes count everything the channel wrote,
	// kept or not.
	StdoutBytes, StderrBytes int64
	// Status is what Wait returned.
	Status shinken.ExitStatus
}

// Collect reads p to the end, keeping up to budget bytes of each channel,
// then waits for it. Output past a channel's budget is read and discarded
// so that the child runs to completion rather than blocking on a full
// pipe. The error is the first one of Next other than io.EOF, or else
// Wait's, and the Output is filled in either way.
func Collect(p shinken.Process, budget int) (Output, error) {
	budget = max(budget, 0)
	var o Output
	var err error
	for {
		c, nerr := p.Next()
		if nerr != nil {
			if nerr != io.EOF {
				err = nerr
			}
			break
		}
		kept, total, cut := &o.Stdout, &o.StdoutBytes, &o.StdoutTruncated
		if c.Channel == shinken.Stderr {
			kept, total, cut = &o.Stderr, &o.StderrBytes, &o.StderrTruncated
		}
		*total += int64(len(c.Data))
		if room := budget - len(*kept); room > 0 {
			*kept = append(*kept, c.Data[:min(room, len(c.Data))]...)
		}
		*cut = *total > int64(budget)
	}
	st, werr := p.Wait()
	o.Status = st
	if err == nil {
		err = werr
	}
	return o, err
}

// Text returns b as UTF-8, each run of invalid bytes replaced by U+FFFD.
// When truncated is set, b is the head of a longer output and may end in
// the middle of a character: that incomplete tail is dropped rather than
// shown as invalid, since the bytes that would complete it were cut, not
// wrong.
func Text(b []byte, truncated bool) string {
	if truncated {
		b = b[:len(b)-incompleteTail(b)]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// incompleteTail returns the length of the valid but unfinished UTF-8
// sequence at the end of b, 0 if there is none.
func incompleteTail(b []byte) int {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}
