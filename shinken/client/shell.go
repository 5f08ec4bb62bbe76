package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"shinken.dev/go/shinken/aci"
)

// A Shell is a persistent interactive shell on the runtime's machine, on a
// pseudo-terminal: what is written to it is typed at its prompt, and what
// it prints is kept until read. Its cwd, variables and background jobs
// persist from one write to the next.
//
// ACI v0 reserves exec's pty, and an exec's stdin is written once, so a
// Shell is built from execs the runtime's Authorizer judges like any
// other: one streamed exec runs the shell under script(1), which gives it
// a terminal, reading from a named pipe in a private temporary directory;
// each Write is a short exec that writes to that pipe. Without script(1)
// on the runtime's machine the shell runs interactive on pipes, with no
// terminal. The shell lives at most the runtime's exec MaxTimeout (10
// minutes by default), and ends with the ACI session that started it,
// since the runtime kills a closed session's commands.
type Shell struct {
	c      *Client
	dir    string // the private directory of the pipe
	stream *ExecStream
	max    int

	mu      sync.Mutex
	out     []byte // printed, not yet read
	dropped int    // bytes dropped from out, oldest first, since the last read
	notify  chan struct{}
	done    chan struct{} // closed when the shell has ended
	exit    *aci.ExecExit
	err     error
}

// ShellOptions configure StartShell. A nil *ShellOptions means defaults.
type ShellOptions struct {
	// Command is the shell; default /bin/sh. It is run interactive.
	Command string
	// Dir is its working directory; default the runtime's.
	Dir string
	// Env is merged over the runtime's environment; TERM defaults to
	// "dumb", so that programs print no terminal escapes.
	Env map[string]string
	// Lifetime is how long the shell may run; default, and at most, the
	// runtime's exec MaxTimeout.
	Lifetime time.Duration
	// MaxBuffer bounds the output kept unread; older output is dropped
	// past it (Read says how much). Default 1 MiB.
	MaxBuffer int
}

// ErrShellEnded is returned by Write and Wait once the shell has ended.
var ErrShellEnded = errors.New("client: the shell has ended")

const shellSetup = `d=$(mktemp -d) && mkfifo -m 600 "$d/in" && printf '%s' "$d"`

const shellScript = `d=$1 sh=$2
echo $$ > "$d/pid"
exec 3<>"$d/in"
if command -v script >/dev/null 2>&1; then exec script -qfc "$sh -i" /dev/null <&3; fi
exec "$sh" -i <&3 2>&1`

// shellClose ends a shell: every process that holds its pipe open (the
// shell, script(1) and the jobs it started, which inherit the pipe; read
// from /proc where there is one), then the process group the runtime
// started (its leader wrote its pid), and removes the directory. A job
// that closed its inherited descriptors, as a daemon does, outlives it.
const shellClose = `d=$1
for f in $(find /proc/[0-9]*/fd -maxdepth 1 -lname "$d/in" 2>/dev/null); do
  q=${f#/proc/}; kill -9 "${q%%/*}" 2>/dev/null
done
p=$(cat "$d/pid" 2>/dev/null) && kill -9 "-$p" 2>/dev/null
rm -rf -- "$d"
exit 0`

// StartShell starts a shell (see Shell). Close it when done.
func (c *Client) StartShell(ctx context.Context, opts *ShellOptions) (*Shell, error) {
	o := ShellOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Command == "" {
		o.Command = "/bin/sh"
	}
	if o.MaxBuffer <= 0 {
		o.MaxBuffer = 1 << 20
	}
	if o.Lifetime <= 0 {
		o.Lifetime = 24 * time.Hour // the runtime clamps it to its MaxTimeout
	}
	env := map[string]string{"TERM": "dumb"}
	for k, v := range o.Env {
		env[k] = v
	}
	res, err := c.Exec(ctx, &aci.ExecRequest{Argv: []string{"/bin/sh", "-c", shellSetup}})
	if err != nil {
		return nil, fmt.Errorf("client: starting a shell: %w", err)
	}
	if res.ExitCode == nil || *res.ExitCode != 0 || res.Stdout == "" {
		return nil, fmt.Errorf("client: starting a shell: making its pipe failed: %s", strings.TrimSpace(res.Stderr))
	}
	s := &Shell{c: c, dir: res.Stdout, max: o.MaxBuffer, notify: make(chan struct{}), done: make(chan struct{})}
	st, err := c.ExecStream(ctx, &aci.ExecRequest{
		Argv: []string{"/bin/sh", "-c", shellScript, "sh", s.dir, o.Command},
		Dir:  o.Dir, Env: env, Timeout: o.Lifetime,
	})
	if err != nil {
		s.removeDir(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("client: starting a shell: %w", err)
	}
	s.stream = st
	go s.read()
	return s, nil
}

// read gathers the shell's output until it ends.
func (s *Shell) read() {
	for {
		ch, err := s.stream.Next(context.Background())
		s.mu.Lock()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.err = err
			}
			s.exit = s.stream.Exit()
			close(s.done)
			close(s.notify)
			s.mu.Unlock()
			return
		}
		s.out = append(s.out, ch.Data...)
		if over := len(s.out) - s.max; over > 0 {
			s.out = s.out[over:]
			s.dropped += over
		}
		close(s.notify)
		s.notify = make(chan struct{})
		s.mu.Unlock()
	}
}

// Write types input at the shell (add "\n" to run a line).
func (s *Shell) Write(ctx context.Context, input string) error {
	select {
	case <-s.done:
		return ErrShellEnded
	default:
	}
	// The pipe is held open by the shell: a write reaches it at once, and
	// a deadline keeps a write from waiting for a shell that just died.
	res, err := s.c.Exec(ctx, &aci.ExecRequest{
		Argv:    []string{"/bin/sh", "-c", `cat > "$1/in"`, "sh", s.dir},
		Stdin:   &input,
		Timeout: 10 * time.Second,
	})
	if err != nil {
		return fmt.Errorf("client: writing to the shell: %w", err)
	}
	if res.ExitCode == nil || *res.ExitCode != 0 {
		select {
		case <-s.done:
			return ErrShellEnded
		default:
		}
		return fmt.Errorf("client: writing to the shell failed: %s", strings.TrimSpace(res.Stderr))
	}
	return nil
}

// Read returns what the shell printed since the last Read (its invalid
// UTF-8 replaced), and how many older bytes were dropped unread past
// ShellOptions.MaxBuffer.
func (s *Shell) Read() (out string, dropped int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, dropped = string(s.out), s.dropped
	s.out, s.dropped = nil, 0
	return strings.ToValidUTF8(out, "\uFFFD"), dropped
}

// Wait blocks until the shell prints something not yet read, or ends
// (ErrShellEnded), or ctx is done.
func (s *Shell) Wait(ctx context.Context) error {
	s.mu.Lock()
	pending, ch := len(s.out) > 0, s.notify
	s.mu.Unlock()
	if pending {
		return nil
	}
	select {
	case <-ch:
		select {
		case <-s.done:
			s.mu.Lock()
			pending := len(s.out) > 0
			s.mu.Unlock()
			if !pending {
				return ErrShellEnded
			}
		default:
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Done is closed when the shell has ended: it exited, was closed, or its
// lifetime ran out.
func (s *Shell) Done() <-chan struct{} { return s.done }

// Exit reports how the shell ended, once Done is closed (nil before): its
// exit status, or timed_out when its lifetime ran out. A failure of the
// stream itself (the session closed) is the error.
func (s *Shell) Exit() (*aci.ExecExit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exit, s.err
}

// Close ends the shell and its jobs, removes its pipe, and waits until the
// runtime reports it ended or ctx is done.
func (s *Shell) Close(ctx context.Context) error {
	_, err := s.c.Exec(ctx, &aci.ExecRequest{Argv: []string{"/bin/sh", "-c", shellClose, "sh", s.dir}})
	select {
	case <-s.done:
	case <-ctx.Done():
		return errors.Join(err, ctx.Err())
	}
	return err
}

func (s *Shell) removeDir(ctx context.Context) {
	s.c.Exec(ctx, &aci.ExecRequest{Argv: []string{"/bin/sh", "-c", `rm -rf -- "$1"`, "sh", s.dir}})
}
