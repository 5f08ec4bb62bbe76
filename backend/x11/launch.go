package x11

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"shinken.dev/go/shinken/aci"
)

// launchedApps tracks the apps started by Launch until they exit, so that
// each is reaped and none is left a zombie.
type launchedApps struct {
	mu   sync.Mutex
	pids map[int]bool
}

func (l *launchedApps) add(pid int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pids == nil {
		l.pids = make(map[int]bool)
	}
	l.pids[pid] = true
}

func (l *launchedApps) remove(pid int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pids, pid)
}

// running returns the ids of launched apps that have not exited.
func (l *launchedApps) running() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	var pids []int
	for pid := range l.pids {
		pids = append(pids, pid)
	}
	return pids
}

// Launch starts app, a name looked up on PATH or an absolute path, with
// args verbatim (no shell), detached in a session of its own from the home
// folder, on this display and session bus. It outlives the Backend; as
// Options.LaunchUser it ends with this process. A program that cannot be
// found or run wraps aci.ErrNoSuchApp; xdg-open failing within 3 s wraps
// aci.ErrBackend with what it printed.
func (b *Backend) Launch(ctx context.Context, app string, args []string) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	if app == "" || (strings.ContainsRune(app, '/') && !filepath.IsAbs(app)) {
		return fmt.Errorf("%w: %q: give a program name or an absolute path", aci.ErrNoSuchApp, app)
	}
	path, err := exec.LookPath(app)
	if err != nil {
		return fmt.Errorf("%w: %q: %w", aci.ErrNoSuchApp, app, err)
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        append([]string{app}, args...),
		Env:         b.launchEnv(),
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if u := b.opts.LaunchUser; u != nil {
		u.apply(cmd)
	} else if home, err := os.UserHomeDir(); err == nil {
		cmd.Dir = home
	}
	var stderr *os.File
	if filepath.Base(path) == "xdg-open" {
		// A file, not a pipe, so that Wait returns when the opener exits
		// even if the application it started keeps the descriptor.
		if stderr, err = os.CreateTemp("", "shinken-opener-"); err == nil {
			os.Remove(stderr.Name())
			defer stderr.Close()
			cmd.Stderr = stderr
		}
	}
	exited := make(chan error, 1)
	if err := b.start(cmd, exited); err != nil {
		return fmt.Errorf("%w: %q: %w", aci.ErrNoSuchApp, app, err)
	}
	if stderr == nil {
		return nil
	}
	// An opener hands the target to an application and exits, or fails
	// at once (no application for the type, the target refused): its
	// status is waited for a moment, so that a failure is an error and not
	// an "opened". One still running past that (an opener that runs the
	// application itself) has opened it.
	t := time.NewTimer(openerWatch)
	defer t.Stop()
	select {
	case err := <-exited:
		if err == nil {
			return nil
		}
		msg, _ := io.ReadAll(io.NewSectionReader(stderr, 0, 4<<10))
		return fmt.Errorf("%w: %s %s failed: %v: %s", aci.ErrBackend, app, strings.Join(args, " "), err, strings.TrimSpace(string(msg)))
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// start starts cmd, tracks it until it exits and then sends its Wait's
// result on exited. An app of Options.LaunchUser ends with this process,
// even killed outright: the parent-death signal. The kernel sends it when
// the thread that started the app ends, so that thread stays locked to
// the goroutine that waits for the app (a locked thread ends only with its
// goroutine), as the wait would hold a thread anyway.
func (b *Backend) start(cmd *exec.Cmd, exited chan<- error) error {
	wait := func() {
		pid := cmd.Process.Pid
		b.launched.add(pid)
		go func() {
			exited <- cmd.Wait()
			b.launched.remove(pid)
		}()
	}
	if b.opts.LaunchUser == nil {
		if err := cmd.Start(); err != nil {
			return err
		}
		wait()
		return nil
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		pid := cmd.Process.Pid
		b.launched.add(pid)
		started <- nil
		exited <- cmd.Wait()
		b.launched.remove(pid)
	}()
	return <-started
}

// openerWatch bounds Launch's wait for an opener's exit status.
const openerWatch = 3 * time.Second

// launchEnv is this process's environment with the session's display,
// authority and bus, then Options.LaunchEnv.
func (b *Backend) launchEnv() []string {
	set := map[string]string{"DISPLAY": b.display}
	if b.opts.Xauthority != "" {
		set["XAUTHORITY"] = b.opts.Xauthority
	}
	if b.opts.SessionBus != "" {
		set["DBUS_SESSION_BUS_ADDRESS"] = b.opts.SessionBus
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			env = append(env, kv)
		}
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return append(env, b.opts.LaunchEnv...)
}
