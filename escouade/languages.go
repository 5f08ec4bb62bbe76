package escouade

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"shinken.dev/go/escouade/internal/engine"
	"shinken.dev/go/escouade/manifest"
)

// A Language is the engine of one kind of plugin code: js.Language() runs
// run.js, wasm.Language() run.wasm. A program that hands none over links
// neither engine.
type Language interface {
	engine.Language
}

// languagePackages names the package of each kind's engine, for the error
// of a program that did not include it.
var languagePackages = map[string]string{"js": "shinken.dev/go/escouade/js", "wasm": "shinken.dev/go/escouade/wasm"}

// ErrNoLanguage is wrapped by the error of Start for a plugin whose engine
// the program did not hand over; the error names the package to add.
var ErrNoLanguage = fmt.Errorf("escouade: no engine for this plugin's code")

// language returns the Host's engine of kind, or an error naming the
// package to add.
func (h *Host) language(m *manifest.Manifest, kind, name string) (Language, error) {
	for _, l := range h.opts.Languages {
		if l != nil && l.Kind() == kind {
			return l, nil
		}
	}
	pkg := languagePackages[kind]
	short := pkg[len("shinken.dev/go/escouade/"):]
	return nil, fmt.Errorf("%w: plugin %s runs %s (run.%s): add package %s, %s.Language(), to Options.Languages and to EngineMain",
		ErrNoLanguage, m.ID, name, kind, pkg, short)
}

// jsMinLine is the least a line from the Host to a script may hold; a
// plugin whose limits.fetchBytes is larger gets 6 times that and 1 MiB
// more (a body of control characters, escaped).
const jsMinLine = 8 << 20

// scriptConfig returns the bounds of p's script, as the Host's options
// and p's manifest set them.
func scriptConfig(p *Plugin) engine.ScriptBounds {
	cfg := engine.ScriptBounds{MaxLine: p.h.opts.MaxLine, MaxIn: jsMinLine, Turn: p.h.opts.ScriptTurn, Heap: p.h.opts.ScriptHeap}
	if cfg.MaxLine <= 0 {
		cfg.MaxLine = inprocMaxLine
	}
	if fb := p.m.Limits.FetchBytes; fb > 0 {
		cfg.MaxIn = max(cfg.MaxIn, int(6*fb)+1<<20)
	}
	return cfg
}

// journalReporter reports an engine's entries to a plugin's journal.
type journalReporter struct{ j *journal }

func (r journalReporter) Say(level slog.Level, msg string, attrs ...slog.Attr) {
	r.j.say(level, msg, attrs...)
}

func (r journalReporter) Limited(level slog.Level, msg string, attrs ...slog.Attr) {
	line, _ := cut([]byte(msg))
	r.j.limited(r.j.lines, level, line, attrs...)
}

// inProcessLauncher runs code, the file name of m's folder, with lang on
// goroutines of the Host's process: compiled at the first start, kept for
// the restarts, freed with the plugin.
func (h *Host) inProcessLauncher(lang Language, m *manifest.Manifest, name string, code []byte) launcher {
	var mu sync.Mutex
	var prog engine.Program
	return func(inst *instance) (process, error) {
		mu.Lock()
		if prog == nil {
			p, err := lang.Compile(context.Background(), name, code, h.engineOptions(lang.Kind()))
			if err != nil {
				mu.Unlock()
				return nil, err
			}
			prog = p
			inst.p.mu.Lock()
			inst.p.releases = append(inst.p.releases, func() { p.Close() })
			inst.p.mu.Unlock()
		}
		p := prog
		mu.Unlock()
		stderr := &stderrWriter{j: inst.p.j}
		ei := &engine.Instance{
			ID:     m.ID,
			Stderr: stderr,
			Report: journalReporter{inst.p.j},
			Script: scriptConfig(inst.p),
			Call: func(ctx context.Context, method string, params []byte, done <-chan struct{}) []byte {
				answer := inst.callABI(ctx, method, params, done)
				if h.onCall != nil {
					h.onCall(method, answer)
				}
				return answer
			},
		}
		return startFunc(inst, func(ctx context.Context, in io.Reader, out io.Writer) error {
			defer stderr.close()
			run := *ei
			run.In, run.Out = in, out
			return p.Run(ctx, &run)
		}), nil
	}
}

// engineOptions are what an engine of kind is told, as the Host's options
// say.
func (h *Host) engineOptions(kind string) engine.Options {
	o := engine.Options{Pages: h.opts.WASMMemoryPages, Warn: func(msg string, err error) {
		h.log.Warn(msg, slog.String("error", err.Error()))
	}}
	if kind == "wasm" {
		dir, err := cacheDir(h.opts.WASMCacheDir)
		if err != nil {
			h.log.Warn("the WebAssembly compilation cache cannot be opened; modules are compiled at every start", slog.String("error", err.Error()))
		} else {
			o.Cache = dir
		}
	}
	return o
}
