// Command example is a sandbox runtime daemon built from Shinken's parts: it
// serves the Agent-Computer Interface (ACI v0) over WebSocket for a desktop
// (the pure-software headless desktop by default, or a real X server), runs
// commands for the agent, lets Escouade plugins decide what the agent may
// exec or launch, and shows the desktop live in a web page.
//
// The shipped guard (escouade/guard) judges the agent by default: a coding
// agent's programs, allowed by identity (-allow), files changed under -write
// only. -no-guard turns it off; -plugins adds plugins beside it.
//
// Usage:
//
//	go run ./cmd/example [flags]
//
// It prints the ACI URL and the token; open the page URL it prints to watch.
//
// It is flags over package daemon (shinken.dev/go/daemon), which a program of your own
// composes a daemon from.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/backend/x11/session"
	"shinken.dev/go/daemon"
	"shinken.dev/go/daemon/x11desktop"
	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/js"
	"shinken.dev/go/escouade/wasm"
	"shinken.dev/go/internal/agentuser"
	"shinken.dev/go/internal/hosttool"
	"shinken.dev/go/internal/scrub"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/mcpserver"
)

// languages are the engines of the plugins' code the daemon runs: run.js
// and run.wasm, in this program started again (EngineMain in main).
var languages = []escouade.Language{js.Language(), wasm.Language()}

type config struct {
	listen            string
	token             string
	tokenFile         string
	readyWithoutToken bool
	backend           string
	session           bool
	apps              stringList
	size              string
	plugins           string
	allow             string     // the shipped guard's programs
	allowSet          bool       // -allow was given, not defaulted
	noGuard           bool       // run without the shipped guard
	read, write       stringList // its roots
	project           string
	onAsk             string
	logLevel          string
	metricsListen     string
	drainTimeout      time.Duration
	drainDelay        time.Duration
	hosts             stringList
	origins           stringList
	keepAlive         time.Duration
	readTimeout       time.Duration
	relaunchLost      bool
	maxMessage        int
	settleCap         time.Duration
	probe             string
	mcp               string // "" or "stdio"
	remote            string // with -mcp stdio: the ACI URL of the runtime to serve
	mcpSize           string // the model's screen for the MCP computer tools, WxH
	record            string // a file to record the session to
	recordFPS         float64
	agentUser         string
	requireAgent      bool
	mcpSessions       int           // the most MCP sessions /mcp keeps at once
	mcpIdle           time.Duration // how long /mcp keeps a silent MCP session
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
		if err := daemon.ExportMain(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "example:", err)
			os.Exit(1)
		}
		return
	}
	var cfg config
	flag.StringVar(&cfg.listen, "listen", "127.0.0.1:7040", "address to serve on: host:port, unix:/path/to/socket or vsock:PORT")
	flag.StringVar(&cfg.token, "token", "", "bearer token clients must send (default: -token-file, $"+daemon.TokenEnv+", or a random one); prefer -token-file: a command line and the environment can be read by every process of the daemon's user")
	flag.StringVar(&cfg.tokenFile, "token-file", "", "read the token from this file, and again whenever it changes (checked every second, and on SIGHUP); sessions opened with an old token are closed. Make it readable by the daemon only")
	flag.BoolVar(&cfg.readyWithoutToken, "ready-without-token", false, "with -token-file: /readyz is ready before the file holds a token (a warm pool's sandbox, claimed and given its token later)")
	flag.StringVar(&cfg.agentUser, "agent-user", "", "run the agent's commands (exec, the machine tools; with -session launch_app and the -app programs too) as this user, a name or uid of /etc/passwd: they cannot then change the plugins, read the token file or signal the daemon. Needs root or CAP_SETUID, CAP_SETGID and CAP_KILL")
	flag.BoolVar(&cfg.requireAgent, "require-agent-user", false, "with -agent-user: "+daemon.PathReadyz+" is not ready while the agent's commands cannot run as that user")
	flag.StringVar(&cfg.backend, "backend", "headless", "desktop to serve: headless, x11 (uses $DISPLAY, or -session) or robotgo (needs -tags robotgo)")
	flag.BoolVar(&cfg.session, "session", false, "with -backend x11: start and supervise the daemon's own desktop (Xvfb, openbox, a session D-Bus, the AT-SPI bus) of -size")
	flag.Var(&cfg.apps, "app", "with -session: a program to start on the desktop once it is ready, as a command line split at spaces (repeatable); the operator's, not the agent's: no plugin is asked, and the guard lets the agent start more of it only if -allow names it")
	flag.StringVar(&cfg.size, "size", "1280x800", "screen size, WxH, of the headless desktop or of the -session desktop")
	flag.StringVar(&cfg.plugins, "plugins", "", "folder whose subfolders holding a plugin.json are Escouade plugins; they judge exec, launch_app and the machine tools beside the shipped guard: an action goes ahead only when the guard and every plugin allow it (with -no-guard, the plugins alone judge)")
	flag.StringVar(&cfg.allow, "allow", "agent", "the programs the shipped guard (escouade/guard), which judges every action by default, allows by identity, comma-separated (\"\" for none); \"agent\" stands for "+strings.Join(agentPrograms, ",")+"; their argument rules are on, dynamic lines refused; the MCP shell tool is an sh whose lines are each judged, typed only at its prompt (never to a program it started), pagers and editors off. On -backend x11, launch_app is judged as the command it runs: the agent starts only these programs (the -app ones are the operator's, started unjudged)")
	flag.BoolVar(&cfg.noGuard, "no-guard", false, "run WITHOUT the shipped guard: with no -plugins either, every command the agent sends runs, as the daemon's user (it warns so at start)")
	flag.Var(&cfg.write, "write", "a folder the guard lets the agent change with its file tools and redirections, and read (repeatable; default none)")
	flag.Var(&cfg.read, "read", "a folder the guard lets the agent's file tools read (repeatable; default none)")
	flag.StringVar(&cfg.project, "project", "", "project name the plugins are told about")
	flag.StringVar(&cfg.onAsk, "on-ask", "deny", "what a plugin's \"ask\", or its silence, means with no person to ask: allow or deny")
	flag.StringVar(&cfg.record, "record", "", "record the session (screen, actions, trees) to this file; replay it in the page, export it with \"example export\"")
	flag.Float64Var(&cfg.recordFPS, "record-fps", 5, "with -record: screen captures a second between actions (every action that changes the screen is captured too), at most 60")
	flag.StringVar(&cfg.logLevel, "log", "info", "log level: debug, info, warn or error")
	flag.StringVar(&cfg.mcp, "mcp", "", "stdio: serve MCP on standard input and output instead of listening (MCP is always served at /mcp on the listener)")
	flag.StringVar(&cfg.mcpSize, "mcp-screen", "1024x768", "the screen the MCP computer tools show the model, WxH: screenshots fit in it, coordinates are read in it")
	flag.IntVar(&cfg.mcpSessions, "mcp-sessions", mcpserver.DefaultMaxHTTPSessions, "the most MCP sessions /mcp keeps at once; past it an initialize is refused (429)")
	flag.DurationVar(&cfg.mcpIdle, "mcp-idle", mcpserver.DefaultHTTPSessionIdle, "how long /mcp keeps an MCP session that sends nothing; it then ends with everything it started")
	flag.StringVar(&cfg.remote, "remote", "", "with -mcp stdio: serve MCP for the runtime at this ACI URL (ws://host:port/aci, with -token) instead of a local backend")
	flag.StringVar(&cfg.metricsListen, "metrics-listen", "", "serve "+daemon.PathMetrics+" on this host:port, without a token (default: on -listen, with the ACI token as a bearer token)")
	flag.DurationVar(&cfg.drainTimeout, "drain-timeout", 20*time.Second, "on SIGTERM, how long calls in flight may take to finish before the sessions are closed")
	flag.DurationVar(&cfg.keepAlive, "keepalive", 25*time.Second, "ping a session idle this long, below the routers' idle timeouts; 0 disables")
	flag.DurationVar(&cfg.readTimeout, "read-timeout", 30*time.Second, "the longest one incoming message may take to arrive, first byte to last, whatever -keepalive says; 0 disables")
	flag.BoolVar(&cfg.relaunchLost, "relaunch-lost-apps", false, "with -session: after the accessibility bus restarts, restart the applications it lost (their unsaved state is lost) instead of reporting them not ready until they exit")
	flag.IntVar(&cfg.maxMessage, "max-message", 16<<20, "largest message sent, in bytes; a larger reply is a too_large error")
	flag.DurationVar(&cfg.settleCap, "settle-cap", 0, "the longest an input action's ack waits for the UI to handle it and fall quiet (a page load); 0 means 1.5s, other values are clamped to 50ms..10s")
	flag.DurationVar(&cfg.drainDelay, "drain-delay", 0, "on SIGTERM, how long to keep accepting new sessions while /readyz answers 503, for load balancers that remove endpoints late (Kubernetes: a few seconds)")
	flag.Var(&cfg.hosts, "allow-host", "a Host name the daemon answers to besides IP addresses and localhost, or *.suffix (repeatable): a pod's service name")
	flag.Var(&cfg.origins, "allow-origin", "a browser origin allowed on /aci, /mcp and /inspect besides the page's own (repeatable)")
	flag.StringVar(&cfg.probe, "probe", "", "probe mode, for exec probes: GET this URL (such as http://127.0.0.1:7040"+daemon.PathReadyz+"), exit 0 on 200 and 1 otherwise")
	flag.Parse()
	flag.Visit(func(f *flag.Flag) { cfg.allowSet = cfg.allowSet || f.Name == "allow" })
	if cfg.probe != "" {
		if err := daemon.Probe(context.Background(), cfg.probe, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "example:", err)
			os.Exit(1)
		}
		return
	}
	// SIGINT and SIGTERM stop the daemon from its first step on: one that
	// comes while the desktop starts stops it, its session closed, as
	// cleanly as one that comes while it serves (which begins the drain).
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, cfg, os.Stdout)
	stop()
	if err != nil {
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
	switch {
	case cfg.onAsk != "allow" && cfg.onAsk != "deny":
		return fmt.Errorf("-on-ask must be allow or deny, not %q", cfg.onAsk)
	case cfg.settleCap < 0:
		return fmt.Errorf("-settle-cap must not be negative, not %v", cfg.settleCap)
	case cfg.session && cfg.backend != "x11":
		return fmt.Errorf("-session needs -backend x11")
	case cfg.token != "" && cfg.tokenFile != "":
		return errors.New("-token and -token-file exclude each other")
	}
	if err := checkMCPFlags(cfg); err != nil {
		return err
	}
	if err := checkGuardFlags(cfg); err != nil {
		return err
	}
	mcpOpts, err := mcpOptions(cfg, log)
	if err != nil {
		return err
	}
	// The token is read once, then gone from the environment and the
	// command line, before any child (plugin, command, desktop) starts,
	// and from what /proc shows of this process.
	token := strings.Clone(cfg.token)
	if err := scrub.Arg(cfg.token); err != nil && !errors.Is(err, scrub.ErrUnsupported) {
		log.Warn("the token stays readable in this process's command line", "err", err)
	}
	envToken, _, err := scrub.Env(daemon.TokenEnv)
	if err != nil && !errors.Is(err, scrub.ErrUnsupported) {
		log.Warn("$"+daemon.TokenEnv+" stays readable in this process's start-up environment", "err", err)
	}
	if token == "" && cfg.tokenFile == "" {
		token = envToken
	}
	if cfg.remote != "" {
		if cfg.tokenFile != "" {
			if token, err = client.ReadTokenFile(cfg.tokenFile); err != nil {
				return fmt.Errorf("-token-file: %w", err)
			}
		}
		if err := daemon.ServeRemoteMCP(ctx, cfg.remote, token, &mcpOpts); err != nil {
			return fmt.Errorf("-remote: %w", err)
		}
		return nil
	}
	keepAlive, readTimeout := cfg.keepAlive, cfg.readTimeout
	if keepAlive <= 0 {
		keepAlive = -1
	}
	if readTimeout <= 0 {
		readTimeout = -1
	}
	opts := &daemon.Options{
		Token: token, TokenFile: cfg.tokenFile, Logger: log, MCP: &mcpOpts, Page: true,
		Metrics:           &daemon.MetricsOptions{Listen: cfg.metricsListen},
		ReadyWithoutToken: cfg.readyWithoutToken,
		DrainTimeout:      cfg.drainTimeout, DrainDelay: cfg.drainDelay, Record: cfg.record, RecordFPS: cfg.recordFPS,
		Hosts: cfg.hosts, Origins: cfg.origins, AgentUser: cfg.agentUser, RequireAgentUser: cfg.requireAgent,
		Runtime: &shinken.RuntimeOptions{Name: "shinken-example", KeepAlive: keepAlive, ReadTimeout: readTimeout, MaxMessage: cfg.maxMessage, SettleCap: cfg.settleCap},
	}
	if opts.Plugins, err = pluginsFor(cfg, log); err != nil {
		return err
	}
	// run's ctx ends at SIGINT and SIGTERM (main): Run need not listen.
	opts.NoSignals = true
	if cfg.mcp == "stdio" {
		if token == "" {
			// MCP on stdio has no listener: the token only guards the
			// in-process session, which opens at once with a token of
			// its own until the token file holds one.
			opts.Token = daemon.RandomToken()
		}
	} else {
		opts.Listen = []string{cfg.listen}
	}
	// Background commands and shells of a daemon killed before this one
	// left their folders behind: this user's, and the agent's when its
	// commands run as another (the daemon then checks the user below).
	var owners []uint32
	if cfg.agentUser != "" {
		if u, err := agentuser.Lookup(cfg.agentUser); err == nil {
			owners = append(owners, u.UID)
		}
	}
	if swept, err := hosttool.SweepCommands(os.TempDir(), owners...); err != nil {
		log.Warn("sweeping the folders of earlier background commands", "err", err)
	} else if len(swept) > 0 {
		log.Info("removed the folders of background commands an earlier daemon left", "folders", len(swept))
	}
	desk, sess, err := openBackend(ctx, cfg, log)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while the desktop started
		}
		return err
	}
	if sess != nil {
		defer func() {
			if err := sess.Close(); err != nil {
				log.Warn("desktop session did not close cleanly", "err", err)
			}
		}()
	}
	opts.Desktop = desk
	d, err := daemon.New(ctx, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while the daemon started
		}
		return err
	}
	if cfg.agentUser != "" && cfg.backend != "headless" && !cfg.session {
		// On a display the daemon did not start, it cannot admit another
		// user to the buses: launch_app stays the daemon's user.
		log.Warn("-agent-user without -session covers exec only: the apps launch_app starts run as the daemon's user, and an agent that drives one of them (a terminal) acts as that user", "backend", cfg.backend)
	}
	if sess != nil {
		sess.Follow(d)
	}
	if cfg.mcp == "stdio" {
		defer d.Close()
		return d.ServeMCPStdio(ctx)
	}
	fmt.Fprintf(out, "shinken example %s serving the %s desktop\n", aci.Version, cfg.backend)
	if err := d.WriteAddresses(out); err != nil {
		d.Close()
		return err
	}
	return d.Run(ctx)
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

// openBackend opens the desktop -backend names; with -session, also the
// X session it runs on, which the daemon must follow once it serves.
func openBackend(ctx context.Context, cfg config, log *slog.Logger) (daemon.Desktop, *x11desktop.Session, error) {
	w, h, err := parseSize(cfg.size)
	if err != nil {
		return daemon.Desktop{}, nil, err
	}
	switch cfg.backend {
	case "headless":
		hd := headless.New(&headless.Options{Width: w, Height: h})
		for _, app := range []string{"notes", "form"} {
			if err := hd.Launch(ctx, app, nil); err != nil {
				return daemon.Desktop{}, nil, err
			}
		}
		return daemon.Desktop{Backend: hd}, nil, nil
	case "x11":
		if !cfg.session {
			desk, err := x11desktop.Display(ctx, nil)
			return desk, nil, err
		}
		var apps [][]string
		for _, a := range cfg.apps {
			if argv := strings.Fields(a); len(argv) > 0 {
				apps = append(apps, argv)
			}
		}
		s, err := x11desktop.StartSession(ctx, &session.Options{Width: w, Height: h, Apps: apps, RelaunchLostApps: cfg.relaunchLost, AgentUser: cfg.agentUser, Logger: log})
		if err != nil {
			return daemon.Desktop{}, nil, fmt.Errorf("-session: %w", err)
		}
		return s.Desktop(), s, nil
	case "robotgo":
		b, closeB, err := openRobotgo(ctx)
		return daemon.Desktop{Backend: b, Close: closeB}, nil, err
	}
	return daemon.Desktop{}, nil, fmt.Errorf("-backend %q: want headless, x11 or robotgo", cfg.backend)
}
