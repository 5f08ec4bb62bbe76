package escouade_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/internal/jsonrpc"
	"shinken.dev/go/escouade/manifest"
)

// TestProcSpawnAnswerFirst: the answer to proc/spawn reaches the plugin
// before any proc/out or proc/exit of the program it names, whatever holds
// the program's descendants. Fast programs (echo, true) end before the
// Host has written the answer, four at once, 1,000 times in all; the order
// is read from the plugin's side of the wire, line by line. A program
// under a shepherd starts one more process, this test binary, so those
// modes make fewer: the answer lost the race once in 20 there, once in
// 200 in a group alone.
func TestProcSpawnAnswerFirst(t *testing.T) {
	const workers = 4
	for _, c := range []struct {
		mode   string
		spawns int
	}{{"auto", 100}, {"shepherd", 100}, {"group", 800}} {
		mode, spawns := c.mode, c.spawns
		t.Run(mode, func(t *testing.T) {
			defer escouade.SetContainment(mode)()
			t.Logf("descendants held by %q", escouade.Containment())
			h, _, _, _ := procHost(t)
			op := startOrderPlugin(t, h, `,"permissions":{"commands":["echo hi","true"]}`)
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < spawns; i += workers {
						command, args, want := "echo", []string{"hi"}, "hi\n"
						if i%2 == 1 {
							command, args, want = "true", []string{}, ""
						}
						if err := op.run(command, args, want); err != nil {
							errs <- fmt.Errorf("spawn %d (%s): %w", i, command, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if early := op.early(); len(early) > 0 {
				t.Errorf("%d notifications came before the answer that names their program, first: %s", len(early), early[0])
			}
			if n := op.exits(); n != spawns {
				t.Errorf("%d programs' ends seen, want %d", n, spawns)
			}
		})
	}
}

// An orderPlugin spawns programs and watches, on its own input, that no
// line names a program before the answer that gave it.
type orderPlugin struct {
	conn *jsonrpc.Conn

	mu      sync.Mutex
	known   map[int64]bool // programs named by an answer read
	ends    map[int64]chan string
	out     map[int64]*bytes.Buffer
	ended   int
	tooSoon []string // the lines that named a program not yet known
	partial []byte   // a line not yet read to its end
}

func startOrderPlugin(t *testing.T, h *escouade.Host, fields string) *orderPlugin {
	t.Helper()
	m, err := manifest.Parse(fmt.Appendf(nil, `{"id":"order","version":"1.0.0","protocolVersion":1,"run":{"js":"main.js"}%s}`, fields))
	if err != nil {
		t.Fatal(err)
	}
	op := &orderPlugin{known: map[int64]bool{}, ends: map[int64]chan string{}, out: map[int64]*bytes.Buffer{}}
	ready := make(chan struct{})
	run := func(ctx context.Context, in io.Reader, out io.Writer) error {
		op.conn = jsonrpc.NewConn(io.TeeReader(in, watcher(op.watch)), out, jsonrpc.HandlerFunc(op.handle), nil)
		close(ready)
		return op.conn.Run(ctx)
	}
	if _, err := h.StartFunc(context.Background(), m, "", run); err != nil {
		t.Fatal(err)
	}
	<-ready
	return op
}

// watcher is an io.Writer that hands what it is given to a function.
type watcher func([]byte)

func (w watcher) Write(b []byte) (int, error) { w(b); return len(b), nil }

// watch reads the Host's lines in the order the plugin reads them: an
// answer makes its program known, a proc/out or proc/exit before it is
// too soon.
func (op *orderPlugin) watch(b []byte) {
	op.mu.Lock()
	defer op.mu.Unlock()
	op.partial = append(op.partial, b...)
	for {
		line, rest, ok := bytes.Cut(op.partial, []byte("\n"))
		if !ok {
			return
		}
		var msg struct {
			ID     json.RawMessage
			Method string
			Result struct{ Proc int64 }
			Params struct{ Proc int64 }
		}
		if json.Unmarshal(line, &msg) == nil {
			switch {
			case msg.ID != nil && msg.Method == "" && msg.Result.Proc != 0:
				op.known[msg.Result.Proc] = true
			case (msg.Method == "proc/out" || msg.Method == "proc/exit") && !op.known[msg.Params.Proc]:
				op.tooSoon = append(op.tooSoon, string(line))
			}
		}
		op.partial = append(op.partial[:0], rest...)
	}
}

func (op *orderPlugin) handle(_ context.Context, req *jsonrpc.Request) (any, error) {
	switch req.Method {
	case "initialize":
		return json.RawMessage(`{"protocolVersion":1,"capabilities":{}}`), nil
	case "shutdown":
		return json.RawMessage("null"), nil
	case "proc/out":
		var p struct {
			Proc int64
			Data string
		}
		json.Unmarshal(req.Params, &p)
		op.mu.Lock()
		if op.out[p.Proc] == nil {
			op.out[p.Proc] = &bytes.Buffer{}
		}
		op.out[p.Proc].WriteString(p.Data)
		op.mu.Unlock()
		return nil, nil
	case "proc/exit":
		var p struct{ Proc int64 }
		json.Unmarshal(req.Params, &p)
		op.mu.Lock()
		op.ended++
		out := op.out[p.Proc]
		delete(op.out, p.Proc)
		end := op.end(p.Proc)
		op.mu.Unlock()
		if out == nil {
			out = &bytes.Buffer{}
		}
		end <- out.String()
		return nil, nil
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no")
}

// end returns the channel that hears program id's output once it ended;
// op.mu must be held.
func (op *orderPlugin) end(id int64) chan string {
	ch, ok := op.ends[id]
	if !ok {
		ch = make(chan string, 1)
		op.ends[id] = ch
	}
	return ch
}

// run spawns a program and waits for its end, which must follow all of
// want on its stdout.
func (op *orderPlugin) run(command string, args []string, want string) error {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	raw, err := op.conn.Call(ctx, "proc/spawn", map[string]any{"command": command, "args": args})
	if err != nil {
		return err
	}
	var r struct{ Proc int64 }
	if err := json.Unmarshal(raw, &r); err != nil {
		return err
	}
	op.mu.Lock()
	end := op.end(r.Proc)
	op.mu.Unlock()
	select {
	case out := <-end:
		op.mu.Lock()
		delete(op.ends, r.Proc)
		op.mu.Unlock()
		if out != want {
			return fmt.Errorf("program %d wrote %q, want %q", r.Proc, out, want)
		}
		return nil
	case <-time.After(hangGuard):
		return fmt.Errorf("program %d: no proc/exit", r.Proc)
	}
}

func (op *orderPlugin) early() []string {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.tooSoon
}

func (op *orderPlugin) exits() int {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.ended
}
