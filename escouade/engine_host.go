package escouade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"shinken.dev/go/escouade/internal/contain"
	"shinken.dev/go/escouade/internal/jsonrpc"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/logtext"
	"shinken.dev/go/internal/strictjson"
)

// scriptLauncher returns the launcher of a run.js (kind "js") or run.wasm
// (kind "wasm") plugin: in a process of its own unless Options.Engine says
// otherwise. It fails when the engine cannot run as configured.
func (h *Host) scriptLauncher(m *manifest.Manifest, kind, name string, code []byte) (launcher, error) {
	lang, err := h.language(m, kind, name)
	if err != nil {
		return nil, err
	}
	if h.opts.Engine == EngineInProcess {
		return h.inProcessLauncher(lang, m, name, code), nil
	}
	switch {
	case h.opts.Engine != EngineIsolated:
		return nil, fmt.Errorf("escouade: no engine %v", h.opts.Engine)
	case !contain.LimitsSupported:
		return nil, fmt.Errorf("escouade: plugin %s: %s: %w", m.ID, name, errors.ErrUnsupported)
	case !engineLinked.Load():
		return nil, ErrNoEngine
	}
	cache := ""
	if kind == "wasm" {
		dir, err := cacheDir(h.opts.WASMCacheDir)
		if err != nil {
			h.log.Warn("the WebAssembly compilation cache cannot be opened; modules are compiled at every start", slog.String("error", err.Error()))
		} else {
			cache = dir
		}
	}
	return func(inst *instance) (process, error) {
		boot := engineBoot{
			Kind:    kind,
			Name:    name,
			ID:      m.ID,
			Code:    len(code),
			Script:  scriptConfig(inst.p),
			Turn:    h.opts.ScriptTurn,
			Pages:   h.opts.WASMMemoryPages,
			Cache:   cache,
			Memory:  h.opts.EngineMemory,
			CPU:     h.opts.EngineCPU,
			MaxLine: 2 * inprocMaxLine,
		}
		if boot.Memory <= 0 {
			boot.Memory = defaultEngineMemory
		}
		// The race detector's shadow grows with the memory it watches.
		boot.Memory *= raceMemoryFactor
		if boot.CPU <= 0 {
			boot.CPU = defaultEngineCPU
		}
		return startEngine(inst, &boot, code)
	}, nil
}

// An engineProcess is a run.js or run.wasm plugin in a process of its own:
// the program, started again, that EngineMain turns into the plugin's
// engine. The plugin's lines go over its standard input and output, what
// the engine says over its control channel (see reportMethod), its
// standard error into the journal.
type engineProcess struct {
	inst   *instance
	kind   string // "js" or "wasm"
	g      *contain.Group
	in     *os.File // the Host's end of its stdin
	out    *os.File // the Host's end of its stdout
	ctlIn  *os.File // the Host's end of descriptor 3
	ctlOut *os.File // the Host's end of descriptor 4
	ctl    *jsonrpc.Conn
	tap    *wireTap
	stderr *stderrWriter
	fatal  fatalLine // the runtime's fatal error, from its stderr
	says   *limiter  // the engine's own entries

	booted  chan struct{} // closed once the first line and the code are written
	loaded  chan struct{} // closed once the engine said it loaded the code
	ready   sync.Once
	bootErr error
	ctlDone chan struct{} // the control channel's reader has ended
	exited  chan struct{}

	mu      sync.Mutex
	how     string
	failure string // why the engine said it ends

	inOnce, outOnce sync.Once
}

// engineEnviron is an engine's environment: nothing of the Host's (no
// token, no secret) but the runtime's knobs, and the variable that makes
// EngineMain run the engine.
func engineEnviron() []string {
	env := []string{engineEnv + "=" + engineVersion}
	for _, k := range contain.RuntimeVars {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func startEngine(inst *instance, boot *engineBoot, code []byte) (*engineProcess, error) {
	p := inst.p
	exe, err := contain.SelfPath()
	if err != nil {
		return nil, err
	}
	line, err := json.Marshal(boot)
	if err != nil {
		return nil, err
	}
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File) {
		if err != nil {
			return nil, nil
		}
		r, w, err = os.Pipe()
		files = append(files, r, w)
		return r, w
	}
	inR, inW := pipe()
	outR, outW := pipe()
	ctlInR, ctlInW := pipe()   // descriptor 3: the engine writes
	ctlOutR, ctlOutW := pipe() // descriptor 4: the engine reads
	if err != nil {
		closeAll()
		return nil, err
	}
	e := &engineProcess{
		inst: inst, kind: boot.Kind, in: inW, out: outR, ctlIn: ctlInR, ctlOut: ctlOutW,
		stderr:  &stderrWriter{j: p.j},
		says:    newLimiter(journalRate, journalBurst),
		booted:  make(chan struct{}),
		loaded:  make(chan struct{}),
		ctlDone: make(chan struct{}),
		exited:  make(chan struct{}),
	}
	cmd := &exec.Cmd{
		Path:       exe,
		Args:       []string{"escouade-engine", p.m.ID},
		Env:        engineEnviron(),
		Dir:        string(os.PathSeparator),
		Stdin:      inR,
		Stdout:     outW,
		Stderr:     io.MultiWriter(e.stderr, &e.fatal),
		ExtraFiles: []*os.File{ctlInW, ctlOutR},
		WaitDelay:  p.h.opts.StopGrace,
	}
	e.g, err = contain.Start(cmd, false) // an engine starts nothing
	for _, f := range []*os.File{inR, outW, ctlInW, ctlOutR} {
		f.Close() // the child holds its own copies
	}
	if err != nil {
		for _, f := range []*os.File{inW, outR, ctlInR, ctlOutW} {
			f.Close()
		}
		return nil, err
	}
	e.tap = newWriterTap(bootedWriter{e})
	go e.boot(append(line, '\n'), code)
	e.ctl = jsonrpc.NewConn(ctlInR, ctlOutW, jsonrpc.HandlerFunc(e.handle), &jsonrpc.Options{
		MaxLine: boot.MaxLine,
		Workers: 2,
		Busy:    &jsonrpc.Error{Code: int64(protocol.CodeFailed), Message: "failed: too many requests at once"},
		OnEvent: p.protocolEvent,
	})
	go func() {
		e.ctl.Run(context.Background())
		close(e.ctlDone)
	}()
	go e.wait()
	t := time.NewTimer(engineLoadWait)
	defer t.Stop()
	select {
	case <-e.loaded:
		return e, nil
	case <-e.exited:
		err = errors.New("the engine ended before it loaded the code")
	case <-t.C:
		err = fmt.Errorf("the engine did not load the code within %v", engineLoadWait)
	case <-p.ctx.Done():
		err = protocol.ErrClosed
	}
	e.kill()
	<-e.exited // bounded: the group is killed, and wait bounds the rest
	e.release()
	e.mu.Lock()
	if e.failure != "" {
		err = errors.New(e.failure) // the engine said why: the code does not load
	}
	e.mu.Unlock()
	if f := e.fatal.String(); f != "" {
		err = fmt.Errorf("%w: %s", err, f)
	}
	return nil, err
}

// boot writes the first line and the code; the Host's lines wait for it.
func (e *engineProcess) boot(line, code []byte) {
	_, err := e.in.Write(line)
	if err == nil {
		_, err = e.in.Write(code)
	}
	e.bootErr = err
	close(e.booted)
}

// bootedWriter writes to the engine's stdin once it is booted.
type bootedWriter struct{ e *engineProcess }

func (w bootedWriter) Write(b []byte) (int, error) {
	<-w.e.booted
	if w.e.bootErr != nil {
		return 0, w.e.bootErr
	}
	return w.e.in.Write(b)
}

// wait notes how the engine ended, once its stderr is drained and its
// control channel read to the end.
func (e *engineProcess) wait() {
	<-e.g.Done()
	e.stderr.close()
	t := time.NewTimer(e.inst.p.h.opts.StopGrace)
	select {
	case <-e.ctlDone:
	case <-t.C:
	}
	t.Stop()
	how := e.g.Result().How
	e.mu.Lock()
	e.how = how
	e.mu.Unlock()
	close(e.exited)
}

// handle serves the control channel: the engine's reports, and the
// module's escouade.call.
func (e *engineProcess) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	switch req.Method {
	case reportMethod:
		e.report(req.Params)
		return json.RawMessage("null"), nil
	case readyMethod:
		e.ready.Do(func() { close(e.loaded) })
		return json.RawMessage("null"), nil
	}
	if req.Notification() {
		return nil, nil
	}
	if e.kind != "wasm" {
		// Only a module calls the Host this way; a script has its lines.
		return nil, jsonrpc.Errorf(int64(protocol.CodeMethodNotFound), "method not found: %s", logtext.Cut(req.Method))
	}
	select {
	case <-e.inst.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	done := make(chan struct{})
	close(done) // the module is held in its call until the answer comes
	answer := e.inst.callABI(ctx, req.Method, req.Params, done)
	if h := e.inst.p.h; h.onCall != nil {
		h.onCall(req.Method, answer)
	}
	return json.RawMessage(answer), nil
}

// report journals what the engine said.
func (e *engineProcess) report(params []byte) {
	var rp report
	err := strictjson.Unmarshal(params, &rp)
	j := e.inst.p.j
	if err != nil {
		j.limited(j.proto, slog.LevelWarn, "the engine sent a report that does not hold; ignored", slog.String("error", err.Error()))
		return
	}
	msg, _ := cut([]byte(rp.Msg))
	if rp.Fatal {
		e.mu.Lock()
		e.failure = msg
		e.mu.Unlock()
		return
	}
	attrs := make([]slog.Attr, 0, len(rp.Attrs))
	for k, v := range rp.Attrs {
		attrs = append(attrs, slog.String(k, v))
	}
	if rp.Limited {
		j.limited(j.lines, slog.Level(rp.Level), msg, attrs...)
	} else {
		j.limited(e.says, slog.Level(rp.Level), msg, attrs...)
	}
}

func (e *engineProcess) stdout() io.Reader     { return e.out }
func (e *engineProcess) stdin() io.Writer      { return e.tap }
func (e *engineProcess) wire() *wireTap        { return e.tap }
func (e *engineProcess) closeInput()           { e.inOnce.Do(func() { e.in.Close() }) }
func (e *engineProcess) terminate()            { e.g.Signal(syscall.SIGTERM) }
func (e *engineProcess) kill()                 { e.g.Signal(syscall.SIGKILL) }
func (e *engineProcess) done() <-chan struct{} { return e.exited }

func (e *engineProcess) release() {
	e.closeInput()
	e.outOnce.Do(func() {
		e.out.Close()
		// The writer first: a line blocked on an engine that does not read
		// would hold up the connection's close.
		e.ctlOut.Close()
		e.ctlIn.Close()
		e.ctl.Close()
		<-e.ctlDone
		e.tap.close()
	})
}

func (e *engineProcess) status() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	how := e.how
	if how == "" {
		how = fmt.Sprintf("engine process %d still running", e.g.PGID())
	}
	if e.failure != "" {
		how += ": " + e.failure
	}
	return how
}

// A fatalLine keeps the first "fatal error: ..." line written to it, the
// Go runtime's last words (a stack overflow, out of memory), so that the
// error of a failed start can say them.
type fatalLine struct {
	mu      sync.Mutex
	partial []byte
	line    string
}

func (f *fatalLine) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.line != "" {
		return len(b), nil
	}
	for _, c := range b {
		if c != '\n' {
			if len(f.partial) < 256 {
				f.partial = append(f.partial, c)
			}
			continue
		}
		if l := string(f.partial); strings.HasPrefix(l, "fatal error: ") {
			f.line, _ = cut([]byte(l))
			break
		}
		f.partial = f.partial[:0]
	}
	return len(b), nil
}

// String returns the line kept, "" for none.
func (f *fatalLine) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.line
}
