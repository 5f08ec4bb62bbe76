package escouade

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A command is a plugin run as a program (run.command): in its own process
// group, killed with its parent, its stdin and stdout the protocol's lines,
// its stderr drained into the journal.
type command struct {
	in     *os.File // the Host's end of the plugin's stdin
	out    *os.File // the Host's end of the plugin's stdout
	stderr *stderrWriter
	pgid   int
	exited chan struct{}

	mu     sync.Mutex
	reaped bool   // the leader was reaped: its pid may name a stranger now
	how    string // how it ended

	inOnce, outOnce sync.Once
}

func commandLauncher(argv []string) launcher {
	return func(p *Plugin) (process, error) { return startCommand(p, argv) }
}

func startCommand(p *Plugin, argv []string) (*command, error) {
	path := argv[0]
	if strings.ContainsRune(path, '/') {
		if !filepath.IsAbs(path) {
			path = filepath.Join(p.dir, path)
		}
	} else {
		lp, err := exec.LookPath(path)
		if err != nil {
			return nil, err
		}
		path = lp
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	c := &command{in: inW, out: outR, stderr: &stderrWriter{j: p.j}, exited: make(chan struct{})}
	cmd := &exec.Cmd{
		Path:   path,
		Args:   argv,
		Dir:    p.dir,
		Env:    os.Environ(),
		Stdin:  inR,
		Stdout: outW,
		// Not an *os.File: exec drains it on a goroutine of its own, always,
		// so that a full pipe never wedges the plugin.
		Stderr: c.stderr,
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:   true,
			Pdeathsig: syscall.SIGKILL,
		},
		// A grandchild that escaped the group and holds stderr must not hold
		// up Wait.
		WaitDelay: p.h.opts.StopGrace,
	}
	started := make(chan error, 1)
	go c.run(cmd, started)
	err = <-started
	inR.Close() // the child holds its own copies
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	return c, nil
}

// run starts the program and waits for it, on one OS thread: the
// parent-death signal fires when the thread that spawned the child ends, so
// that thread must live as long as the child does.
func (c *command) run(cmd *exec.Cmd, started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		started <- err
		return
	}
	c.pgid = cmd.Process.Pid
	started <- nil

	// Wait for the leader to end without reaping it: while it is a zombie
	// its pid still names its group, so the group can be killed, taking
	// with it what the plugin started, without hitting a stranger.
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, c.pgid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	c.mu.Lock()
	syscall.Kill(-c.pgid, syscall.SIGKILL)
	c.reaped = true
	c.mu.Unlock()
	err := cmd.Wait()
	c.stderr.close()
	how := "exited"
	switch {
	case cmd.ProcessState != nil:
		how = cmd.ProcessState.String()
	case err != nil:
		how = err.Error()
	}
	c.mu.Lock()
	c.how = how
	c.mu.Unlock()
	close(c.exited)
}

func (c *command) signal(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.reaped {
		syscall.Kill(-c.pgid, sig)
	}
}

func (c *command) stdout() io.Reader     { return c.out }
func (c *command) stdin() io.Writer      { return c.in }
func (c *command) closeInput()           { c.inOnce.Do(func() { c.in.Close() }) }
func (c *command) terminate()            { c.signal(syscall.SIGTERM) }
func (c *command) kill()                 { c.signal(syscall.SIGKILL) }
func (c *command) done() <-chan struct{} { return c.exited }

func (c *command) release() {
	c.closeInput()
	c.outOnce.Do(func() { c.out.Close() })
}

func (c *command) status() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.how == "" {
		return fmt.Sprintf("process group %d still running", c.pgid)
	}
	return c.how
}
