// Package logtext makes what a peer sent safe to log: bounded, so that a
// client cannot fill a disk through the log (a 10 MB client name once
// became a 10 MB warning), and quoted, so that no control character or
// invalid UTF-8 it sent reaches the log as such (no forged records, no
// terminal escapes), whatever the slog handler. And a Limiter, for the
// records that an unauthenticated peer can cause at will (a refused hello):
// a few are logged, the rest counted, and the count reported with the next
// one logged.
package logtext

import (
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Max is how many bytes of a peer's text a record keeps.
const Max = 128

// Quote returns s as a Go string literal (strconv.Quote) of at most its
// first Max bytes, cut on a character boundary; when s is longer, the
// literal is followed by how many bytes were left out, as in
// `"abc…" (+10485632 bytes)`.
func Quote(s string) string {
	if len(s) <= Max {
		return strconv.Quote(s)
	}
	cut := cutAt(s)
	return strconv.Quote(s[:cut]+"…") + " (+" + strconv.Itoa(len(s)-cut) + " bytes)"
}

// Cut returns s, or its first Max bytes (cut on a character boundary)
// followed by "…": a peer's name kept in events and recordings, where
// the caller quotes it.
func Cut(s string) string {
	if len(s) <= Max {
		return s
	}
	return s[:cutAt(s)] + "…"
}

// cutAt is where a text longer than Max is cut: at Max, or before the
// character that straddles it.
func cutAt(s string) int {
	cut := Max
	for cut > Max-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return cut
}

// String is a slog attribute holding Quote(s): a text the peer sent (a
// client name, a call id, a path).
func String(key, s string) slog.Attr { return slog.String(key, Quote(s)) }

// Err is the slog attribute "err" holding Quote of err's text, for errors
// that may carry what the peer sent (a decoding error names the field, a
// not-found error the name asked for). A nil err gives an empty attribute,
// which slog leaves out.
func Err(err error) slog.Attr {
	if err == nil {
		return slog.Attr{}
	}
	return slog.String("err", Quote(err.Error()))
}

// A Limiter lets at most Burst records through per Window and counts the
// others. It is safe for concurrent use; the zero value lets through 5
// records a minute.
type Limiter struct {
	// Burst is how many records a window lets through; 0 means 5.
	Burst int
	// Window is the period Burst counts over; 0 means a minute.
	Window time.Duration

	mu      sync.Mutex
	start   time.Time
	used    int
	dropped int
}

// Allow reports whether a record may be written now. When it may, dropped
// is how many records were refused since the last one allowed: write it
// in the record (as "unlogged"), so the log still says how many there were.
func (l *Limiter) Allow() (ok bool, dropped int) {
	burst, window := l.Burst, l.Window
	if burst <= 0 {
		burst = 5
	}
	if window <= 0 {
		window = time.Minute
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.start) >= window {
		l.start, l.used = now, 0
	}
	if l.used >= burst {
		l.dropped++
		return false, 0
	}
	l.used++
	dropped, l.dropped = l.dropped, 0
	return true, dropped
}
