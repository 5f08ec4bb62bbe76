package mcpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/internal/httpguard"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/machine"
)

// Options configure a Server. A nil *Options means defaults.
type Options struct {
	// Name and Version name the server in the MCP handshake; default
	// "shinken" and this library's version.
	Name, Version string
	// Instructions are sent to MCP clients at initialisation; default a
	// short guide to the tools.
	Instructions string
	// Dial opens a new ACI session to the same runtime. When it is set,
	// every exec runs on a session of its own, closed when the call ends:
	// cancelling the MCP call closes it, and the runtime kills the
	// command with its process group. Without Dial, exec runs on the
	// Server's session and a cancelled command runs on, on the runtime,
	// until its timeout. Dial also replaces the Server's session when the
	// runtime closes it (see Server.Reconnect): a Dial that reads the
	// runtime's current address and token follows their changes.
	Dial func(ctx context.Context) (*client.Client, error)
	// ProgressInterval is how often exec and wait_for report progress to a
	// client that asked for it (besides a first report when they start);
	// default 1 s.
	ProgressInterval time.Duration
	// PollInterval is how often wait_for observes the tree; default
	// 100 ms.
	PollInterval time.Duration
	// Screen is the screen size the Anthropic member tools present to the
	// model: screenshots are delivered at that size (keeping the aspect
	// ratio) and coordinates are read in it. Default XGA, 1024×768.
	Screen Size
	// Logger receives the server's logs; default: discarded.
	Logger *slog.Logger
	// AllowedOrigins lists the browser origins, besides the server's own,
	// whose requests Handler and TokenHandler serve, each
	// "scheme://host[:port]" ("https://console.example"). A request whose
	// Origin header is another is answered 403 before its token is looked
	// at (MCP's rule against DNS rebinding); requests without Origin, as
	// every non-browser client sends them, pass. Default none.
	AllowedOrigins []string
	// AllowedHosts lists the names the Host header of a request to Handler
	// and TokenHandler may carry (without port; "*.example.com" for every
	// name below example.com), besides the address the connection reached
	// and, on a loopback connection, loopback names (localhost,
	// 127.0.0.1, [::1]). Any other Host is answered 403. Set it to the
	// names a proxy or a Service gives the server. Default none.
	AllowedHosts []string
	// HTTPSessionIdle is how long Handler and TokenHandler keep an MCP
	// session that sends nothing (a call in flight counts as activity):
	// past it the session ends with everything it started, its shell
	// included, and its client must initialise a new one. Default
	// DefaultHTTPSessionIdle, 10 minutes.
	HTTPSessionIdle time.Duration
	// MaxHTTPSessions bounds the MCP sessions one Handler or TokenHandler
	// (that is, one token) keeps at once: past it an initialize is
	// answered 429 with a JSON-RPC error, until a session ends (DELETE,
	// idle expiry, Close). Default DefaultMaxHTTPSessions, 32.
	MaxHTTPSessions int
	// ShellLines makes the shell tool a /bin/sh that takes command lines
	// only (machine.ShellOptions.Lines): each input is one line, typed
	// only when the shell itself will read it as a command line (nothing
	// it started is in the terminal's foreground, no line typed before is
	// unread), and judged as /bin/sh reads it; an input while a program
	// runs in the foreground is refused, naming it. Set it where a guard
	// judges typed lines: without it, the shell is bash and input is typed
	// as is, to whatever reads the terminal, which the runtime shows its
	// Authorizer as dynamic. Default false.
	ShellLines bool
}

// Defaults of Options.
const (
	DefaultHTTPSessionIdle = 10 * time.Minute
	DefaultMaxHTTPSessions = 32
)

// Size is a width and a height in pixels.
type Size struct{ W, H int }

// A Server serves one ACI session over MCP: its tools drive the desktop
// the session reaches. One Server may serve many MCP sessions at once
// (Run on one transport per client, or Handler for many HTTP clients);
// they share its ACI session: the same pointer, the same element refs and
// the same diff baseline.
type Server struct {
	opts     Options
	log      *slog.Logger
	guard    *httpguard.Guard
	srv      *mcp.Server
	splicers sync.Map // *mcp.ServerSession → *imageSplicer, for the sessions Run serves on stdio
	// The images of answers to the Server's HTTP handler not yet written.
	httpImages heldImages
	shells     perSession[*hostShell]   // the MCP sessions' shells
	bg         perSession[*sessionCmds] // the MCP sessions' background commands
	held       heldKeys                 // the MCP sessions' held modifiers
	calls      inFlight                 // the MCP sessions' calls in flight, cancelled by their end
	wc         *machine.WindowControl   // reads list_windows' states; nil where it cannot

	redial  sync.Mutex // one renewal of the session at a time
	mu      sync.Mutex
	cur     *aciSession
	dialled []*client.Client // the sessions the Server opened itself, to close
	closed  bool
}

// New returns a Server driving the desktop of c, which stays the caller's
// to close (after the Server is done with it). It asks the runtime for the
// screen's size, to scale the Anthropic tools, and which window
// operations it can carry out (see machine.Tools.WindowControl), to offer
// only those tools. With Options.Dial, the
// Server replaces c by a session of its own once the runtime closes c (see
// Reconnect).
func New(ctx context.Context, c *client.Client, opts *Options) (*Server, error) {
	s := &Server{}
	s.shells.end = (*hostShell).close
	s.bg.end = (*sessionCmds).end
	if opts != nil {
		s.opts = *opts
	}
	o := &s.opts
	if o.Name == "" {
		o.Name = "shinken"
	}
	if o.Version == "" {
		o.Version = aci.Version
	}
	if o.Instructions == "" {
		o.Instructions = defaultInstructions
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 100 * time.Millisecond
	}
	if o.HTTPSessionIdle <= 0 {
		o.HTTPSessionIdle = DefaultHTTPSessionIdle
	}
	if o.MaxHTTPSessions <= 0 {
		o.MaxHTTPSessions = DefaultMaxHTTPSessions
	}
	if o.Screen.W <= 0 || o.Screen.H <= 0 {
		o.Screen = Size{1024, 768}
	}
	guard, err := httpguard.New(&httpguard.Options{Origins: o.AllowedOrigins, Hosts: o.AllowedHosts})
	if err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	s.guard = guard
	s.log = o.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: o.Version}, &mcp.ServerOptions{
		Instructions: o.Instructions,
		Logger:       sdkLogger(s.log),
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	s.srv.AddReceivingMiddleware(s.calls.track, s.codeToolErrors)
	first, err := s.newSession(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: the Anthropic tools: %w", err)
	}
	s.cur = first
	if err := s.addComputerTools(first.a); err != nil {
		return nil, err
	}
	s.addStructuredTools()
	s.addHostTools()
	s.addShellTool()
	s.addCommandTools()
	s.addHeldKeyTools()
	wc, err := first.m.WindowControl(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: probing the window tools: %w", err)
	}
	s.addWindowTools(wc)
	platform, err := c.Platform(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: the runtime's platform: %w", err)
	}
	s.addOpenTool(wc, platform == aci.PlatformMacOS)
	return s, nil
}

const defaultInstructions = `Tools to see and drive a computer's desktop.
The Anthropic computer-use member tools (screenshot, left_click, type, key...) work in the screenshot's pixel space.
The structured tools work on the accessibility tree: observe lists elements with refs (e12), which click_element, invoke_action and set_value take; click_element and set_value also take an element's role and whole name instead, and wait_for waits for one by role and name; an observe with diff shows only what changed since the last one.
exec runs a command and returns its output; the runtime may refuse it.`

// MCP returns the underlying MCP server of the official Go SDK, to add
// tools of your own or to connect it to a transport.
func (s *Server) MCP() *mcp.Server { return s.srv }

// Run serves one MCP client on t (for example &mcp.StdioTransport{}) until
// the client disconnects (nil, or the session's error) or ctx is done
// (ctx.Err()). On an *mcp.StdioTransport or an *mcp.IOTransport, Run
// writes the lines the SDK would, but encodes images straight into them
// rather than through encoding/json (see "Images" in the package
// documentation): prefer Run to connecting the SDK's server
// yourself on these transports.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	t, sp := spliced(t)
	ss, err := s.srv.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	if sp != nil {
		s.splicers.Store(ss, sp)
		defer s.splicers.Delete(ss)
	}
	stop := context.AfterFunc(ctx, func() { ss.Close() })
	defer stop()
	err = ss.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Handler returns an http.Handler serving the streamable HTTP transport of
// MCP. Every request must carry "Authorization: Bearer <token>"; one
// without it, or with another token, is answered 401 with a
// WWW-Authenticate challenge and reaches no tool. An empty token refuses
// every request. An MCP session that sends nothing for
// Options.HTTPSessionIdle is closed with everything it started (its
// client initialises a new one), and past Options.MaxHTTPSessions live
// sessions an initialize is refused with 429.
//
// Before the token, the handler checks the Origin and Host headers
// (Options.AllowedOrigins and AllowedHosts): a page of another site, or a
// name rebound to this server's address, gets 403. After it, the
// transport's rules: a request other than initialize without
// Mcp-Session-Id, and a message with an id but neither a method nor a
// result, get 400 with a JSON-RPC error. A call the client cancels
// (notifications/cancelled) gets no answer.
func (s *Server) Handler(token string) http.Handler {
	return s.TokenHandler(func() string { return token })
}

// TokenHandler is Handler with a token that may change: token is called
// for every request, so a rotated token takes effect at once (an MCP
// session goes on when its client sends the new token).
//
// As Run on stdio, the handler encodes images straight into the messages
// it writes rather than through encoding/json.
func (s *Server) TokenHandler(token func() string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv },
		&mcp.StreamableHTTPOptions{Logger: sdkLogger(s.log)}) // the idle bound is idleBound's, see ending.go
	spliced := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&imageResponseWriter{ResponseWriter: w, images: &s.httpImages}, r)
	})
	lim := &sessionLimit{s: s, max: s.opts.MaxHTTPSessions}
	idle := &idleBound{s: s, idle: s.opts.HTTPSessionIdle}
	return s.guard.Handler(requireToken(token, map[string]any{heldImagesKey: &s.httpImages}, checkMessages(lim.handler(idle.handler(spliced)))))
}

// RequireToken wraps h so that only requests carrying "Authorization:
// Bearer <token>" reach it; the token is compared in constant time. An
// empty token refuses every request. A refused request gets 401 with an
// RFC 6750 challenge ("WWW-Authenticate: Bearer ...").
func RequireToken(token string, h http.Handler) http.Handler {
	return requireToken(func() string { return token }, nil, h)
}

// requireToken is RequireToken with a token that may change; the requests
// it lets through carry extra in their TokenInfo.
func requireToken(token func() string, extra map[string]any, h http.Handler) http.Handler {
	verify := func(_ context.Context, got string, _ *http.Request) (*auth.TokenInfo, error) {
		t := token()
		g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(t))
		if t == "" || subtle.ConstantTimeCompare(g[:], w[:]) != 1 {
			return nil, errBadToken
		}
		return &auth.TokenInfo{Extra: extra}, nil
	}
	return bearerChallenge(auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h))
}

var errBadToken = fmt.Errorf("%w: wrong or missing token", auth.ErrInvalidToken)

// Close ends every MCP session the Server serves, so that an HTTP server
// holding their streams can shut down, and the ACI sessions the Server
// opened itself. The session given to New stays the caller's to close.
func (s *Server) Close() error {
	var errs []error
	for ss := range s.srv.Sessions() {
		errs = append(errs, s.endSession(ss))
	}
	s.shells.closeAll()
	s.bg.closeAll()
	s.mu.Lock()
	s.closed = true
	dialled := s.dialled
	s.dialled = nil
	s.mu.Unlock()
	for _, c := range dialled {
		c.Close()
	}
	return errors.Join(errs...)
}

// sdkLogger gives the SDK's logs to log, keeping its per-session chatter
// (info level) for a logger that shows debug.
func sdkLogger(log *slog.Logger) *slog.Logger {
	if log.Enabled(context.Background(), slog.LevelDebug) {
		return log
	}
	return slog.New(levelFloor{log.Handler(), slog.LevelWarn})
}

// levelFloor drops records below floor.
type levelFloor struct {
	slog.Handler
	floor slog.Level
}

func (h levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.floor && h.Handler.Enabled(ctx, l)
}

func (h levelFloor) WithAttrs(as []slog.Attr) slog.Handler {
	return levelFloor{h.Handler.WithAttrs(as), h.floor}
}

func (h levelFloor) WithGroup(name string) slog.Handler {
	return levelFloor{h.Handler.WithGroup(name), h.floor}
}
