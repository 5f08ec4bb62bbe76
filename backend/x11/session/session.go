// Package session starts and supervises a private X desktop for a runtime
// to serve: an Xvfb server (with -noreset, so root properties such as
// AT_SPI_BUS survive the last client), a window manager, a session D-Bus and
// the AT-SPI accessibility bus, each started only once the parts it needs
// answer, and each proven ready by asking it, never by sleeping.
//
// While the session runs, a part that dies is restarted with the parts that
// need it (the window manager and the accessibility bus need the X server,
// the accessibility bus the session bus), within a restart budget; every
// exit and restart is logged and reported. Toolkits never join a new
// accessibility bus, so after it restarts the startup apps are started
// again, and the other applications on the old bus are reported by Check
// (ErrAppsLost) until they exit, or relaunched (Options.RelaunchLostApps).
// Close kills every process of the session, those its processes started
// included: they all carry a marker in their environment (MarkerVar).
//
// A daemon killed outright (SIGKILL) takes the parts, what its buses
// started and the startup apps down with it (a parent-death signal); the
// other apps (Command's, an agent's) are the container's or VM's to end,
// and its folder (cookie, sockets) stays until the user's next Start.
//
// A daemon uses it like this:
//
//	s, err := session.Start(ctx, &session.Options{Width: 1920, Height: 1080})
//	if err != nil { ... }
//	defer s.Close()
//	b, err := x11.Open(ctx, &x11.Options{Display: s.Display, Xauthority: s.Xauthority,
//		SessionBus: s.SessionBus, LaunchEnv: s.AppEnv()})
//
// It runs on Linux and needs the programs Xvfb, a window manager (openbox
// by default), dbus-daemon and at-spi2's bus configuration and registry
// (Debian: xvfb openbox dbus-x11 at-spi2-core).
package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"shinken.dev/go/internal/agentuser"
)

// ErrNotInstalled is wrapped by Start when a program the session needs is
// not installed. The error text names the program.
var ErrNotInstalled = errors.New("session: program not installed")

// ErrClosed is returned by Ready once the session is closed.
var ErrClosed = errors.New("session: closed")

// MarkerVar is the environment variable that tags every process of a
// session, by which Close finds them once their parent is gone.
const MarkerVar = "SHINKEN_XVFB_SESSION"

// Part names one process of the session.
type Part string

// The parts of a session, in the order they start.
const (
	PartX             Part = "Xvfb"
	PartWindowManager Part = "window-manager"
	PartSessionBus    Part = "session-bus"
	PartA11yBus       Part = "a11y-bus"
)

// Options configure a session. A nil *Options means the defaults.
type Options struct {
	// Width and Height are the screen size in pixels; 0 means 1280×800.
	Width, Height int
	// Depth is the screen depth; 0 means 24.
	Depth int
	// WindowManager is the argv of the window manager; nil means
	// {"openbox", "--sm-disable"}. It must be an EWMH window manager: it
	// is ready once it has announced itself and mapped a probe window.
	WindowManager []string
	// NoWindowManager starts no window manager.
	NoWindowManager bool
	// NoSessionBus starts no session D-Bus (and so no accessibility bus).
	NoSessionBus bool
	// NoAccessibility starts no AT-SPI bus and leaves the applications'
	// accessibility bridges off.
	NoAccessibility bool
	// Apps are started (each an argv, with AppEnv) once the desktop is
	// ready, and stopped and started again after a restart of the X
	// server or a bus; not when they exit by themselves.
	Apps [][]string
	// RelaunchLostApps makes the session stop and start again, as they
	// were started (argv, environment, folder), the other applications that
	// lost the accessibility bus, which then count as startup apps; what
	// they held (unsaved text) is lost. false leaves them running, blind
	// to the tree, and Check reports them (ErrAppsLost) until they exit.
	RelaunchLostApps bool
	// Timeout bounds how long each part may take to get ready; 0 means 15 s.
	Timeout time.Duration
	// MaxRestarts is how many times one part may be restarted within
	// RestartWindow before the session gives up (see Session.Done); 0
	// means 5, a negative value means a dead part is never restarted.
	MaxRestarts int
	// RestartWindow is the period MaxRestarts counts over; 0 means 10 min.
	RestartWindow time.Duration
	// AgentUser, when set, is the user (a login name or uid, never root)
	// the agent's applications and the startup apps run as. The buses
	// admit it besides this process's user, and nobody else; it gets its
	// own cookie copy and runtime folder (Session.AgentXauthority,
	// AgentRuntimeDir). The session bus then activates no system service
	// (it would run as this process's user), the accessibility bus only
	// its registry. Without CAP_SETUID, CAP_SETGID, CAP_KILL and
	// CAP_CHOWN, Start logs a warning and every application runs as this
	// process's user (Session.AgentRefused); an unknown user, or root,
	// fails Start.
	AgentUser string
	// Logger receives a record for every exit, restart and give-up; nil
	// means slog.Default().
	Logger *slog.Logger
	// OnEvent, when set, is called with every Event, from the session's
	// supervising goroutine: it must return quickly.
	OnEvent func(Event)
}

// EventKind says what happened to a part.
type EventKind string

// The kinds of Event.
const (
	// EventExited: the part died and the session is not ready until it is
	// restarted.
	EventExited EventKind = "exited"
	// EventRestarted: the part (and the parts that need it) runs again and
	// the session is ready.
	EventRestarted EventKind = "restarted"
	// EventGaveUp: the part died more often than the budget allows, or
	// could not be started again; the session stays down (Done is closed).
	EventGaveUp EventKind = "gave-up"
)

// An Event reports a change in a part of a running session.
type Event struct {
	Part Part
	Kind EventKind
	// Err says why the part exited or could not be restarted.
	Err error
	// Restarted lists the parts started again, in order, for EventRestarted:
	// the part that died and those that depend on it.
	Restarted []Part
}

// A Session is a running desktop. Its exported fields are fixed once Start
// returns: a restarted part comes back at the same address.
type Session struct {
	// Display is the display name to connect to, such as ":3".
	Display string
	// Xauthority is the path of an authority file holding the session's
	// MIT-MAGIC-COOKIE-1; the server admits no client without it.
	Xauthority string
	// Cookie is the session's 16-byte MIT-MAGIC-COOKIE-1.
	Cookie []byte
	// SessionBus is the address of the session D-Bus, or "" without one.
	SessionBus string
	// RuntimeDir is the session's XDG_RUNTIME_DIR, where the accessibility
	// bus and the applications' sockets live.
	RuntimeDir string
	// Marker is the value of MarkerVar in the session's environment.
	Marker string
	// AgentXauthority is a copy of Xauthority owned by Options.AgentUser,
	// "" when the applications run as this process's user.
	AgentXauthority string
	// AgentRuntimeDir is Options.AgentUser's XDG_RUNTIME_DIR, a folder it
	// owns, "" when the applications run as this process's user.
	AgentRuntimeDir string
	// AgentRefused says why the applications run as this process's user
	// although Options.AgentUser is set (it may not switch, or give the
	// agent its files); nil otherwise.
	AgentRefused error

	opts    Options
	log     *slog.Logger
	agent   *agentuser.User // nil: the applications run as this process's user
	dir     string
	lock    *os.File // held while the session lives (see sweepStale)
	number  string   // display number, kept across restarts of the server
	busPath string

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	exits  chan *proc
	superv chan struct{}     // closed when the supervisor has returned
	spawns chan spawnRequest // to the spawner; closed by Close

	mu       sync.Mutex
	parts    []*part // in start order
	notReady error   // why the session is not ready, nil when it is
	failed   error   // set when the supervisor gave up
	gaveUp   error   // failed, in words, for Ready
	done     chan struct{}
	a11yAddr string
	apps     []*proc
	peers    *busPeers    // who is on the accessibility bus, nil without one
	lost     map[int]bool // applications that lost the accessibility bus (see ErrAppsLost)

	once sync.Once
	err  error
}

// Start starts a session and waits until every part is ready. The caller
// must Close it, also when ctx ends; on error nothing is left running.
func Start(ctx context.Context, opts *Options) (*Session, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Width == 0 {
		o.Width = 1280
	}
	if o.Height == 0 {
		o.Height = 800
	}
	if o.Depth == 0 {
		o.Depth = 24
	}
	if o.Timeout <= 0 {
		o.Timeout = 15 * time.Second
	}
	if o.MaxRestarts == 0 {
		o.MaxRestarts = 5
	}
	if o.RestartWindow <= 0 {
		o.RestartWindow = 10 * time.Minute
	}
	if o.WindowManager == nil {
		o.WindowManager = []string{"openbox", "--sm-disable"}
	}
	if o.NoSessionBus {
		o.NoAccessibility = true
	}
	if o.Width < 1 || o.Height < 1 || o.Width > 32767 || o.Height > 32767 {
		return nil, fmt.Errorf("session: bad screen size %dx%d", o.Width, o.Height)
	}
	if !o.NoWindowManager && len(o.WindowManager) == 0 {
		return nil, errors.New("session: empty WindowManager argv")
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	need := []string{"Xvfb"}
	if !o.NoWindowManager {
		need = append(need, o.WindowManager[0])
	}
	if !o.NoSessionBus {
		need = append(need, "dbus-daemon")
	}
	for _, name := range need {
		if _, err := exec.LookPath(name); err != nil {
			return nil, fmt.Errorf("%w: %s", ErrNotInstalled, name)
		}
	}
	a11yConfig := ""
	if !o.NoAccessibility {
		if a11yConfig = findA11yConfig(); a11yConfig == "" {
			return nil, fmt.Errorf("%w: at-spi2's accessibility.conf (Debian package at-spi2-core)", ErrNotInstalled)
		}
	}

	agent, refused, err := lookupAgent(o.AgentUser, log)
	if err != nil {
		return nil, err
	}

	if gone := sweepStale(os.TempDir(), staleSetup); len(gone) > 0 {
		log.Info("removed the folders of sessions whose daemon died", "folders", gone)
	}
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("session: locking its folder: %w", err)
	}
	random := make([]byte, 24)
	rand.Read(random)
	s := &Session{
		Cookie:       random[:16],
		Marker:       hex.EncodeToString(random[16:]),
		RuntimeDir:   filepath.Join(dir, "run"),
		opts:         o,
		log:          log.With("session", hex.EncodeToString(random[16:20])),
		dir:          dir,
		lock:         lock,
		exits:        make(chan *proc),
		superv:       make(chan struct{}),
		done:         make(chan struct{}),
		spawns:       make(chan spawnRequest),
		lost:         map[int]bool{},
		agent:        agent,
		AgentRefused: refused,
	}
	go spawner(s.spawns)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	ok := false
	defer func() {
		if !ok {
			close(s.superv)
			s.Close()
		}
	}()
	if err := os.Mkdir(s.RuntimeDir, 0o700); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if err := s.makeAgentDir(); err != nil {
		return nil, err
	}

	s.parts = append(s.parts, &part{name: PartX, start: s.startX, alive: s.xAlive})
	if !o.NoWindowManager {
		s.parts = append(s.parts, &part{name: PartWindowManager, needs: []Part{PartX}, start: s.startWM})
	}
	if !o.NoSessionBus {
		s.busPath = filepath.Join(dir, "bus")
		s.SessionBus = "unix:path=" + s.busPath
		s.parts = append(s.parts, &part{name: PartSessionBus, start: s.startBus, alive: s.busAlive})
	}
	if !o.NoAccessibility {
		s.parts = append(s.parts, &part{name: PartA11yBus, needs: []Part{PartX, PartSessionBus},
			start: func(ctx context.Context) (*proc, error) { return s.startA11y(ctx, a11yConfig) }})
	}

	// Start's own context bounds the first start; Close cancels s.ctx.
	sctx, stop := context.WithCancel(s.ctx)
	defer stop()
	unwatch := context.AfterFunc(ctx, stop)
	defer unwatch()
	for _, p := range s.parts {
		if err := s.startPart(sctx, p); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("session: %w", ctx.Err())
			}
			return nil, err
		}
	}
	s.startApps()
	go s.supervise()
	ok = true
	return s, nil
}

// Env returns the environment for a client of the session: the process's
// own environment with DISPLAY, XAUTHORITY, DBUS_SESSION_BUS_ADDRESS (when
// there is a bus), XDG_RUNTIME_DIR and the session marker set.
func (s *Session) Env() []string {
	return s.env(false)
}

// AppEnv returns the environment for an application on the desktop: Env,
// plus (unless Options.NoAccessibility) the variables that turn the GTK and
// Qt accessibility bridges on, and settings kept in memory.
func (s *Session) AppEnv() []string {
	return s.env(!s.opts.NoAccessibility)
}

func (s *Session) env(a11y bool) []string {
	set := []string{"DISPLAY=" + s.Display, "XAUTHORITY=" + s.Xauthority, MarkerVar + "=" + s.Marker,
		"XDG_RUNTIME_DIR=" + s.RuntimeDir}
	if s.SessionBus != "" {
		set = append(set, "DBUS_SESSION_BUS_ADDRESS="+s.SessionBus)
	}
	if a11y {
		set = append(set, "GTK_MODULES=gail:atk-bridge", "GSETTINGS_BACKEND=memory", "GDK_BACKEND=x11",
			"QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1", "QT_ACCESSIBILITY=1")
	}
	drop := map[string]bool{"NO_AT_BRIDGE": a11y, "AT_SPI_BUS_ADDRESS": true}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	env := make([]string, 0, len(os.Environ())+len(set))
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// Command returns a command that runs name as an application of the
// session (with AppEnv), in its own process group, killed by Close.
func (s *Session) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = s.AppEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Processes returns the ids of the live processes that carry the session
// marker: the session's own and everything started from it.
func (s *Session) Processes() ([]int, error) {
	return marked(s.Marker)
}

// A11yBus returns the address of the accessibility bus, "" without one. It
// may change when the accessibility bus is restarted.
func (s *Session) A11yBus() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.a11yAddr
}

// Ready returns nil when every part runs, a *PartError naming the part
// that is down (being restarted, or given up on), or ErrClosed.
func (s *Session) Ready() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return ErrClosed
	}
	if s.gaveUp != nil {
		return s.gaveUp
	}
	return s.notReady
}

// Done is closed when the session has given up on a part (see
// Options.MaxRestarts); Err then says why.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns why the session gave up, or nil.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// Close stops the session: supervision, the parts in reverse order, then
// whatever still carries the marker and, with Options.AgentUser, that
// user's processes in the process group of one of this process's
// descendants (an application that rewrote its environment). It waits
// until they are gone, removes the session's files, and may be called more
// than once.
func (s *Session) Close() error {
	s.once.Do(func() { s.err = s.close() })
	return s.err
}

func (s *Session) close() error {
	s.cancel()
	<-s.superv
	agentGroups := s.agentGroups() // before any of them is stopped and its children orphaned
	s.mu.Lock()
	parts, apps := s.parts, s.apps
	s.mu.Unlock()
	for _, a := range apps {
		a.stop()
	}
	for i := len(parts) - 1; i >= 0; i-- {
		if p := parts[i].proc; p != nil {
			p.stop()
		}
	}
	var err error
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids, scanErr := marked(s.Marker)
		if scanErr != nil {
			err = scanErr
			break
		}
		pids = append(pids, s.inAgentGroups(agentGroups)...)
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			err = fmt.Errorf("session: processes %v survived the session", pids)
			break
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond) // waiting for the kernel to reap; nothing to select on
	}
	close(s.spawns)
	if rmErr := os.RemoveAll(s.dir); rmErr != nil && err == nil {
		err = fmt.Errorf("session: %w", rmErr)
	}
	s.lock.Close()
	return err
}

// restartApps stops the startup apps still running and starts them all
// again.
func (s *Session) restartApps() {
	s.mu.Lock()
	old := s.apps
	s.apps = nil
	s.mu.Unlock()
	for _, a := range old {
		a.stop()
	}
	s.startApps()
}

// startApps starts Options.Apps, logging those that fail.
func (s *Session) startApps() {
	for _, argv := range s.opts.Apps {
		if len(argv) == 0 {
			continue
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = s.AppEnv()
		cmd.Dir = s.RuntimeDir
		s.asAgent(cmd)
		p, err := s.spawn("app "+argv[0], cmd, false)
		if err != nil {
			s.log.Warn("startup app failed", "argv", argv, "err", err)
			continue
		}
		s.mu.Lock()
		s.apps = append(s.apps, p)
		s.mu.Unlock()
	}
}
