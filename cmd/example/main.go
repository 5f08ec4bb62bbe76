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
	"crypto/rand"
	"embed"
	"encoding/hex"
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
	"syscall"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

//go:embed page
var pageFS embed.FS

type config struct {
	listen   string
	token    string
	backend  string
	size     string
	plugins  string
	project  string
	onAsk    string
	logLevel string
	record   string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "export" {
		if err := exportMain(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "example:", err)
			os.Exit(1)
		}
		return
	}
	var cfg config
	flag.StringVar(&cfg.listen, "listen", "127.0.0.1:7040", "address to serve on: host:port, or unix:/path/to/socket")
	flag.StringVar(&cfg.token, "token", "", "bearer token clients must send (default: $SHINKEN_TOKEN, or a random one)")
	flag.StringVar(&cfg.backend, "backend", "headless", "desktop to serve: headless, x11 (uses $DISPLAY) or robotgo (needs -tags robotgo)")
	flag.StringVar(&cfg.size, "size", "1280x800", "headless screen size, WxH")
	flag.StringVar(&cfg.plugins, "plugins", "", "folder whose subfolders holding a plugin.json are Escouade plugins; they gate exec and launch_app")
	flag.StringVar(&cfg.project, "project", "", "project name the plugins are told about")
	flag.StringVar(&cfg.onAsk, "on-ask", "deny", "what a plugin's \"ask\", or its silence, means with no person to ask: allow or deny")
	flag.StringVar(&cfg.record, "record", "", "record the session (screen, actions, trees) to this file; replay it in the page, export it with \"example export\"")
	flag.StringVar(&cfg.logLevel, "log", "info", "log level: debug, info, warn or error")
	flag.Parse()
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
	token := cfg.token
	if token == "" {
		token = os.Getenv("SHINKEN_TOKEN")
	}
	if token == "" {
		b := make([]byte, 16)
		rand.Read(b)
		token = hex.EncodeToString(b)
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	backend, closeBackend, err := openBackend(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeBackend()

	feed := shinken.NewFeed()
	opts := &shinken.RuntimeOptions{
		Token:    token,
		Name:     "shinken-example",
		Logger:   log,
		Executor: osexec.New(nil),
		Feed:     feed,
	}
	var gate *pluginGate
	if cfg.plugins != "" {
		gate, err = startPlugins(ctx, cfg, log)
		if err != nil {
			return err
		}
		opts.Authorizer = reportDecisions(gate, feed)
	}
	rt := shinken.NewRuntime(backend, opts)
	if cfg.record != "" {
		stopRecording, err := startRecording(ctx, cfg.record, backend, feed, log)
		if err != nil {
			return err
		}
		defer stopRecording()
	}

	l, aciURL, pageURL, err := listen(cfg.listen)
	if err != nil {
		return err
	}
	page, _ := fs.Sub(pageFS, "page")
	mux := http.NewServeMux()
	mux.Handle("/aci", rt)
	mux.Handle("/inspect", &inspector{rt: rt, feed: feed, token: token, log: log, ctx: ctx})
	mux.Handle("/", http.FileServerFS(page))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	fmt.Fprintf(out, "shinken example %s serving the %s desktop\n", aci.Version, cfg.backend)
	fmt.Fprintf(out, "ACI:   %s\n", aciURL)
	fmt.Fprintf(out, "token: %s\n", token)
	if pageURL != "" {
		fmt.Fprintf(out, "page:  %s#token=%s\n", pageURL, token)
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		rt.Close()
		if gate != nil {
			gate.close()
		}
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	// Plugins get their shutdown, running execs are killed, connections
	// close with 1001; then the listener goes.
	if gate != nil {
		gate.close()
	}
	rt.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		if !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		// Shutdown waits 5 s for connections that never sent a request
		// (a browser's preconnects); the sessions are already closed.
		srv.Close()
	}
	return nil
}

// listen opens the listener and names the URLs to print.
func listen(addr string) (l net.Listener, aci, page string, err error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		os.Remove(path)
		l, err = net.Listen("unix", path)
		return l, "unix:" + path + " (path /aci)", "", err
	}
	l, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, "", "", err
	}
	host := l.Addr().String()
	return l, "ws://" + host + "/aci", "http://" + host + "/", nil
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

func openBackend(ctx context.Context, cfg config) (shinken.Backend, func(), error) {
	switch cfg.backend {
	case "headless":
		w, h, err := parseSize(cfg.size)
		if err != nil {
			return nil, nil, err
		}
		d := headless.New(&headless.Options{Width: w, Height: h})
		for _, app := range []string{"notes", "form"} {
			if err := d.Launch(ctx, app, nil); err != nil {
				return nil, nil, err
			}
		}
		return d, func() {}, nil
	case "x11":
		return openX11(ctx)
	case "robotgo":
		return openRobotgo(ctx)
	}
	return nil, nil, fmt.Errorf("-backend %q: want headless, x11 or robotgo", cfg.backend)
}
