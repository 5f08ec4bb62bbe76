// Package fence serves the methods a plugin run in-process (run.wasm,
// run.js) calls to reach the world: fs/*, net/*, ws/*, timer/* and proc/*.
// Such a plugin has no network, files or programs of its own; every request
// goes through these fences, judged on resolved reality (the addresses
// dialled, the real paths once links are followed, the argv word for
// word) against the plugin's permissions.
//
// The package knows nothing of the Host that links it. For each plugin the
// Host hands it, with New, a Config of plain values fixed for the plugin's
// life (its permissions, its limits, its folder, the network's proxy and
// TLS, the stop grace) and a Host it implements for what changes or only it
// knows: the agents attached to the plugin, the projects and whether the
// plugin is on for them, its accounts' servers, its temporary folder, the
// folders of the loaded plugins, the port of its shared process and its
// journal. For each life of the plugin (an instance) the Host makes an
// Instance with the connection the notifications go out on and, for a
// plugin whose wire it watches, a Tap; it closes the Instance when the life
// ends, and the Plugin when the plugin is released. It dispatches a
// request to the Method that Lookup returns.
package fence

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"shinken.dev/go/escouade/internal/beneath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"shinken.dev/go/escouade/internal/fields"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/protocol"
	"sync/atomic"
)

// A Method serves a request only a plugin run in-process may make. It
// returns the result (nil for null) or an error: a *protocol.Error as it
// is, a *protocol.FieldError for params that do not hold.
type Method func(ctx context.Context, in *Instance, c Call, params []byte) (any, error)

// methods are what a plugin run in-process (run.wasm, run.js) may call
// beyond the methods every plugin may: it has no network, files or
// programs of its own, and reaches them through the Host, under its
// permissions.
var methods = map[string]Method{
	"timer/set":    timerSet,
	"timer/cancel": timerCancel,
	"fs/read":      fsRead,
	"fs/write":     fsWrite,
	"fs/stat":      fsStat,
	"fs/list":      fsList,
	"fs/canon":     fsCanon,
	"proc/spawn":   procSpawn,
	"proc/write":   procWrite,
	"proc/kill":    procKill,
	"net/fetch":    netFetch,
	"net/stream":   netStream,
	"net/credit":   netCredit,
	"net/cancel":   netCancel,
	"ws/open":      wsOpen,
	"ws/send":      wsSend,
	"ws/close":     wsClose,
}

// Lookup returns the fence that serves method, if it is one.
func Lookup(method string) (Method, bool) {
	m, ok := methods[method]
	return m, ok
}

// A Call is one of the plugin's requests as a fence sees it.
type Call interface {
	// AfterAnswer returns a function that waits until the answer to the
	// request reached the plugin (bounded), or ctx ends: what a method
	// sends after its answer (a stream's chunks, a socket's messages)
	// waits for it. It is called before the method returns, so that the
	// answer is watched for before it is written.
	AfterAnswer() func(ctx context.Context)
}

// A Notifier sends the plugin a notification; one that has ended drops it
// and says so.
type Notifier interface {
	Notify(method string, params any) error
}

// A Tap watches what goes into an in-process plugin, so that proc/out is
// written no faster than the plugin reads it.
type Tap interface {
	// WaitRoom waits until less than limit bytes of proc's output wait to
	// be read by the plugin, or ctx ends, or the tap closes.
	WaitRoom(ctx context.Context, proc int64, limit int) error
	// SendOut calls send, which writes one proc/out notification whose
	// params are params, and counts it as waiting to be read.
	SendOut(send func() error, proc int64, params []byte) error
}

// Config is what the fences of one plugin know from its start to its end.
type Config struct {
	Files    map[string]manifest.Access // permissions.files: root name to access
	Network  []string                   // permissions.network
	Commands []string                   // permissions.commands
	Env      []string                   // permissions.env: variables it may set
	Limits   manifest.Limits            // 0 keeps the protocol's
	Dir      string                     // the plugin's folder; "" for none

	// Proxy returns the proxy for a request, as http.Transport.Proxy; nil
	// means a direct connection. TLS configures TLS; nil means Go's
	// defaults. It is cloned.
	Proxy func(*http.Request) (*url.URL, error)
	TLS   *tls.Config

	StopGrace  time.Duration // how long a program's pipes are read after its group died
	StreamIdle time.Duration // a silent stream ends after it; 0 means 120 s
	Hook       *NetHook      // nil: the network
}

// An Agent is an agent attached to the plugin, as the fences need it.
type Agent struct {
	Key     string
	Project string   // the project it works on; "" for none
	Env     []string // its environment; nil for the Host's minimal one
	Roots   AgentRoots
}

// AgentRoots are an agent's folders; "" for one it has not.
type AgentRoots struct {
	Agent string // its working folder
	Repo  string // its repository's top folder
	Home  string // its home
}

// A Project is a project as the fences need it.
type Project struct {
	Root    string // its folder; "" for none
	Private bool
	On      bool // the plugin is turned on for it
}

// Host is what only the Host knows of a plugin, asked each time, for it
// changes over the plugin's life. Its methods are safe for concurrent use.
type Host interface {
	// Agent returns the agent attached to the plugin under key; an error
	// (a *protocol.Error, refused) when none is.
	Agent(key string) (*Agent, error)
	// Project returns the project whose id is id.
	Project(ctx context.Context, id string) (*Project, error)
	// Projects returns every project known, ok false when the projects
	// cannot be listed (only asked one by one).
	Projects(ctx context.Context) (list []*Project, ok bool, err error)
	// Accounts returns the servers of the plugin's accounts, as URLs.
	Accounts(ctx context.Context) ([]string, error)
	// TempDir returns the plugin's temporary folder, made at its first
	// use; protocol.ErrClosed once the plugin is released.
	TempDir() (string, error)
	// PluginDirs returns the real paths of the loaded plugins' folders.
	PluginDirs() []string
	// SharedPort returns the port of the plugin's shared process
	// (launch.shared), when it runs and said it.
	SharedPort() (string, bool)
	// Say journals what the Host decided to say; Limited what the plugin
	// caused, through a limiter.
	Say(level slog.Level, msg string, attrs ...slog.Attr)
	Limited(level slog.Level, msg string, attrs ...slog.Attr)
}

// A Plugin is the fences of one plugin, for its whole life: its network
// is kept from one instance to the next.
type Plugin struct {
	cfg Config
	h   Host

	netOnce sync.Once
	net     *pluginNet // its network, made at its first request

	nsSaid atomic.Bool // the journal said pid namespaces are refused

	// avoid holds the identities of the folders fs/* never opens in or
	// through, whatever their names: the hidden entries of the folders
	// walked, as first seen; rootIDs the identity each private project's
	// root had when first seen.
	avoid   beneath.Set
	rootIDs beneath.Firsts
}

// New returns the fences of a plugin configured by cfg, asking h what
// changes.
func New(cfg Config, h Host) *Plugin { return &Plugin{cfg: cfg, h: h} }

// Close releases the plugin's network: no request is made after it.
func (p *Plugin) Close() {
	p.netOnce.Do(func() {}) // no network is made after this
	if p.net != nil {
		p.net.close()
	}
}

// An Instance is what a plugin opened during one life: its timers,
// programs, streams and sockets, which end with it, whatever way it ends.
type Instance struct {
	p      *Plugin
	conn   Notifier
	tap    Tap             // nil: the wire is not watched
	ctx    context.Context // ends when the instance ends
	cancel context.CancelFunc
	wg     sync.WaitGroup // the goroutines of programs, streams and sockets

	mu       sync.Mutex
	closed   bool
	next     int64 // the last id given, to a timer, program, stream or socket
	starting int   // programs being started, counted with procs
	opening  int   // streams being opened, counted with streams
	dialing  int   // sockets being opened, counted with sockets
	timers   map[int64]*timerEntry
	procs    map[int64]*program
	streams  map[int64]*stream
	sockets  map[int64]*socket
}

// NewInstance returns the fences of a new life of the plugin, whose
// notifications go out on conn; tap, when not nil, watches what the plugin
// reads.
func (p *Plugin) NewInstance(conn Notifier, tap Tap) *Instance {
	r := &Instance{
		p:       p,
		conn:    conn,
		tap:     tap,
		timers:  map[int64]*timerEntry{},
		procs:   map[int64]*program{},
		streams: map[int64]*stream{},
		sockets: map[int64]*socket{},
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

// nextID returns a new id; r.mu must be held. Ids are never reused within
// an instance, so that a late message never names the wrong thing.
func (r *Instance) nextID() int64 {
	r.next++
	return r.next
}

// Close ends everything the instance opened: timers are stopped, programs
// killed with their groups, streams and sockets closed. It returns once
// their goroutines have ended.
func (r *Instance) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		r.wg.Wait()
		return
	}
	r.closed = true
	r.cancel()
	for id, t := range r.timers {
		t.t.Stop()
		delete(r.timers, id)
	}
	procs := make([]*program, 0, len(r.procs))
	for _, pr := range r.procs {
		procs = append(procs, pr)
	}
	socks := make([]*socket, 0, len(r.sockets))
	for _, s := range r.sockets {
		socks = append(socks, s)
	}
	r.mu.Unlock()
	for _, pr := range procs {
		pr.kill()
	}
	for _, s := range socks {
		s.conn.CloseNow()
	}
	r.wg.Wait()
}

// notify sends the plugin a notification of the instance; a connection
// that has ended drops it.
func (r *Instance) notify(method string, params any) error {
	return r.conn.Notify(method, params)
}

func errorf(code protocol.Code, format string, args ...any) *protocol.Error {
	return &protocol.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// paramsObject is params, or an empty object when the plugin sent none.
func paramsObject(params []byte) []byte {
	if params == nil {
		return []byte("{}")
	}
	return params
}

// textOrBase64 returns data as text when it is UTF-8, or as base64.
func textOrBase64(data []byte) (text string, b64 string, isText bool) {
	if utf8.Valid(data) {
		return string(data), "", true
	}
	return "", base64.StdEncoding.EncodeToString(data), false
}

// utf8Cut returns how much of b may go as text now: all of it but an
// incomplete character at its end, which waits for the bytes that follow.
func utf8Cut(b []byte) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return len(b) // ASCII: nothing is cut
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return len(b) - i
			}
			return len(b)
		}
	}
	return len(b)
}

// decodeParams decodes params by name into v, a pointer to a tagged
// struct (package fields): keys it does not name are ignored, as the
// protocol's params may grow, and every problem is a FieldError naming its
// path. No params at all read as an empty object.
func decodeParams(params []byte, v any) error { return fields.Decode(paramsObject(params), v) }

// checkHeaders checks the headers of a request (net/*, ws/open): each name
// a token, no value that would end its line.
func checkHeaders(h map[string]string) error {
	var p fields.Problems
	for _, k := range slices.Sorted(maps.Keys(h)) {
		if !validToken(k) || strings.ContainsAny(h[k], "\r\n\x00") {
			p.Add(&protocol.FieldError{Path: fields.Join("headers", k), Err: errors.New("not a header")})
		}
	}
	return p.Err()
}
