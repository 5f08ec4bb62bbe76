package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 100)
	in := "a\n\nbb\r\n" + long + "\n" + strings.Repeat("y", 40) + "\nlast"
	lr := NewLineReader(strings.NewReader(in), 64)
	want := []string{"a", "", "bb\r", "!100", strings.Repeat("y", 40), "last"}
	for _, w := range want {
		line, err := lr.Next()
		if strings.HasPrefix(w, "!") {
			var tl *TooLongError
			if !errors.As(err, &tl) || !errors.Is(err, ErrLineTooLong) || itoa(tl.Size) != w[1:] {
				t.Fatalf("want a line too long of %s bytes, got %q, %v", w[1:], line, err)
			}
			continue
		}
		if err != nil || string(line) != w {
			t.Fatalf("Next = %q, %v; want %q", line, err, w)
		}
	}
	if _, err := lr.Next(); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
	if _, err := lr.Next(); err != io.EOF {
		t.Fatalf("after the end: %v, want io.EOF", err)
	}
}

// endless yields n bytes of 'z' and then a newline and the rest.
type endless struct {
	n    int64
	rest *strings.Reader
}

func (e *endless) Read(p []byte) (int, error) {
	if e.n == 0 {
		return e.rest.Read(p)
	}
	k := min(int64(len(p)), e.n)
	for i := range p[:k] {
		p[i] = 'z'
	}
	e.n -= k
	return int(k), nil
}

func TestLineReaderHugeLineStreamsBy(t *testing.T) {
	const huge = 100 << 20
	lr := NewLineReader(&endless{n: huge, rest: strings.NewReader("\n{\"ok\":1}\n")}, 1<<20)
	_, err := lr.Next()
	var tl *TooLongError
	if !errors.As(err, &tl) || tl.Size != huge {
		t.Fatalf("want a line too long of %d bytes, got %v", huge, err)
	}
	if cap(lr.acc) > 1<<20+64<<10 {
		t.Errorf("the reader held %d bytes of a line it was told to cap at 1 MiB", cap(lr.acc))
	}
	line, err := lr.Next()
	if err != nil || string(line) != `{"ok":1}` {
		t.Fatalf("the line after: %q, %v", line, err)
	}
}

func TestLineReaderLinesStayValid(t *testing.T) {
	var in bytes.Buffer
	for i := range 5000 {
		in.WriteString(itoa(int64(i)) + "\n")
	}
	lr := NewLineReader(&in, 0)
	var lines [][]byte
	for {
		line, err := lr.Next()
		if err != nil {
			break
		}
		lines = append(lines, line)
	}
	for i, l := range lines {
		if string(l) != itoa(int64(i)) {
			t.Fatalf("line %d became %q", i, l)
		}
	}
}

// BenchmarkLongLine reads one line longer than the reader's buffer, beside
// bufio.Reader.ReadBytes, the standard library's way, as the reference: a
// long line is gathered with its room doubled and handed over uncopied.
func BenchmarkLongLine(b *testing.B) {
	for _, n := range []int{1 << 20, 4 << 20} {
		data := append(bytes.Repeat([]byte("x"), n), '\n')
		b.Run(fmt.Sprintf("LineReader/%dMiB", n>>20), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l := NewLineReader(bytes.NewReader(data), 8<<20)
				if line, err := l.Next(); err != nil || len(line) != n {
					b.Fatal(len(line), err)
				}
			}
		})
		b.Run(fmt.Sprintf("bufio.ReadBytes/%dMiB", n>>20), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := bufio.NewReaderSize(bytes.NewReader(data), 64<<10)
				if line, err := r.ReadBytes('\n'); err != nil || len(line) != n+1 {
					b.Fatal(len(line), err)
				}
			}
		})
	}
}
