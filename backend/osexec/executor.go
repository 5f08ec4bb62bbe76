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
	DefaultTimeout      = 60 * time.Second
	DefaultMaxTimeout   = time.Hour
	DefaultWaitDelay    = 2 * time.Second
	DefaultMaxProcesses = 64
	DefaultChunkSize    = 32 << 10
)

// Options configure an [Executor]. A nil *Options means all defaults.
type Options struct {
	// DefaultTimeout applies to a request whose Timeout is 0. The default
	// is DefaultTimeout (60 s); a negative value means no deadline.
	DefaultTimeout time.Duration
	// MaxTimeout is the hard maximum every deadline is clamped to, so that
	// no command outlives it. The default is DefaultMaxTimeout (one hour);
	// a negative value means no maximum.
	MaxTimeout time.Duration
	// Env is the base environment that a request's Env is merged over.
	// nil means os.Environ() as it was when New was called, without the
	// variables that make a shell run code before its line (BASH_ENV,
	// ENV, and bash's exported functions BASH_FUNC_*): a permission gate
	// shows what a request sets, not what the daemon inherited. An empty
	// non-nil slice means an empty environment; a non-nil one is used as
	// it is. A request's own variables must have shell names (letters,
	// digits and _, not starting with a digit): others are refused with
	// aci.ErrInvalidAction, as the command's init would not pass them on.
	Env []string
	// WaitDelay bounds the wait for processes that keep the output pipes
	// open after the command's leader has exited or its group was killed:
	// a background job (sh -c 'job &') or a process that left the group.
	// After WaitDelay their hold is cut: the pipes are closed and Next
	// returns io.EOF; output they had written and the caller had not yet
	// read may be lost only if they kept writing for another WaitDelay.
	// The default is DefaultWaitDelay (2 s).
	WaitDelay time.Duration
	// KeepBackground leaves the rest of a command's process group running
	// when its leader exits, as a shell leaves its background jobs; they
	// only lose the output pipes. By default the group is killed once the
	// leader has exited (after up to WaitDelay for the pipes to close), so
	// that nothing a command started outlives it: an agent that wants a
	// long-lived program launches it (launch_app) instead. KeepBackground
	// runs commands without a pid namespace of their own (see the package
	// doc), since a namespace ends with its command.
	KeepBackground bool
	// MaxProcesses is how many processes may run at once; Start refuses
	// more with an error wrapping aci.ErrTooManyExecs. A process counts
	// until it has ended and its output has been read or discarded (Wait
	// and Collect do both). The default is DefaultMaxProcesses
	// (64); a negative value means no limit.
	MaxProcesses int
	// ChunkSize is the largest chunk Next returns, in bytes. The default
	// is DefaultChunkSize (32 KiB).
	ChunkSize int
	// User, when set, is the user every command runs as: its uid, gid and
	// supplementary groups (and no others), HOME, USER and LOGNAME set to
	// its own over Env, and its home folder as the working folder of a
	// request with no Dir. Starting a command as another user needs
	// CAP_SETUID and CAP_SETGID (root has both); without them Start fails
	// with aci.ErrExecSpawnFailed (EPERM). nil means the runtime's own
	// user, environment and working folder.
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
		e.defaultTimeout = DefaultTimeout
	}
	if e.maxTimeout == 0 {
		e.maxTimeout = DefaultMaxTimeout
	}
	if e.env == nil {
		e.env = withoutShellCode(os.Environ())
	}
	if e.user != nil {
		e.env = e.user.userEnv(e.env)
	}
	if e.waitDelay <= 0 {
		e.waitDelay = DefaultWaitDelay
	}
	if e.maxProcs == 0 {
		e.maxProcs = DefaultMaxProcesses
	}
	if e.chunkSize <= 0 {
		e.chunkSize = DefaultChunkSize
	}
	return e
}

// Running reports how many processes count against MaxProcesses.
func (e *Executor) Running() int { return int(e.running.Load()) }

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
