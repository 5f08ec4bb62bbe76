package machine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"shinken.dev/go/internal/hosttool"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// A Command is a command running in the background on the runtime's machine
// (e2b's commands.run with background): its output (stdout and stderr
// together) is kept, bounded, on that machine, its standard input is a pipe,
// and its handle (ID) finds it from any session (Tools.Commands,
// CommandOutput, CommandInput, KillCommand).
//
// Starting one is judged as the command it runs (its line, or its argv),
// input sent to it as a command line, as text typed at the shell is;
// listing, reading and killing run nothing new and are let through. It runs
// below the exec that started it: when that exec's ACI session ends, the
// command and everything it started end too. The runtime's exec MaxTimeout
// does not apply to it.
type Command struct {
	m      *Tools
	id     string
	stream *client.ExecStream
	done   chan struct{}
	exit   *aci.ExecExit
	err    error
}

// CommandOptions configure StartCommand. A nil *CommandOptions means
// defaults.
type CommandOptions struct {
	// Argv, when set, runs this program with these arguments word for
	// word, and the line given to StartCommand must be empty.
	Argv []string
	// Dir is its working directory; default the runtime's.
	Dir string
	// KeepOutput bounds the output kept on the runtime's machine, in
	// bytes: past it the oldest is dropped (CommandOutput.Cut counts it).
	// Default 1 MiB; 8 KiB to 128 MiB.
	KeepOutput int
}

// MaxCommandRead is the most one CommandOutput answers.
const MaxCommandRead = hosttool.MaxRead

// Defaults of a background command: CommandOptions.KeepOutput, and what
// CommandOutput answers when asked for 0 bytes.
const (
	defaultCommandKeep = 1 << 20
	defaultCommandRead = 16 << 10
)

var (
	// ErrNoCommand is returned for a handle that names no background
	// command (never one, or one removed).
	ErrNoCommand = errors.New("machine: no such background command")
	// ErrCommandEnded is returned when input is sent to a command that
	// has ended, or whose input was ended.
	ErrCommandEnded = errors.New("machine: the background command has ended")
)

// StartCommand starts line (run by /bin/sh -c), or opts.Argv, in the
// background, and returns once it has its handle. The command ends when it
// exits, is killed, or the Client's session ends.
func (m *Tools) StartCommand(ctx context.Context, line string, opts *CommandOptions) (*Command, error) {
	o := CommandOptions{}
	if opts != nil {
		o = *opts
	}
	if o.KeepOutput == 0 {
		o.KeepOutput = defaultCommandKeep
	}
	if o.KeepOutput < 2*hosttool.MinChunk || o.KeepOutput > 2*hosttool.MaxChunk {
		return nil, aci.Errorf(aci.CodeInvalidAction, "keep output %d: want %d to %d bytes", o.KeepOutput, 2*hosttool.MinChunk, 2*hosttool.MaxChunk)
	}
	chunk := strconv.Itoa(o.KeepOutput / 2)
	var argv []string
	switch {
	case len(o.Argv) > 0 && line != "":
		return nil, aci.Errorf(aci.CodeInvalidAction, "give a line or an argv, not both")
	case len(o.Argv) > 0:
		if o.Argv[0] == "" {
			return nil, aci.Errorf(aci.CodeInvalidAction, "an argv with an empty program")
		}
		argv = hosttool.CommandStart.Argv(append([]string{chunk, "argv"}, o.Argv...)...)
	case strings.TrimSpace(line) == "":
		return nil, aci.Errorf(aci.CodeInvalidAction, "an empty command line")
	case len(line) > hosttool.MaxTyped:
		return nil, aci.Errorf(aci.CodeTooLarge, "a command line of %d bytes, at most %d", len(line), hosttool.MaxTyped)
	default:
		argv = hosttool.CommandStart.Argv(chunk, "line", line)
	}
	st, err := m.c.ExecStream(ctx, &aci.ExecRequest{Argv: argv, Dir: o.Dir, Timeout: 24 * time.Hour})
	if err != nil {
		return nil, fmt.Errorf("machine: starting a background command: %w", err)
	}
	cmd := &Command{m: m, stream: st, done: make(chan struct{})}
	var first []byte
	for {
		ch, err := st.Next(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("it ended before it started (%s)", exitText(st.Exit()))
			}
			return nil, fmt.Errorf("machine: starting a background command: %w", err)
		}
		if ch.Channel != "stdout" {
			continue
		}
		first = append(first, ch.Data...)
		if i := bytes.IndexByte(first, '\n'); i >= 0 {
			cmd.id = string(first[:i])
			break
		}
	}
	if err := hosttool.CommandDir(cmd.id); err != nil {
		return nil, fmt.Errorf("machine: starting a background command: %w", err)
	}
	go cmd.hold()
	return cmd, nil
}

// hold drains the holder's stream until it ends.
func (cmd *Command) hold() {
	for {
		_, err := cmd.stream.Next(context.Background())
		if err == nil {
			continue
		}
		if !errors.Is(err, io.EOF) {
			cmd.err = err
		}
		cmd.exit = cmd.stream.Exit()
		close(cmd.done)
		return
	}
}

func exitText(e *aci.ExecExit) string {
	switch {
	case e == nil:
		return "no exit status"
	case e.ExitCode != nil:
		return fmt.Sprintf("exit status %d", *e.ExitCode)
	case e.Signal != nil:
		return fmt.Sprintf("signal %d", *e.Signal)
	}
	return "no exit status"
}

// ID is the command's handle.
func (cmd *Command) ID() string { return cmd.id }

// Done is closed once the command has ended and its output is whole (or
// its session ended).
func (cmd *Command) Done() <-chan struct{} { return cmd.done }

// Wait blocks until the command has ended, and returns its state then.
func (cmd *Command) Wait(ctx context.Context) (*CommandOutput, error) {
	select {
	case <-cmd.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if cmd.err != nil {
		return nil, fmt.Errorf("machine: the background command's session: %w", cmd.err)
	}
	return cmd.m.CommandOutput(ctx, cmd.id, 0, 1)
}

// Output reads the command's output: see Tools.CommandOutput.
func (cmd *Command) Output(ctx context.Context, offset int64, max int) (*CommandOutput, error) {
	return cmd.m.CommandOutput(ctx, cmd.id, offset, max)
}

// Input sends the command input: see Tools.CommandInput.
func (cmd *Command) Input(ctx context.Context, text string) error {
	return cmd.m.CommandInput(ctx, cmd.id, text)
}

// Kill kills the command and everything it started, and waits until it
// has ended or ctx is done.
func (cmd *Command) Kill(ctx context.Context) error {
	if err := cmd.m.KillCommand(ctx, cmd.id); err != nil {
		return err
	}
	select {
	case <-cmd.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Remove kills the command if it runs and removes its handle and its
// output.
func (cmd *Command) Remove(ctx context.Context) error {
	return cmd.m.RemoveCommand(ctx, cmd.id)
}

// A CommandState is where a background command stands.
type CommandState struct {
	// Running says it runs.
	Running bool
	// ExitCode is its exit status once it ended by itself (128+n when a
	// signal n ended it).
	ExitCode *int
	// Killed says KillCommand ended it.
	Killed bool
	// Lost says it ended with the session that held it, with no status.
	Lost bool
}

// CommandOutput is one read of a command's output.
type CommandOutput struct {
	CommandState
	// Output is the output from From to End (invalid UTF-8 replaced).
	Output string
	// From is the offset Output starts at: the one asked for, or later
	// when older output is no longer kept.
	From int64
	// End is where the next read starts.
	End int64
	// Total is how much the command has printed so far.
	Total int64
	// Cut counts the bytes between the offset asked for and From: output
	// dropped past CommandOptions.KeepOutput.
	Cut int64
}

// CommandInfo describes a background command in a listing.
type CommandInfo struct {
	CommandState
	// ID is its handle.
	ID string
	// PID is its process id on the runtime's machine (0 before it is
	// known).
	PID int
	// Line is the line it runs, or Argv the program and arguments.
	Line string
	Argv []string
}

// commandExec runs one of the command scripts on the handle id and maps
// its refusals to the package's errors.
func (m *Tools) commandExec(ctx context.Context, what string, s *hosttool.Script, args ...string) (string, error) {
	res, err := m.c.Exec(ctx, &aci.ExecRequest{Argv: s.Argv(args...), Timeout: time.Minute})
	if err != nil {
		return "", fmt.Errorf("machine: %s: %w", what, err)
	}
	if res.ExitCode != nil {
		switch *res.ExitCode {
		case 0:
			return res.Stdout, nil
		case 3:
			return "", fmt.Errorf("%w: %s", ErrNoCommand, args[0])
		case 4:
			return "", fmt.Errorf("%w: %s", ErrCommandEnded, args[0])
		}
	}
	return "", fmt.Errorf("machine: %s failed (%s): %s", what, exitText(&aci.ExecExit{ExitCode: res.ExitCode, Signal: res.Signal}), strings.TrimSpace(res.Stderr))
}

func checkHandle(id string) error {
	if err := hosttool.CommandDir(id); err != nil {
		return fmt.Errorf("%w: %v", ErrNoCommand, err)
	}
	return nil
}

// CommandOutput reads the output of the background command id from byte
// offset, at most max bytes (0 means 16 KiB, at most MaxCommandRead), and
// its state. Output no longer kept is skipped and counted in Cut. An unknown
// handle is ErrNoCommand.
func (m *Tools) CommandOutput(ctx context.Context, id string, offset int64, max int) (*CommandOutput, error) {
	if err := checkHandle(id); err != nil {
		return nil, err
	}
	if max == 0 {
		max = defaultCommandRead
	}
	if offset < 0 || max < 0 || max > MaxCommandRead {
		return nil, aci.Errorf(aci.CodeInvalidAction, "a read at %d of %d bytes: offset from 0, at most %d bytes", offset, max, MaxCommandRead)
	}
	out, err := m.commandExec(ctx, "reading a background command", hosttool.CommandRead, id, strconv.FormatInt(offset, 10), strconv.Itoa(max))
	if err != nil {
		return nil, err
	}
	head, body, ok := strings.Cut(out, "\n")
	f := strings.Fields(head)
	if !ok || len(f) != 4 {
		return nil, fmt.Errorf("machine: reading a background command: a header of %q", head)
	}
	r := &CommandOutput{CommandState: parseState(f[0]), Output: strings.ToValidUTF8(body, "\uFFFD")}
	for i, p := range []*int64{&r.From, &r.End, &r.Total} {
		if *p, err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
			return nil, fmt.Errorf("machine: reading a background command: a header of %q", head)
		}
	}
	r.Cut = max64(0, r.From-offset)
	return r, nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// parseState reads a state word of the command scripts.
func parseState(s string) CommandState {
	switch {
	case s == "running":
		return CommandState{Running: true}
	case s == "killed":
		return CommandState{Killed: true}
	case strings.HasPrefix(s, "exit:"):
		if n, err := strconv.Atoi(s[5:]); err == nil {
			return CommandState{ExitCode: &n}
		}
	}
	return CommandState{Lost: true}
}

// CommandInput writes text to the standard input of the background command
// id, judged as a command line as text typed at the shell is;
// ErrCommandEnded once the command ended or its input was closed.
func (m *Tools) CommandInput(ctx context.Context, id, text string) error {
	if err := checkHandle(id); err != nil {
		return err
	}
	if text == "" {
		return nil
	}
	if len(text) > hosttool.MaxTyped {
		return aci.Errorf(aci.CodeTooLarge, "%d bytes of input at once, at most %d", len(text), hosttool.MaxTyped)
	}
	_, err := m.commandExec(ctx, "sending input to a background command", hosttool.CommandInput, id, text)
	return err
}

// CloseCommandInput ends the standard input of the background command id:
// it reads end of file once it has read what was sent.
func (m *Tools) CloseCommandInput(ctx context.Context, id string) error {
	if err := checkHandle(id); err != nil {
		return err
	}
	_, err := m.commandExec(ctx, "closing a background command's input", hosttool.CommandControl, id, "eof")
	return err
}

// KillCommand sends SIGKILL to the background command id and to every
// process it started. Killing one that ended already does nothing.
func (m *Tools) KillCommand(ctx context.Context, id string) error {
	if err := checkHandle(id); err != nil {
		return err
	}
	_, err := m.commandExec(ctx, "killing a background command", hosttool.CommandControl, id, "kill")
	return err
}

// KillCommandPID kills the background command whose PID (as Commands
// lists it) is pid; ErrNoCommand when no running command has it.
func (m *Tools) KillCommandPID(ctx context.Context, pid int) error {
	cs, err := m.Commands(ctx)
	if err != nil {
		return err
	}
	for _, ci := range cs {
		if ci.PID == pid && pid > 0 && ci.Running {
			return m.KillCommand(ctx, ci.ID)
		}
	}
	return fmt.Errorf("%w: no running command has pid %d", ErrNoCommand, pid)
}

// RemoveCommand kills the background command id if it runs, and removes
// its handle and its output.
func (m *Tools) RemoveCommand(ctx context.Context, id string) error {
	if err := checkHandle(id); err != nil {
		return err
	}
	_, err := m.commandExec(ctx, "removing a background command", hosttool.CommandControl, id, "remove")
	return err
}

// Commands lists the background commands on the runtime's machine: those
// running, and those ended whose handle was not removed (for an hour).
func (m *Tools) Commands(ctx context.Context) ([]CommandInfo, error) {
	out, err := m.commandExec(ctx, "listing background commands", hosttool.CommandList)
	if err != nil {
		return nil, err
	}
	var cs []CommandInfo
	for out != "" {
		head, rest, ok := strings.Cut(out, "\n")
		f := strings.Fields(head)
		if !ok || len(f) != 5 {
			return nil, fmt.Errorf("machine: listing background commands: a record of %q", head)
		}
		pid, err1 := strconv.Atoi(f[1])
		n, err2 := strconv.Atoi(f[4])
		if err1 != nil || err2 != nil || n < 0 || n > len(rest) {
			return nil, fmt.Errorf("machine: listing background commands: a record of %q", head)
		}
		ci := CommandInfo{CommandState: parseState(f[2]), ID: f[0], PID: pid}
		if f[3] == "line" {
			ci.Line = rest[:n]
		} else {
			ci.Argv = strings.Split(strings.TrimSuffix(rest[:n], "\x00"), "\x00")
		}
		cs = append(cs, ci)
		out = rest[n:]
	}
	return cs, nil
}
