package escouade

import (
	"errors"
	"os"
	"sync/atomic"
	"time"

	"shinken.dev/go/escouade/internal/contain"
	"shinken.dev/go/escouade/internal/engine"
)

// Engine says where a Host runs the engines of run.js and run.wasm plugins
// (REFERENCE.md, "Isolation of the engines").
type Engine int

const (
	// EngineIsolated, the default, runs each such plugin in a child
	// process of its own (the program started again: it must call
	// EngineMain), bounded by the kernel and killed with its group, so
	// that what its code does costs that process alone. It needs Unix.
	EngineIsolated Engine = iota
	// EngineInProcess runs them on the Host's goroutines: cheaper, but a
	// plugin's code can take the whole process down. Only for code as
	// trusted as the program.
	EngineInProcess
)

// String returns the engine's name: "isolated", "in-process".
func (e Engine) String() string {
	switch e {
	case EngineIsolated:
		return "isolated"
	case EngineInProcess:
		return "in-process"
	}
	return "Engine(?)"
}

// ErrNoEngine is Start's error for an isolated engine in a program that did
// not call EngineMain: the Host never falls back to its own process.
var ErrNoEngine = errors.New("escouade: run.js and run.wasm plugins run in a child process of this program, which must call escouade.EngineMain first thing in main (or set Options.Engine to EngineInProcess)")

// engineEnv is the variable a Host sets, alone, in the environment of an
// engine's process: EngineMain runs the engine when it holds engineVersion.
const (
	engineEnv     = "ESCOUADE_ENGINE"
	engineVersion = "1"
)

// Defaults of the bounds of an isolated engine.
const (
	defaultEngineMemory = 512 << 20
	defaultEngineCPU    = 10 * time.Minute
)

// engineLinked is set by EngineMain: the program can run engines (and
// shepherds).
var engineLinked atomic.Bool

// EngineMain makes the process a plugin's engine, or a program's shepherd,
// when a Host started it as one (never returning); else it returns at once.
// Call it first thing in main (in TestMain for tests) with the Hosts'
// Options.Languages; without it, isolated engines fail with ErrNoEngine.
func EngineMain(langs ...Language) {
	engineLinked.Store(true)
	contain.AllowShepherd()
	if contain.IsShepherd() {
		os.Exit(contain.RunShepherd())
	}
	if os.Getenv(engineEnv) != engineVersion {
		return
	}
	os.Exit(runEngine(langs))
}

// engineBoot is the first line an engine's process reads: what to run and
// within what bounds. The code follows it, Code bytes, then the Host's
// lines.
type engineBoot struct {
	Kind string `json:"kind"` // "js" or "wasm"
	Name string `json:"name"` // the file's name in the plugin's folder
	ID   string `json:"id"`   // the plugin's id
	Code int    `json:"code"` // bytes of code after this line

	Script engine.ScriptBounds `json:"script"` // a script's bounds
	Turn   time.Duration       `json:"turn"`   // a module's turn
	Pages  uint32              `json:"pages"`  // a module's memory, in pages
	Cache  string              `json:"cache"`  // a module's compilation cache; "" for none

	Memory  int64         `json:"memory"`  // address space beyond what the process holds at start
	CPU     time.Duration `json:"cpu"`     // CPU time of the process's whole life
	MaxLine int           `json:"maxLine"` // a line of the control channel
}

// The engine's control channel: the process's descriptors 3 (to the Host)
// and 4 (from the Host) carry JSON-RPC lines, requests of the engine that
// the Host answers: the module's escouade.call, named after the method,
// and the engine's own, named engine/*, which no module may call: its
// journal entries (reportMethod) and that it loaded the code
// (readyMethod). Each waits for its answer, so that what the engine says
// just before it ends reaches the journal. The plugin's code never writes
// to the channel.
const (
	reportMethod = "engine/report"
	// readyMethod says the engine loaded the code (a module compiles for
	// seconds when the cache is cold) and serves the plugin's lines now:
	// the Host's timeout on initialize starts then, as for an in-process
	// engine.
	readyMethod = "engine/ready"
	// engineLoadWait bounds how long an engine may take to load its code.
	engineLoadWait = 2 * time.Minute
	// engineStack bounds the stack of the engine's goroutines: a
	// recursion without end is a fatal error sooner, and smaller.
	engineStack = 256 << 20
	// engineBootMax bounds the first line.
	engineBootMax = 64 << 10
)
