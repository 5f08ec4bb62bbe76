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
	"shinken.dev/go/escouade/internal/contain"
	"shinken.dev/go/escouade/internal/fence"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/protocol"
)

// Options configure a Host. A nil *Options, or a zero field, gives the
// default documented beside the field. REFERENCE.md says what each bound
// holds, and where.
type Options struct {
	Secrets  SecretStore    // the plugins' secrets; nil: the desktop's keychain (SecretService)
	Settings SettingsSource // settings' values; nil: a FileSettings with no user values
	Projects Projects       // nil: none is known but DefaultProject, which always is
	Agents   Agents         // nil: none is known
	Journal  slog.Handler   // what happens to plugins and what they log; nil: slog.Default's
	Clock    Clock          // the time of facts and crashes; nil: the system's

	Version string // the Host's, sent in initialize; "": "0.0.0"
	Lang    string // the interface's language (fr, en), sent in initialize; "": none

	// CrashBudget is how many restarts a plugin gets within CrashWindow (0:
	// 5 minutes) before it is disabled; 0 means 3. Backoff, doubled at each
	// crash up to a minute, delays a restart; StopGrace is each step of a
	// stop (its input closed, SIGTERM, SIGKILL); 0 means 1 s for both.
	CrashBudget                     int
	CrashWindow, Backoff, StopGrace time.Duration

	// MaxLine caps a line a plugin writes, in bytes; 0 means 1 MiB for a
	// program, 8 MiB for run.wasm and run.js (a 4 MiB fs/write in base64).
	// Workers is how many of a plugin's requests are served at once, past
	// which one is answered failed; 0 means 16.
	MaxLine, Workers int

	// Network is the proxy and TLS of in-process plugins' net/* and ws/*;
	// nil: direct, Go's TLS defaults. Accounts gives the servers {account}
	// opens; nil: none. TempDir holds each plugin's temporary folder (fs/*'s
	// temp, proc/spawn's default), removed when it stops; "": os.TempDir().
	Network  *NetworkOptions
	Accounts Accounts
	TempDir  string

	// Languages are the engines the Host may run: js.Language() (package
	// escouade/js) for run.js, wasm.Language() (package escouade/wasm) for
	// run.wasm; give EngineMain the same. nil means none: such a plugin
	// fails to start with ErrNoLanguage, naming the package to add.
	Languages []Language

	// WASMCacheDir holds run.wasm's compilation cache; "" means
	// escouade/wasm in os.UserCacheDir(), else memory. WASMMemoryPages caps
	// a module's memory in 64 KiB pages (memory.grow fails past it, which
	// ends a Go module); 0 means 4096 (256 MiB).
	WASMCacheDir    string
	WASMMemoryPages uint32

	// ScriptTurn bounds a turn of a run.js plugin (and, isolated, of a
	// run.wasm one), ScriptHeap what a script's turn may grow the heap by:
	// past either the instance ends, as a crash. 0 means 1 s and 256 MiB.
	ScriptTurn time.Duration
	ScriptHeap int64

	// Engine is where run.js and run.wasm plugins run (EngineIsolated, the
	// default, needs EngineMain). An isolated engine's process may map
	// EngineMemory beyond what it starts with (0: 512 MiB) and use
	// EngineCPU in one life (0: 10 minutes), the kernel enforcing both.
	Engine       Engine
	EngineMemory int64
	EngineCPU    time.Duration
}

// NetworkOptions configure the network of in-process plugins.
type NetworkOptions struct {
	// Proxy returns a request's proxy, as http.Transport.Proxy; nil, or a
	// nil URL, means direct (the environment is not read). Through a proxy
	// only the host's name is judged, never its addresses.
	Proxy func(*http.Request) (*url.URL, error)
	TLS   *tls.Config // cloned; nil: Go's defaults
}

// A Host runs plugins: it starts them, gives them facts, asks them to
// decide permissions, serves their requests, and restarts them when they
// crash. Its methods are safe for concurrent use.
type Host struct {
	opts       Options
	log        *slog.Logger
	nsSaid     sync.Once // the journal said pid namespaces are refused
	mountsSaid sync.Once // the journal said the private mounts are refused

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
	inputGrace time.Duration  // how long a stop waits after closing a plugin's input; 0 means StopGrace (tests only)
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

// Start loads the plugin in dir and runs it as its manifest says, returning
// once it answered initialize, or with the error that kept it from doing so.
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

// A RunFunc runs one instance of a plugin in-process, as plugin.Serve
// does: the Host's lines from in, its own to out, until in ends or ctx is
// done; returning before that is a crash.
type RunFunc func(ctx context.Context, in io.Reader, out io.Writer) error

// StartFunc starts a plugin that runs in-process as run says (plugin.Serve:
// a plugin in Go inside the program), with the manifest m and the folder
// dir (files/read's; "" for none). Its life is a command plugin's; it may
// call what m.Run's kind may (with run.js or run.wasm, the fences too).
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

// Plugins returns the loaded plugins, whatever their state, by id.
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

// sayNamespaces journals, once a Host, that the kernel refused the pid
// namespace a program was to start in, and, once, that the private
// mounts were not made (REFERENCE.md, "What ends with a plugin").
func (h *Host) sayNamespaces(j *journal) {
	if err := contain.PIDNamespaceRefused(); err != nil {
		h.nsSaid.Do(func() {
			j.say(slog.LevelWarn, "the kernel refused a pid namespace: programs start without one, and what they start may outlive them by leaving their cgroup",
				slog.String("error", err.Error()))
		})
	}
	if err := contain.PrivateMountsRefused(); err != nil {
		h.mountsSaid.Do(func() {
			j.say(slog.LevelWarn, "programs start with the machine's /proc and cgroup hierarchy: they may read the Host's /proc and write its and their siblings' cgroup files where their user may",
				slog.String("error", err.Error()))
		})
	}
}
