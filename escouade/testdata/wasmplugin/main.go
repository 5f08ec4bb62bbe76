//go:build wasip1

// Command wasmplugin is a plugin for run.wasm, written in Go for wasip1,
// that the escouade package's tests build and run: it calls every method a
// plugin in WASM may call, by escouade.call and by lines, and says what it
// found in its journal (log), one "ok <step>" or "fail <step>: why" at a
// time, then "done". Other modes, chosen by the fact's data, misbehave on
// purpose.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"
)

//go:wasmimport escouade call
func hostCall(methodPtr, methodLen, paramsPtr, paramsLen, outPtr, outCap uint32) uint32

//go:wasmimport escouade result
func hostResult(outPtr, outCap uint32) uint32

var out = make([]byte, 4096) // small on purpose: long answers go through result

// An rpcError is an error answer.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

// call calls the Host through escouade.call.
func call(method string, params any) (json.RawMessage, error) {
	var p []byte
	if params != nil {
		var err error
		if p, err = json.Marshal(params); err != nil {
			return nil, err
		}
	}
	m := []byte(method)
	n := hostCall(ptr(m), uint32(len(m)), ptr(p), uint32(len(p)), ptr(out), uint32(len(out)))
	answer := out[:min(int(n), len(out))]
	if int(n) > len(out) {
		big := make([]byte, n)
		if got := hostResult(ptr(big), uint32(len(big))); got != n {
			return nil, fmt.Errorf("result gave %d, want %d", got, n)
		}
		answer = big
	}
	var a struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		return nil, fmt.Errorf("answer %q: %v", answer, err)
	}
	if a.Error != nil {
		return nil, a.Error
	}
	return a.Result, nil
}

func ptr(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(&b[0])))
}

// The lines.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

var (
	in      = bufio.NewReaderSize(os.Stdin, 1<<16)
	queue   []message // notifications read while waiting for something else
	lang    string
	nextID  = 0
	replies = map[string]message{}
	ended   = false
)

func write(v any) {
	b, _ := json.Marshal(v)
	os.Stdout.Write(append(b, '\n'))
}

func logf(level, format string, args ...any) {
	write(map[string]any{"jsonrpc": "2.0", "method": "log", "params": map[string]string{"level": level, "message": fmt.Sprintf(format, args...)}})
}

// next reads one line, serving the Host's requests on the way; it returns
// false at the end of input.
func next() (message, bool) {
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			ended = true
			return message{}, false
		}
		var m message
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch {
		case m.Method == "" && m.ID != nil:
			replies[string(m.ID)] = m
			return m, true
		case m.ID != nil:
			serve(m)
		default:
			return m, true
		}
	}
}

// serve answers a request of the Host.
func serve(m message) {
	switch m.Method {
	case "initialize":
		var p struct {
			Lang string `json:"lang"`
		}
		json.Unmarshal(m.Params, &p)
		lang = p.Lang
		write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"protocolVersion": 1, "capabilities": map[string]any{}}})
	case "shutdown":
		write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": nil})
	case "permissions/decide":
		write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"decision": "allow", "message": "wasm " + lang}})
	default:
		write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
	}
}

// await reads until a notification of method for which match holds; the
// others wait in the queue.
func await(method string, match func(json.RawMessage) bool) (json.RawMessage, error) {
	for i, m := range queue {
		if m.Method == method && match(m.Params) {
			queue = append(queue[:i:i], queue[i+1:]...)
			return m.Params, nil
		}
	}
	for {
		m, ok := next()
		if !ok {
			return nil, errors.New("the input ended")
		}
		if m.Method == "" {
			continue
		}
		if m.Method == method && match(m.Params) {
			return m.Params, nil
		}
		queue = append(queue, m)
	}
}

// lineCall calls the Host by a line and waits for its answer.
func lineCall(method string, params any) (json.RawMessage, error) {
	nextID++
	id := fmt.Sprintf("%d", nextID)
	write(map[string]any{"jsonrpc": "2.0", "id": nextID, "method": method, "params": params})
	for {
		if r, ok := replies[id]; ok {
			delete(replies, id)
			if r.Error != nil {
				return nil, r.Error
			}
			return r.Result, nil
		}
		m, ok := next()
		if !ok {
			return nil, errors.New("the input ended")
		}
		if m.Method != "" {
			queue = append(queue, m)
		}
	}
}

func main() {
	for {
		var m message
		if len(queue) > 0 {
			m, queue = queue[0], queue[1:]
		} else {
			var ok bool
			if m, ok = next(); !ok {
				return
			}
		}
		if m.Method != "events/fact" {
			continue
		}
		var f struct {
			Data struct {
				Mode string `json:"mode"`
				N    int    `json:"n"`
			} `json:"data"`
		}
		json.Unmarshal(m.Params, &f)
		switch f.Data.Mode {
		case "all":
			all()
			logf("info", "done")
		case "grow":
			var keep [][]byte
			for {
				keep = append(keep, make([]byte, 1<<20))
				keep[len(keep)-1][0] = 1
			}
		case "spin":
			for {
			}
		case "bench":
			// escouade.call's round trip alone: params made once, the
			// answer not decoded.
			m, p := []byte("timer/cancel"), []byte(`{"timer":0}`)
			for range f.Data.N {
				hostCall(ptr(m), uint32(len(m)), ptr(p), uint32(len(p)), ptr(out), uint32(len(out)))
			}
			logf("info", "bench done")
		case "exit":
			os.Exit(3)
		}
		if ended {
			return
		}
	}
}

// step runs one check and says how it went.
func step(name string, fn func() error) {
	if err := fn(); err != nil {
		logf("warn", "fail %s: %v", name, err)
		return
	}
	logf("info", "ok %s", name)
}

func want(cond bool, format string, args ...any) error {
	if cond {
		return nil
	}
	return fmt.Errorf(format, args...)
}

func code(err error) int {
	var e *rpcError
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func idOf(raw json.RawMessage, field string) int64 {
	var m map[string]int64
	json.Unmarshal(raw, &m)
	return m[field]
}

func isFor(field string, id int64) func(json.RawMessage) bool {
	return func(p json.RawMessage) bool { return idOf(p, field) == id }
}

func all() {
	step("lang", func() error { return want(lang == "fr", "lang %q", lang) })
	step("secrets/get", func() error {
		r, err := call("secrets/get", map[string]string{"key": "token"})
		return want(err == nil && string(r) == `"s3cret"`, "%s %v", r, err)
	})
	step("secrets/get by a line", func() error {
		r, err := lineCall("secrets/get", map[string]string{"key": "token"})
		return want(err == nil && string(r) == `"s3cret"`, "%s %v", r, err)
	})
	step("settings/get", func() error {
		r, err := call("settings/get", map[string]string{})
		return want(err == nil && strings.Contains(string(r), `"color":"blue"`), "%s %v", r, err)
	})
	step("files/read", func() error {
		r, err := call("files/read", map[string]string{"path": "data.txt"})
		return want(err == nil && string(r) == `"some data"`, "%s %v", r, err)
	})
	step("log", func() error {
		_, err := call("log", map[string]string{"level": "info", "message": "a log by escouade.call"})
		return err
	})
	step("methodNotFound", func() error {
		_, err := call("events/fact", map[string]string{})
		return want(code(err) == -32601, "%v", err)
	})
	step("invalidParams", func() error {
		_, err := call("timer/set", map[string]string{"ms": "soon"})
		return want(code(err) == -32602, "%v", err)
	})

	step("timer/set, timer/cancel, timer/fired", func() error {
		r1, err := call("timer/set", map[string]float64{"ms": 40})
		if err != nil {
			return err
		}
		if _, err := call("timer/cancel", map[string]int64{"timer": idOf(r1, "timer")}); err != nil {
			return err
		}
		r2, err := call("timer/set", map[string]float64{"ms": 1})
		if err != nil {
			return err
		}
		r3, err := call("timer/set", map[string]float64{"ms": 80})
		if err != nil {
			return err
		}
		if _, err := await("timer/fired", isFor("timer", idOf(r2, "timer"))); err != nil {
			return err
		}
		p, err := await("timer/fired", func(json.RawMessage) bool { return true })
		if err != nil {
			return err
		}
		return want(idOf(p, "timer") == idOf(r3, "timer"), "fired %s, want %s (the cancelled one is %s)", p, r3, r1)
	})

	step("fs/write, fs/read, fs/stat, fs/list, fs/canon", func() error {
		w, err := call("fs/write", map[string]any{"root": "temp", "path": "notes/a.txt", "text": "été"})
		if err != nil {
			return err
		}
		if _, err := call("fs/write", map[string]any{"root": "temp", "path": "notes/a.txt", "text": "!", "append": true}); err != nil {
			return err
		}
		r, err := call("fs/read", map[string]string{"root": "temp", "path": "notes/a.txt"})
		if err != nil || string(r) != `{"text":"été!"}` {
			return fmt.Errorf("read %s %v", r, err)
		}
		if _, err := call("fs/write", map[string]any{"root": "temp", "path": "bin", "dataBase64": "AP8="}); err != nil {
			return err
		}
		if r, err := call("fs/read", map[string]string{"root": "temp", "path": "bin"}); err != nil || string(r) != `{"dataBase64":"AP8="}` {
			return fmt.Errorf("read bin %s %v", r, err)
		}
		st, err := call("fs/stat", map[string]string{"root": "temp", "path": "notes/a.txt"})
		if err != nil || !strings.Contains(string(st), `"kind":"file","bytes":6`) {
			return fmt.Errorf("stat %s %v", st, err)
		}
		ls, err := call("fs/list", map[string]string{"root": "temp", "path": "."})
		if err != nil || !strings.Contains(string(ls), `{"name":"notes","kind":"dir","bytes":0}`) || !strings.Contains(string(ls), `"truncated":false`) {
			return fmt.Errorf("list %s %v", ls, err)
		}
		var wr struct{ Path string }
		json.Unmarshal(w, &wr)
		c, err := call("fs/canon", map[string]string{"path": wr.Path})
		if err != nil || !strings.Contains(string(c), "notes/a.txt") {
			return fmt.Errorf("canon %s %v", c, err)
		}
		_, err = call("fs/read", map[string]string{"root": "temp", "path": "../x"})
		return want(code(err) == -32003, "read ../x: %v", err)
	})

	step("proc/spawn, proc/out, proc/exit", func() error {
		r, err := call("proc/spawn", map[string]any{"command": "echo", "args": []string{"hello", "wasm"}})
		if err != nil {
			return err
		}
		id := idOf(r, "proc")
		o, err := await("proc/out", isFor("proc", id))
		if err != nil || !strings.Contains(string(o), `"data":"hello wasm\n"`) {
			return fmt.Errorf("out %s %v", o, err)
		}
		e, err := await("proc/exit", isFor("proc", id))
		return want(err == nil && strings.Contains(string(e), `"code":0`), "exit %s %v", e, err)
	})
	step("proc/write, proc/kill", func() error {
		r, err := call("proc/spawn", map[string]any{"command": "cat"})
		if err != nil {
			return err
		}
		id := idOf(r, "proc")
		if _, err := call("proc/write", map[string]any{"proc": id, "data": "ping\n"}); err != nil {
			return err
		}
		if o, err := await("proc/out", isFor("proc", id)); err != nil || !strings.Contains(string(o), `"data":"ping\n"`) {
			return fmt.Errorf("out %s %v", o, err)
		}
		if _, err := call("proc/kill", map[string]any{"proc": id}); err != nil {
			return err
		}
		e, err := await("proc/exit", isFor("proc", id))
		return want(err == nil && strings.Contains(string(e), `"code":null`), "exit %s %v", e, err)
	})

	step("net/fetch", func() error {
		r, err := call("net/fetch", map[string]any{"url": "https://api.example.com/hello", "headers": map[string]string{"X-Test": "1"}})
		if err != nil || !strings.Contains(string(r), `"status":200`) || !strings.Contains(string(r), `"body":"hello 1"`) {
			return fmt.Errorf("%s %v", r, err)
		}
		r, err = call("net/fetch", map[string]any{"url": "https://api.example.com/redirect"})
		if err != nil || !strings.Contains(string(r), `"status":302`) {
			return fmt.Errorf("redirect %s %v", r, err)
		}
		_, err = call("net/fetch", map[string]any{"url": "https://elsewhere.example/"})
		return want(code(err) == -32003, "elsewhere: %v", err)
	})
	step("net/stream, net/chunk, net/credit, net/end", func() error {
		r, err := call("net/stream", map[string]any{"url": "https://api.example.com/stream"})
		if err != nil {
			return err
		}
		id := idOf(r, "stream")
		var got strings.Builder
		for {
			m, err := awaitAny(id, "net/chunk", "net/end")
			if err != nil {
				return err
			}
			if m.Method == "net/end" {
				break
			}
			var c struct {
				Data string `json:"data"`
			}
			json.Unmarshal(m.Params, &c)
			got.WriteString(c.Data)
			if _, err := call("net/credit", map[string]any{"stream": id, "bytes": len(c.Data)}); err != nil {
				return err
			}
		}
		return want(got.String() == "one two three ", "got %q", got.String())
	})
	step("net/cancel", func() error {
		r, err := call("net/stream", map[string]any{"url": "https://api.example.com/stream", "sse": true})
		if err != nil {
			return err
		}
		id := idOf(r, "stream")
		if _, err := call("net/cancel", map[string]any{"stream": id}); err != nil {
			return err
		}
		return nil
	})
	step("ws/open, ws/send, ws/message, ws/close, ws/closed", func() error {
		r, err := call("ws/open", map[string]any{"url": "wss://api.example.com/ws", "headers": map[string]string{"Authorization": "Bearer x"}})
		if err != nil {
			return err
		}
		id := idOf(r, "socket")
		if _, err := call("ws/send", map[string]any{"socket": id, "text": "marco"}); err != nil {
			return err
		}
		m, err := await("ws/message", isFor("socket", id))
		if err != nil || !strings.Contains(string(m), `"text":"marco polo"`) {
			return fmt.Errorf("message %s %v", m, err)
		}
		if _, err := call("ws/close", map[string]any{"socket": id}); err != nil {
			return err
		}
		c, err := await("ws/closed", isFor("socket", id))
		return want(err == nil && strings.Contains(string(c), `"code":1000`), "closed %s %v", c, err)
	})
}

// awaitAny reads until a notification of one of methods for stream id.
func awaitAny(id int64, methods ...string) (message, error) {
	match := func(m message) bool {
		for _, want := range methods {
			if m.Method == want && idOf(m.Params, "stream") == id {
				return true
			}
		}
		return false
	}
	for i, m := range queue {
		if match(m) {
			queue = append(queue[:i:i], queue[i+1:]...)
			return m, nil
		}
	}
	for {
		m, ok := next()
		if !ok {
			return message{}, errors.New("the input ended")
		}
		if m.Method == "" {
			continue
		}
		if match(m) {
			return m, nil
		}
		queue = append(queue, m)
	}
}
