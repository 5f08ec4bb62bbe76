package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"

	"shinken.dev/go/internal/logtext"
	"shinken.dev/go/internal/procfs"
)

// Toolkits do not join a new accessibility bus. GTK's bridge (at-spi2's
// atk-adaptor) connects once, when the application starts, and registers
// again only when the registry reappears on that same connection; once its
// bus is gone it is blind for good, and so is a tree read through the new
// bus: the application is on screen and not in it. A Qt 5.15 application
// stayed out of the new bus's tree too. So after a restart of the
// accessibility bus (alone, or with the X server or the session bus it
// needs), the session starts its startup applications again, and keeps
// count of the other applications that were on the old bus and have not
// joined the new one: Check reports them (ErrAppsLost) until they exit or
// join, unless Options.RelaunchLostApps has them started again.

// ErrAppsLost is wrapped by Check while applications that were on the
// accessibility bus before it restarted have not joined the new one: the
// tree cannot see them. Those not in Options.Apps must be started again by
// whoever started them, or closed; LostApps and the log name them.
var ErrAppsLost = errors.New("session: applications lost the accessibility bus when it restarted and are missing from the accessibility tree")

// busPeers follows the connections of one accessibility bus, by process:
// which applications are on the bus. A connection that owns a well-known
// name is a service (the registry, which the bus started), not an
// application.
type busPeers struct {
	conn *dbus.Conn
	done chan struct{} // closed once the bus has gone (or Close)

	mu       sync.Mutex
	pids     map[string]int  // unique connection name -> process id
	services map[string]bool // unique names that own a well-known name
}

// watchPeers connects to the bus listening at path and follows its
// connections until the bus goes away; ctx bounds the start.
func watchPeers(ctx context.Context, path string) (*busPeers, error) {
	conn, err := connectBus(ctx, path)
	if err != nil {
		return nil, err
	}
	w := &busPeers{conn: conn, done: make(chan struct{}), pids: map[string]int{}, services: map[string]bool{}}
	err = conn.AddMatchSignalContext(ctx, dbus.WithMatchSender("org.freedesktop.DBus"),
		dbus.WithMatchInterface("org.freedesktop.DBus"), dbus.WithMatchMember("NameOwnerChanged"))
	if err != nil {
		conn.Close()
		return nil, err
	}
	signals := make(chan *dbus.Signal, 64)
	conn.Signal(signals)
	var names []string
	if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.ListNames", 0).Store(&names); err != nil {
		conn.Close()
		return nil, err
	}
	for _, name := range names {
		if strings.HasPrefix(name, ":") {
			w.joined(ctx, name)
			continue
		}
		var owner string
		if conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetNameOwner", 0, name).Store(&owner) == nil {
			w.named(owner)
		}
	}
	go w.follow(signals)
	return w, nil
}

// follow records the connections that come and go, until the bus closes
// the connection (godbus then closes the signal channel).
func (w *busPeers) follow(signals chan *dbus.Signal) {
	defer close(w.done)
	for sig := range signals {
		if sig.Name != "org.freedesktop.DBus.NameOwnerChanged" || len(sig.Body) != 3 {
			continue
		}
		name, _ := sig.Body[0].(string)
		oldOwner, _ := sig.Body[1].(string)
		newOwner, _ := sig.Body[2].(string)
		switch {
		case !strings.HasPrefix(name, ":"):
			if newOwner != "" {
				w.named(newOwner)
			}
		case oldOwner == "" && newOwner != "":
			w.joined(context.Background(), name)
		case newOwner == "":
			w.mu.Lock()
			delete(w.pids, name)
			delete(w.services, name)
			w.mu.Unlock()
		}
	}
}

// named records that the unique connection name owns a well-known name.
func (w *busPeers) named(name string) {
	w.mu.Lock()
	w.services[name] = true
	w.mu.Unlock()
}

// joined records the process of the unique connection name. The bus
// answers at once; a bus that does not (stopped, not dead) holds the
// follower for a second at most.
func (w *busPeers) joined(ctx context.Context, name string) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var pid uint32
	err := w.conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetConnectionUnixProcessID", 0, name).Store(&pid)
	if err != nil || pid == 0 {
		return // gone already
	}
	w.mu.Lock()
	w.pids[name] = int(pid)
	w.mu.Unlock()
}

// processes returns the applications on the bus, as last seen: once the
// bus has gone, those that were on it when it went.
func (w *busPeers) processes() map[int]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[int]bool, len(w.pids))
	for name, pid := range w.pids {
		if !w.services[name] {
			out[pid] = true
		}
	}
	return out
}

// close ends the watch.
func (w *busPeers) close() {
	w.conn.Close()
	<-w.done
}

// noteLost records, after a restart of the accessibility bus, the
// applications of the session that were on the old bus (was, as its watch
// saw them before the restart) and run on without being on the new one.
// The startup apps are not among them: they were started again.
func (s *Session) noteLost(was map[int]bool) {
	s.mu.Lock()
	cur := s.peers
	s.mu.Unlock()
	var now map[int]bool
	if cur != nil {
		now = cur.processes()
	}
	pids, err := marked(s.Marker)
	if err != nil {
		return
	}
	var lost []int
	var names []string
	for _, pid := range pids {
		if was[pid] && !now[pid] {
			lost = append(lost, pid)
			// An agent may have named the program: bounded and quoted.
			names = append(names, fmt.Sprintf("%s (pid %d)", logtext.Quote(processName(pid)), pid))
		}
	}
	if len(lost) == 0 {
		return
	}
	if s.opts.RelaunchLostApps {
		s.log.Warn("applications lost the accessibility bus when it restarted: starting them again", "apps", names)
		for _, pid := range lost {
			if err := s.relaunch(pid); err != nil {
				s.log.Warn("relaunching an application failed: it stays blind to the accessibility tree", "pid", pid, "err", err)
				s.mu.Lock()
				s.lost[pid] = true
				s.mu.Unlock()
			}
		}
		return
	}
	s.mu.Lock()
	for _, pid := range lost {
		s.lost[pid] = true
	}
	s.mu.Unlock()
	s.log.Warn("applications lost the accessibility bus when it restarted: they are missing from the accessibility tree until started again",
		"apps", names)
}

// relaunch stops the process pid and starts what it ran again (its
// program, arguments, environment and working directory, as /proc has
// them), as a startup app of the session.
func (s *Session) relaunch(pid int) error {
	dir := procfs.Root + "/" + strconv.Itoa(pid)
	args, err := procfs.Cmdline(pid)
	if err != nil || len(args) == 0 {
		return fmt.Errorf("session: reading the command line of %d: %v", pid, err)
	}
	environ, err := os.ReadFile(dir + "/environ")
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	cwd, err := os.Readlink(dir + "/cwd")
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	path, err := os.Readlink(dir + "/exe")
	if err != nil || strings.HasSuffix(path, " (deleted)") {
		path = args[0] // the program was replaced since: find it by name
	}
	// It comes back as who it was: an agent's application never with this
	// process's ids.
	cred, err := procCredential(pid)
	if err != nil {
		return err
	}
	if err := stopProcess(pid); err != nil {
		return err
	}
	cmd := exec.Command(path, args[1:]...)
	cmd.Args = args
	cmd.Dir = cwd
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	for kv := range strings.SplitSeq(strings.TrimRight(string(environ), "\x00"), "\x00") {
		if !strings.HasPrefix(kv, MarkerVar+"=") { // spawn sets it
			cmd.Env = append(cmd.Env, kv)
		}
	}
	p, err := s.spawn("app "+filepath.Base(args[0]), cmd, false)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.apps = append(s.apps, p)
	s.mu.Unlock()
	return nil
}

// stopProcess ends pid: SIGTERM, then SIGKILL if it is still there after
// 3 s. Its parent, which is not the session, reaps it.
func stopProcess(pid int) error {
	syscall.Kill(pid, syscall.SIGTERM)
	start := time.Now()
	killed := false
	for procfs.Alive(pid) {
		switch waited := time.Since(start); {
		case waited > 6*time.Second:
			return fmt.Errorf("session: process %d survived SIGKILL", pid)
		case waited > 3*time.Second && !killed:
			syscall.Kill(pid, syscall.SIGKILL)
			killed = true
		}
		time.Sleep(5 * time.Millisecond) // waiting for another process's exit: nothing to select on
	}
	return nil
}

// appsLost returns a *PartError wrapping ErrAppsLost while applications noted
// by noteLost still run without having joined the current bus.
func (s *Session) appsLost() error {
	s.mu.Lock()
	lost := make([]int, 0, len(s.lost))
	for pid := range s.lost {
		lost = append(lost, pid)
	}
	cur := s.peers
	s.mu.Unlock()
	if len(lost) == 0 {
		return nil
	}
	var now map[int]bool
	if cur != nil {
		now = cur.processes()
	}
	still := 0
	for _, pid := range lost {
		if !procfs.Alive(pid) || now[pid] {
			s.mu.Lock()
			delete(s.lost, pid)
			s.mu.Unlock()
			continue
		}
		still++
	}
	if still == 0 {
		return nil
	}
	return &PartError{Part: PartA11yBus, Err: ErrAppsLost,
		Reason: fmt.Sprintf("%d application(s) on the desktop lost it when it restarted, and the accessibility tree cannot see them", still)}
}

// LostApps returns, in increasing order, the process ids of the
// applications ErrAppsLost is about.
func (s *Session) LostApps() []int {
	s.appsLost()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int, 0, len(s.lost))
	for pid := range s.lost {
		out = append(out, pid)
	}
	slices.Sort(out)
	return out
}

// processName is the base name of pid's program, for the log.
func processName(pid int) string {
	args, _ := procfs.Cmdline(pid)
	if len(args) == 0 {
		return "?"
	}
	return filepath.Base(args[0])
}
