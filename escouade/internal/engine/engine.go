// Package engine is the seam between the Host and the engines that run a
// plugin's code: the script engine of run.js (package escouade/js) and the
// WebAssembly runtime of run.wasm (package escouade/wasm). The Host links
// an engine only when the program hands it one (escouade.Options.Languages
// and escouade.EngineMain), so that a program with command plugins alone
// links neither.
//
// An engine serves the plugin's protocol lines: it reads the Host's lines
// from Instance.In and writes the plugin's to Instance.Out, whether it runs
// on goroutines of the Host's process or in an engine's process of its own.
package engine

import (
	"context"
	"io"
	"log/slog"
	"time"
)

// A Language runs plugins' code of one kind.
type Language interface {
	// Kind is the run field whose code it runs: "js" or "wasm".
	Kind() string
	// Compile prepares code, the file name of a plugin's folder, for the
	// instances of one plugin. It fails when the code does not load.
	Compile(ctx context.Context, name string, code []byte, o Options) (Program, error)
}

// Options are what the Host tells an engine for every instance.
type Options struct {
	// Pages bounds a module's memory, in 64 KiB pages; 0 means the
	// runtime's own bound.
	Pages uint32
	// Cache is the folder of a module's compilation cache; "" for none.
	Cache string
	// Warn hears what went wrong but does not stop the engine (a cache
	// that cannot be opened).
	Warn func(msg string, err error)
}

// A Program is code compiled for the instances of one plugin.
type Program interface {
	// Run runs one instance until its input ends, ctx ends, or it fails
	// (which ends the instance: a crash).
	Run(ctx context.Context, inst *Instance) error
	// Close frees what Compile made. Run is not called after it.
	Close() error
}

// An Instance is what one run of a plugin's code is given.
type Instance struct {
	ID     string    // the plugin's id
	In     io.Reader // the Host's lines
	Out    io.Writer // the plugin's lines
	Stderr io.Writer // a module's standard error: the journal
	Report Reporter  // the engine's journal entries
	// Script bounds a script.
	Script ScriptBounds
	// Call serves a module's escouade.call (see package escouade/wasm).
	Call CallFunc
	// Turn, when set, hears when a module waits and runs again, and ends
	// the process past its limit.
	Turn *TurnWatch
}

// CallFunc serves a call a module makes through escouade.call: it returns
// the answer, {"result":…} or {"error":{"code":…,"message":…}}; done is
// closed once the answer is in the module's memory, so that what the
// method sends afterwards comes after it.
type CallFunc func(ctx context.Context, method string, params []byte, done <-chan struct{}) []byte

// ScriptBounds bound one instance of a script.
type ScriptBounds struct {
	MaxLine int           `json:"maxLine"` // a line the script writes
	MaxIn   int           `json:"maxIn"`   // a line the script is given
	Turn    time.Duration `json:"turn"`    // a turn's time
	Heap    int64         `json:"heap"`    // what a turn may grow the heap by
	// Hard, when set, ends the engine's process: the way out of a turn
	// that an interrupt does not stop (a native call that never looks).
	Hard func(why string) `json:"-"`
}

// A Reporter takes an engine's journal entries: the plugin's journal when
// the engine runs in the Host, the Host's end of the control channel when
// it runs in a process of its own.
type Reporter interface {
	// Say writes an entry the engine decided to write.
	Say(level slog.Level, msg string, attrs ...slog.Attr)
	// Limited writes an entry the plugin caused, through the plugin's
	// limiter.
	Limited(level slog.Level, msg string, attrs ...slog.Attr)
}
