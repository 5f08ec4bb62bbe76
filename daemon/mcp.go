package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/mcpserver"
)

// Locally, the MCP server reaches the Runtime over in-memory pipes: no
// socket, but the same ACI sessions, token and checks as a remote client.

// mcpLocal is an MCP server over the daemon's own Runtime.
type mcpLocal struct {
	srv     *mcpserver.Server
	handler http.Handler // /mcp
	session *client.Client
	pipes   *pipeListener
	http    *http.Server
	done    chan struct{}
}

// newMCPLocal serves the daemon's Runtime to an in-process ACI session and
// puts an MCP server on it. The session follows the daemon: after a token
// change or a desktop restart the MCP server reconnects, with the current
// token, to the current Runtime, and its MCP sessions go on.
func newMCPLocal(ctx context.Context, served *served, opts mcpserver.Options) (*mcpLocal, error) {
	m := &mcpLocal{pipes: newPipeListener(), done: make(chan struct{})}
	m.http = &http.Server{Handler: served, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(opts.Logger.Handler(), slog.LevelDebug)}
	go func() {
		defer close(m.done)
		m.http.Serve(m.pipes)
	}()
	hc := &http.Client{Transport: &http.Transport{DialContext: m.pipes.DialContext}}
	dial := func(ctx context.Context) (*client.Client, error) {
		return client.Dial(ctx, "ws://shinken.invalid/aci", &client.DialOptions{Token: served.token(), Name: "shinken-mcp", HTTPClient: hc})
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
	m.handler = m.srv.TokenHandler(served.token)
	log := opts.Logger
	served.follow(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := m.srv.Reconnect(ctx); err != nil {
			// The next tool call tries again.
			log.Debug("mcp: reconnecting the in-process ACI session", "err", err)
		}
	})
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

// mcpDaemon is the daemon's MCP server, opened at the first need once the
// daemon has a token: a daemon started with -token-file before its token
// exists (a warm sandbox before its claim) serves /mcp as soon as the
// token appears. It serves /mcp: with no token every request is refused,
// as a hello is.
type mcpDaemon struct {
	served *served
	opts   mcpserver.Options
	refuse http.Handler

	mu     sync.Mutex
	local  *mcpLocal
	closed bool
}

func newMCPDaemon(served *served, opts mcpserver.Options) *mcpDaemon {
	return &mcpDaemon{served: served, opts: opts, refuse: mcpserver.RequireToken("", http.NotFoundHandler())}
}

// get returns the MCP server, opening it if need be.
func (d *mcpDaemon) get(ctx context.Context) (*mcpLocal, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.closed:
		return nil, errors.New("mcp: the daemon is shutting down")
	case d.local == nil:
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		m, err := newMCPLocal(ctx, d.served, d.opts)
		if err != nil {
			return nil, err
		}
		d.local = m
	}
	return d.local, nil
}

// ServeHTTP serves /mcp.
func (d *mcpDaemon) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if d.served.token() == "" {
		d.refuse.ServeHTTP(w, r)
		return
	}
	m, err := d.get(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	m.handler.ServeHTTP(w, r)
}

// close closes the MCP server, if it was opened; call it before the
// Runtime closes.
func (d *mcpDaemon) close() {
	d.mu.Lock()
	m := d.local
	d.closed = true
	d.mu.Unlock()
	if m != nil {
		m.close()
	}
}

// ServeMCPStdio serves MCP on standard input and output until the client
// leaves or ctx is done: the program is then an MCP server a client
// starts, and must write nothing else on stdout. It needs Options.MCP.
func (d *Daemon) ServeMCPStdio(ctx context.Context) error {
	srv, err := d.MCP(ctx)
	if err != nil {
		return err
	}
	return ServeMCPStdio(ctx, srv, d.log)
}

// ServeRemoteMCP serves MCP on standard input and output for the runtime
// at url (ws://host:port/aci), with token: a sandbox driven from outside
// it, with no backend here. Its ACI session reconnects as the daemon's
// does. A nil opts means mcpserver's defaults.
func ServeRemoteMCP(ctx context.Context, url, token string, opts *mcpserver.Options) error {
	var o mcpserver.Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	dopts := &client.DialOptions{Token: token, Name: "shinken-mcp"}
	o.Dial = func(ctx context.Context) (*client.Client, error) { return client.Dial(ctx, url, dopts) }
	c, err := o.Dial(ctx)
	if err != nil {
		return fmt.Errorf("daemon: the remote runtime: %w", err)
	}
	defer c.Close()
	o.Logger.Info("serving MCP for a remote runtime", "url", url)
	srv, err := mcpserver.New(ctx, c, &o)
	if err != nil {
		return err
	}
	return ServeMCPStdio(ctx, srv, o.Logger)
}

// ServeMCPStdio serves srv on standard input and output until the client
// leaves or ctx is done; a client that leaves is no error.
func ServeMCPStdio(ctx context.Context, srv *mcpserver.Server, log *slog.Logger) error {
	log.Info("serving MCP on standard input and output")
	err := srv.Run(ctx, &mcp.StdioTransport{})
	if err != nil && ctx.Err() == nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
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
