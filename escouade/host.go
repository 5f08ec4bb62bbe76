package escouade

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"shinken.dev/go/escouade/internal/beneath"
	"shinken.dev/go/escouade/internal/fence"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/protocol"
)

// Options configure a Host. A nil *Options, or a zero field, gives the
// default documented beside the field.
type Options struct {
	// Secrets keeps the plugins' secrets; nil means the desktop's keychain
	// (the Secret Service, over D-Bus; see SecretService).
	Secrets SecretStore
	// Settings gives the values of plugins' settings; nil means a
	// FileSettings with no user values.
	Settings SettingsSource
	// Projects knows the projects; nil means none is known but
	// DefaultProject, which is always known.
	Projects Projects
	// Agents knows the agents; nil means none is known.
	Agents Agents
	// Journal receives what happens to plugins and what they log; nil
	// means slog.Default's handler.
	Journal slog.Handler
	// Clock tells the time of facts and crashes; nil means the system's.
	Clock Clock

	// Version is the Host's version, sent in initialize; "" means "0.0.0".
	Version string
	// Lang is the interface's language (fr, en), sent in initialize; ""
	// leaves it out.
	Lang string

	// CrashBudget is how many restarts a plugin gets within CrashWindow;
	// past it the plugin is disabled. 0 means 3.
	CrashBudget int
	// CrashWindow: 0 means 5 minutes.
	CrashWindow time.Duration
	// Backoff is the delay before the first restart after a crash; it
	// doubles with each crash in the window, up to a minute. 0 means 1 s.
	Backoff time.Duration
	// StopGrace is how long each step of a stop waits for the plugin to end
	// before the next, harder one: closing its input, then SIGTERM to its
	// process group, then SIGKILL. 0 means 1 s.
	StopGrace time.Duration

	// MaxLine is the byte cap on a line a plugin writes; 0 means 1 MiB for
	// a program, and 8 MiB for a plugin in WASM (run.wasm, run.js), whose
	// fs/write of 4 MiB, in base64, must fit in a line.
	MaxLine int
	// Workers is how many of a plugin's requests are handled at once; past
	// it a request is answered failed. 0 means 16.
	Workers int

	// Network is the network of the plugins run in-process (net/*, ws/*):
	// proxy and TLS. nil means a direct connection and Go's TLS defaults.
	Network *NetworkOptions
	// Accounts gives the servers of plugins' accounts, for {account}; nil
	// means no plugin has one.
	Accounts Accounts
	// TempDir is where each plugin's temporary folder is made (the root
	// temp of fs/*, where proc/spawn runs a program by default); "" means
	// os.TempDir(). The folder is removed when the plugin stops.
	TempDir string

	// Languages are the engines of plugins' code the Host may run:
	// js.Language() (package escouade/js) for run.js, wasm.Language()
	// (package escouade/wasm) for run.wasm. nil means none: a run.js or
	// run.wasm plugin then fails to start with ErrNoLanguage, naming the
	// package to add. Give the same ones to EngineMain.
	Languages []Language

	// WASMCacheDir is the folder of run.wasm's compilation cache, so that a
	// module is compiled once, not at every start of the Host; "" means
	// escouade/wasm in os.UserCacheDir(), or a cache in memory when there
	// is none.
	WASMCacheDir string
	// WASMMemoryPages caps the memory of a run.wasm plugin, in pages of
	// 64 KiB: past it memory.grow fails, which ends a Go module. 0 means
	// 4096 (256 MiB).
	WASMMemoryPages uint32

	// ScriptTurn bounds how long a run.js plugin may run before it returns
	// to its event loop (its top level, a callback, a handler); past it the
	// script is interrupted and the instance ends, as a crash. 0 means 1 s.
	ScriptTurn time.Duration
	// ScriptHeap bounds how much the heap may grow during one turn of a
	// run.js plugin; past it the script is interrupted and the instance
	// ends. 0 means 256 MiB.
	ScriptHeap int64

	// Engine is where run.js and run.wasm plugins run: EngineIsolated, the
	// zero value, in a child process each, which needs EngineMain in the
	// program's main; EngineInProcess in the Host's process. Isolated, a
	// run.wasm plugin's turns are bounded by ScriptTurn as a script's are:
	// a module that runs that long without reading its input, calling the
	// Host or sleeping is ended, as a crash.
	Engine Engine
	// EngineMemory bounds the memory an isolated engine's process may map
	// beyond what it holds at its start, the kernel enforcing it (Linux:
	// RLIMIT_AS); past it an allocation fails, which ends the process, as
	// a crash. 0 means 512 MiB.
	EngineMemory int64
	// EngineCPU bounds the CPU time of one life of an isolated engine's
	// process, the kernel enforcing it (RLIMIT_CPU, in whole seconds);
	// past it the process is killed and the plugin restarted, as after a
	// crash. 0 means 10 minutes.
	EngineCPU time.Duration
}

// NetworkOptions configure the network of in-process plugins, as the
// user's network settings say.
type NetworkOptions struct {
	// Proxy returns the proxy for a request, as http.Transport.Proxy; nil,
	// or a nil URL, means a direct connection. The environment's proxy
	// variables are not read. Through a proxy only the host's name can be
	// judged, never its addresses: the journal says so.
	Proxy func(*http.Request) (*url.URL, error)
	// TLS configures TLS (roots of trust, client certificates); nil means
	// Go's defaults. It is cloned.
	TLS *tls.Config
}

// A Host runs plugins: it starts them, gives them facts, asks them to
// decide permissions, serves their requests, and restarts them when they
// crash. Its methods are safe for concurrent use.
type Host struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	plugins map[string]*Plugin
	closed  bool

	// facts maps a fact name to the plugins that receive it, and deciders
	// lists those with permissions.decide, by id; both are rebuilt when
	// plugins come and go, and read without a lock by Fact and Decide.
	facts    atomic.Pointer[map[string][]*Plugin]
	deciders atomic.Pointer[[]*Plugin]

	factMu sync.Mutex // orders facts: one seq, then its sends, at a time
	seq    int64

	// Knobs only the package's tests set (export_test.go): Options cannot
	// reach them, so that no configuration lets a plugin past the fences.
	hook       *fence.NetHook // a resolver and a dialer in place of the network's
	streamIdle time.Duration  // 0 means the protocol's 120 s
	// onCall hears every answer of escouade.call, and onLine every line
	// to and from an in-process plugin, for the schema's tests.
	onCall func(method string, answer []byte)
	onLine func(fromHost bool, line []byte)
}

// New returns a Host configured by opts (nil means defaults).
func New(opts *Options) *Host {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Secrets == nil {
		o.Secrets = &SecretService{}
	}
	if o.Settings == nil {
		o.Settings = &FileSettings{}
	}
	if o.Projects == nil {
		o.Projects = ProjectMap{}
	}
	if o.Agents == nil {
		o.Agents = AgentMap{}
	}
	if o.Journal == nil {
		o.Journal = slog.Default().Handler()
	}
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	if o.Version == "" {
		o.Version = "0.0.0"
	}
	if o.CrashBudget <= 0 {
		o.CrashBudget = 3
	}
	if o.CrashWindow <= 0 {
		o.CrashWindow = 5 * time.Minute
	}
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.StopGrace <= 0 {
		o.StopGrace = time.Second
	}
	if o.Workers <= 0 {
		o.Workers = 16
	}
	if o.Network == nil {
		o.Network = &NetworkOptions{}
	}
	if o.Accounts == nil {
		o.Accounts = AccountMap{}
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	if o.WASMMemoryPages == 0 {
		o.WASMMemoryPages = 4096
	}
	if o.ScriptTurn <= 0 {
		o.ScriptTurn = time.Second
	}
	if o.ScriptHeap <= 0 {
		o.ScriptHeap = 256 << 20
	}
	h := &Host{opts: o, log: slog.New(o.Journal), plugins: map[string]*Plugin{}}
	h.facts.Store(&map[string][]*Plugin{})
	h.deciders.Store(&[]*Plugin{})
	return h
}

// Start loads the plugin in dir and runs it as its manifest says: a
// program (run.command), a WebAssembly module (run.wasm) or a script
// (run.js) of its folder, the last two in a process of their own unless
// Options.Engine says otherwise (see EngineMain). It returns once the
// plugin has answered initialize, or with the error that kept it from
// doing so.
func (h *Host) Start(ctx context.Context, dir string) (*Plugin, error) {
	m, err := manifest.Read(dir)
	if err != nil {
		return nil, err
	}
	switch {
	case m.Run.WASM != "":
		code, err := readPluginFile(dir, m.Run.WASM, maxWASM)
		if err != nil {
			return nil, fmt.Errorf("escouade: plugin %s: run.wasm: %w", m.ID, err)
		}
		launch, err := h.scriptLauncher(m, "wasm", m.Run.WASM, code)
		if err != nil {
			return nil, err
		}
		return h.start(ctx, m, dir, launch)
	case m.Run.JS != "":
		code, err := readPluginFile(dir, m.Run.JS, maxScript)
		if err != nil {
			return nil, fmt.Errorf("escouade: plugin %s: run.js: %w", m.ID, err)
		}
		launch, err := h.scriptLauncher(m, "js", m.Run.JS, code)
		if err != nil {
			return nil, err
		}
		return h.start(ctx, m, dir, launch)
	}
	return h.start(ctx, m, dir, commandLauncher(m.Run.Command))
}

// folderName names a plugin's folder in a message.
func folderName(dir string) string {
	if dir == "" {
		return "a plugin with no folder"
	}
	return dir
}

// A RunFunc runs one instance of a plugin in-process: it serves the
// protocol, reading the Host's lines from in and writing its own to out,
// until in ends or ctx is done. Returning before that is a crash.
// plugin.Serve is one.
type RunFunc func(ctx context.Context, in io.Reader, out io.Writer) error

// StartFunc starts a plugin that runs in-process, as run says, with the
// manifest m and the folder dir (which files/read serves; "" for none). The
// plugin's lifecycle is a command plugin's: it is stopped with shutdown and
// then the end of its input, restarted when run returns unasked, within the
// crash budget. With plugin.Serve as run, it is how a program ships a
// plugin written in Go inside itself, with no process (see the example);
// plugintest.Connect uses it to test a plugin the same way.
//
// The methods it may call follow m.Run: with run.wasm or run.js it is
// served as those are, net/*, ws/*, timer/*, fs/* and proc/* included,
// which is how a plugin in WASM is tested in Go; with run.command it is
// answered methodNotFound for them, as a program is.
func (h *Host) StartFunc(ctx context.Context, m *manifest.Manifest, dir string, run RunFunc) (*Plugin, error) {
	if m == nil || run == nil {
		return nil, errors.New("escouade: StartFunc needs a manifest and a RunFunc")
	}
	return h.start(ctx, m, dir, funcLauncher(run))
}

func (h *Host) start(ctx context.Context, m *manifest.Manifest, dir string, launch launcher) (*Plugin, error) {
	p, err := newPlugin(h, m, dir, launch)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	switch {
	case h.closed:
		h.mu.Unlock()
		p.release()
		return nil, protocol.ErrClosed
	case h.plugins[m.ID] != nil:
		// The id is the plugin's identity (its secrets, settings and
		// journal go by it): the first folder keeps it, and the refusal
		// names both, so that a person sees which is the impostor.
		held := h.plugins[m.ID].dir
		h.mu.Unlock()
		p.release()
		err := fmt.Errorf("%w: %s is loaded from %s; %s claims it too", ErrDuplicate, m.ID, folderName(held), folderName(dir))
		h.log.Warn("a second folder claims a loaded plugin's id", slog.String("plugin", m.ID),
			slog.String("loaded", folderName(held)), slog.String("refused", folderName(dir)))
		return nil, err
	}
	h.plugins[m.ID] = p
	h.reindex()
	h.mu.Unlock()

	if err := p.begin(ctx); err != nil {
		h.remove(p)
		return nil, err
	}
	return p, nil
}

// reindex rebuilds the indexes of plugins; h.mu must be held.
func (h *Host) reindex() {
	idx := map[string][]*Plugin{}
	ids := make([]string, 0, len(h.plugins))
	for id := range h.plugins {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var deciders []*Plugin
	for _, id := range ids {
		p := h.plugins[id]
		for _, f := range p.m.Permissions.Events {
			idx[f] = append(idx[f], p)
		}
		if p.m.Permissions.Decide {
			deciders = append(deciders, p)
		}
	}
	h.facts.Store(&idx)
	h.deciders.Store(&deciders)
}

// remove forgets p, once it is stopped.
func (h *Host) remove(p *Plugin) {
	h.mu.Lock()
	if h.plugins[p.m.ID] == p {
		delete(h.plugins, p.m.ID)
		h.reindex()
	}
	h.mu.Unlock()
}

// Plugin returns the loaded plugin whose id is id, or nil.
func (h *Host) Plugin(id string) *Plugin {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.plugins[id]
}

// Plugins returns the loaded plugins (running, restarting or disabled),
// sorted by id.
func (h *Host) Plugins() []*Plugin {
	h.mu.Lock()
	ps := make([]*Plugin, 0, len(h.plugins))
	for _, p := range h.plugins {
		ps = append(ps, p)
	}
	h.mu.Unlock()
	slices.SortFunc(ps, func(a, b *Plugin) int { return strings.Compare(a.m.ID, b.m.ID) })
	return ps
}

// Close stops every plugin, in parallel, and refuses new ones. When ctx
// ends first, the plugins still stopping are killed at once.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	ps := h.Plugins()
	errs := make([]error, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.Stop(ctx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// pluginDirs returns the real paths of the folders of the loaded plugins.
func (h *Host) pluginDirs() []string {
	h.mu.Lock()
	dirs := make([]string, 0, len(h.plugins))
	for _, p := range h.plugins {
		if p.dir != "" {
			dirs = append(dirs, p.dir)
		}
	}
	h.mu.Unlock()
	for i, d := range dirs {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			dirs[i] = r
		}
	}
	return dirs
}

// readPluginFile reads name in the plugin's folder dir, through os.Root,
// up to max bytes. It opens without blocking and reads only a regular
// file: a FIFO, which a plugin's program can make in its folder, would
// block open(2) until someone writes to it, and a device read for ever.
func readPluginFile(dir, name string, max int64) ([]byte, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	// Non-blocking, no link, a regular file: a FIFO there does not hold
	// Start.
	f, _, err := beneath.OpenRegular(real, filepath.ToSlash(filepath.Clean(name)), false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v)", name, fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is over %d bytes", name, max)
	}
	return data, nil
}
