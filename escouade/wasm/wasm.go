// Package wasm is the engine of run.wasm plugins: a pure-Go WebAssembly
// runtime (wazero) with WASI's standard input, output and error, clocks
// and randomness (no folder, no variable, no socket), and escouade.call,
// the function a module imports to call the Host. A program hands it to
// its Host, and to EngineMain when the engines run isolated (the default):
//
//	func main() {
//		escouade.EngineMain(wasm.Language())
//		h := escouade.New(&escouade.Options{Languages: []escouade.Language{wasm.Language()}})
//		// ...
//	}
//
// A program that does not link this package runs no run.wasm plugin:
// Start says which package to add.
//
// # The ABI
//
// escouade.call is the function a run.wasm module imports to call the
// Host synchronously. Both functions are in the import module
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
// a request and answered {"result":null}, or the error its params earn
// (invalidParams: params that are not strict JSON, an object of more than
// 1024 members, a log's unknown level), where the same notification by a
// line would go unanswered. A pointer or length outside the module's
// memory traps, which ends the instance. What a method sends
// afterwards (a timer's timer/fired, a stream's net/chunk) comes as a line
// on the module's standard input, always after the answer that names it.
// A call blocks the module for as long as the method takes (net/fetch: up
// to its limit); the lines on standard input are the way not to wait.
//
// A Go module (GOOS=wasip1) imports them with //go:wasmimport escouade
// call; reading its standard input blocks the whole module until a line
// comes, so it serves its lines from one goroutine. Its memory is capped
// (the Host's Options.WASMMemoryPages), a loop without end dies with its
// instance, and its compilation is cached on disk (Options.WASMCacheDir).
// What the fences allow, and what the engine's process is bounded by, is
// in escouade/REFERENCE.md.
package wasm

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/internal/engine"
)

const (
	abiModule = "escouade"
	abiCall   = "call"
	abiResult = "result"
)

// Language returns the engine of run.wasm plugins.
func Language() escouade.Language { return language{} }

type language struct{}

func (language) Kind() string { return "wasm" }

// Compile makes a runtime for one plugin, with its memory cap and the
// compilation cache on disk (a module is compiled once, not at every start
// of the program), and compiles code in it.
func (language) Compile(ctx context.Context, name string, code []byte, o engine.Options) (engine.Program, error) {
	cache := wazero.NewCompilationCache()
	if o.Cache != "" {
		c, err := wazero.NewCompilationCacheWithDir(o.Cache)
		switch {
		case err == nil:
			cache = c
		case o.Warn != nil:
			o.Warn("the WebAssembly compilation cache cannot be opened; modules are compiled at every start", err)
		}
	}
	eng, err := newWASMEngine(cache, o.Pages)
	if err != nil {
		return nil, err
	}
	mod, err := eng.rt.CompileModule(ctx, code)
	if err != nil {
		eng.close()
		return nil, fmt.Errorf("%s is not a module this Host can run: %w", name, err)
	}
	return &program{eng: eng, mod: mod}, nil
}

// A program is a compiled module and its runtime.
type program struct {
	eng  *wasmEngine
	mod  wazero.CompiledModule
	once sync.Once
}

func (p *program) Run(ctx context.Context, inst *engine.Instance) error {
	return p.eng.run(ctx, inst.ID, p.mod, inst.In, inst.Out, inst.Stderr, &wasmCall{call: inst.Call}, inst.Turn)
}

func (p *program) Close() error {
	var err error
	p.once.Do(func() {
		err = errors.Join(p.mod.Close(context.Background()), p.eng.close())
	})
	return err
}

// A wasmEngine is a WebAssembly runtime, with its memory cap, and a
// compilation cache.
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
	call engine.CallFunc
	kept []byte
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

func (e *wasmEngine) close() error {
	ctx := context.Background()
	return errors.Join(e.rt.Close(ctx), e.cache.Close(ctx))
}

// run runs one instance of a module until it exits or ctx ends. It has
// standard input and output (the protocol's lines), standard error (the
// journal), clocks and randomness: no folder, no variable, no socket.
//
// turn, when set, hears when the module waits (reads its input, sleeps,
// calls the Host) and when it runs again.
func (e *wasmEngine) run(ctx context.Context, id string, mod wazero.CompiledModule, in io.Reader, out, stderr io.Writer, wc *wasmCall, turn *engine.TurnWatch) error {
	if turn != nil {
		in = turn.Reader(in)
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
			defer turn.Wait()()
			t := time.NewTimer(time.Duration(ns))
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			}
		}).
		WithRandSource(rand.Reader)
	ctx = context.WithValue(ctx, wasmKey{}, wc)
	turn.Begin()
	m, err := e.rt.InstantiateModule(ctx, mod, cfg)
	turn.End()
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
