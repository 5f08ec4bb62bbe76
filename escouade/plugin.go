package escouade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"shinken.dev/go/escouade/internal/fence"
	"shinken.dev/go/escouade/internal/jsonrpc"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/logtext"
)

// State is where a plugin is in its life.
type State int32

// Plugin states.
const (
	StateStarting   State = iota // started, not yet initialized
	StateRunning                 // initialized: it gets facts and requests
	StateRestarting              // crashed, waiting to be started again
	StateStopped                 // stopped on request
	StateDisabled                // crashed past its budget, or speaks another protocol
)

var stateNames = [...]string{"starting", "running", "restarting", "stopped", "disabled"}

// String returns the state's name: "running", "disabled".
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// A Plugin is a plugin loaded by a Host, safe for concurrent use.
type Plugin struct {
	h       *Host
	m       *manifest.Manifest
	dir     string
	launch  launcher
	j       *journal
	secrets map[string]bool
	// inproc: the plugin runs in-process (run.wasm, run.js) and may call
	// the methods only those may: net/*, ws/*, timer/*, fs/*, proc/*.
	inproc bool

	fences *fence.Plugin // what its fences keep for its whole life: its network
	shared *sharedProcess
	tmpMu  sync.Mutex
	tmp    string // its temporary folder, made at first use

	cur   atomic.Pointer[instance] // the running instance, nil between lives
	state atomic.Int32

	ctx    context.Context // ends when the plugin is stopped
	cancel context.CancelFunc

	mu       sync.Mutex
	releases []func()     // what the launcher keeps for the plugin's lives, freed with it
	attached []*AgentInfo // in the order they were attached
	caps     map[string]any
	crashes  []time.Time // within the crash window

	stopOnce  sync.Once
	stopping  chan struct{}
	hurryOnce sync.Once
	hurry     chan struct{} // the stop must be quick: skip to the kill
	done      chan struct{} // the supervisor has ended
}

func newPlugin(h *Host, m *manifest.Manifest, dir string, launch launcher) (*Plugin, error) {
	p := &Plugin{
		h: h, m: m, dir: dir, launch: launch,
		j:        newJournal(h, m.ID),
		secrets:  make(map[string]bool, len(m.Permissions.Secrets)),
		stopping: make(chan struct{}),
		hurry:    make(chan struct{}),
		done:     make(chan struct{}),
	}
	for _, k := range m.Permissions.Secrets {
		p.secrets[k] = true
	}
	p.inproc = m.Run.WASM != "" || m.Run.JS != ""
	p.fences = fence.New(p.fenceConfig(), fenceHost{p})
	if dir != "" {
		fi, err := os.Stat(dir)
		if err == nil && !fi.IsDir() {
			err = fmt.Errorf("%s is not a folder", dir)
		}
		if err != nil {
			return nil, fmt.Errorf("escouade: plugin %s: %w", m.ID, err)
		}
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// ID returns the plugin's id.
func (p *Plugin) ID() string { return p.m.ID }

// Manifest returns the plugin's manifest. It must not be modified.
func (p *Plugin) Manifest() *manifest.Manifest { return p.m }

// Dir returns the plugin's folder; "" for an in-process plugin without one.
func (p *Plugin) Dir() string { return p.dir }

// State returns where the plugin is in its life.
func (p *Plugin) State() State { return State(p.state.Load()) }

// Capabilities returns what the plugin said it can do in its last answer to
// initialize. It must not be modified.
func (p *Plugin) Capabilities() map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.caps
}

func (p *Plugin) setState(s State) { p.state.Store(int32(s)) }

// begin starts the first instance, and the supervisor once it runs. The
// process of launch.shared is started first, for the plugin's whole life.
func (p *Plugin) begin(ctx context.Context) error {
	if p.m.Launch.Shared != nil {
		p.shared = startShared(p, p.m.Launch.Shared)
	}
	inst, err := p.startInstance(ctx)
	if err != nil {
		if errors.Is(err, ErrProtocolVersion) {
			p.setState(StateDisabled)
		} else {
			p.setState(StateStopped)
		}
		p.cancel()
		p.release()
		close(p.done)
		return err
	}
	p.j.say(slog.LevelInfo, "plugin started", slog.String("version", p.m.Version))
	go p.supervise(inst)
	return nil
}

// release frees what the plugin holds beyond its instances: its shared
// process, its network, its temporary folder.
func (p *Plugin) release() {
	if p.shared != nil {
		p.shared.stop()
	}
	p.fences.Close()
	p.mu.Lock()
	releases := p.releases
	p.releases = nil
	p.mu.Unlock()
	for _, f := range releases {
		f()
	}
	p.tmpMu.Lock()
	if p.tmp != "" {
		if err := os.RemoveAll(p.tmp); err != nil {
			p.j.say(slog.LevelWarn, "the plugin's temporary folder could not be removed", slog.String("error", err.Error()))
		}
		p.tmp = "-" // gone: never made again
	}
	p.tmpMu.Unlock()
	p.j.flush()
}

// Stop stops the plugin: a shutdown request (its own timeout), then the
// end of its input, SIGTERM to its group and SIGKILL, each given
// Options.StopGrace; the Host forgets it. When ctx ends first, it is killed
// at once and ctx's error returned. Stopping it again does nothing.
func (p *Plugin) Stop(ctx context.Context) error {
	p.stopOnce.Do(func() {
		close(p.stopping)
		p.cancel()
	})
	var err error
	select {
	case <-p.done:
	case <-ctx.Done():
		p.hurryOnce.Do(func() { close(p.hurry) })
		<-p.done
		err = ctx.Err()
	}
	p.h.remove(p)
	return err
}

// supervise watches the running instance, restarts it when it ends unasked
// (within the crash budget), and stops it when asked.
func (p *Plugin) supervise(inst *instance) {
	defer close(p.done)
	defer p.release()
	for {
		if inst != nil {
			p.setState(StateRunning)
			select {
			case <-p.stopping:
				inst.stop(p.hurry, p.h.opts.StopGrace)
				p.setState(StateStopped)
				p.j.say(slog.LevelInfo, "plugin stopped")
				return
			case <-inst.proc.done():
			case <-inst.runDone:
			}
			p.cur.Store(nil)
			status := inst.finish(p.h.opts.StopGrace)
			p.j.say(slog.LevelWarn, "plugin ended unasked", slog.String("status", status))
		}

		now := p.h.opts.Clock.Now()
		p.mu.Lock()
		kept := p.crashes[:0]
		for _, t := range p.crashes {
			if now.Sub(t) < p.h.opts.CrashWindow {
				kept = append(kept, t)
			}
		}
		p.crashes = append(kept, now)
		n := len(p.crashes)
		p.mu.Unlock()
		if n > p.h.opts.CrashBudget {
			p.setState(StateDisabled)
			p.j.say(slog.LevelError, "plugin disabled: it crashed past its budget",
				slog.Int("crashes", n), slog.Duration("window", p.h.opts.CrashWindow))
			return
		}
		delay := min(p.h.opts.Backoff<<(n-1), time.Minute)
		p.setState(StateRestarting)
		p.j.say(slog.LevelInfo, "plugin restarting", slog.Duration("in", delay), slog.Int("crashes", n))
		timer := time.NewTimer(delay)
		select {
		case <-timer.C:
		case <-p.stopping:
			timer.Stop()
			p.setState(StateStopped)
			p.j.say(slog.LevelInfo, "plugin stopped")
			return
		}
		var err error
		inst, err = p.startInstance(p.ctx)
		switch {
		case errors.Is(err, ErrProtocolVersion):
			p.setState(StateDisabled)
			return
		case errors.Is(err, ErrProgramChanged):
			p.setState(StateDisabled)
			p.j.say(slog.LevelError, "plugin disabled: its program changed since its first start", slog.String("error", err.Error()))
			return
		case err != nil && p.ctx.Err() != nil:
			p.setState(StateStopped)
			p.j.say(slog.LevelInfo, "plugin stopped")
			return
		case err != nil:
			p.j.say(slog.LevelWarn, "plugin restart failed", slog.String("error", err.Error()))
			inst = nil // a failed start counts as a crash
		default:
			p.j.say(slog.LevelInfo, "plugin restarted")
		}
	}
}

// Attach attaches the agent key to the plugin and tells it (agent/attach),
// again if it was attached, and again after each restart.
func (p *Plugin) Attach(ctx context.Context, key string) error {
	a, err := p.h.opts.Agents.Agent(ctx, key)
	if err != nil {
		return err
	}
	att := *a
	att.Key = key // the key the plugin is given is the one it was attached by
	p.mu.Lock()
	p.attached = append(removeAgent(p.attached, key), &att)
	p.mu.Unlock()
	inst := p.cur.Load()
	if inst == nil {
		return nil // it will be given on the next start
	}
	return inst.conn.Notify(methodAttach, protocol.AttachParams{Key: key, Agent: att.Agent})
}

// Detach forgets an attached agent: it is not given again after a restart.
func (p *Plugin) Detach(key string) {
	p.mu.Lock()
	p.attached = removeAgent(p.attached, key)
	p.mu.Unlock()
}

func removeAgent(list []*AgentInfo, key string) []*AgentInfo {
	out := list[:0]
	for _, a := range list {
		if a.Key != key {
			out = append(out, a)
		}
	}
	return out
}

// methodAttach is the notification that gives a plugin an attached agent.
// The protocol's schema names it (FsPath: "as agent/attach gave it") but
// does not define it yet.
const methodAttach = "agent/attach"

// A process is one running instance of a plugin as its transport sees it:
// a program in its own process group, or a function in-process. The
// peer-to-peer logic above it is the same for every transport.
type process interface {
	stdout() io.Reader // what the plugin writes
	stdin() io.Writer  // what the Host writes
	closeInput()       // ends the plugin's input: a plugin that reads it ends
	terminate()        // asks it to end now: SIGTERM to its group
	kill()             // ends it and all it started: SIGKILL to its group
	release()          // closes the Host's ends of the transport
	done() <-chan struct{}
	status() string // how it ended, once done
}

// inprocMaxLine is the cap on a line of a plugin in WASM: fs/write's 4 MiB,
// in base64, fit.
const inprocMaxLine = 8 << 20

// hookWriter hands what is written to a function: the lines of a test's
// hook.
type hookWriter func([]byte)

func (w hookWriter) Write(b []byte) (int, error) { w(b); return len(b), nil }

// A launcher starts a process for a new instance. A process that runs
// in-process must not call the instance before inst.ready is closed: its
// connection is made after the process.
type launcher func(inst *instance) (process, error)

// An instance is one life of a plugin: a process and the connection over
// it, and what the plugin opened during that life (timers, programs,
// streams, sockets), which ends with it.
type instance struct {
	p       *Plugin
	proc    process
	conn    *jsonrpc.Conn
	runDone chan struct{}
	ready   chan struct{}   // closed once conn is set
	res     *fence.Instance // made with conn
	tap     *wireTap        // what goes into an in-process plugin; nil for a program
}

func (p *Plugin) startInstance(ctx context.Context) (*instance, error) {
	p.setState(StateStarting)
	inst := &instance{p: p, runDone: make(chan struct{}), ready: make(chan struct{})}
	proc, err := p.launch(inst)
	if err != nil {
		return nil, fmt.Errorf("escouade: plugin %s: %w", p.m.ID, err)
	}
	inst.proc = proc
	if t, ok := proc.(interface{ wire() *wireTap }); ok {
		inst.tap = t.wire()
	}
	rd, wr := proc.stdout(), proc.stdin()
	if hook := p.h.onLine; hook != nil {
		rd = io.TeeReader(rd, hookWriter(func(b []byte) { hook(false, b) }))
		wr = io.MultiWriter(hookWriter(func(b []byte) { hook(true, b) }), wr)
	}
	maxLine := p.h.opts.MaxLine
	if maxLine <= 0 && p.inproc {
		maxLine = inprocMaxLine
	}
	inst.conn = jsonrpc.NewConn(rd, wr, jsonrpc.HandlerFunc(inst.handle), &jsonrpc.Options{
		MaxLine: maxLine,
		Workers: p.h.opts.Workers,
		Busy:    &jsonrpc.Error{Code: int64(protocol.CodeFailed), Message: "failed: too many requests at once"},
		Timeout: p.methodTimeout,
		OnEvent: p.protocolEvent,
	})
	var tap fence.Tap
	if inst.tap != nil {
		tap = inst.tap
	}
	inst.res = p.fences.NewInstance(inst.conn, tap)
	close(inst.ready)
	go func() {
		inst.conn.Run(context.Background())
		close(inst.runDone)
	}()

	raw, err := inst.conn.Call(ctx, "initialize", p.initializeParams())
	var res protocol.InitializeResult
	if err == nil {
		if err = res.UnmarshalJSON(raw); err != nil {
			err = fmt.Errorf("its answer does not hold: %w", err)
		}
	}
	if err != nil {
		inst.finish(p.h.opts.StopGrace)
		if f, ok := proc.(interface{ startFailure() error }); ok && f.startFailure() != nil {
			err = f.startFailure() // the engine said why: the code does not load
		}
		p.j.say(slog.LevelWarn, "plugin failed to initialize", slog.String("error", err.Error()))
		return nil, fmt.Errorf("escouade: plugin %s: initialize: %w", p.m.ID, err)
	}
	if res.ProtocolVersion != protocol.Version {
		p.j.say(slog.LevelError, "plugin stopped: it speaks another protocol version",
			slog.Int("speaks", res.ProtocolVersion), slog.Int("want", protocol.Version))
		inst.stop(p.hurry, p.h.opts.StopGrace)
		return nil, fmt.Errorf("%w: plugin %s speaks %d, the host %d", ErrProtocolVersion, p.m.ID, res.ProtocolVersion, protocol.Version)
	}
	p.mu.Lock()
	p.caps = res.Capabilities
	attached := append([]*AgentInfo(nil), p.attached...)
	p.mu.Unlock()
	p.cur.Store(inst)
	p.setState(StateRunning)
	inst.reattach(ctx, attached, res.Capabilities["batch"] == true)
	return inst, nil
}

func (p *Plugin) initializeParams() protocol.InitializeParams {
	return protocol.InitializeParams{
		ProtocolVersion: protocol.Version,
		Escouade:        protocol.HostInfo{Version: p.h.opts.Version},
		Plugin:          protocol.PluginInfo{ID: p.m.ID, Version: p.m.Version},
		Lang:            p.h.opts.Lang,
		Capabilities:    protocol.Capabilities{Batch: true, Secrets: true, Log: true, Attach: true},
	}
}

// reattach gives the plugin its attached agents again, in one batch when it
// takes batches.
func (inst *instance) reattach(ctx context.Context, agents []*AgentInfo, batch bool) {
	if len(agents) == 0 {
		return
	}
	if batch && len(agents) > 1 {
		calls := make([]jsonrpc.BatchCall, len(agents))
		for i, a := range agents {
			calls[i] = jsonrpc.BatchCall{Method: methodAttach, Params: protocol.AttachParams{Key: a.Key, Agent: a.Agent}, Notify: true}
		}
		if err := inst.conn.Batch(ctx, calls); err != nil {
			inst.p.j.say(slog.LevelWarn, "could not give the attached agents again", slog.String("error", err.Error()))
		}
		return
	}
	for _, a := range agents {
		if err := inst.conn.Notify(methodAttach, protocol.AttachParams{Key: a.Key, Agent: a.Agent}); err != nil {
			inst.p.j.say(slog.LevelWarn, "could not give an attached agent again", slog.String("agent", a.Key), slog.String("error", err.Error()))
		}
	}
}

// stop ends a running instance politely, then less so: shutdown, the end of
// its input, SIGTERM, SIGKILL. hurry skips to the kill.
func (inst *instance) stop(hurry <-chan struct{}, grace time.Duration) {
	inst.p.cur.CompareAndSwap(inst, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-hurry:
			cancel()
		case <-ctx.Done():
		}
	}()
	_, err := inst.conn.Call(ctx, "shutdown", nil)
	cancel()
	if err != nil && !errors.Is(err, jsonrpc.ErrClosed) {
		inst.p.j.say(slog.LevelWarn, "plugin did not answer shutdown", slog.String("error", err.Error()))
	}
	inst.proc.closeInput()
	inputGrace := grace
	if g := inst.p.h.inputGrace; g > 0 {
		inputGrace = g
	}
	if !inst.wait(hurry, inputGrace) {
		inst.p.j.say(slog.LevelWarn, "plugin did not end when its input closed: SIGTERM")
		inst.proc.terminate()
		if !inst.wait(hurry, grace) {
			inst.p.j.say(slog.LevelWarn, "plugin did not end on SIGTERM: SIGKILL")
		}
	}
	inst.finish(grace)
}

// wait waits for the process to end, for grace at most; hurry cuts it short.
func (inst *instance) wait(hurry <-chan struct{}, grace time.Duration) bool {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-inst.proc.done():
		return true
	case <-t.C:
	case <-hurry:
	}
	return false
}

// finish kills what is left of the instance (its process group), lets the
// reader take what the plugin wrote before it died, closes the connection,
// and says how it ended.
func (inst *instance) finish(grace time.Duration) string {
	inst.proc.kill()
	inst.res.Close()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-inst.proc.done():
		select {
		case <-inst.runDone:
		case <-t.C:
		}
	case <-t.C:
		inst.p.j.say(slog.LevelError, "plugin did not end when killed: abandoned")
	}
	inst.proc.release() // a reader stuck on an escaped grandchild's pipe lets go
	inst.conn.Close()
	<-inst.runDone
	return inst.proc.status()
}

// protocolEvent journals the plugin's misbehaviour on the wire.
func (p *Plugin) protocolEvent(ev jsonrpc.Event) {
	var msg string
	switch ev.Kind {
	case jsonrpc.EventParse:
		msg = "plugin wrote a line that is not JSON; answered parse"
	case jsonrpc.EventInvalid:
		msg = "plugin wrote a message that is not JSON-RPC 2.0; answered invalidRequest"
	case jsonrpc.EventTooLong:
		msg = "plugin wrote a line over the cap; discarded, answered invalidRequest"
	case jsonrpc.EventUnknownReply:
		msg = "plugin answered a request that was not waiting: late, twice, or an unknown id; ignored"
	case jsonrpc.EventBusy:
		msg = "plugin sent too many requests at once; answered failed"
	case jsonrpc.EventDropped:
		msg = "plugin sent too many notifications at once; dropped"
	case jsonrpc.EventHandler:
		msg = "plugin's request failed"
	case jsonrpc.EventWrite:
		msg = "could not write to the plugin"
	}
	attrs := []slog.Attr{slog.String("event", ev.Kind.String())}
	if ev.Method != "" {
		attrs = append(attrs, slog.String("method", ev.Method))
	}
	if ev.ID != "" {
		attrs = append(attrs, slog.String("id", ev.ID))
	}
	if ev.Err != nil {
		attrs = append(attrs, slog.String("error", ev.Err.Error()))
	}
	p.j.limited(p.j.proto, slog.LevelWarn, msg, attrs...)
}

// handle serves one of the plugin's requests or notifications, by a line.
func (inst *instance) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	c := &call{inst: inst, id: req.ID}
	res, err := inst.serve(ctx, req.Method, req.Params, c)
	if err != nil {
		e := wireError(err)
		if e == nil {
			return nil, err
		}
		return nil, &jsonrpc.Error{Code: int64(e.Code), Message: e.Message}
	}
	if res == nil {
		return json.RawMessage("null"), nil
	}
	return res, nil
}

// serve runs one of the plugin's methods, by a line or by escouade.call.
func (inst *instance) serve(ctx context.Context, method string, params []byte, c *call) (any, error) {
	p := inst.p
	if m, ok := commandMethods[method]; ok {
		return m(ctx, p, params)
	}
	if m, ok := fence.Lookup(method); ok && p.inproc {
		return m(ctx, inst.res, c, params)
	}
	if ms, known := protocol.LookupMethod(method); known && !ms.ToPlugin {
		return nil, errorf(protocol.CodeMethodNotFound, "method not found: %s is for plugins run in-process (run.wasm, run.js); a plugin run by a command uses its own means", method)
	}
	return nil, errorf(protocol.CodeMethodNotFound, "method not found: %s", logtext.Cut(method))
}

// wireError gives the protocol's error for a method's error: an *Error as
// it is, a *FieldError as invalidParams naming the fields; nil for any
// other error, which is the Host's failure, answered internal.
func wireError(err error) *protocol.Error {
	var e *protocol.Error
	var fe *protocol.FieldError
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &fe):
		return &protocol.Error{Code: protocol.CodeInvalidParams, Message: paramsMessage(err)}
	}
	return nil
}

// methodTimeout is MethodTimeout, but for the net/fetch and net/stream of
// a plugin whose limits.fetchMs asks for longer.
func (p *Plugin) methodTimeout(method string) time.Duration {
	t := protocol.MethodTimeout(method)
	if (method == "net/fetch" || method == "net/stream") && p.m.Limits.FetchMs > 0 {
		t = max(t, time.Duration(p.m.Limits.FetchMs)*time.Millisecond)
	}
	return t
}
