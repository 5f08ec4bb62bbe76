// Package js is the engine of run.js plugins: a pure-Go JavaScript engine
// (goja) with a prelude that gives a plugin fetch, setTimeout, WebSocket,
// console and escouade, made of the protocol's methods. A program hands it
// to its Host, and to EngineMain when the engines run isolated (the
// default):
//
//	func main() {
//		escouade.EngineMain(js.Language())
//		h := escouade.New(&escouade.Options{Languages: []escouade.Language{js.Language()}})
//		// ...
//	}
//
// A program that does not link this package runs no run.js plugin: Start
// says which package to add.
//
// # The API of a run.js plugin
//
// A script runs on an event loop: one turn at a time, the top level, then
// each of the Host's lines, promise jobs included. The prelude gives it
// what a browser would, made of the protocol's methods: fetch (net/fetch;
// net/stream when init.stream or init.sse, the body then read with
// body.getReader(), credited as it is read), setTimeout, setInterval and
// their clears (timer/*), WebSocket (ws/*, its sends in order), console
// (log), TextEncoder and TextDecoder. The object escouade holds lang,
// plugin and host from initialize; on, onInitialize, onFact, onDecide,
// onAttach and onShutdown for the Host's messages (a handler may return a
// promise); call and notify for any method; secret, settings, file, log;
// fs.read, fs.write, fs.stat, fs.list and fs.canon; spawn, which resolves
// to a program with on("out"), on("exit"), write, closeInput, kill and
// output. A refusal rejects with an escouade.Error whose code is the
// protocol's (escouade.codes.refused):
//
//	escouade.onDecide((p) => p.request.kind === "rm"
//		? { decision: "deny", message: "no rm" }
//		: { decision: "allow" });
//
// A turn lasts the Host's Options.ScriptTurn (1 s) and grows the heap by
// Options.ScriptHeap (256 MiB) at most, calls nest 10,000 deep at most: past
// any, the instance ends, as a crash. What the fences allow, and what the
// engine's process is bounded by, is in escouade/REFERENCE.md.
package js

import (
	"context"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/dop251/goja"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/internal/engine"
	"shinken.dev/go/escouade/internal/jsonrpc"
)

// The prelude of every run.js plugin: fetch, setTimeout, WebSocket,
// console and escouade, made of the protocol's methods.
//
//go:embed prelude.js
var preludeJS string

var prelude = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile("prelude.js", preludeJS, true)
})

// Bounds of a run.js plugin, which has no memory limit of its own.
const (
	// jsStack bounds the depth of calls: deep recursion would grow the
	// heap.
	jsStack = 10_000
	// jsHeapEvery is how often a long turn has its heap looked at.
	jsHeapEvery = 5 * time.Millisecond
	// jsNativeGrace is how long an interrupted turn of an isolated script
	// may take to stop before its process is ended.
	jsNativeGrace = 250 * time.Millisecond
)

// Language returns the engine of run.js plugins.
func Language() escouade.Language { return language{} }

type language struct{}

func (language) Kind() string { return "js" }

func (language) Compile(_ context.Context, name string, code []byte, _ engine.Options) (engine.Program, error) {
	if _, err := prelude(); err != nil {
		return nil, fmt.Errorf("the prelude does not compile: %w", err)
	}
	prog, err := goja.Compile(name, string(code), false)
	if err != nil {
		return nil, fmt.Errorf("%s does not compile: %w", name, err)
	}
	return program{prog}, nil
}

type program struct{ prog *goja.Program }

func (p program) Run(ctx context.Context, inst *engine.Instance) error {
	return runScript(ctx, inst.Script, inst.Report, p.prog, inst.In, inst.Out)
}

func (program) Close() error { return nil }

// A jsLoop is one instance of a script: its runtime, owned by one
// goroutine, which runs one turn at a time: the top level, then the
// handling of each of the Host's lines, promise jobs included.
type jsLoop struct {
	rep     engine.Reporter
	vm      *goja.Runtime
	out     io.Writer
	maxLine int
	turn    time.Duration
	heap    int64
	hard    func(why string)

	mu       sync.Mutex
	inTurn   bool
	turnNo   uint64
	baseline int64  // the heap as the turn began
	why      string // why the turn was interrupted

	rejected map[*goja.Promise]goja.Value // rejections nobody handled, this turn
}

// runScript runs a script until its input ends, ctx ends, or a turn is
// interrupted (which ends the instance: a crash).
func runScript(ctx context.Context, cfg engine.ScriptBounds, rep engine.Reporter, prog *goja.Program, in io.Reader, out io.Writer) error {
	l := &jsLoop{
		rep:      rep,
		vm:       goja.New(),
		out:      out,
		maxLine:  cfg.MaxLine,
		turn:     cfg.Turn,
		heap:     cfg.Heap,
		hard:     cfg.Hard,
		rejected: map[*goja.Promise]goja.Value{},
	}
	stop := context.AfterFunc(ctx, func() { l.vm.Interrupt("the instance ended") })
	defer stop()
	l.vm.SetMaxCallStackSize(jsStack)
	l.vm.SetPromiseRejectionTracker(func(p *goja.Promise, op goja.PromiseRejectionOperation) {
		if op == goja.PromiseRejectionReject {
			l.rejected[p] = p.Result()
		} else {
			delete(l.rejected, p)
		}
	})
	if err := l.natives(); err != nil {
		return err
	}
	pre, _ := prelude()
	if err := l.run(true, func() error { _, err := l.vm.RunProgram(pre); return err }); err != nil {
		return fmt.Errorf("prelude: %w", err)
	}
	if err := l.run(true, func() error { _, err := l.vm.RunProgram(prog); return err }); err != nil {
		return err
	}
	receive, ok := goja.AssertFunction(l.vm.Get("__escouade_receive"))
	if !ok {
		return errors.New("the prelude gave no receiver")
	}
	l.vm.Set("__escouade_receive", goja.Undefined())

	lines := make(chan []byte)
	done := make(chan struct{})
	defer close(done)
	go l.read(in, cfg.MaxIn, lines, done)
	for {
		var line []byte
		select {
		case line, ok = <-lines:
			if !ok {
				return nil // the input ended
			}
		case <-ctx.Done():
			return ctx.Err()
		}
		arg := l.vm.ToValue(string(line))
		err := l.run(false, func() error { _, err := receive(goja.Undefined(), arg); return err })
		if err != nil {
			return err
		}
	}
}

// read hands the Host's lines to the loop, one at a time: the loop reads
// the next when it is done with the last, so that what waits in the pipe
// is what the plugin has not taken.
func (l *jsLoop) read(in io.Reader, max int, lines chan<- []byte, done <-chan struct{}) {
	defer close(lines)
	lr := jsonrpc.NewLineReader(in, max)
	for {
		line, err := lr.Next()
		if err != nil {
			var tl *jsonrpc.TooLongError
			if errors.As(err, &tl) {
				l.rep.Say(slog.LevelWarn, "a line from the Host is over what a script may take; dropped", slog.Int64("bytes", tl.Size), slog.Int("max", max))
				continue
			}
			return
		}
		select {
		case lines <- append([]byte(nil), line...):
		case <-done:
			return
		}
	}
}

// run runs one turn, bounded in time and in heap. An interrupted turn is
// the instance's end, and so is an exception when top (the prelude, the
// script's top level); an exception of a handler is the plugin's,
// journaled.
func (l *jsLoop) run(top bool, fn func() error) error {
	// The baseline is taken now (a quarter of a µs), not at the first
	// look: on a loaded machine that look comes late, after the turn grew
	// the heap by any amount.
	base := heapBytes()
	l.mu.Lock()
	l.inTurn = true
	l.turnNo++
	n := l.turnNo
	l.baseline = base
	l.mu.Unlock()
	timer := time.AfterFunc(l.turn, func() { l.interrupt(n, fmt.Sprintf("a turn ran past %v", l.turn)) })
	watch := time.AfterFunc(jsHeapEvery, func() { l.watchHeap(n) })
	err := fn()
	timer.Stop()
	watch.Stop()
	l.mu.Lock()
	l.inTurn = false
	why := l.why
	l.why = ""
	l.mu.Unlock()
	if err == nil && why != "" {
		l.vm.ClearInterrupt() // it came as the turn ended: the turn stands
	}
	for p, v := range l.rejected {
		l.rep.Limited(slog.LevelWarn, "unhandled promise rejection: "+v.String(), slog.String("stream", "script"))
		delete(l.rejected, p)
	}
	var ie *goja.InterruptedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ie):
		if why == "" {
			why = fmt.Sprint(ie.Value())
		}
		l.rep.Say(slog.LevelError, "script interrupted: "+why)
		return fmt.Errorf("interrupted: %s", why)
	}
	var ex *goja.Exception
	if errors.As(err, &ex) && !top {
		l.rep.Limited(slog.LevelError, "uncaught: "+ex.Error(), slog.String("stream", "script"))
		return nil
	}
	return err
}

// interrupt stops the turn n, if it still runs.
func (l *jsLoop) interrupt(n uint64, why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inTurn && l.turnNo == n && l.why == "" {
		l.why = why
		l.vm.Interrupt(why)
		if l.hard != nil {
			// A native call (a regexp that backtracks, a join of a huge
			// array) never looks at the interrupt: past a grace, the
			// engine's process ends, and the call with it.
			time.AfterFunc(jsNativeGrace, func() {
				l.mu.Lock()
				still := l.inTurn && l.turnNo == n
				l.mu.Unlock()
				if still {
					l.hard(why + ", in a call that does not stop")
				}
			})
		}
	}
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
var heapMu sync.Mutex

func heapBytes() int64 {
	heapMu.Lock()
	defer heapMu.Unlock()
	metrics.Read(heapSample)
	if heapSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(heapSample[0].Value.Uint64())
}

// watchHeap looks at the heap while turn n lasts: a turn that grows it past
// the bound, from the baseline taken as it began, is interrupted. The
// first look comes after jsHeapEvery, so that the short turns, nearly all,
// never pay for more than the baseline.
func (l *jsLoop) watchHeap(n uint64) {
	now := heapBytes()
	l.mu.Lock()
	if !l.inTurn || l.turnNo != n {
		l.mu.Unlock()
		return
	}
	over := now-l.baseline > l.heap
	l.mu.Unlock()
	if over {
		l.interrupt(n, fmt.Sprintf("a turn grew the heap past %d MiB", l.heap>>20))
		return
	}
	time.AfterFunc(jsHeapEvery, func() { l.watchHeap(n) })
}

// natives gives the prelude what it cannot make in JavaScript.
func (l *jsLoop) natives() error {
	vm := l.vm
	set := func(name string, fn func(goja.FunctionCall) goja.Value) error { return vm.Set(name, fn) }
	bytesArg := func(v goja.Value) []byte {
		switch x := v.Export().(type) {
		case goja.ArrayBuffer:
			return x.Bytes()
		case []byte:
			return x
		case string:
			return []byte(x)
		}
		panic(vm.NewTypeError("want bytes: an ArrayBuffer, a Uint8Array or a string"))
	}
	return errors.Join(
		set("__escouade_send", func(c goja.FunctionCall) goja.Value {
			line := c.Argument(0).String()
			if len(line) > l.maxLine {
				panic(vm.NewTypeError(fmt.Sprintf("a message of %d bytes is over the %d a line may hold", len(line), l.maxLine)))
			}
			b := make([]byte, 0, len(line)+1)
			b = append(append(b, line...), '\n')
			if _, err := l.out.Write(b); err != nil {
				panic(vm.NewGoError(fmt.Errorf("the Host is gone: %w", err)))
			}
			return goja.Undefined()
		}),
		set("__escouade_b64encode", func(c goja.FunctionCall) goja.Value {
			return vm.ToValue(base64.StdEncoding.EncodeToString(bytesArg(c.Argument(0))))
		}),
		set("__escouade_b64decode", func(c goja.FunctionCall) goja.Value {
			b, err := base64.StdEncoding.DecodeString(c.Argument(0).String())
			if err != nil {
				panic(vm.NewTypeError("not base64"))
			}
			return vm.ToValue(vm.NewArrayBuffer(b))
		}),
		set("__escouade_utf8encode", func(c goja.FunctionCall) goja.Value {
			return vm.ToValue(vm.NewArrayBuffer([]byte(c.Argument(0).String())))
		}),
		set("__escouade_utf8decode", func(c goja.FunctionCall) goja.Value {
			return vm.ToValue(string(bytesArg(c.Argument(0))))
		}),
	)
}
