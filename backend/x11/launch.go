package x11

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

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

// Launch starts app, a program name looked up on PATH or an absolute path,
// with args passed verbatim (no shell). The app runs detached, in a session
// of its own with no terminal, from the user's home directory, on this
// display and the session bus, and outlives the Backend. With
// Options.LaunchUser it runs as that user, and ends with this process
// (a parent-death signal). A program that cannot be found
// or run is an error wrapping aci.ErrNoSuchApp.
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
	if b.opts.LaunchUser == nil {
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("%w: %q: %w", aci.ErrNoSuchApp, app, err)
		}
		pid := cmd.Process.Pid
		b.launched.add(pid)
		go func() {
			cmd.Wait()
			b.launched.remove(pid)
		}()
		return nil
	}
	// The agent's app ends with this process, even killed outright: the
	// parent-death signal. The kernel sends it when the thread that
	// started the app ends, so that thread stays locked to the goroutine
	// that waits for the app (a locked thread ends only with its
	// goroutine), as the wait would hold a thread anyway.
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
		cmd.Wait()
		b.launched.remove(pid)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("%w: %q: %w", aci.ErrNoSuchApp, app, err)
	}
	return nil
}

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
