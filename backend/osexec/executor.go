package osexec

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// Defaults of [Options].
const (
	defaultTimeout      = 60 * time.Second
	defaultMaxTimeout   = time.Hour
	defaultWaitDelay    = 2 * time.Second
	defaultMaxProcesses = 64
	defaultChunkSize    = 32 << 10
)

// Options configure an [Executor]. A nil *Options means all defaults.
type Options struct {
	// DefaultTimeout applies to a request whose Timeout is 0; default
	// 60 s, and a negative value means no deadline.
	DefaultTimeout time.Duration
	// MaxTimeout is the maximum every deadline is clamped to; default one
	// hour, and a negative value means no maximum.
	MaxTimeout time.Duration
	// Env is the base environment a request's Env is merged over, used as
	// it is when non-nil. nil means os.Environ() at New, without what makes
	// a shell run code before its line (BASH_ENV, ENV, BASH_FUNC_*), so a
	// permission gate sees all a request sets. A request's variables need
	// shell names (letters, digits, _; no leading digit), else Start
	// refuses them with aci.ErrInvalidAction.
	Env []string
	// WaitDelay bounds the wait for processes (a background job, one that
	// left the group) holding the output pipes after the leader exited or
	// the group was killed; then the pipes close and Next returns io.EOF,
	// losing unread output only if they kept writing for another WaitDelay.
	// The default is 2 s.
	WaitDelay time.Duration
	// KeepBackground leaves a command's background jobs running when its
	// leader exits (they lose the output pipes), and so runs commands
	// without a pid namespace. By default they are killed once the leader
	// exits (after up to WaitDelay for the pipes), so nothing a command
	// started outlives it: a long-lived program is for launch_app.
	KeepBackground bool
	// MaxProcesses is how many processes may run at once, each counting
	// until it ended and was waited for; Start refuses more with
	// aci.ErrTooManyExecs. Default 64; a negative value means no limit.
	MaxProcesses int
	// ChunkSize is the largest chunk Next returns; default 32 KiB.
	ChunkSize int
	// User, when set, is the user every command runs as: its uid, gid and
	// groups (no others), HOME, USER and LOGNAME over Env, and its home
	// for a request with no Dir. That needs CAP_SETUID and CAP_SETGID,
	// without which Start fails with aci.ErrExecSpawnFailed (EPERM). nil
	// means the runtime's own user, environment and working folder.
	User *User
}

// An Executor starts commands as process groups of the operating system.
// It implements [shinken.Executor] and is safe for concurrent use.
type Executor struct {
	defaultTimeout time.Duration
	maxTimeout     time.Duration
	env            []string
	waitDelay      time.Duration
	keepBackground bool
	maxProcs       int64
	chunkSize      int
	user           *User

	running   atomic.Int64
	nsMode    atomic.Int32 // how commands are contained: nsUnknown… (contain_linux.go)
	nsDecided atomic.Bool  // a namespace was made once: quotas no longer lower nsMode
	buffers   sync.Pool    // of *[]byte, chunkSize long
}

var _ shinken.Executor = (*Executor)(nil)

// New returns an Executor configured by opts, which may be nil.
func New(opts *Options) *Executor {
	var o Options
	if opts != nil {
		o = *opts
	}
	e := &Executor{
		defaultTimeout: o.DefaultTimeout,
		maxTimeout:     o.MaxTimeout,
		env:            o.Env,
		waitDelay:      o.WaitDelay,
		keepBackground: o.KeepBackground,
		maxProcs:       int64(o.MaxProcesses),
		chunkSize:      o.ChunkSize,
		user:           o.User.clone(),
	}
	if e.defaultTimeout == 0 {
		e.defaultTimeout = defaultTimeout
	}
	if e.maxTimeout == 0 {
		e.maxTimeout = defaultMaxTimeout
	}
	if e.env == nil {
		e.env = withoutShellCode(os.Environ())
	}
	if e.user != nil {
		e.env = e.user.userEnv(e.env)
	}
	if e.waitDelay <= 0 {
		e.waitDelay = defaultWaitDelay
	}
	if e.maxProcs == 0 {
		e.maxProcs = defaultMaxProcesses
	}
	if e.chunkSize <= 0 {
		e.chunkSize = defaultChunkSize
	}
	return e
}

// Start starts req and returns its *[Process]. The process is killed, with
// its whole group, when ctx is done.
//
// A request that sets both or neither of Argv and Shell, or an environment
// variable name with "=" in it, is an error wrapping
// aci.ErrInvalidAction. A command that cannot be started (no such
// program, bad directory) is an error wrapping aci.ErrExecSpawnFailed
// whose text carries the system's reason. A request past MaxProcesses wraps
// aci.ErrTooManyExecs. A request's Timeout of 0 means the default
// timeout, and every timeout is clamped to MaxTimeout.
func (e *Executor) Start(ctx context.Context, req aci.ExecRequest) (shinken.Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("osexec: not started: %w", err)
	}
	var path string
	var argv []string
	switch {
	case len(req.Argv) > 0 && req.Shell != "":
		return nil, fmt.Errorf("%w: exec: both argv and shell are set", aci.ErrInvalidAction)
	case req.Shell != "":
		path, argv = "/bin/sh", []string{"/bin/sh", "-c", req.Shell}
	case len(req.Argv) > 0 && req.Argv[0] != "":
		argv = req.Argv
	case len(req.Argv) > 0:
		return nil, fmt.Errorf("%w: exec: empty program name", aci.ErrInvalidAction)
	default:
		return nil, fmt.Errorf("%w: exec: neither argv nor shell is set", aci.ErrInvalidAction)
	}
	env, err := mergeEnv(e.env, req.Env)
	if err != nil {
		return nil, err
	}
	if path == "" {
		pathEnv, ok := getenv(env, "PATH")
		if !ok {
			pathEnv = defaultPath
		}
		if path, err = lookPath(argv[0], pathEnv); err != nil {
			return nil, err
		}
	}
	if n := e.running.Add(1); e.maxProcs > 0 && n > e.maxProcs {
		e.running.Add(-1)
		return nil, fmt.Errorf("%w: %d processes are running", aci.ErrTooManyExecs, n-1)
	}
	p, err := e.start(ctx, path, argv, env, e.userDir(req.Dir), req.Stdin, e.timeout(req.Timeout))
	if err != nil {
		e.running.Add(-1)
		return nil, err
	}
	return p, nil
}

// timeout returns the deadline to apply to a request's timeout, 0 for none.
func (e *Executor) timeout(t time.Duration) time.Duration {
	if t <= 0 {
		t = max(e.defaultTimeout, 0)
	}
	if e.maxTimeout > 0 && (t == 0 || t > e.maxTimeout) {
		t = e.maxTimeout
	}
	return t
}

// buffer returns a chunk buffer, reused when one is free.
func (e *Executor) buffer() []byte {
	if b, ok := e.buffers.Get().(*[]byte); ok {
		return *b
	}
	return make([]byte, e.chunkSize)
}

// recycle gives back a buffer that no caller can still be reading.
func (e *Executor) recycle(b []byte) {
	b = b[:cap(b)]
	e.buffers.Put(&b)
}
