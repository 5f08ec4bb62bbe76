package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/mcpserver"
)

// The daemon serves MCP three ways:
//   - at /mcp on its HTTP listener (streamable HTTP, the daemon's token as
//     a bearer token), always;
//   - on its standard input and output with -mcp stdio, for the backend it
//     opened, and then it opens no listener and writes nothing else on
//     stdout (logs go to stderr);
//   - with -mcp stdio -remote URL, for the runtime at URL (a sandbox seen
//     from outside), opening no backend at all.
//
// Locally, the MCP server reaches the Runtime over in-memory pipes: no
// socket, but the same ACI sessions, token and checks as a remote client.

// mcpLocal is an MCP server over the daemon's own Runtime.
type mcpLocal struct {
	srv     *mcpserver.Server
	session *client.Client
	pipes   *pipeListener
	http    *http.Server
	done    chan struct{}
}

// newMCPLocal serves rt to an in-process ACI session and puts an MCP server
// on it.
func newMCPLocal(ctx context.Context, rt http.Handler, token string, opts mcpserver.Options) (*mcpLocal, error) {
	m := &mcpLocal{pipes: newPipeListener(), done: make(chan struct{})}
	m.http = &http.Server{Handler: rt, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(opts.Logger.Handler(), slog.LevelDebug)}
	go func() {
		defer close(m.done)
		m.http.Serve(m.pipes)
	}()
	dopts := &client.DialOptions{Token: token, Name: "shinken-mcp", HTTPClient: &http.Client{Transport: &http.Transport{DialContext: m.pipes.DialContext}}}
	dial := func(ctx context.Context) (*client.Client, error) {
		return client.Dial(ctx, "ws://shinken.invalid/aci", dopts)
	}
	c, err := dial(ctx)
	if err != nil {
		m.close()
		return nil, fmt.Errorf("mcp: in-process ACI session: %w", err)
	}
	m.session = c
	opts.Dial = dial
	m.srv, err = mcpserver.New(ctx, c, &opts)
	if err != nil {
		m.close()
		return nil, err
	}
	return m, nil
}

// close ends the ACI sessions and the in-memory listener; call it before
// the Runtime closes.
func (m *mcpLocal) close() {
	if m.srv != nil {
		m.srv.Close()
	}
	if m.session != nil {
		m.session.Close()
	}
	m.http.Close()
	<-m.done
}

// serveMCPStdio serves MCP on stdin and stdout until the client leaves or
// ctx is done.
func serveMCPStdio(ctx context.Context, srv *mcpserver.Server, log *slog.Logger) error {
	log.Info("serving MCP on standard input and output")
	err := srv.Run(ctx, &mcp.StdioTransport{})
	if err != nil && ctx.Err() == nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

// runRemoteMCP serves MCP on stdin and stdout for the runtime at url.
func runRemoteMCP(ctx context.Context, url, token string, opts mcpserver.Options) error {
	log := opts.Logger
	dopts := &client.DialOptions{Token: token, Name: "shinken-mcp"}
	dial := func(ctx context.Context) (*client.Client, error) { return client.Dial(ctx, url, dopts) }
	c, err := dial(ctx)
	if err != nil {
		return fmt.Errorf("-remote: %w", err)
	}
	defer c.Close()
	log.Info("serving MCP for a remote runtime", "url", url)
	opts.Dial = dial
	srv, err := mcpserver.New(ctx, c, &opts)
	if err != nil {
		return err
	}
	return serveMCPStdio(ctx, srv, log)
}

// pipeListener is a net.Listener whose connections are in-memory pipes
// opened by its DialContext.
type pipeListener struct {
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept waits for the next DialContext.
func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close makes Accept and DialContext fail; open pipes stay open.
func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

// Addr names the listener.
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// DialContext opens a pipe to the listener.
func (l *pipeListener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	mine, theirs := net.Pipe()
	select {
	case l.conns <- theirs:
		return mine, nil
	case <-l.closed:
	case <-ctx.Done():
	}
	mine.Close()
	theirs.Close()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, net.ErrClosed
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "in-process" }

// mcpOptions are the MCP server's options from the flags.
func mcpOptions(cfg config, log *slog.Logger) (mcpserver.Options, error) {
	w, h, err := parseSize(cfg.mcpSize)
	if err != nil {
		return mcpserver.Options{}, fmt.Errorf("-mcp-screen %q: want WxH, each from 64 to 8192", cfg.mcpSize)
	}
	return mcpserver.Options{Name: "shinken-example", Screen: mcpserver.Size{W: w, H: h}, Logger: log}, nil
}

// checkMCPFlags refuses -mcp and -remote values the daemon cannot honour.
func checkMCPFlags(cfg config) error {
	switch {
	case cfg.mcp != "" && cfg.mcp != "stdio":
		return fmt.Errorf("-mcp %q: want stdio (MCP over HTTP is always served at /mcp)", cfg.mcp)
	case cfg.remote != "" && cfg.mcp != "stdio":
		return errors.New("-remote needs -mcp stdio")
	case cfg.remote != "" && cfg.plugins != "":
		return errors.New("-remote serves a runtime elsewhere: its plugins are that runtime's, -plugins does not apply")
	}
	return nil
}

// mcpURL is the MCP endpoint beside the ACI one.
func mcpURL(aciURL string) string {
	if u, ok := strings.CutSuffix(aciURL, "/aci"); ok {
		return strings.Replace(u, "ws://", "http://", 1) + "/mcp"
	}
	return strings.Replace(aciURL, "(path /aci)", "(path /mcp)", 1)
}
