// Package xvfb starts a private X session for tests and demos: an Xvfb
// server on a free display number, optionally the openbox window manager and
// a session D-Bus, and takes every process of the session down again on
// Close, including the ones those processes started.
//
// It knows nothing of the testing package; xvfbtest wraps it for tests.
package xvfb

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrNotInstalled is wrapped by Start when a program the session needs is
// not on PATH. The error text names the program.
var ErrNotInstalled = errors.New("xvfb: program not installed")

// MarkerVar is the environment variable that tags every process of a
// session. Close kills whatever still carries the session's value, which is
// how processes started by the session's processes (D-Bus activation,
// applications launched from a test) are found once their parent is gone.
const MarkerVar = "SHINKEN_XVFB_SESSION"

// Options configure a session. A nil *Options means the defaults.
type Options struct {
	Width, Height int           // screen size in pixels; 0 means 1280×800
	Depth         int           // screen depth; 0 means 24
	NoWM          bool          // true runs no window manager; default starts openbox
	SessionBus    bool          // true starts a session dbus-daemon; default none
	Timeout       time.Duration // how long each program may take to get ready; 0 means 15 s
}

// A Server is a running session.
type Server struct {
	// Display is the display name to connect to, such as ":3".
	Display string
	// Xauthority is the path of an authority file holding the session's
	// MIT-MAGIC-COOKIE-1; the server admits no client without it.
	Xauthority string
	// Cookie is the session's 16-byte MIT-MAGIC-COOKIE-1.
	Cookie []byte
	// SessionBus is the address of the session D-Bus, or "" when
	// Options.SessionBus was false.
	SessionBus string
	// Marker is the value of MarkerVar in the session's environment.
	Marker string

	dir   string
	mu    sync.Mutex
	procs []*proc // in start order; stopped in reverse
	once  sync.Once
	err   error
}

type proc struct {
	name   string
	cmd    *exec.Cmd
	stderr *limitedWriter
	done   chan struct{}
}

// Start starts a session. The caller must Close it, even when ctx ends.
func Start(ctx context.Context, opts *Options) (*Server, error) {
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
	if o.Timeout == 0 {
		o.Timeout = 15 * time.Second
	}
	need := []string{"Xvfb"}
	if !o.NoWM {
		need = append(need, "openbox")
	}
	if o.SessionBus {
		need = append(need, "dbus-daemon")
	}
	for _, name := range need {
		if _, err := exec.LookPath(name); err != nil {
			return nil, fmt.Errorf("%w: %s", ErrNotInstalled, name)
		}
	}

	dir, err := os.MkdirTemp("", "xvfb-")
	if err != nil {
		return nil, fmt.Errorf("xvfb: %w", err)
	}
	random := make([]byte, 24)
	if _, err := rand.Read(random); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("xvfb: %w", err)
	}
	s := &Server{dir: dir, Cookie: random[:16], Marker: hex.EncodeToString(random[16:])}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()

	// The server reads its cookie from a file at start. The clients' file
	// can only be written once the display number is known.
	serverAuth := filepath.Join(dir, "server.auth")
	if err := os.WriteFile(serverAuth, xauthEntry(s.Cookie, ""), 0o600); err != nil {
		return nil, fmt.Errorf("xvfb: %w", err)
	}
	number, err := s.startXvfb(ctx, &o, serverAuth)
	if err != nil {
		return nil, err
	}
	s.Display = ":" + number
	s.Xauthority = filepath.Join(dir, "Xauthority")
	if err := os.WriteFile(s.Xauthority, xauthEntry(s.Cookie, number), 0o600); err != nil {
		return nil, fmt.Errorf("xvfb: %w", err)
	}
	if o.SessionBus {
		if err := s.startBus(ctx, &o); err != nil {
			return nil, err
		}
	}
	if !o.NoWM {
		if err := s.startWM(ctx, &o); err != nil {
			return nil, err
		}
	}
	ok = true
	return s, nil
}

// startXvfb starts the server and returns its display number, which the
// server writes on a pipe once it accepts connections.
func (s *Server) startXvfb(ctx context.Context, o *Options, auth string) (string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("xvfb: %w", err)
	}
	defer r.Close()
	screen := fmt.Sprintf("%dx%dx%d", o.Width, o.Height, o.Depth)
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", screen,
		"-nolisten", "tcp", "-noreset", "-auth", auth)
	cmd.ExtraFiles = []*os.File{w}
	p, err := s.start("Xvfb", cmd, os.Environ())
	w.Close()
	if err != nil {
		return "", err
	}
	type result struct {
		line string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		got <- result{line, err}
	}()
	timer := time.NewTimer(o.Timeout)
	defer timer.Stop()
	select {
	case res := <-got:
		number := strings.TrimSpace(res.line)
		if _, err := strconv.Atoi(number); err != nil {
			return "", fmt.Errorf("xvfb: Xvfb did not report a display (%v): %s", res.err, p.stderrText())
		}
		return number, nil
	case <-p.done:
		return "", fmt.Errorf("xvfb: Xvfb exited: %s", p.stderrText())
	case <-timer.C:
		return "", fmt.Errorf("xvfb: Xvfb not ready after %v: %s", o.Timeout, p.stderrText())
	case <-ctx.Done():
		return "", fmt.Errorf("xvfb: %w", ctx.Err())
	}
	// The pipe reader goroutine ends when Close kills the server.
}

func (s *Server) startBus(ctx context.Context, o *Options) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("xvfb: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--nosyslog",
		"--address=unix:dir="+s.dir, "--print-address=3")
	cmd.ExtraFiles = []*os.File{w}
	p, err := s.start("dbus-daemon", cmd, s.Env())
	w.Close()
	if err != nil {
		return err
	}
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		got <- strings.TrimSpace(line)
	}()
	timer := time.NewTimer(o.Timeout)
	defer timer.Stop()
	select {
	case addr := <-got:
		if addr == "" {
			return fmt.Errorf("xvfb: dbus-daemon printed no address: %s", p.stderrText())
		}
		s.SessionBus = addr
		return nil
	case <-p.done:
		return fmt.Errorf("xvfb: dbus-daemon exited: %s", p.stderrText())
	case <-timer.C:
		return fmt.Errorf("xvfb: dbus-daemon not ready after %v", o.Timeout)
	case <-ctx.Done():
		return fmt.Errorf("xvfb: %w", ctx.Err())
	}
}

// startWM starts openbox and waits until it manages windows. Openbox
// announces itself (_NET_SUPPORTING_WM_CHECK) before its main loop runs, and
// a request that reaches it in between can sit unhandled until some later
// event wakes it. So readiness is proven with a probe window that must get
// mapped, while a root property is touched to wake the window manager.
func (s *Server) startWM(ctx context.Context, o *Options) error {
	cmd := exec.Command("openbox", "--sm-disable")
	cmd.Dir = s.dir
	p, err := s.start("openbox", cmd, s.Env())
	if err != nil {
		return err
	}
	conn, err := dial(s.Display, s.Cookie)
	if err != nil {
		return fmt.Errorf("xvfb: waiting for openbox: %w", err)
	}
	defer conn.Close()
	go func() { // xgb stalls unless its events are read
		for {
			if ev, err := conn.WaitForEvent(); ev == nil && err == nil {
				return
			}
		}
	}()
	deadline := time.Now().Add(o.Timeout)
	var probe *probeWindow
	for {
		if probe == nil {
			running, err := wmRunning(conn)
			if err != nil {
				return fmt.Errorf("xvfb: waiting for openbox: %w", err)
			}
			if running {
				if probe, err = newProbe(conn); err != nil {
					return fmt.Errorf("xvfb: waiting for openbox: %w", err)
				}
				defer probe.destroy()
			}
		}
		if probe != nil {
			mapped, err := probe.mapped()
			if err != nil {
				return fmt.Errorf("xvfb: waiting for openbox: %w", err)
			}
			if mapped {
				return nil
			}
			probe.poke()
		}
		select {
		case <-p.done:
			return fmt.Errorf("xvfb: openbox exited: %s", p.stderrText())
		case <-ctx.Done():
			return fmt.Errorf("xvfb: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("xvfb: openbox not ready after %v: %s", o.Timeout, p.stderrText())
		}
	}
}

// start starts cmd in its own process group with env plus the session
// marker, keeping its stderr for error messages.
func (s *Server) start(name string, cmd *exec.Cmd, env []string) (*proc, error) {
	p := &proc{name: name, cmd: cmd, stderr: &limitedWriter{max: 16 << 10}, done: make(chan struct{})}
	cmd.Env = append(env, MarkerVar+"="+s.Marker)
	cmd.Stderr = p.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("xvfb: starting %s: %w", name, err)
	}
	s.mu.Lock()
	s.procs = append(s.procs, p)
	s.mu.Unlock()
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stderrText returns what p wrote on stderr so far, for error messages.
func (p *proc) stderrText() string {
	return strings.TrimSpace(p.stderr.String())
}

// Env returns the environment for a client of the session: the process's
// own environment with DISPLAY, XAUTHORITY, DBUS_SESSION_BUS_ADDRESS (when
// there is a bus) and the session marker set.
func (s *Server) Env() []string {
	env := make([]string, 0, len(os.Environ())+4)
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", MarkerVar:
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "DISPLAY="+s.Display, "XAUTHORITY="+s.Xauthority, MarkerVar+"="+s.Marker)
	if s.SessionBus != "" {
		env = append(env, "DBUS_SESSION_BUS_ADDRESS="+s.SessionBus)
	}
	return env
}

// Command returns a command that runs name as a client of the session, in
// its own process group. Close kills it if it is still running.
func (s *Server) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = s.Env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Processes returns the ids of the live processes that carry the session
// marker: the session's own and everything started from it.
func (s *Server) Processes() ([]int, error) {
	return marked(s.Marker)
}

// Close stops the session: the window manager and the bus, then the
// server, then whatever else still carries the session marker. It waits
// until they are gone and removes the session's files. It is safe to call
// more than once.
func (s *Server) Close() error {
	s.once.Do(func() { s.err = s.close() })
	return s.err
}

func (s *Server) close() error {
	s.mu.Lock()
	procs := s.procs
	s.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		stop(procs[i])
	}
	var err error
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids, scanErr := marked(s.Marker)
		if scanErr != nil {
			err = scanErr
			break
		}
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			err = fmt.Errorf("xvfb: processes %v survived the session", pids)
			break
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond) // waiting for the kernel to reap; nothing to select on
	}
	if rmErr := os.RemoveAll(s.dir); rmErr != nil && err == nil {
		err = fmt.Errorf("xvfb: %w", rmErr)
	}
	return err
}

// stop asks p's process group to end, then kills it if it lingers.
func stop(p *proc) {
	pgid := p.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(3 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	// Anything left in the group (a child that ignored SIGTERM) goes too.
	syscall.Kill(-pgid, syscall.SIGKILL)
}

// marked lists the processes whose environment holds MarkerVar=marker.
func marked(marker string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("xvfb: %w", err)
	}
	want := []byte(MarkerVar + "=" + marker + "\x00")
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append([]byte{0}, env...), append([]byte{0}, want...)) {
			continue
		}
		if zombie(pid) {
			continue // dead already; its parent reaps it
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

func zombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name, which may hold spaces.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X'
}

// xauthEntry encodes one Xauthority entry for any address (FamilyWild) and
// display number (empty means any).
func xauthEntry(cookie []byte, number string) []byte {
	var b bytes.Buffer
	field := func(s []byte) {
		binary.Write(&b, binary.BigEndian, uint16(len(s)))
		b.Write(s)
	}
	binary.Write(&b, binary.BigEndian, uint16(0xffff))
	field(nil)
	field([]byte(number))
	field([]byte("MIT-MAGIC-COOKIE-1"))
	field(cookie)
	return b.Bytes()
}

// limitedWriter keeps the first max bytes written to it, for error messages.
type limitedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (w *limitedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
