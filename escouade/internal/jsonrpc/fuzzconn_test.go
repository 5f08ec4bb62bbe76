package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for the writing goroutine and callers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// FuzzConn feeds a Conn any input, lines of requests, notifications,
// responses, batches and garbage, served by a handler that echoes, fails,
// calls the other side back or notifies. The Conn must end at the end of
// the input, answer every request it could identify exactly once, and
// write nothing but lines that parse as JSON-RPC. The seed corpus is in
// testdata/fuzz/FuzzConn.
func FuzzConn(f *testing.F) {
	for _, s := range []string{
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"fail\"}\n",
		"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\"},{\"jsonrpc\":\"2.0\",\"method\":\"note\"}]\n",
		"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"back\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":7}\n",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":7}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,\"message\":\"m\"}}\n",
		"garbage\n\n   \n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"notify\"}\n[]\n[1,2]\n",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		var c *Conn
		h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			switch req.Method {
			case "echo":
				return json.RawMessage(req.Params), nil
			case "back":
				// The input may or may not hold the answer (id 1): the call
				// ends with it, or with the connection.
				res, err := c.Call(ctx, "q", nil)
				return json.RawMessage(res), err
			case "notify":
				return nil, c.Notify("n", nil)
			case "note":
				return nil, nil
			}
			return nil, Errorf(-32004, "failed: %s", req.Method)
		})
		out := &syncBuffer{}
		c = NewConn(bytes.NewReader(input), out, h, &Options{MaxLine: 4096, Workers: 4})
		if err := c.Run(context.Background()); err != nil {
			t.Fatalf("Run: %v", err)
		}
		answered := map[string]int{}
		sc := bufio.NewScanner(strings.NewReader(out.b.String()))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			items, _, perr := Parse(sc.Bytes(), nil)
			if perr != nil {
				t.Fatalf("wrote a line that does not parse: %v: %q", perr, sc.Text())
			}
			for _, it := range items {
				if it.Err != nil {
					t.Fatalf("wrote an invalid message: %v: %q", it.Err, sc.Text())
				}
				if it.Kind == KindResponse && string(it.ID) != "null" {
					answered[string(it.ID)]++
				}
			}
		}
		for id, n := range answered {
			// An id the input used twice is answered twice; one used once,
			// once. Either way never more than the input asked.
			if n > bytes.Count(input, []byte(id)) {
				t.Fatalf("id %s answered %d times: %q", id, n, input)
			}
		}
	})
}
