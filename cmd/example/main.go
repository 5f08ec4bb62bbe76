// Command example is a sandbox runtime daemon built from Shinken's parts: it
// serves the Agent-Computer Interface (ACI v0) over WebSocket for a desktop
// (the pure-software headless desktop by default, or a real X server), runs
// commands for the agent, lets Escouade plugins decide what the agent may
// exec or launch, and shows the desktop live in a web page.
//
// Usage:
//
//	go run ./cmd/example [flags]
//
// It prints the ACI URL and the token; open the page URL it prints to watch.
package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/metrics"
)

//go:embed page
var pageFS embed.FS

type config struct {
	listen        string
	token         string
	tokenFile     string
	backend       string
	session       bool
	apps          stringList
	size          string
	plugins       string
	project       string
	onAsk         string
	logLevel      string
	metricsListen string
	drainTimeout  time.Duration
	keepAlive     time.Duration
	maxMessage    int
	settleCap     time.Duration
	probe         string
	mcp           string // "" or "stdio"
	remote        string // with -mcp stdio: the ACI URL of the runtime to serve
	mcpSize       string // the model's screen for the MCP computer tools, WxH
	record        string // a file to record the session to
}

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ", ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	// The plugins' run.js and run.wasm engines are this program, started
	// again: it becomes one here when the Host started it so.
	escouade.EngineMain(languages...)
	if len(os.Args) > 1 && os.Args[1] == "export" {
		if err := exportMain(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "example:", err)
			os.Exit(1)
		}
		return
	}
	var cfg config
	flag.StringVar(&cfg.listen, "listen", "127.0.0.1:7040", "address to serve on: host:port, unix:/path/to/socket or vsock:PORT")
	flag.StringVar(&cfg.token, "token", "", "bearer token clients must send (default: -token-file, $SHINKEN_TOKEN, or a random one)")
	flag.StringVar(&cfg.tokenFile, "token-file", "", "read the token from this file, and again whenever it changes (checked every second, and on SIGHUP); sessions opened with an old token are closed")
	flag.StringVar(&cfg.backend, "backend", "headless", "desktop to serve: headless, x11 (uses $DISPLAY, or -session) or robotgo (needs -tags robotgo)")
	flag.BoolVar(&cfg.session, "session", false, "with -backend x11: start and supervise the daemon's own desktop (Xvfb, openbox, a session D-Bus, the AT-SPI bus) of -size")
	flag.Var(&cfg.apps, "app", "with -session: a program to start on the desktop once it is ready, as a command line split at spaces (repeatable)")
	flag.StringVar(&cfg.size, "size", "1280x800", "screen size, WxH, of the headless desktop or of the -session desktop")
	flag.StringVar(&cfg.plugins, "plugins", "", "folder whose subfolders holding a plugin.json are Escouade plugins; they gate exec and launch_app")
	flag.StringVar(&cfg.project, "project", "", "project name the plugins are told about")
	flag.StringVar(&cfg.onAsk, "on-ask", "deny", "what a plugin's \"ask\", or its silence, means with no person to ask: allow or deny")
	flag.StringVar(&cfg.record, "record", "", "record the session (screen, actions, trees) to this file; replay it in the page, export it with \"example export\"")
	flag.StringVar(&cfg.logLevel, "log", "info", "log level: debug, info, warn or error")
	flag.StringVar(&cfg.mcp, "mcp", "", "stdio: serve MCP on standard input and output instead of listening (MCP is always served at /mcp on the listener)")
	flag.StringVar(&cfg.mcpSize, "mcp-screen", "1024x768", "the screen the MCP computer tools show the model, WxH: screenshots fit in it, coordinates are read in it")
	flag.StringVar(&cfg.remote, "remote", "", "with -mcp stdio: serve MCP for the runtime at this ACI URL (ws://host:port/aci, with -token) instead of a local backend")
	flag.StringVar(&cfg.metricsListen, "metrics-listen", "", "serve "+pathMetrics+" on this host:port, without a token (default: on -listen, with the ACI token as a bearer token)")
	flag.DurationVar(&cfg.drainTimeout, "drain-timeout", 20*time.Second, "on SIGTERM, how long calls in flight may take to finish before the sessions are closed")
	flag.DurationVar(&cfg.keepAlive, "keepalive", 25*time.Second, "ping a session idle this long, below the routers' idle timeouts; 0 disables")
	flag.IntVar(&cfg.maxMessage, "max-message", 16<<20, "largest message sent, in bytes; a larger reply is a too_large error")
	flag.DurationVar(&cfg.settleCap, "settle-cap", 0, "the longest an input action's ack waits for the UI to handle it and fall quiet (a page load); 0 means 1.5s, other values are clamped to 50ms..10s")
	flag.StringVar(&cfg.probe, "probe", "", "probe mode, for exec probes: GET this URL (such as http://127.0.0.1:7040"+pathReadyz+"), exit 0 on 200 and 1 otherwise")
	flag.Parse()
	if cfg.probe != "" {
		if err := probe(context.Background(), cfg.probe, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "example:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(context.Background(), cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config, out io.Writer) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
		return fmt.Errorf("-log: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if cfg.onAsk != "allow" && cfg.onAsk != "deny" {
		return fmt.Errorf("-on-ask must be allow or deny, not %q", cfg.onAsk)
	}
	if cfg.settleCap < 0 {
		return fmt.Errorf("-settle-cap must not be negative, not %v", cfg.settleCap)
	}
	if cfg.session && cfg.backend != "x11" {
		return fmt.Errorf("-session needs -backend x11")
	}
	token, err := initialToken(cfg)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := checkMCPFlags(cfg); err != nil {
		return err
	}
	mcpOpts, err := mcpOptions(cfg, log)
	if err != nil {
		return err
	}
	if cfg.remote != "" {
		return runRemoteMCP(ctx, cfg.remote, token, mcpOpts)
	}
	if cfg.mcp == "stdio" && token == "" {
		// MCP on stdio has no listener: the token only guards the
		// in-process session, so until the token file appears that
		// session takes one of its own, and follows the file's after.
		token = randomToken()
		log.Info("no token yet: serving MCP on stdio until the token file appears", "file", cfg.tokenFile)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := metrics.New(reg)

	// A desktop restart (of -session) swaps a new backend in; until the
	// daemon serves, there is nothing to swap.
	var current atomic.Pointer[served]
	swap := func(open func() (desktop, error)) {
		srv := current.Load()
		if srv == nil {
			return
		}
		srv.swapStarted()
		d, err := open()
		if err != nil {
			log.Error("reopening the desktop failed: not ready", "err", err)
			return
		}
		srv.swap(d)
		log.Info("desktop reopened: the sessions on the old one were closed")
	}
	desk, stopDesktop, failed, err := openBackend(ctx, cfg, log, swap, m.Restart)
	if err != nil {
		return err
	}
	defer stopDesktop()

	keepAlive := cfg.keepAlive
	if keepAlive <= 0 {
		keepAlive = -1
	}
	feed := shinken.NewFeed()
	opts := shinken.RuntimeOptions{
		Feed:       feed,
		Token:      token,
		Name:       "shinken-example",
		Logger:     log,
		Executor:   osexec.New(nil),
		Recorder:   m,
		KeepAlive:  keepAlive,
		MaxMessage: cfg.maxMessage,
		SettleCap:  cfg.settleCap,
	}
	var ps *plugins
	if cfg.plugins != "" {
		ps, err = startPlugins(ctx, cfg, log, func(_ protocol.PermissionRequest, d protocol.Decision) { m.Decision(string(d.Verdict)) })
		if err != nil {
			desk.close()
			return err
		}
		opts.Authorizer = reportDecisions(ps.gate, feed)
	}
	srv := newServed(desk, opts, log)
	current.Store(srv)
	defer srv.closeDesktop()
	if cfg.tokenFile != "" {
		go watchToken(ctx, cfg.tokenFile, token, srv.setToken, log)
	}
	if cfg.record != "" {
		stopRecording, err := startRecording(ctx, cfg.record, desk.backend, feed, log)
		if err != nil {
			return err
		}
		defer stopRecording()
	}
	// MCP drives the desktop through an ACI session of its own, which needs
	// the token: with -token-file and no token yet (a warm pool's sandbox
	// before its claim), it opens once the token appears.
	mcpd := newMCPDaemon(srv, mcpOpts)
	var mcpl *mcpLocal
	if token != "" || cfg.mcp == "stdio" {
		mcpl, err = mcpd.get(ctx)
	}
	if err != nil {
		if ps != nil {
			ps.close()
		}
		return err
	}
	if cfg.mcp == "stdio" {
		err := serveMCPStdio(ctx, mcpl.srv, log)
		mcpd.close()
		if ps != nil {
			ps.close()
		}
		return err
	}

	l, aciURL, pageURL, err := listen(cfg.listen)
	if err != nil {
		return err
	}
	page, _ := fs.Sub(pageFS, "page")
	mux := http.NewServeMux()
	mux.Handle(pathACI, srv)
	mux.Handle("/inspect", &inspector{rt: srv.current, feed: feed, token: srv.token, log: log, ctx: ctx})
	mux.HandleFunc(pathHealthz, healthz)
	mux.HandleFunc(pathReadyz, srv.readyz)
	metricsHandler := promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
	var metricsSrv *http.Server
	if cfg.metricsListen != "" {
		ml, err := net.Listen("tcp", cfg.metricsListen)
		if err != nil {
			l.Close()
			return fmt.Errorf("-metrics-listen: %w", err)
		}
		mmux := http.NewServeMux()
		mmux.Handle(pathMetrics, metricsHandler)
		metricsSrv = &http.Server{Handler: mmux, ReadHeaderTimeout: 10 * time.Second}
		go metricsSrv.Serve(ml)
		fmt.Fprintf(out, "metrics: http://%s%s\n", ml.Addr(), pathMetrics)
	} else {
		mux.Handle(pathMetrics, bearer(srv.token, metricsHandler))
	}
	mux.Handle("/mcp", mcpd)
	mux.Handle("/", http.FileServerFS(page))
	httpSrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	fmt.Fprintf(out, "shinken example %s serving the %s desktop\n", aci.Version, cfg.backend)
	fmt.Fprintf(out, "ACI:   %s\n", aciURL)
	fmt.Fprintf(out, "MCP:   %s\n", mcpURL(aciURL))
	if cfg.tokenFile == "" {
		fmt.Fprintf(out, "token: %s\n", token)
	} else {
		fmt.Fprintf(out, "token: from %s\n", cfg.tokenFile)
	}
	switch {
	case pageURL != "" && cfg.tokenFile != "":
		fmt.Fprintf(out, "page:  %s (add #token=TOKEN)\n", pageURL)
	case pageURL != "":
		fmt.Fprintf(out, "page:  %s#token=%s\n", pageURL, token)
	}

	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Serve(l) }()
	var runErr error
	select {
	case err := <-errc:
		runErr = err
	case <-failed:
		runErr = errors.New("the desktop failed for good")
		log.Error("desktop gave up: exiting", "err", runErr)
	case <-ctx.Done():
		log.Info("shutting down: draining", "timeout", cfg.drainTimeout)
	}
	// Not ready at once, no new session; the calls in flight finish (up to
	// -drain-timeout), the sessions close with 1001; then the MCP sessions
	// and the plugins get their shutdown, the desktop stops, and the
	// listeners go.
	srv.drain(cfg.drainTimeout)
	mcpd.close()
	if ps != nil {
		ps.close()
	}
	srv.closeDesktop()
	stopDesktop()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if metricsSrv != nil {
		metricsSrv.Shutdown(sctx)
	}
	if err := httpSrv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		// Shutdown waits 5 s for connections that never sent a request
		// (a browser's preconnects); the sessions are already closed.
		httpSrv.Close()
		if !errors.Is(err, context.DeadlineExceeded) && runErr == nil {
			runErr = err
		}
	}
	if errors.Is(runErr, http.ErrServerClosed) {
		runErr = nil
	}
	log.Info("stopped")
	return runErr
}

// bearer serves h only to requests with the current token as a bearer
// token, compared in constant time.
func bearer(token func() string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		want := token()
		a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
		if !ok || want == "" || subtle.ConstantTimeCompare(a[:], b[:]) != 1 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func parseSize(s string) (int, int, error) {
	ws, hs, ok := strings.Cut(strings.ToLower(s), "x")
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if !ok || err1 != nil || err2 != nil || w < 64 || h < 64 || w > 8192 || h > 8192 {
		return 0, 0, fmt.Errorf("-size %q: want WxH, each from 64 to 8192", s)
	}
	return w, h, nil
}

// openBackend opens the desktop -backend names. stop ends what the desktop
// runs on (the -session X session) once the backend is closed; failed is
// closed if that gives up for good.
func openBackend(ctx context.Context, cfg config, log *slog.Logger, swap func(func() (desktop, error)), restarted func(string)) (d desktop, stop func(), failed <-chan struct{}, err error) {
	nothing := func() {}
	switch cfg.backend {
	case "headless":
		w, h, err := parseSize(cfg.size)
		if err != nil {
			return d, nil, nil, err
		}
		desk := headless.New(&headless.Options{Width: w, Height: h})
		for _, app := range []string{"notes", "form"} {
			if err := desk.Launch(ctx, app, nil); err != nil {
				return d, nil, nil, err
			}
		}
		return desktop{backend: desk, close: nothing}, nothing, nil, nil
	case "x11":
		if cfg.session {
			return openSession(ctx, cfg, log, swap, restarted)
		}
		d, err := openX11(ctx)
		return d, nothing, nil, err
	case "robotgo":
		b, closeB, err := openRobotgo(ctx)
		return desktop{backend: b, close: closeB}, nothing, nil, err
	}
	return d, nil, nil, fmt.Errorf("-backend %q: want headless, x11 or robotgo", cfg.backend)
}
