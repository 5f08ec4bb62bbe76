package escouade

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/jsonrpc"
)

// Bounds of what a plugin's folder gives to run in-process.
const (
	maxWASM   = 64 << 20 // a module
	maxScript = 4 << 20  // a script
)

// The ABI of escouade.call, the function a run.wasm module imports to call
// the Host synchronously. Both functions are in the import module
// "escouade"; every value is an i32.
//
//	call(method_ptr, method_len, params_ptr, params_len, out_ptr, out_cap) -> n
//
// calls method (UTF-8, as the protocol names it: "fs/read") with params (a
// JSON object, strict: UTF-8, no key twice; params_len 0 for none) and
// waits for its answer, n bytes of JSON: {"result":...} or
// {"error":{"code":...,"message":...}}, the result or error of a JSON-RPC
// response. When n <= out_cap the answer is written at out_ptr. Otherwise
// nothing is written and the Host keeps the answer, until the next call,
// for
//
//	result(out_ptr, out_cap) -> n
//
// which writes it at out_ptr when n <= out_cap, and returns -1 when no
// answer is kept or out_cap is too small (the answer is then still kept).
//
// A notification (log, timer/cancel, net/credit, net/cancel) is served as
// a request and answered {"result":null}. A pointer or length outside the
// module's memory traps, which ends the instance. What a method sends
// afterwards (a timer's timer/fired, a stream's net/chunk) comes as a line
// on the module's standard input, always after the answer that names it.
// A call blocks the module for as long as the method takes (net/fetch: up
// to its limit); the lines on standard input are the way not to wait.
const (
	abiModule = "escouade"
	abiCall   = "call"
	abiResult = "result"
)

// A wasmEngine is the Host's WebAssembly runtime: one for all run.wasm
// plugins, with their memory cap, and a compilation cache on disk, so that
// a module is compiled once, not at every start of the Host.
type wasmEngine struct {
	rt    wazero.Runtime
	cache wazero.CompilationCache
}

type wasmKey struct{}

// A wasmCall is what escouade.call knows of the module calling it: how to
// serve a call, and the answer kept for result.
type wasmCall struct {
	// call serves method with params and returns the answer; done is
	// closed once the answer is in the module's memory.
	call func(ctx context.Context, method string, params []byte, done <-chan struct{}) []byte
	kept []byte
}

// engine returns the Host's WebAssembly runtime, made at first use.
func (h *Host) engine() (*wasmEngine, error) {
	h.wasmMu.Lock()
	defer h.wasmMu.Unlock()
	if h.wasm != nil {
		return h.wasm, nil
	}
	cache, err := openCache(h.opts.WASMCacheDir)
	if err != nil {
		h.log.Warn("the WebAssembly compilation cache cannot be opened; modules are compiled at every start of the Host", slog.String("error", err.Error()))
		cache = wazero.NewCompilationCache()
	}
	e, err := newWASMEngine(cache, h.opts.WASMMemoryPages)
	if err != nil {
		return nil, err
	}
	h.wasm = e
	return e, nil
}

// newWASMEngine returns a WebAssembly runtime with its memory cap, and
// escouade.call among its imports. It closes cache when it fails.
func newWASMEngine(cache wazero.CompilationCache, pages uint32) (*wasmEngine, error) {
	ctx := context.Background()
	cfg := wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		WithMemoryLimitPages(pages).
		// Untrusted code: a loop without end must end with its instance.
		WithCloseOnContextDone(true)
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		cache.Close(ctx)
		return nil, err
	}
	i32 := api.ValueTypeI32
	_, err := rt.NewHostModuleBuilder(abiModule).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(abiCallFunc), []api.ValueType{i32, i32, i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("method_ptr", "method_len", "params_ptr", "params_len", "out_ptr", "out_cap").Export(abiCall).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(abiResultFunc), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("out_ptr", "out_cap").Export(abiResult).
		Instantiate(ctx)
	if err != nil {
		rt.Close(ctx)
		cache.Close(ctx)
		return nil, err
	}
	return &wasmEngine{rt: rt, cache: cache}, nil
}

// cacheDir returns the folder of the compilation cache that dir names (""
// for the default), made if need be.
func cacheDir(dir string) (string, error) {
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(base, "escouade", "wasm")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return dir, nil
}

func openCache(dir string) (wazero.CompilationCache, error) {
	dir, err := cacheDir(dir)
	if err != nil {
		return nil, err
	}
	return wazero.NewCompilationCacheWithDir(dir)
}

func (e *wasmEngine) close() error {
	ctx := context.Background()
	return errors.Join(e.rt.Close(ctx), e.cache.Close(ctx))
}

// wasmLauncher runs the module code: compiled at the first start, the
// compiled module kept for the restarts.
func (h *Host) wasmLauncher(m *Manifest, code []byte) launcher {
	var mu sync.Mutex
	var compiled wazero.CompiledModule
	return func(inst *instance) (process, error) {
		eng, err := h.engine()
		if err != nil {
			return nil, err
		}
		mu.Lock()
		if compiled == nil {
			compiled, err = eng.rt.CompileModule(context.Background(), code)
			if err == nil {
				cm := compiled
				inst.p.mu.Lock()
				inst.p.releases = append(inst.p.releases, func() { cm.Close(context.Background()) })
				inst.p.mu.Unlock()
			}
		}
		mod := compiled
		mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("%s is not a module this Host can run: %w", m.Run.WASM, err)
		}
		stderr := &stderrWriter{j: inst.p.j}
		wc := &wasmCall{call: func(ctx context.Context, method string, params []byte, done <-chan struct{}) []byte {
			answer := inst.callABI(ctx, method, params, done)
			if h.onCall != nil {
				h.onCall(method, answer)
			}
			return answer
		}}
		return startFunc(inst, func(ctx context.Context, in io.Reader, out io.Writer) error {
			defer stderr.close()
			return eng.run(ctx, m.ID, mod, in, out, stderr, wc, nil)
		}), nil
	}
}

// run runs one instance of a module until it exits or ctx ends. It has
// standard input and output (the protocol's lines), standard error (the
// journal), clocks and randomness: no folder, no variable, no socket.
//
// turn, when set, hears when the module waits (reads its input, sleeps,
// calls the Host) and when it runs again.
func (e *wasmEngine) run(ctx context.Context, id string, mod wazero.CompiledModule, in io.Reader, out, stderr io.Writer, wc *wasmCall, turn *turnWatch) error {
	if turn != nil {
		in = turn.reader(in)
	}
	cfg := wazero.NewModuleConfig().
		WithName(""). // anonymous: a module may run in several plugins at once
		WithArgs(id).
		WithStdin(in).
		WithStdout(out).
		WithStderr(stderr).
		WithSysWalltime().
		WithSysNanotime().
		// A sleep ends with the instance.
		WithNanosleep(func(ns int64) {
			defer turn.wait()()
			t := time.NewTimer(time.Duration(ns))
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			}
		}).
		WithRandSource(rand.Reader)
	ctx = context.WithValue(ctx, wasmKey{}, wc)
	turn.begin()
	m, err := e.rt.InstantiateModule(ctx, mod, cfg)
	turn.end()
	if m != nil {
		m.Close(context.Background())
	}
	var exit *sys.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit) && exit.ExitCode() == 0:
		return nil
	case ctx.Err() != nil:
		return errors.New("killed")
	}
	return err
}

// abiCallFunc is escouade.call.
func abiCallFunc(ctx context.Context, mod api.Module, stack []uint64) {
	wc, _ := ctx.Value(wasmKey{}).(*wasmCall)
	if wc == nil {
		panic(errors.New("escouade.call: not called by a plugin"))
	}
	mem := mod.Memory()
	method := string(readMem(mem, stack[0], stack[1]))
	params := readMem(mem, stack[2], stack[3])
	outPtr, outCap := uint32(stack[4]), uint32(stack[5])
	if _, ok := mem.Read(outPtr, outCap); !ok {
		panic(fmt.Errorf("escouade.call: out_ptr %d and out_cap %d are outside the module's memory", outPtr, outCap))
	}
	done := make(chan struct{})
	answer := wc.call(ctx, method, params, done)
	wc.kept = nil
	if uint64(len(answer)) <= uint64(outCap) {
		mem.Write(outPtr, answer)
	} else {
		wc.kept = answer
	}
	close(done) // the answer is the module's: what follows it may go
	stack[0] = uint64(uint32(len(answer)))
}

// abiResultFunc is escouade.result.
func abiResultFunc(ctx context.Context, mod api.Module, stack []uint64) {
	wc, _ := ctx.Value(wasmKey{}).(*wasmCall)
	outPtr, outCap := uint32(stack[0]), uint32(stack[1])
	if wc == nil || wc.kept == nil || uint64(len(wc.kept)) > uint64(outCap) {
		stack[0] = uint64(uint32(0xFFFFFFFF)) // -1
		return
	}
	if !mod.Memory().Write(outPtr, wc.kept) {
		panic(fmt.Errorf("escouade.result: out_ptr %d and out_cap %d are outside the module's memory", outPtr, outCap))
	}
	stack[0] = uint64(uint32(len(wc.kept)))
	wc.kept = nil
}

// readMem copies length bytes at ptr out of the module's memory: the
// module may change them as soon as the call returns.
func readMem(mem api.Memory, ptr, length uint64) []byte {
	b, ok := mem.Read(uint32(ptr), uint32(length))
	if !ok {
		panic(fmt.Errorf("escouade.call: %d bytes at %d are outside the module's memory", length, ptr))
	}
	return append([]byte(nil), b...)
}

// callABI serves a call made by escouade.call, and encodes its answer.
func (inst *instance) callABI(ctx context.Context, method string, params []byte, done <-chan struct{}) []byte {
	params, answer := abiParams(params)
	if answer != nil {
		return answer
	}
	if ms, ok := protocol.LookupMethod(method); ok && ms.ToPlugin {
		return appendABIError(nil, errorf(CodeMethodNotFound, "method not found: %s goes from the Host to the plugin", method))
	}
	if t := inst.p.methodTimeout(method); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	res, err := inst.serve(ctx, method, params, &call{inst: inst, done: done})
	if err != nil {
		e := wireError(err)
		if e == nil {
			inst.p.protocolEvent(jsonrpc.Event{Kind: jsonrpc.EventHandler, Method: method, Err: err})
			e = &Error{Code: CodeInternal, Message: "internal error"}
		}
		return appendABIError(nil, e)
	}
	raw, err := marshalResult(res)
	if err != nil {
		inst.p.protocolEvent(jsonrpc.Event{Kind: jsonrpc.EventHandler, Method: method, Err: err})
		return appendABIError(nil, &Error{Code: CodeInternal, Message: "internal error"})
	}
	b := make([]byte, 0, len(raw)+11)
	b = append(b, `{"result":`...)
	b = append(b, raw...)
	return append(b, '}')
}

// abiParams checks the params of an escouade.call: strict JSON, an object
// or null. It returns them, nil for none, or the answer that refuses them.
func abiParams(params []byte) ([]byte, []byte) {
	if len(params) == 0 {
		return nil, nil
	}
	if err := jsonrpc.Validate(params); err != nil {
		return nil, appendABIError(nil, &Error{Code: CodeInvalidParams, Message: "invalid params: not strict JSON: " + err.Error()})
	}
	switch jsonrpc.KindOf(params) {
	case jsonrpc.KindNull:
		return nil, nil
	case jsonrpc.KindObject:
		return params, nil
	}
	return nil, appendABIError(nil, &Error{Code: CodeInvalidParams, Message: "invalid params: want an object"})
}

func appendABIError(b []byte, e *Error) []byte {
	b = append(b, `{"error":{"code":`...)
	b = fmt.Appendf(b, "%d", int64(e.Code))
	b = append(b, `,"message":`...)
	b = jsonrpc.AppendString(b, e.Message)
	return append(b, `}}`...)
}
