package machine

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"shinken.dev/go/internal/hosttool"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// A Shell is a persistent interactive shell on the runtime's machine, on a
// pseudo-terminal (TERM xterm-256color, 80×24 unless asked): its cwd,
// variables and jobs persist from call to call. Shell.Run types a command
// and answers its output (bounded), its exit code, or that it still runs.
//
// Starting it is judged as the shell, started interactive; every text typed
// at it as a command line (tool "shell") before it reaches the terminal;
// interrupt, end of input, kill and resize are keystrokes and signals to the
// agent's own shell, let through without asking the plugins. Its prompts are
// markers, with a nonce, saying when a command ended and with what status; a
// command that changes PS1 loses that (Run then reports it as still
// running).
//
// It lives as long as the ACI session that started it (whose end kills
// everything the shell started), until it exits, is closed, or is idle for
// ShellOptions.IdleTimeout: the runtime's exec MaxTimeout does not apply
// (its executor's own maximum does; osexec's is 1 hour).
type Shell struct {
	c      *client.Client
	dir    string // the shell's folder on the runtime's machine
	stream *client.ExecStream
	max    int
	marker []byte // ESC ] 777 ; nonce ;
	lines  bool   // ShellOptions.Lines

	run     sync.Mutex // one Run at a time
	cwd     string     // Lines: the shell's working folder as last seen ("" unknown); under run
	idle    *time.Timer
	idleFor time.Duration

	mu       sync.Mutex
	raw      []byte // read, not yet parsed (a marker may be cut)
	out      []byte // printed, not yet read
	dropped  int    // bytes dropped from out, oldest first, since the last read
	prompts  int    // prompts seen: commands ended
	reported int    // prompts seen when a Run last answered
	idleAt   bool   // at its prompt, nothing typed since
	status   int    // the status the last prompt reported
	more     bool   // the last marker asked for the rest of a line
	notify   chan struct{}
	done     chan struct{} // closed when the shell has ended
	exit     *aci.ExecExit
	err      error
}

// ShellOptions configure StartShell. A nil *ShellOptions means defaults.
type ShellOptions struct {
	// Command is the shell's absolute path; default /bin/bash, or /bin/sh
	// where there is no bash. It is run interactive (bash without its rc
	// files and without readline).
	Command string
	// Dir is its working directory; default the runtime's.
	Dir string
	// Cols and Rows size its terminal; default 80×24, each 2 to 1000.
	Cols, Rows int
	// IdleTimeout ends the shell after this long without a call (Run,
	// Write, a control); default 30 minutes. Negative means never.
	IdleTimeout time.Duration
	// MaxBuffer bounds the output kept unread between calls; older output
	// is dropped past it (and counted as cut). Default 1 MiB.
	MaxBuffer int
	// Lines makes the shell take command lines only, as a guard that
	// judges typed lines needs: each input is one line, typed only when
	// the shell itself will read it as a command line (no program it
	// started is in the foreground, no line typed before is unread), and
	// judged as /bin/sh reads it; an input refused so is a
	// *NotReadingError. The shell is /bin/sh (Command must be it or
	// empty). Without Lines, input is typed as is, to whatever reads the
	// terminal, which a runtime shows its Authorizer as dynamic.
	Lines bool
}

// A NotReadingError is an input a Lines shell refused to type, because
// the shell would not read it as a command line. Nothing was typed.
type NotReadingError struct {
	// Foreground is the program (its command line) in the terminal's
	// foreground, that would have read the input ("a program the shell
	// started" for a subshell, or a child not yet its program); "" when it is the
	// shell that is busy: it runs the line typed before (read, a list of
	// commands), or waits for the rest of a line.
	Foreground string
}

func (e *NotReadingError) Error() string {
	if e.Foreground != "" {
		return fmt.Sprintf("machine: the shell is not reading a command line: %s runs in the foreground and would read the input; wait for it to end, interrupt it, or run a program that needs input as a background command", e.Foreground)
	}
	return "machine: the shell is not reading a command line: it runs the line typed before, or waits for the rest of one; wait for it to end, or interrupt it"
}

// Bounds of a Shell.
const (
	MaxShellOutput = 1 << 20           // the most one Run answers, in bytes
	MaxShellInput  = hosttool.MaxTyped // the most text one call types, in bytes
)

// Defaults of a Shell. With ShellOptions.Lines, Quiet is longer: no input
// can reach a program there, so a pause says less, and the prompt forks
// once (to mark itself ready) between a command's output and its end's
// marker, which a loaded machine can make last.
const (
	defaultShellIdle   = 30 * time.Minute
	defaultShellOutput = 16 << 10
	defaultShellQuiet  = 500 * time.Millisecond
	defaultLinesQuiet  = 2 * time.Second
)

var (
	// ErrShellEnded is returned once the shell has ended.
	ErrShellEnded = errors.New("machine: the shell has ended")
	// ErrShellBusy is returned by a call made while another runs on the
	// same shell: calls are never mixed.
	ErrShellBusy = errors.New("machine: busy: another call is using the shell")
)

// StartShell starts a shell (see Shell) and waits until it is ready for
// input. Close it when done.
func (m *Tools) StartShell(ctx context.Context, opts *ShellOptions) (*Shell, error) {
	o := ShellOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Cols == 0 {
		o.Cols = 80
	}
	if o.Rows == 0 {
		o.Rows = 24
	}
	if o.MaxBuffer <= 0 {
		o.MaxBuffer = 1 << 20
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = defaultShellIdle
	}
	for _, n := range []int{o.Cols, o.Rows} {
		if n < hosttool.MinTerm || n > hosttool.MaxTerm {
			return nil, aci.Errorf(aci.CodeInvalidAction, "a terminal of %d×%d: each side is %d to %d", o.Cols, o.Rows, hosttool.MinTerm, hosttool.MaxTerm)
		}
	}
	if o.Lines {
		if o.Command != "" && o.Command != "/bin/sh" {
			return nil, aci.Errorf(aci.CodeInvalidAction, "a shell of lines is /bin/sh, the shell its lines are judged as, not %s", o.Command)
		}
		o.Command = "/bin/sh"
	}
	if o.Command != "" {
		return m.startShell(ctx, o)
	}
	o.Command = "/bin/bash"
	s, err := m.startShell(ctx, o)
	if errors.Is(err, ErrShellEnded) {
		o.Command = "/bin/sh"
		return m.startShell(ctx, o)
	}
	return s, err
}

func (m *Tools) startShell(ctx context.Context, o ShellOptions) (*Shell, error) {
	var nonce [16]byte
	rand.Read(nonce[:])
	n := hex.EncodeToString(nonce[:])
	st, err := m.c.ExecStream(ctx, &aci.ExecRequest{
		Argv: hosttool.ShellStart.Argv(o.Command, strconv.Itoa(o.Cols), strconv.Itoa(o.Rows), n),
		Dir:  o.Dir, Timeout: 24 * time.Hour,
	})
	if err != nil {
		return nil, fmt.Errorf("machine: starting a shell: %w", err)
	}
	s := &Shell{c: m.c, stream: st, max: o.MaxBuffer, lines: o.Lines, marker: []byte("\x1b]777;" + n + ";"),
		notify: make(chan struct{}), done: make(chan struct{})}
	// The first line is the shell's folder.
	var first []byte
	for {
		ch, err := st.Next(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = ErrShellEnded
			}
			return nil, fmt.Errorf("machine: starting a shell: %w", err)
		}
		if ch.Channel != "stdout" {
			continue
		}
		first = append(first, ch.Data...)
		if i := bytes.IndexByte(first, '\n'); i >= 0 {
			s.dir = string(first[:i])
			s.raw = first[i+1:]
			break
		}
	}
	go s.read()
	// Ready at its first prompt.
	for {
		s.mu.Lock()
		s.parse()
		ready, ch := s.prompts > 0, s.notify
		s.mu.Unlock()
		if ready {
			break
		}
		select {
		case <-ch:
		case <-s.done:
			s.mu.Lock()
			s.parse()
			ready = s.prompts > 0
			s.mu.Unlock()
			if !ready {
				return nil, fmt.Errorf("machine: starting the shell %s: %w", o.Command, ErrShellEnded)
			}
		case <-ctx.Done():
			s.Close(context.WithoutCancel(ctx))
			return nil, ctx.Err()
		}
	}
	s.mu.Lock()
	s.out, s.dropped, s.prompts = nil, 0, 0
	s.mu.Unlock()
	if o.IdleTimeout > 0 {
		s.idleFor = o.IdleTimeout
		s.idle = time.AfterFunc(o.IdleTimeout, func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s.Close(ctx)
		})
	}
	return s, nil
}

// read gathers the shell's output until it ends.
func (s *Shell) read() {
	for {
		ch, err := s.stream.Next(context.Background())
		if err == nil {
			s.gather(ch.Data)
			continue
		}
		s.mu.Lock()
		if !errors.Is(err, io.EOF) {
			s.err = err
		}
		s.exit = s.stream.Exit()
		s.parse()
		s.out = append(s.out, s.raw...)
		s.raw = nil
		close(s.done)
		close(s.notify)
		s.mu.Unlock()
		if s.idle != nil {
			s.idle.Stop()
		}
		return
	}
}

// gather parses a chunk of the shell's output and wakes those waiting.
func (s *Shell) gather(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw = append(s.raw, b...)
	s.parse()
	close(s.notify)
	s.notify = make(chan struct{})
}

// parse moves what raw holds to out, taking the markers out; it keeps in
// raw what may be the start of a marker not yet whole. s.mu is held.
func (s *Shell) parse() {
	for len(s.raw) > 0 {
		i := bytes.Index(s.raw, s.marker)
		if i < 0 {
			keep := partialPrefix(s.raw, s.marker)
			s.emit(s.raw[:len(s.raw)-keep])
			s.raw = append(s.raw[:0:0], s.raw[len(s.raw)-keep:]...)
			return
		}
		end := bytes.IndexByte(s.raw[i+len(s.marker):], '\a')
		if end < 0 {
			s.emit(s.raw[:i])
			s.raw = append(s.raw[:0:0], s.raw[i:]...)
			return
		}
		s.emit(s.raw[:i])
		v := string(s.raw[i+len(s.marker) : i+len(s.marker)+end])
		s.raw = s.raw[i+len(s.marker)+end+1:]
		if v == "more" {
			s.more = true
			continue
		}
		if code, err := strconv.Atoi(v); err == nil {
			s.prompts++
			s.status, s.more, s.idleAt = code, false, true
		}
	}
}

// partialPrefix returns how many bytes at b's end are a start of m.
func partialPrefix(b, m []byte) int {
	for k := min(len(m)-1, len(b)); k > 0; k-- {
		if bytes.HasSuffix(b, m[:k]) {
			return k
		}
	}
	return 0
}

// emit keeps printed output, dropping the oldest past the bound. s.mu is
// held.
func (s *Shell) emit(b []byte) {
	s.out = append(s.out, b...)
	if over := len(s.out) - s.max; over > 0 {
		// Re-slicing, not copying: the next append past the capacity
		// copies the kept tail once, so each byte is copied a bounded
		// number of times (copying the tail at every chunk made a fast
		// writer outrun the reader).
		s.out = s.out[over:]
		s.dropped += over
	}
}

// hold stops the idle bound for a call, until the function it returns
// starts it again.
func (s *Shell) hold() func() {
	if s.idle == nil {
		return func() {}
	}
	s.idle.Stop()
	return s.touch
}

// touch marks a call, for the idle bound.
func (s *Shell) touch() {
	if s.idle != nil {
		s.idle.Reset(s.idleFor)
	}
}

// Write types input at the shell as is (add "\n" to run a line), judged as
// a command line by the runtime's Authorizer. It does not wait. With
// ShellOptions.Lines, input is one command line ended by "\n".
func (s *Shell) Write(ctx context.Context, input string) error {
	if !s.run.TryLock() {
		return ErrShellBusy
	}
	defer s.run.Unlock()
	return s.write(ctx, input)
}

func (s *Shell) write(ctx context.Context, input string) error {
	select {
	case <-s.done:
		return ErrShellEnded
	default:
	}
	if len(input) > MaxShellInput {
		return aci.Errorf(aci.CodeTooLarge, "%d bytes typed at once, at most %d", len(input), MaxShellInput)
	}
	if s.lines {
		if err := hosttool.CheckLine(input); err != nil {
			return aci.Errorf(aci.CodeInvalidAction, "%v", err)
		}
	}
	s.touch()
	s.mu.Lock()
	idle := s.idleAt
	s.idleAt = false
	s.mu.Unlock()
	res, err := s.typeIn(ctx, input)
	if err != nil {
		s.restoreIdle(idle)
		return fmt.Errorf("machine: typing at the shell: %w", err)
	}
	if res.ExitCode == nil || *res.ExitCode != 0 {
		s.restoreIdle(idle)
		select {
		case <-s.done:
			return ErrShellEnded
		default:
		}
		why := strings.TrimSpace(res.Stderr)
		if s.lines && res.ExitCode != nil {
			switch *res.ExitCode {
			case hosttool.LineForeground:
				return &NotReadingError{Foreground: strings.TrimSuffix(why, hosttool.ForegroundSuffix)}
			case hosttool.LineNotAtPrompt:
				return &NotReadingError{}
			}
		}
		return fmt.Errorf("machine: typing at the shell failed: %s", why)
	}
	return nil
}

// typeIn runs the script that types input. A line is judged in the
// shell's working folder as last seen, and typed only if the shell is
// still there: the lines before may have moved it (cd), so a line that
// ShellLine finds judged in another folder, or that the Authorizer
// refused there, is judged again in the folder the shell is in. (The
// first judgment typed nothing: a plugin may see a line twice.)
func (s *Shell) typeIn(ctx context.Context, input string) (*aci.ExecResult, error) {
	if !s.lines {
		return s.c.Exec(ctx, &aci.ExecRequest{Argv: hosttool.ShellType.Argv(s.dir, input), Timeout: 10 * time.Second})
	}
	if s.cwd == "" {
		d, err := s.folder(ctx)
		if err != nil {
			return nil, err
		}
		s.cwd = d
	}
	for again := true; ; again = false {
		res, err := s.c.Exec(ctx, &aci.ExecRequest{Argv: hosttool.ShellLine.Argv(s.dir, input, s.cwd), Timeout: 10 * time.Second})
		var moved string
		switch {
		case err == nil && res.ExitCode != nil && *res.ExitCode == hosttool.LineMoved:
			if moved, err = cwdLine(res.Stdout); err != nil {
				return nil, err
			}
		case errors.Is(err, aci.ErrPermissionDenied) && again:
			d, ferr := s.folder(ctx)
			if ferr != nil || d == s.cwd {
				return nil, err
			}
			moved = d
		default:
			return res, err
		}
		if !again {
			return nil, fmt.Errorf("the shell's working folder moved from %s to %s as the line was typed", s.cwd, moved)
		}
		s.cwd = moved
	}
}

// restoreIdle puts back whether the shell sat at its prompt, after a write
// that typed nothing.
func (s *Shell) restoreIdle(idle bool) {
	s.mu.Lock()
	s.idleAt = s.idleAt || idle
	s.mu.Unlock()
}

// control sends the shell a control word (internal/hosttool).
func (s *Shell) control(ctx context.Context, word, x, y string) error {
	_, err := s.controlOut(ctx, word, x, y)
	return err
}

// controlOut is control, answering the script's output.
func (s *Shell) controlOut(ctx context.Context, word, x, y string) (string, error) {
	select {
	case <-s.done:
		return "", ErrShellEnded
	default:
	}
	s.touch()
	res, err := s.c.Exec(ctx, &aci.ExecRequest{Argv: hosttool.ShellControl.Argv(s.dir, word, x, y), Timeout: 10 * time.Second})
	if err != nil {
		return "", fmt.Errorf("machine: the shell's %s: %w", word, err)
	}
	if res.ExitCode == nil || *res.ExitCode != 0 {
		select {
		case <-s.done:
			return "", ErrShellEnded
		default:
		}
		return "", fmt.Errorf("machine: the shell's %s failed: %s", word, strings.TrimSpace(res.Stderr))
	}
	return res.Stdout, nil
}

// folder answers the shell's working folder, as its process has it.
func (s *Shell) folder(ctx context.Context) (string, error) {
	out, err := s.controlOut(ctx, "cwd", "", "")
	if err != nil {
		return "", err
	}
	return cwdLine(out)
}

// cwdLine reads the folder a script printed (readlink's one line).
func cwdLine(out string) (string, error) {
	d := strings.TrimSuffix(out, "\n")
	if !path.IsAbs(d) || path.Clean(d) != d {
		return "", fmt.Errorf("machine: the shell's working folder reads %q", out)
	}
	return d, nil
}

// Interrupt types the terminal's interrupt (ctrl-c): SIGINT to the
// program in the foreground.
func (s *Shell) Interrupt(ctx context.Context) error { return s.control(ctx, "int", "", "") }

// EOF types the terminal's end of input (ctrl-d) for the program in the
// foreground (or the shell, which then exits).
func (s *Shell) EOF(ctx context.Context) error { return s.control(ctx, "eof", "", "") }

// Kill sends SIGKILL to the terminal's foreground process group, when it
// is not the shell's own.
func (s *Shell) Kill(ctx context.Context) error { return s.control(ctx, "kill", "", "") }

// Resize sizes the terminal (each side 2 to 1000); the program in the
// foreground gets SIGWINCH.
func (s *Shell) Resize(ctx context.Context, cols, rows int) error {
	for _, n := range []int{cols, rows} {
		if n < hosttool.MinTerm || n > hosttool.MaxTerm {
			return aci.Errorf(aci.CodeInvalidAction, "a terminal of %d×%d: each side is %d to %d", cols, rows, hosttool.MinTerm, hosttool.MaxTerm)
		}
	}
	return s.control(ctx, "size", strconv.Itoa(cols), strconv.Itoa(rows))
}

// Read returns what the shell printed since the last Read (its invalid
// UTF-8 replaced, CR LF as LF), and how many older bytes were dropped
// unread past ShellOptions.MaxBuffer.
func (s *Shell) Read() (out string, dropped int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, dropped = string(s.out), s.dropped
	s.out, s.dropped = nil, 0
	out = strings.ReplaceAll(out, "\r\n", "\n")
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

// RunOptions configure Shell.Run. A nil *RunOptions means defaults.
type RunOptions struct {
	// Wait is how long to wait for the command to end; default 10 s.
	Wait time.Duration
	// Quiet, when output came and then paused this long, ends the wait
	// early (a program waiting for input); default 500 ms (2 s with
	// ShellOptions.Lines). Negative waits for the end or Wait only.
	Quiet time.Duration
	// MaxOutput bounds the output answered, in bytes: the most recent is
	// kept, and ShellResult.Cut says how much was not. Default 16 KiB, at
	// most MaxShellOutput.
	MaxOutput int
}

// A ShellResult is what one Run saw.
type ShellResult struct {
	// Output is what the shell printed during the call (and unread
	// before it), its most recent MaxOutput bytes.
	Output string
	// Cut counts the bytes of output not in Output: cut by MaxOutput, or
	// dropped between calls past ShellOptions.MaxBuffer.
	Cut int
	// ExitCode is the command's exit status, once the shell is back at
	// its prompt; nil while it runs.
	ExitCode *int
	// Running says a program still runs in the foreground: the next input
	// goes to it. Interrupt, EOF or Kill it, or Run again with no input
	// to keep waiting.
	Running bool
	// MoreInput says the shell waits for the rest of a line (an open
	// quote, a loop's body).
	MoreInput bool
	// Ended says the shell has ended.
	Ended bool
}

// Run types input at the shell (a "\n" is added when missing; empty input
// types nothing and only waits), then waits until the command ends, until
// output has come and paused for RunOptions.Quiet, or for
// RunOptions.Wait, and answers what it printed, bounded. A call made while
// another runs is ErrShellBusy. With ShellOptions.Lines, input is one
// command line, and a *NotReadingError when the shell would not read it
// as one.
func (s *Shell) Run(ctx context.Context, input string, opts *RunOptions) (*ShellResult, error) {
	o := RunOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Wait <= 0 {
		o.Wait = 10 * time.Second
	}
	if o.Quiet == 0 {
		o.Quiet = defaultShellQuiet
		if s.lines {
			o.Quiet = defaultLinesQuiet
		}
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = defaultShellOutput
	}
	if o.MaxOutput > MaxShellOutput {
		return nil, aci.Errorf(aci.CodeInvalidAction, "max output %d is over %d", o.MaxOutput, MaxShellOutput)
	}
	if !s.run.TryLock() {
		return nil, ErrShellBusy
	}
	defer s.run.Unlock()
	// A prompt that came after the previous call answered (an interrupt,
	// EOF or kill ended its program) is this call's; once a line is
	// typed, only a later one is.
	s.mu.Lock()
	before, more := s.reported, s.more
	if input != "" {
		before, s.more = s.prompts, false
	}
	s.mu.Unlock()
	if input != "" {
		if !strings.HasSuffix(input, "\n") {
			input += "\n"
		}
		if err := s.write(ctx, input); err != nil {
			s.mu.Lock()
			if s.prompts == before {
				s.more = s.more || more // nothing was typed, and no prompt came
			}
			s.mu.Unlock()
			return nil, err
		}
	}
	// The idle bound counts from the end of the last call: a call that
	// waits (with input or without) is no idleness.
	defer s.hold()()
	deadline := time.NewTimer(o.Wait)
	defer deadline.Stop()
	var quiet <-chan time.Time
	var quietT *time.Timer
	defer func() {
		if quietT != nil {
			quietT.Stop()
		}
	}()
	res := &ShellResult{}
	var all []byte
	// What the call answers is the last MaxOutput bytes once "\r\n" is
	// "\n": twice as many raw bytes are enough, and older ones are cut as
	// they come, so that a command that prints fast for as long as the
	// call waits does not hold all it printed.
	keep := 2 * o.MaxOutput
	for {
		s.mu.Lock()
		all = append(all, s.out...)
		if over := len(all) - keep; over > 0 {
			res.Cut += over - bytes.Count(all[:over], []byte("\r\n"))
			all = all[over:]
		}
		res.Cut += s.dropped
		got := len(s.out) > 0
		s.out, s.dropped = nil, 0
		ended := isClosed(s.done)
		finished := s.prompts > before
		more := s.more
		status := s.status
		idle := s.idleAt // read with finished: a prompt parsed between the two would be neither
		ch := s.notify
		s.mu.Unlock()
		if input == "" && !finished && idle {
			break // nothing runs, and nothing was typed
		}
		if finished || ended || (input != "" && more) {
			s.mu.Lock()
			s.reported = max(s.reported, s.prompts)
			s.mu.Unlock()
			res.MoreInput = more && !finished
			if finished {
				res.ExitCode = &status
			}
			res.Ended = ended
			break
		}
		if got && o.Quiet > 0 {
			if quietT == nil {
				quietT = time.NewTimer(o.Quiet)
			} else {
				quietT.Reset(o.Quiet)
			}
			quiet = quietT.C
		}
		select {
		case <-ch:
			continue
		case <-quiet:
		case <-deadline.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		res.Running = true
		break
	}
	all = bytes.ReplaceAll(all, []byte("\r\n"), []byte("\n"))
	if len(all) > o.MaxOutput {
		cut := len(all) - o.MaxOutput
		for cut < len(all) && !utf8.RuneStart(all[cut]) {
			cut++
		}
		res.Cut += cut
		all = all[cut:]
	}
	res.Output = strings.ToValidUTF8(string(all), "\uFFFD")
	return res, nil
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Done is closed when the shell has ended: it exited, was closed, or was
// idle too long.
func (s *Shell) Done() <-chan struct{} { return s.done }

// Exit reports how the shell ended, once Done is closed (nil before): its
// exit status. A failure of the stream itself (the session closed) is the
// error.
func (s *Shell) Exit() (*aci.ExecExit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exit, s.err
}

// Close ends the shell and every process it started, removes its folder,
// and waits until the runtime reports it ended or ctx is done.
func (s *Shell) Close(ctx context.Context) error {
	err := s.control(ctx, "close", "", "")
	if errors.Is(err, ErrShellEnded) {
		err = nil
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		return errors.Join(err, ctx.Err())
	}
	return err
}
