//go:build wasip1

// Command wasmflood is a hostile plugin for run.wasm, written in Go for
// wasip1, that the escouade package's tests build and run: once it has
// answered initialize, it writes the lines (or makes the escouade.call
// calls) that once cost the Host the most per byte, back to back, then
// says "flood done" in its journal (log) and serves the Host's requests
// (a decision is allow). What it sends is chosen by its plugin id, which
// the Host gives it as its first argument:
//
//   - flood-keys: lines of one object of 90,000 keys;
//   - flood-batch: batches of tiny items, [1,1,1,…], of a MiB;
//   - flood-plain: the reference, lines of the same size that are cheap
//     to read: a notification whose params hold one long string;
//   - flood-deep: lines of a million nested arrays;
//   - flood-number: requests whose params hold a number of a MiB;
//   - flood-bomb: bombBatches batches of 256 files/read of the plugin's
//     big.txt, of answers far past what a batch's answer may hold, each
//     sent once the last is answered;
//   - flood-reads: the reference of flood-bomb, a benign plugin making
//     the same calls, one at a time, each answer awaited and whole (its
//     "flood done" says how many read the file);
//   - flood-abi-keys: escouade.call of secrets/get with params of 90,000
//     keys (its "flood done" says how many were refused invalidParams);
//   - flood-abi-plain: the reference, escouade.call of secrets/get with
//     params of the same size holding one long string;
//   - flood-abi-method: escouade.call of a method named by 17 MiB (its
//     "flood done" says the code of the answer);
//   - flood-nonl: one line of 256 MiB, its newline last;
//   - flood-endless: a line that never ends;
//   - flood-idle: nothing (a start compiles the module into the cache);
//   - flood-bench-<keys, batch or unknown>: for each fact, as many lines
//     of keys, of a batch, or of a notification of no method with one
//     long string (the reference) as its data's n says, then "bench
//     done".
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unsafe"
)

//go:wasmimport escouade call
func hostCall(methodPtr, methodLen, paramsPtr, paramsLen, outPtr, outCap uint32) uint32

//go:wasmimport escouade result
func hostResult(outPtr, outCap uint32) uint32

// lines is how many lines (or calls) a flood makes: as the tests' own
// floodLines.
const lines = 10

func main() {
	mode := strings.TrimPrefix(os.Args[0], "flood-")
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Data struct {
					N int `json:"n"`
				} `json:"data"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || m.Method == "" {
			continue // an answer: the Host's refusals of the flood
		}
		if bench, ok := strings.CutPrefix(mode, "bench-"); ok && m.Method == "events/fact" {
			l := []byte(floodLine(bench) + "\n")
			for range m.Params.Data.N {
				os.Stdout.Write(l)
			}
			say("bench done")
			continue
		}
		if m.ID == nil {
			continue
		}
		switch m.Method {
		case "initialize":
			reply(m.ID, `{"protocolVersion":1,"capabilities":{}}`)
			if !strings.HasPrefix(mode, "bench-") {
				say(flood(mode, in))
			}
		case "permissions/decide":
			reply(m.ID, `{"decision":"allow"}`)
		case "shutdown":
			reply(m.ID, `null`)
		default:
			os.Stdout.WriteString(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"method not found"}}` + "\n")
		}
	}
}

func reply(id json.RawMessage, result string) {
	os.Stdout.WriteString(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + "}\n")
}

func say(msg string) {
	b, _ := json.Marshal(msg)
	os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"log","params":{"level":"info","message":` + string(b) + "}}\n")
}

// flood-bomb sends bombBatches batches of batchCalls calls: as the tests'
// own bombBatches.
const (
	bombBatches = 2
	batchCalls  = 256
)

// flood mounts the attack of mode and returns what to say once done; in
// is the Host's lines, for a mode that awaits its answers.
func flood(mode string, in *bufio.Reader) string {
	switch mode {
	case "idle":
		return "flood done"
	case "reads":
		read := 0
		for i := range bombBatches * batchCalls {
			fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","id":%d,"method":"files/read","params":{"path":"big.txt"}}`+"\n", i)
			ok, err := awaitLine(in, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,`, i), []byte(`"result"`))
			if err != nil {
				return "flood done: " + err.Error()
			}
			if ok {
				read++
			}
		}
		return fmt.Sprintf("flood done: %d read", read)
	case "bomb":
		line := []byte(floodLine(mode) + "\n")
		for range bombBatches {
			os.Stdout.Write(line)
			if _, err := awaitLine(in, []byte("["), nil); err != nil {
				return "flood done: " + err.Error()
			}
		}
		return "flood done"
	case "abi-keys", "abi-plain":
		params := `{"key":"k"` + keysObject(90000)[len(`{"level":"info","message":"x"`):]
		if mode == "abi-plain" {
			params = `{"key":"k","pad":"` + strings.Repeat("x", len(params)-20) + `"}`
		}
		refused := 0
		for range lines {
			if code := call("secrets/get", params); code == -32602 {
				refused++
			}
		}
		return fmt.Sprintf("flood done: %d refused", refused)
	case "abi-method":
		// A method of 17 MiB: past what a line of the engine's control
		// channel may hold.
		code := call(strings.Repeat("m", 17<<20), `{}`)
		return fmt.Sprintf("flood done: code %d", code)
	case "nonl", "endless":
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for i := 0; mode == "endless" || i < 256; i++ {
			os.Stdout.Write(chunk)
		}
		os.Stdout.WriteString("\n")
		return "flood done"
	}
	line := []byte(floodLine(mode) + "\n")
	for range lines {
		os.Stdout.Write(line)
	}
	return "flood done"
}

// floodLine is one line of the flood of mode, of about a MiB.
func floodLine(mode string) string {
	switch mode {
	case "keys":
		return `{"jsonrpc":"2.0","method":"log","params":` + keysObject(90000) + `}`
	case "batch":
		return "[1" + strings.Repeat(",1", 1<<19-1) + "]"
	case "plain":
		n := len(floodLine("keys"))
		return `{"jsonrpc":"2.0","method":"log","params":{"level":"debug","message":"` + strings.Repeat("x", n-78) + `"}}`
	case "unknown":
		n := len(floodLine("keys"))
		return `{"jsonrpc":"2.0","method":"flood/none","params":{"s":"` + strings.Repeat("x", n-60) + `"}}`
	case "deep":
		return `{"jsonrpc":"2.0","method":"log","params":{"level":"info","message":` + strings.Repeat("[", 1<<19) + strings.Repeat("]", 1<<19) + `}}`
	case "number":
		return `{"jsonrpc":"2.0","id":1,"method":"timer/set","params":{"ms":1` + strings.Repeat("0", 1<<20) + `}}`
	case "bomb":
		var b strings.Builder
		for i := range batchCalls {
			b.WriteString(",")
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"files/read","params":{"path":"big.txt"}}`, i)
		}
		return "[" + b.String()[1:] + "]"
	}
	panic("no flood " + mode)
}

// awaitLine reads the Host's lines until one that begins with head (an
// answer's id, a batch's answer), and says whether what follows head
// begins with then (an answer's result): the lines before it, and the rest
// of each line past its head, are skipped as they are read, never held
// whole.
func awaitLine(in *bufio.Reader, head, then []byte) (bool, error) {
	for {
		chunk, err := in.ReadSlice('\n')
		mine := bytes.HasPrefix(chunk, head)
		follows := mine && bytes.HasPrefix(chunk[len(head):], then)
		for err == bufio.ErrBufferFull {
			_, err = in.ReadSlice('\n')
		}
		if err != nil {
			return false, err
		}
		if mine {
			return follows, nil
		}
	}
}

// keysObject is a log's params with n more keys.
func keysObject(n int) string {
	var b strings.Builder
	b.WriteString(`{"level":"info","message":"x"`)
	for i := range n {
		fmt.Fprintf(&b, `,"k%d":1`, i)
	}
	b.WriteString("}")
	return b.String()
}

var out = make([]byte, 4096)

// call calls method through escouade.call and returns the error code of
// its answer, 0 for a result.
func call(method, params string) int {
	m, p := []byte(method), []byte(params)
	n := hostCall(ptr(m), uint32(len(m)), ptr(p), uint32(len(p)), ptr(out), uint32(len(out)))
	answer := out[:min(int(n), len(out))]
	if int(n) > len(out) {
		answer = make([]byte, n)
		if hostResult(ptr(answer), n) != n {
			return 1
		}
	}
	var a struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(answer, &a) != nil || a.Error == nil {
		return 0
	}
	return a.Error.Code
}

func ptr(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(&b[0])))
}
