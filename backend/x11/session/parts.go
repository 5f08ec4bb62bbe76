package session

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"
)

// A part is one supervised process of the session.
type part struct {
	name  Part
	needs []Part
	// start starts the process and returns once it answers.
	start func(ctx context.Context) (*proc, error)
	// alive, when set, checks that the running process still answers;
	// without it a part is alive while its process runs.
	alive func() bool

	proc     *proc
	restarts []time.Time
}

// A proc is one started process.
type proc struct {
	name    string
	cmd     *exec.Cmd
	stderr  *limitedWriter
	done    chan struct{}
	stopped bool // set (under Session.mu) when the session stops it on purpose
	part    *part
	// release, when set, frees what the session holds for the process (the
	// accessibility bus's name on the session bus) once it is stopped.
	release func()
}

// spawn starts cmd in its own session and process group with the session marker,
// keeping its stderr for error messages. A supervised proc reports its exit
// to the supervisor.
func (s *Session) spawn(name string, cmd *exec.Cmd, supervised bool) (*proc, error) {
	p := &proc{name: name, cmd: cmd, stderr: &limitedWriter{max: 16 << 10}, done: make(chan struct{})}
	if cmd.Env == nil {
		cmd.Env = s.Env()
	}
	cmd.Env = append(cmd.Env, MarkerVar+"="+s.Marker)
	cmd.Stderr = p.stderr
	// What a part starts (a bus activates services) inherits its stderr and
	// may outlive it: the part's exit must not wait for theirs.
	cmd.WaitDelay = 100 * time.Millisecond
	// A session of its own (so a group of its own, which stop signals):
	// no process of the session holds this process's terminal, where an
	// application could type (TIOCSTI). The credential, when the caller
	// set one, stays.
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if cmd.SysProcAttr != nil {
		attr.Credential = cmd.SysProcAttr.Credential
	}
	cmd.SysProcAttr = attr
	if err := s.startCmd(cmd); err != nil {
		return nil, fmt.Errorf("session: starting %s: %w", name, err)
	}
	go func() {
		cmd.Wait()
		close(p.done)
		if supervised {
			select {
			case s.exits <- p:
			case <-s.ctx.Done():
			}
		}
	}()
	return p, nil
}

// stop asks p's process group to end, then kills it if it lingers.
func (p *proc) stop() {
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
	if p.release != nil {
		p.release()
	}
}

func (p *proc) stderrText() string { return strings.TrimSpace(p.stderr.String()) }

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// startPart starts p and records its process; a process that started but
// did not get ready is stopped.
func (s *Session) startPart(ctx context.Context, p *part) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	pr, err := p.start(ctx)
	if pr != nil {
		pr.part = p
		if err != nil {
			s.mu.Lock()
			pr.stopped = true
			s.mu.Unlock()
			pr.stop()
		}
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("session: %s not ready after %v: %w", p.name, s.opts.Timeout, err)
		}
		return err
	}
	s.mu.Lock()
	p.proc = pr
	s.mu.Unlock()
	return nil
}

// waitLine waits for the first line a part writes on a pipe, which it
// writes once it is ready.
func waitLine(ctx context.Context, pr *proc, r *os.File) (string, error) {
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		got <- strings.TrimSpace(line)
	}()
	select {
	case line := <-got:
		if line == "" {
			return "", fmt.Errorf("session: %s exited: %s", pr.name, pr.stderrText())
		}
		return line, nil
	case <-pr.done:
		return "", fmt.Errorf("session: %s exited: %s", pr.name, pr.stderrText())
	case <-ctx.Done():
		return "", ctx.Err()
	}
	// The reader goroutine ends when the process, holding the pipe's write
	// end, is stopped: the caller stops it on error.
}

// startX starts Xvfb. The first time it picks a free display number, which
// it writes on a pipe once it accepts connections; a restart asks for the
// same number again, so the session's clients find it where they left it.
func (s *Session) startX(ctx context.Context) (*proc, error) {
	auth := filepath.Join(s.dir, "server.auth")
	if err := os.WriteFile(auth, xauthEntry(s.Cookie, ""), 0o600); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	defer r.Close()
	screen := fmt.Sprintf("%dx%dx%d", s.opts.Width, s.opts.Height, s.opts.Depth)
	args := []string{"-displayfd", "3", "-screen", "0", screen, "-nolisten", "tcp", "-noreset", "-auth", auth}
	if s.number != "" {
		// A server killed outright leaves its socket and lock behind;
		// Xvfb takes over a stale lock but not a stale socket.
		os.Remove("/tmp/.X11-unix/X" + s.number)
		args = append([]string{":" + s.number}, args...)
	}
	cmd := exec.Command("Xvfb", args...)
	cmd.ExtraFiles = []*os.File{w}
	cmd.Env = os.Environ()
	pr, err := s.spawn(string(PartX), cmd, true)
	w.Close()
	if err != nil {
		return nil, err
	}
	number, err := waitLine(ctx, pr, r)
	if err != nil {
		return pr, err
	}
	if _, err := strconv.Atoi(number); err != nil {
		return pr, fmt.Errorf("session: Xvfb reported display %q: %s", number, pr.stderrText())
	}
	if s.number == "" {
		s.number = number
		s.Display = ":" + number
		s.Xauthority = filepath.Join(s.dir, "Xauthority")
		if err := os.WriteFile(s.Xauthority, xauthEntry(s.Cookie, number), 0o600); err != nil {
			return pr, fmt.Errorf("session: %w", err)
		}
		if err := s.writeAgentXauthority(xauthEntry(s.Cookie, number)); err != nil {
			return pr, err
		}
	}
	return pr, nil
}

// xAlive checks that the X server accepts a connection.
func (s *Session) xAlive() bool {
	c, err := dial(s.Display, s.Cookie)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// startBus starts the session D-Bus on a fixed socket path, so a restarted
// bus has the address the session's clients were given.
func (s *Session) startBus(ctx context.Context) (*proc, error) {
	os.Remove(s.busPath)
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	defer r.Close()
	config, err := s.sessionBusConfig()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("dbus-daemon", config, "--nofork", "--nopidfile", "--nosyslog",
		"--address="+s.SessionBus, "--print-address=3")
	cmd.ExtraFiles = []*os.File{w}
	pr, err := s.spawn(string(PartSessionBus), cmd, true)
	w.Close()
	if err != nil {
		return nil, err
	}
	if _, err := waitLine(ctx, pr, r); err != nil {
		return pr, err
	}
	if s.opts.NoAccessibility {
		return pr, nil
	}
	// Services the bus starts on demand (GTK apps start a portal) keep
	// their sockets in the session and stay out of the accessibility tree.
	conn, err := dbus.Connect(s.SessionBus, dbus.WithContext(ctx))
	if err != nil {
		return pr, fmt.Errorf("session: session bus: %w", err)
	}
	defer conn.Close()
	err = conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.UpdateActivationEnvironment", 0,
		map[string]string{"XDG_RUNTIME_DIR": s.RuntimeDir, "NO_AT_BRIDGE": "1"}).Err
	if err != nil {
		return pr, fmt.Errorf("session: session bus: %w", err)
	}
	return pr, nil
}

// sessionConfigs are where dbus installs the session bus's configuration.
var sessionConfigs = []string{"/usr/share/dbus-1/session.conf", "/etc/dbus-1/session.conf"}

// sessionBusConfig returns the configuration flag of the session bus: the
// standard session configuration, with one service of the session's own
// ahead of the standard ones. Asked for org.a11y.Bus while nobody owns the
// name (before the session publishes its accessibility bus, while that is
// restarted, or in a session without one), a standard bus would start
// at-spi-bus-launcher, whose own dbus-daemon no parent-death signal
// reaches; this one answers with an error instead, and the caller finds
// the bus once the session publishes it (GTK reads AT_SPI_BUS, Qt watches
// the name). Without a standard configuration to include, the bus runs
// with --session and that hole stays open.
func (s *Session) sessionBusConfig() (string, error) {
	std := ""
	for _, p := range sessionConfigs {
		if _, err := os.Stat(p); err == nil {
			std = p
			break
		}
	}
	if std == "" && s.agent == nil {
		return "--session", nil
	}
	services := filepath.Join(s.dir, "services")
	if err := os.MkdirAll(services, 0o700); err != nil {
		return "", fmt.Errorf("session: %w", err)
	}
	service := "[D-BUS Service]\nName=" + a11yName + "\nExec=/bin/false\n"
	if err := os.WriteFile(filepath.Join(services, a11yName+".service"), []byte(service), 0o600); err != nil {
		return "", fmt.Errorf("session: %w", err)
	}
	config := filepath.Join(s.dir, "session-bus.conf")
	// The first service directory listed wins over the later ones.
	body := "  <servicedir>" + services + "</servicedir>\n  <include>" + std + "</include>\n"
	if s.agent != nil {
		// The system's services would run as this process's user, at the
		// agent's request (a file manager's daemon reads any file): the
		// bus is the standard session bus's, with no service but ours.
		body = "  <type>session</type>\n  <auth>EXTERNAL</auth>\n  <listen>unix:tmpdir=/tmp</listen>\n" +
			"  <servicedir>" + services + "</servicedir>\n" +
			"  <policy context=\"default\">\n    <allow send_destination=\"*\" eavesdrop=\"true\"/>\n    <allow eavesdrop=\"true\"/>\n    <allow own=\"*\"/>\n  </policy>\n" +
			s.busPolicy()
	}
	xml := busConfig(body)
	if err := os.WriteFile(config, []byte(xml), 0o600); err != nil {
		return "", fmt.Errorf("session: %w", err)
	}
	return "--config-file=" + config, nil
}

// busConfig is a dbus-daemon configuration file holding body.
func busConfig(body string) string {
	return `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
` + body + `</busconfig>
`
}

// busAlive checks that the session bus accepts a connection.
func (s *Session) busAlive() bool {
	c, err := net.DialTimeout("unix", s.busPath, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// startWM starts the window manager and waits until it manages windows. An
// EWMH window manager announces itself (_NET_SUPPORTING_WM_CHECK) before its
// main loop runs, and a request that reaches it in between can sit
// unhandled until some later event wakes it. So readiness is proven with a
// probe window that must get mapped, while a root property is touched to
// wake the window manager.
func (s *Session) startWM(ctx context.Context) (*proc, error) {
	argv := s.opts.WindowManager
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.dir
	pr, err := s.spawn(string(PartWindowManager), cmd, true)
	if err != nil {
		return nil, err
	}
	conn, err := dial(s.Display, s.Cookie)
	if err != nil {
		return pr, fmt.Errorf("session: waiting for the window manager: %w", err)
	}
	defer conn.Close()
	go func() { // xgb stalls unless its events are read
		for {
			if ev, err := conn.WaitForEvent(); ev == nil && err == nil {
				return
			}
		}
	}()
	var probe *probeWindow
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if probe == nil {
			running, err := wmRunning(conn)
			if err != nil {
				return pr, fmt.Errorf("session: waiting for the window manager: %w", err)
			}
			if running {
				if probe, err = newProbe(conn); err != nil {
					return pr, fmt.Errorf("session: waiting for the window manager: %w", err)
				}
				defer probe.destroy()
			}
		}
		if probe != nil {
			mapped, err := probe.mapped()
			if err != nil {
				return pr, fmt.Errorf("session: waiting for the window manager: %w", err)
			}
			if mapped {
				return pr, nil
			}
			probe.poke()
		}
		select {
		case <-pr.done:
			return pr, fmt.Errorf("session: %s exited: %s", argv[0], pr.stderrText())
		case <-ctx.Done():
			return pr, ctx.Err()
		case <-tick.C:
		}
	}
}
