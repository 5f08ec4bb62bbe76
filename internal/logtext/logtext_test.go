package logtext_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/internal/logtext"
)

func TestQuote(t *testing.T) {
	long := strings.Repeat("é", 10<<20/2) // 10 MiB of two-byte characters
	tests := []struct {
		name, in, want string
	}{
		{"short", "agent 1.0", `"agent 1.0"`},
		{"empty", "", `""`},
		{"newline", "a\nlevel=ERROR msg=forged", `"a\nlevel=ERROR msg=forged"`},
		{"escape", "\x1b[2J", `"\x1b[2J"`},
		{"invalid UTF-8", "a\xffb", `"a\xffb"`},
		{"at the bound", strings.Repeat("x", logtext.Max), strconv.Quote(strings.Repeat("x", logtext.Max))},
		{"over the bound", strings.Repeat("x", logtext.Max+1), strconv.Quote(strings.Repeat("x", logtext.Max)+"…") + " (+1 bytes)"},
		{"cut on a character", long, strconv.Quote(long[:logtext.Max]+"…") + " (+" + strconv.Itoa(len(long)-logtext.Max) + " bytes)"},
		{"cut before a split character", "x" + long, strconv.Quote("x"+long[:logtext.Max-2]+"…") + " (+" + strconv.Itoa(len(long)+1-(logtext.Max-1)) + " bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := logtext.Quote(tt.in)
			if got != tt.want {
				t.Fatalf("Quote = %.200s, want %.200s", got, tt.want)
			}
			if len(got) > 4*logtext.Max+32 {
				t.Fatalf("Quote kept %d bytes", len(got))
			}
		})
	}
}

// TestRecord: a record of a 10 MiB peer text, through slog's handlers,
// stays small and on one line.
func TestRecord(t *testing.T) {
	name := strings.Repeat("n", 10<<20) + "\n"
	for _, h := range []func(*bytes.Buffer) slog.Handler{
		func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
	} {
		var buf bytes.Buffer
		slog.New(h(&buf)).Warn("hello refused", logtext.String("client", name), logtext.Err(errors.New(name)))
		if buf.Len() > 1024 || strings.Count(buf.String(), "\n") != 1 {
			t.Fatalf("record of %d bytes: %.300s", buf.Len(), buf.String())
		}
	}
}

func TestCut(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"agent", "agent"},
		{strings.Repeat("a", logtext.Max), strings.Repeat("a", logtext.Max)},
		{strings.Repeat("a", logtext.Max+1), strings.Repeat("a", logtext.Max) + "…"},
		{strings.Repeat("a", logtext.Max-1) + "é", strings.Repeat("a", logtext.Max-1) + "…"},
	} {
		if got := logtext.Cut(tt.in); got != tt.want {
			t.Errorf("Cut(%d bytes) = %q, want %q", len(tt.in), got, tt.want)
		}
	}
}

func TestLimiter(t *testing.T) {
	l := &logtext.Limiter{Burst: 3, Window: time.Hour}
	for i := range 3 {
		if ok, dropped := l.Allow(); !ok || dropped != 0 {
			t.Fatalf("record %d: %v %d", i, ok, dropped)
		}
	}
	for i := range 100 {
		if ok, _ := l.Allow(); ok {
			t.Fatalf("record %d over the burst allowed", i+3)
		}
	}
	// A new window lets records through again, the first with the count
	// of those refused.
	l = &logtext.Limiter{Burst: 1, Window: time.Nanosecond}
	l.Allow()
	for {
		ok, dropped := l.Allow()
		if ok {
			if dropped > 0 {
				t.Fatalf("dropped %d in a window of its own", dropped)
			}
			break
		}
	}
}

func TestLimiterReportsDropped(t *testing.T) {
	l := &logtext.Limiter{Burst: 1, Window: 10 * time.Millisecond}
	if ok, _ := l.Allow(); !ok {
		t.Fatal("first record refused")
	}
	refused := 0
	for {
		ok, dropped := l.Allow()
		if !ok {
			refused++
			continue
		}
		if dropped != refused {
			t.Fatalf("next record says %d unlogged, %d were", dropped, refused)
		}
		return
	}
}
