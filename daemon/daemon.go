package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"shinken.dev/go/internal/httpguard"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/mcpserver"
	"shinken.dev/go/shinken/metrics"
)

// Paths the daemon serves. Each is served only when its option asks for it
// (the ACI, /healthz and /readyz always).
const (
	PathACI     = "/aci"
	PathMCP     = "/mcp"
	PathHealthz = "/healthz"
	PathReadyz  = "/readyz"
	PathMetrics = "/metrics"
	PathInspect = "/inspect"
)

// Options configure a Daemon. Every field is optional but Desktop: the zero
// value of each means the default documented beside it.
type Options struct {
	// Desktop is what the daemon serves (required). Daemon.Swap replaces
	// it while the daemon runs.
	Desktop Desktop

	// Listen lists the addresses to serve on: "host:port" (TCP),
	// "unix:/path/to/socket" or "vsock:PORT" (any context id; port 0
	// picks a free one). Empty means none: serve Daemon.Handler yourself.
	Listen []string

	// Token is the bearer token clients must send (with TokenFile, until
	// the file holds one); with neither, a random one (Daemon.Token). On a
	// command line or in the environment, every process of the daemon's
	// user can read it and children inherit it: prefer TokenFile.
	Token string
	// TokenFile is a file holding the token, read every second and on
	// SIGHUP; sessions opened with an old token close when it changes.
	// While it does not exist there is no token (Token, if set). Rotate it
	// by renaming a complete file over it, as a Kubernetes Secret mount
	// does; one rewritten in place is adopted once complete: ending with a
	// newline, unchanged for TokenQuiet, or at a SIGHUP.
	TokenFile string

	// Runtime is the template of the Runtime made for each desktop; nil
	// means the defaults. New refuses a Token, Feed or Recorder set here
	// (they are the daemon's). Its Authorizer is asked before the plugins.
	// Its Executor defaults to the backend's, if the backend runs
	// commands, else to package osexec's, which runs them on this machine.
	Runtime *shinken.RuntimeOptions

	// Logger receives the daemon's logs; nil means slog.Default().
	Logger *slog.Logger

	// Hosts lists the names the Host header may carry on /aci, /mcp,
	// /inspect and /metrics besides the connection's own address and, on
	// loopback, localhost: a Service's or a proxy's ("sandbox-0.ns.svc";
	// "*.example.com" for every name below it). Another Host gets 403 on
	// every TCP listener, loopback or not, which defeats DNS rebinding.
	Hosts []string
	// Origins lists the browser origins (scheme://host[:port]) allowed on
	// those paths besides the page's own, which is http://: behind a proxy
	// that ends TLS, list its https:// origin. A request with no Origin
	// passes unless it says Sec-Fetch-Site: cross-site; another site's
	// page gets 403 (cross-site WebSocket hijacking).
	Origins []string

	// MCP, when set, serves MCP (streamable HTTP) at /mcp with the
	// daemon's token; Hosts and Origins join its AllowedHosts and
	// AllowedOrigins. A session finds its window tools with one fixed
	// probe script (machine.Tools.WindowControl), run without asking
	// Plugins as it runs nothing the agent chose; the window operations
	// are judged. Where plugins judge the agent's lines, set ShellLines:
	// the shell tool then types a line only at the shell's prompt.
	MCP *mcpserver.Options

	// Page serves the inspector page at / and its endpoint at /inspect:
	// the desktop live, its tree, the feed's timeline, takeover and the
	// replay of recordings.
	Page bool

	// Metrics, when set, serves Prometheus metrics at /metrics.
	Metrics *MetricsOptions

	// Ready are readiness checks besides the daemon's own (see the
	// package doc), run in the background every ReadyInterval.
	Ready []Check
	// ReadyInterval is how often the checks run; 0 means 1 s.
	ReadyInterval time.Duration
	// ReadyWithoutToken makes /readyz ready before a TokenFile holds a
	// token: a warm pool's sandbox is ready to be claimed, and gets its
	// token then (every hello is refused until it does).
	ReadyWithoutToken bool

	// DrainTimeout bounds how long calls in flight may take to finish at
	// shutdown before the sessions are closed; 0 means 20 s.
	DrainTimeout time.Duration
	// DrainDelay is how long new sessions are still accepted once a
	// shutdown begins (/readyz answering 503), so that a load balancer
	// that removes endpoints late sees it unready first; 0 means none.
	DrainDelay time.Duration
	// NoSignals makes Run ignore SIGINT and SIGTERM; by default either
	// begins the drain, as the end of Run's ctx does.
	NoSignals bool

	// Record, when set, is the one file the session (screen, actions,
	// trees) is recorded to, for package record and the page's replay; a
	// folder and a timestamped name are the caller's. The screen is taken
	// after every action that changed it, and RecordFPS times a second.
	Record string
	// RecordFPS is how often the screen is captured between actions
	// while recording; default 5, at most 60.
	RecordFPS float64

	// AgentUser, when set, is the user the agent's commands run as: a
	// login name or uid of /etc/passwd and /etc/group, never root. exec
	// and the machine tools run with its uid, gid and groups, its HOME,
	// USER and LOGNAME, in its home unless the request names a folder;
	// the daemon, its plugins and its token file stay out of their reach.
	// For launch_app, give the same user to x11desktop.StartSession. It
	// switches the daemon's own executor: New refuses it with a
	// Runtime.Executor or a backend that runs commands (set it there),
	// and refuses to start when the user can write the token file, the
	// plugins folder or anything in it (it warns if the user can read the
	// token file). Without CAP_SETUID, CAP_SETGID and CAP_KILL, New warns
	// loudly and the commands run as the daemon's user (RequireAgentUser
	// holds /readyz then). "" means the daemon's user: New warns so.
	AgentUser string
	// RequireAgentUser (which needs AgentUser) makes /readyz answer 503
	// while the agent's commands, or the desktop's applications
	// (Desktop.AppsAsAgent), do not run as AgentUser.
	RequireAgentUser bool

	// Plugins, when set, are the Escouade plugins that decide what the
	// agent may exec or launch; with no plugin in it, it denies every
	// command. Nil means no check (but Runtime.Authorizer's): every command
	// the agent sends runs, and New warns so.
	Plugins *Plugins
}

// MetricsOptions configure /metrics.
type MetricsOptions struct {
	// Registry is where the metrics are registered and what /metrics
	// serves; nil means a new one with the Go and process collectors.
	Registry *prometheus.Registry
	// Listen, when set, is a host:port serving /metrics without a token;
	// by default /metrics is on the daemon's listeners, behind the token.
	Listen string
}

// ErrNoDesktop is returned by New for Options with no Desktop.Backend.
var ErrNoDesktop = errors.New("daemon: Options.Desktop.Backend is required")

// A Daemon serves a desktop: the ACI, and as its Options say MCP, the
// page, metrics, health and readiness, recording and plugins. New opens
// it, Run serves it until it is told to stop, and then drains it.
type Daemon struct {
	opts    Options
	log     *slog.Logger
	feed    *shinken.Feed
	metrics *metrics.Metrics
	reg     *prometheus.Registry

	served    *served
	ready     *readiness
	tokens    *tokenSource
	mcp       *mcpDaemon
	plugins   *plugins
	guard     *httpguard.Guard
	handler   http.Handler
	listeners []*listener
	metricsL  net.Listener
	ctx       context.Context // ends page sessions and watchers at Close
	cancel    context.CancelFunc

	closers   closers
	closeOnce sync.Once
	drainOnce sync.Once
}

// New opens a daemon: its token, its Runtime on opts.Desktop, plugins,
// recording, MCP and listeners. On error, whatever it opened is closed
// again (opts.Desktop too) and it returns the first error. ctx bounds the
// start-up only.
func New(ctx context.Context, opts *Options) (*Daemon, error) {
	return newDaemon(ctx, opts)
}

// newDaemon is New, with err named for the closer stack's deferred close.
func newDaemon(ctx context.Context, opts *Options) (_ *Daemon, err error) {
	if opts == nil || opts.Desktop.Backend == nil {
		if opts != nil && opts.Desktop.Close != nil {
			opts.Desktop.Close()
		}
		return nil, ErrNoDesktop
	}
	d := &Daemon{opts: *opts, log: opts.Logger}
	if d.log == nil {
		d.log = slog.Default()
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.closers.push(d.cancel)
	// The desktop goes last, after the plugins: its own close, or the
	// served one's once a Runtime serves it (a Swap may have replaced it).
	d.closers.push(func() {
		if d.served != nil {
			d.served.closeDesktop()
			return
		}
		opts.Desktop.closeIt()
	})
	// Then the Runtime: its sessions, and the commands they still run;
	// after the plugins, which get their shutdown first.
	d.closers.push(func() {
		if d.served != nil {
			d.served.closeRuntime()
		}
	})
	defer func() {
		if err != nil {
			d.closers.close()
		}
	}()

	boundary, err := newAgentBoundary(opts, opts.Runtime, opts.Desktop.Backend, d.log)
	if err != nil {
		return nil, err
	}
	rtOpts, err := runtimeOptions(opts.Runtime, opts.Desktop.Backend, boundary)
	if err != nil {
		return nil, err
	}
	for _, c := range opts.Ready {
		if c.Name == "" || c.Func == nil {
			return nil, errors.New("daemon: a readiness Check needs a Name (what /readyz calls the part) and a Func")
		}
	}
	guard, err := httpguard.New(&httpguard.Options{Hosts: opts.Hosts, Origins: opts.Origins})
	if err != nil {
		return nil, fmt.Errorf("daemon: %w", err)
	}
	d.tokens, err = newTokenSource(opts.Token, opts.TokenFile)
	if err != nil {
		return nil, err
	}
	if opts.Metrics != nil {
		d.reg = opts.Metrics.Registry
		if d.reg == nil {
			d.reg = prometheus.NewRegistry()
			d.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		}
		d.metrics = metrics.New(d.reg)
		rtOpts.Recorder = d.metrics
	}
	d.feed = shinken.NewFeed()
	rtOpts.Feed = d.feed
	rtOpts.Token = d.tokens.current()
	if rtOpts.Logger == nil {
		rtOpts.Logger = d.log
	}
	rtOpts.OriginPatterns = append(rtOpts.OriginPatterns, originHosts(opts.Origins)...)

	if opts.Plugins == nil && rtOpts.Authorizer == nil {
		d.log.Warn("no plugins: every command the agent sends runs (set Options.Plugins to judge them)")
	}
	if opts.Plugins != nil {
		var onDecision func(string)
		if d.metrics != nil {
			onDecision = d.metrics.Decision
		}
		d.plugins, err = startPlugins(ctx, opts.Plugins, d.log, onDecision)
		if err != nil {
			return nil, err
		}
		d.closers.push(d.plugins.close)
		rtOpts.Authorizer = chainAuthorizers(rtOpts.Authorizer, d.plugins.authorizer())
	}
	if rtOpts.Authorizer != nil {
		rtOpts.Authorizer = reportDecisions(rtOpts.Authorizer, d.feed)
	}

	d.served = newServed(opts.Desktop, rtOpts, d.log)

	if opts.RecordFPS < 0 || opts.RecordFPS > 60 {
		return nil, fmt.Errorf("daemon: Options.RecordFPS %g: want 0 (the default, 5) to 60", opts.RecordFPS)
	}
	if opts.Record != "" {
		stop, err := startRecording(d.ctx, opts.Record, opts.RecordFPS, d.served, d.feed, d.log)
		if err != nil {
			return nil, err
		}
		d.closers.push(stop)
	}

	if opts.MCP != nil {
		mo := *opts.MCP
		if mo.Logger == nil {
			mo.Logger = d.log
		}
		// The MCP handler checks Host and Origin on its own too: by the
		// daemon's rules, so that a name the daemon allows is allowed.
		mo.AllowedHosts = append(mo.AllowedHosts, opts.Hosts...)
		mo.AllowedOrigins = append(mo.AllowedOrigins, opts.Origins...)
		d.mcp = newMCPDaemon(d.served, mo)
		d.closers.push(d.mcp.close)
		if d.tokens.current() != "" {
			if _, err := d.mcp.get(ctx); err != nil {
				return nil, err
			}
		}
	}

	if opts.TokenFile != "" {
		wctx, stop := context.WithCancel(d.ctx)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			d.tokens.watch(wctx, d.served.setToken, d.log)
		}()
		d.closers.push(func() { stop(); <-watched })
	}

	checks := opts.Ready
	if opts.RequireAgentUser {
		checks = append(slices.Clone(checks), Check{Name: "the agent user", Func: func(ctx context.Context) error {
			if err := boundary.check(ctx); err != nil {
				return err
			}
			if _, _, _, desk := d.served.state(); desk.AppsAsAgent != nil {
				if err := desk.AppsAsAgent(); err != nil {
					return NotReady("the agent user", "does not start the desktop's applications", err)
				}
			}
			return nil
		}})
	}
	d.ready = newReadiness(d.served, checks, opts.ReadyInterval, d.log)
	d.ready.noToken = opts.ReadyWithoutToken
	d.ready.start(ctx)
	d.closers.push(d.ready.stop)

	d.guard = guard
	d.handler = d.routes(guard)
	if opts.Metrics != nil && opts.Metrics.Listen != "" {
		ml, err := net.Listen("tcp", opts.Metrics.Listen)
		if err != nil {
			return nil, fmt.Errorf("daemon: metrics listener: %w", err)
		}
		d.metricsL = ml
		d.closers.push(func() { ml.Close() })
	}
	for _, addr := range opts.Listen {
		l, err := listen(addr)
		if err != nil {
			return nil, err
		}
		d.listeners = append(d.listeners, l)
		d.closers.push(func() { l.Close() })
	}
	return d, nil
}

// runtimeOptions is the template of the daemon's Runtimes on b.
func runtimeOptions(o *shinken.RuntimeOptions, b shinken.Backend, ab *agentBoundary) (shinken.RuntimeOptions, error) {
	var r shinken.RuntimeOptions
	if o != nil {
		r = *o
	}
	switch {
	case r.Token != "":
		return r, errors.New("daemon: set the token in Options.Token or Options.TokenFile, not in Options.Runtime")
	case r.Feed != nil:
		return r, errors.New("daemon: Options.Runtime.Feed is the daemon's (see Daemon.Feed)")
	case r.Recorder != nil:
		return r, errors.New("daemon: Options.Runtime.Recorder is the daemon's (see Options.Metrics)")
	}
	if _, runs := b.(shinken.Executor); r.Executor == nil && !runs {
		r.Executor = ab.executor()
	}
	return r, nil
}

// Handler returns the daemon's routes, for a server of your own: the ACI,
// /healthz, /readyz and what the Options add.
func (d *Daemon) Handler() http.Handler { return d.handler }

// Token returns the token in force ("" while a TokenFile does not exist).
func (d *Daemon) Token() string { return d.served.token() }

// Feed returns the feed of every session's actions and observations.
func (d *Daemon) Feed() *shinken.Feed { return d.feed }

// Runtime returns the Runtime of the current desktop.
func (d *Daemon) Runtime() *shinken.Runtime { return d.served.current() }

// Metrics returns the daemon's metrics, or nil without Options.Metrics.
func (d *Daemon) Metrics() *metrics.Metrics { return d.metrics }

// MCP returns the MCP server, opening it if need be: it needs a token.
// It fails without Options.MCP.
func (d *Daemon) MCP(ctx context.Context) (*mcpserver.Server, error) {
	if d.mcp == nil {
		return nil, errors.New("daemon: no Options.MCP")
	}
	m, err := d.mcp.get(ctx)
	if err != nil {
		return nil, err
	}
	return m.srv, nil
}

// Endpoints are the URLs of one listener.
type Endpoints struct {
	// ACI is the ACI's URL: ws://host:port/aci, or for a unix socket or
	// vsock "unix:/path (path /aci)", "vsock:PORT (path /aci)".
	ACI string
	// MCP is /mcp's URL, when served.
	MCP string
	// Page is the page's URL on TCP listeners, when served.
	Page string
	// Metrics is /metrics' URL, when served.
	Metrics string
}

// WriteAddresses writes, a line each, what a person needs to reach the
// daemon: each listener's ACI and MCP URLs, the metrics URL, the token (or
// its file) and the page's URL, with the token in its fragment (#token=).
func (d *Daemon) WriteAddresses(w io.Writer) error {
	var b strings.Builder
	for _, e := range d.Endpoints() {
		fmt.Fprintf(&b, "ACI:   %s\n", e.ACI)
		if e.MCP != "" {
			fmt.Fprintf(&b, "MCP:   %s\n", e.MCP)
		}
	}
	page := ""
	if es := d.Endpoints(); len(es) > 0 {
		if es[0].Metrics != "" {
			fmt.Fprintf(&b, "metrics: %s\n", es[0].Metrics)
		}
		page = es[0].Page
	}
	switch {
	case d.opts.TokenFile != "":
		fmt.Fprintf(&b, "token: from %s\n", d.opts.TokenFile)
		if page != "" {
			fmt.Fprintf(&b, "page:  %s (add #token=TOKEN)\n", page)
		}
	default:
		fmt.Fprintf(&b, "token: %s\n", d.Token())
		if page != "" {
			fmt.Fprintf(&b, "page:  %s#token=%s\n", page, d.Token())
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Endpoints returns the URLs of each listener, in the order of
// Options.Listen.
func (d *Daemon) Endpoints() []Endpoints {
	var es []Endpoints
	for _, l := range d.listeners {
		e := Endpoints{ACI: l.url(PathACI)}
		if d.mcp != nil {
			e.MCP = l.httpURL(PathMCP)
		}
		if d.opts.Page && l.tcp {
			e.Page = l.httpURL("/")
		}
		if d.metricsL != nil {
			e.Metrics = "http://" + d.metricsL.Addr().String() + PathMetrics
		} else if d.reg != nil {
			e.Metrics = l.httpURL(PathMetrics)
		}
		es = append(es, e)
	}
	return es
}

// Run serves the daemon's listeners until ctx ends, SIGINT or SIGTERM
// arrives (unless Options.NoSignals), a listener fails, or the desktop
// fails for good (Desktop.Done); then it shuts down in this order:
// /readyz answers 503 at once; new sessions are accepted for DrainDelay,
// then refused; the calls in flight finish (up to DrainTimeout) and the
// sessions close with 1001; the MCP sessions and the plugins get their
// shutdown; the commands still running are killed; the desktop is closed;
// the listeners go. It returns nil after a requested stop, else what
// ended it. A Daemon runs once; Run closes it.
func (d *Daemon) Run(ctx context.Context) error {
	if !d.opts.NoSignals {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
		defer stop()
	}
	var servers []*http.Server
	errc := make(chan error, len(d.listeners)+1)
	serve := func(l net.Listener, h http.Handler) {
		s := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(d.log.Handler(), slog.LevelDebug)}
		servers = append(servers, s)
		go func() { errc <- s.Serve(l) }()
	}
	for _, l := range d.listeners {
		serve(l, d.handler)
	}
	if d.metricsL != nil {
		mux := http.NewServeMux()
		mux.Handle(PathMetrics, guarded(d.guard, promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{Registry: d.reg})))
		serve(d.metricsL, mux)
	}
	var runErr error
	select {
	case err := <-errc:
		runErr = err
	case <-d.served.failed():
		runErr = errors.New("daemon: the desktop failed for good")
		d.log.Error("desktop gave up: exiting", "err", runErr)
	case <-ctx.Done():
		d.log.Info("shutting down: draining", "timeout", d.drainTimeout())
	}
	d.drain()
	d.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range servers {
		if err := s.Shutdown(sctx); err != nil {
			// Shutdown waits for connections that never sent a request
			// (a browser's preconnects); the sessions are closed already.
			s.Close()
		}
	}
	if errors.Is(runErr, http.ErrServerClosed) || errors.Is(runErr, net.ErrClosed) {
		runErr = nil
	}
	d.log.Info("stopped")
	return runErr
}

func (d *Daemon) drainTimeout() time.Duration {
	if d.opts.DrainTimeout > 0 {
		return d.opts.DrainTimeout
	}
	return 20 * time.Second
}

// drain makes the daemon unready, keeps accepting for DrainDelay, then
// drains the sessions.
func (d *Daemon) drain() {
	d.drainOnce.Do(func() {
		d.ready.setDraining()
		if d.opts.DrainDelay > 0 {
			t := time.NewTimer(d.opts.DrainDelay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-d.ctx.Done(): // Close: no more waiting
			}
		}
		d.served.drain(d.drainTimeout())
	})
}

// Close closes everything the daemon opened, in the reverse order of its
// opening: the listeners, the readiness checks, MCP, the recording, the
// sessions, the plugins, the desktop. Run calls it; call it yourself when
// you do not call Run, or to stop at once without the drain's wait.
func (d *Daemon) Close() error {
	d.closeOnce.Do(d.closers.close)
	return nil
}

// closers is a stack of cleanups, run last in, first out: what New opened
// is closed in the reverse order, on its every error path and at Close.
type closers struct {
	mu sync.Mutex
	fs []func()
}

func (c *closers) push(f func()) {
	c.mu.Lock()
	c.fs = append(c.fs, f)
	c.mu.Unlock()
}

func (c *closers) close() {
	c.mu.Lock()
	fs := c.fs
	c.fs = nil
	c.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
