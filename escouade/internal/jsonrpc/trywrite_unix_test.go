//go:build unix

package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
)

// On a non-blocking pipe the caller writes its line itself; a peer that
// stops reading blocks nobody, and once it reads again every line arrives,
// whole and in order.
func TestDirectWritesToAPeerThatStopsReading(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if tryWriterFor(w) == nil {
		t.Fatal("os.Pipe gives no non-blocking write")
	}
	inR, inW := io.Pipe()
	c := NewConn(inR, w, nil, &Options{MaxPending: 256 << 10})
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background()) }()
	pad := strings.Repeat("x", 1000)
	sent := 0
	for {
		err := c.Notify("n", []any{sent, pad})
		if errors.Is(err, ErrBackpressure) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sent++
	}
	// The pipe holds 64 KiB, the write under way and the backlog 256 KiB
	// each at most: the rest was refused.
	if sent < 64 || sent > 700 {
		t.Errorf("%d lines taken before backpressure", sent)
	}
	got := make(chan int, 1)
	go func() {
		br := bufio.NewReader(r)
		n := 0
		for n < sent {
			line, err := br.ReadString('\n')
			if err != nil {
				break
			}
			var m struct {
				Params []json.RawMessage `json:"params"`
			}
			if json.Unmarshal([]byte(line), &m) != nil || len(m.Params) != 2 || string(m.Params[0]) != strconv.Itoa(n) {
				t.Errorf("line %d: %.60s", n, line)
				break
			}
			n++
		}
		got <- n
	}()
	if n := <-got; n != sent {
		t.Errorf("read %d lines of %d", n, sent)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	w.Close()
}
