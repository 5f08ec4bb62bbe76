package escouade

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"
)

// What a plugin may put in the journal, by stderr or by log: a plugin that
// writes without pause must cost the journal little and the Host nothing.
const (
	maxJournalLine = 2 << 10 // bytes of one line kept; the rest is cut
	journalRate    = 50      // lines a second, on average
	journalBurst   = 200     // lines at once
)

// A limiter is a token bucket that counts what it refuses, so that the
// journal can say how much it dropped.
type limiter struct {
	mu      sync.Mutex
	rate    float64 // tokens a second
	burst   float64
	tokens  float64
	last    time.Time
	dropped int
}

func newLimiter(rate, burst float64) *limiter {
	return &limiter{rate: rate, burst: burst, tokens: burst}
}

// allow takes a token. When it grants one after refusals, it returns how
// many were refused in between, for the journal to say.
func (l *limiter) allow(now time.Time) (ok bool, droppedBefore int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() {
		l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	}
	l.last = now
	if l.tokens < 1 {
		l.dropped++
		return false, 0
	}
	l.tokens--
	d := l.dropped
	l.dropped = 0
	return true, d
}

// flush returns and forgets the count of refusals not yet reported.
func (l *limiter) flush() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.dropped
	l.dropped = 0
	return d
}

// journal writes a plugin's entries: every one carries the plugin's id, and
// those the plugin causes go through a limiter.
type journal struct {
	log   *slog.Logger
	clock Clock
	lines *limiter // stderr and log notifications
	proto *limiter // protocol misbehaviour
}

func newJournal(h *Host, id string) *journal {
	return &journal{
		log:   h.log.With(slog.String("plugin", id)),
		clock: h.opts.Clock,
		lines: newLimiter(journalRate, journalBurst),
		proto: newLimiter(journalRate, journalBurst),
	}
}

// say writes an entry the Host itself decided to write: never limited.
func (j *journal) say(level slog.Level, msg string, attrs ...slog.Attr) {
	j.log.LogAttrs(context.Background(), level, msg, attrs...)
}

// limited writes an entry the plugin caused, through l.
func (j *journal) limited(l *limiter, level slog.Level, msg string, attrs ...slog.Attr) {
	ok, dropped := l.allow(j.clock.Now())
	if dropped > 0 {
		j.say(slog.LevelWarn, "journal entries dropped: the plugin wrote too much, too fast", slog.Int("dropped", dropped))
	}
	if ok {
		j.say(level, msg, attrs...)
	}
}

// flush reports entries dropped and not yet reported.
func (j *journal) flush() {
	for _, l := range []*limiter{j.lines, j.proto} {
		if d := l.flush(); d > 0 {
			j.say(slog.LevelWarn, "journal entries dropped: the plugin wrote too much, too fast", slog.Int("dropped", d))
		}
	}
}

// cut shortens s to maxJournalLine bytes on a character boundary, and makes
// it valid UTF-8.
func cut(s []byte) (string, bool) {
	long := len(s) > maxJournalLine
	if long {
		s = s[:maxJournalLine]
		for len(s) > 0 && !utf8.RuneStart(s[len(s)-1]) {
			s = s[:len(s)-1]
		}
		if len(s) > 0 {
			s = s[:len(s)-1] // a rune cut in its middle, or a last whole one: let it go
		}
	}
	return string(bytes.ToValidUTF8(s, []byte("\uFFFD"))), long
}

// stderrWriter turns a plugin's standard error into journal entries, a line
// each. It never blocks and never grows: a line past maxJournalLine is cut,
// and past the rate lines are counted and dropped.
type stderrWriter struct {
	j       *journal
	mu      sync.Mutex
	partial []byte
	over    bool // the line under way passed the cap
}

func (w *stderrWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if room := maxJournalLine + 1 - len(w.partial); room > 0 {
			w.partial = append(w.partial, chunk[:min(room, len(chunk))]...)
		}
		if len(w.partial) > maxJournalLine {
			w.over = true
		}
		if i < 0 {
			break
		}
		w.emit()
		b = b[i+1:]
	}
	return n, nil
}

func (w *stderrWriter) emit() {
	line, long := cut(w.partial)
	attrs := []slog.Attr{slog.String("stream", "stderr")}
	if long || w.over {
		attrs = append(attrs, slog.Bool("cut", true))
	}
	w.j.limited(w.j.lines, slog.LevelInfo, line, attrs...)
	w.partial = w.partial[:0]
	w.over = false
}

// close writes a last line without its newline.
func (w *stderrWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.emit()
	}
}
