package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/machine"
)

// shellInput is the input of shell.
type shellInput struct {
	Input     string `json:"input,omitempty" jsonschema:"a command line typed at the shell (a newline is added); empty only waits and reads"`
	WaitMS    int    `json:"wait_ms,omitempty" jsonschema:"wait up to this long for the command to finish, or for its output to pause; default 10000"`
	MaxOutput int    `json:"max_output,omitempty" jsonschema:"the most output answered, in bytes (its most recent part); default 16384"`
	Interrupt bool   `json:"interrupt,omitempty" jsonschema:"type ctrl-c: interrupt the program in the foreground"`
	EOF       bool   `json:"eof,omitempty" jsonschema:"type ctrl-d: end the foreground program's input"`
	Kill      bool   `json:"kill,omitempty" jsonschema:"SIGKILL the program in the foreground"`
	Cols      int    `json:"cols,omitempty" jsonschema:"resize the terminal: its columns (with rows)"`
	Rows      int    `json:"rows,omitempty" jsonschema:"resize the terminal: its rows (with cols)"`
	Close     bool   `json:"close,omitempty" jsonschema:"end the shell and its jobs (the next call starts a new one)"`
}

// shellOutput is the structured result of shell; the output itself is the
// text content, never repeated here.
type shellOutput struct {
	ExitCode  *int `json:"exit_code,omitempty" jsonschema:"the command's exit status, once the shell is back at its prompt"`
	Running   bool `json:"running,omitempty" jsonschema:"a program still runs in the foreground: the next input goes to it, or is refused where the shell takes command lines only"`
	MoreInput bool `json:"more_input,omitempty" jsonschema:"the shell waits for the rest of a line"`
	Cut       int  `json:"cut,omitempty" jsonschema:"bytes of output not answered (older than what is shown)"`
	Ended     bool `json:"ended,omitempty" jsonschema:"the shell has ended; the next call starts a new one"`
}

// Bounds of the shell tool.
const maxShellWait = 5 * time.Minute

// shellHint: the shell can do anything the machine lets it.
var shellHint = hints{destructive: true, openWorld: true}

func (s *Server) addShellTool() {
	desc := "Run a command line in a persistent bash (or sh) on the computer, on an 80×24 terminal (TERM=xterm-256color), and read its output. "
	if s.opts.ShellLines {
		desc = "Run a command line in a persistent sh on the computer, on an 80×24 terminal (TERM=xterm-256color), and read its output. " +
			"Each call types one command line, and only at the shell's prompt: while a program runs in the foreground, input is refused (wait for it, interrupt it, or run programs that need input with command_start). " +
			"Pagers and editors are off (PAGER=cat, EDITOR=false). "
	}
	addTool(s, &mcp.Tool{
		Name: "shell",
		Description: desc +
			"Its working directory, variables and jobs persist between calls; the first call starts it, and it ends with the MCP session, with close, or after 30 idle minutes. " +
			"A call answers when the command finishes (with its exit_code), when its output pauses, or after wait_ms (then running says it still runs: interrupt, eof or kill it, or call again with no input to keep waiting). " +
			"Output is bounded by max_output (16 KiB by default, 1 MiB at most): its most recent part is shown, and cut says how much was not. " +
			"Every line typed is judged as a command by the computer's policy. Calls on one session never mix: one made while another runs is refused as busy.",
		Annotations: &mcp.ToolAnnotations{Title: "Use a shell"},
		InputSchema: bounded[shellInput](map[string]float64{"wait_ms": float64(maxShellWait.Milliseconds()), "max_output": machine.MaxShellOutput, "cols": 1000, "rows": 1000}),
	}, shellHint, s.shell)
}

// shellNote is the line that ends the shell tool's text: how the call
// ended, and what was cut.
func shellNote(o shellOutput) string {
	var notes []string
	if o.Cut > 0 {
		notes = append(notes, fmt.Sprintf("%d bytes of earlier output cut", o.Cut))
	}
	switch {
	case o.Ended:
		notes = append(notes, "the shell has ended")
	case o.ExitCode != nil:
		notes = append(notes, fmt.Sprintf("exit code %d", *o.ExitCode))
	case o.MoreInput:
		notes = append(notes, "the shell waits for the rest of the line")
	case o.Running:
		notes = append(notes, "still running in the foreground")
	}
	if len(notes) == 0 {
		return ""
	}
	return "[" + strings.Join(notes, "; ") + "]"
}

// notReading is the shell tool's refusal of an input the shell would not
// read as a command line, with what the agent can do instead.
func notReading(e *machine.NotReadingError) error {
	if e.Foreground != "" {
		return invalid("the input was not typed: %s runs in the shell's foreground and would read it, not the shell. "+
			"Call shell with no input to wait for it to end, with interrupt (or kill) to end it, "+
			"and start programs that need input with command_start (then command_input)", e.Foreground)
	}
	return invalid("the input was not typed: the shell is not at its prompt (it runs the line typed before, or waits for the rest of a line). " +
		"Call shell with no input to wait, or with interrupt to end it")
}

// hostShell is one MCP session's shell and the ACI session it runs on.
type hostShell struct {
	sh   *machine.Shell
	own  *client.Client // the ACI session dialled for it, closed with it; nil when on the Server's
	once sync.Once
}

func (h *hostShell) close() {
	h.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.sh.Close(ctx)
		if h.own != nil {
			h.own.Close()
		}
	})
}

// shell runs the shell tool.
func (s *Server) shell(ctx context.Context, req *mcp.CallToolRequest, c *client.Client, in shellInput) (textResult[shellOutput], error) {
	var zero textResult[shellOutput]
	if in.WaitMS < 0 || in.MaxOutput < 0 || in.Cols < 0 || in.Rows < 0 {
		return zero, invalid("wait_ms, max_output, cols and rows may not be negative")
	}
	if (in.Cols == 0) != (in.Rows == 0) {
		return zero, invalid("give cols and rows together")
	}
	controls := 0
	for _, b := range []bool{in.Interrupt, in.EOF, in.Kill, in.Close} {
		if b {
			controls++
		}
	}
	if controls > 1 || (controls == 1 && in.Input != "") {
		return zero, invalid("give one of input, interrupt, eof, kill and close")
	}
	ss := req.Session
	if in.Close {
		h, ok := s.shells.take(ss)
		if !ok {
			return textResult[shellOutput]{"[no shell was running]", shellOutput{Ended: true}}, nil
		}
		h.close()
		return textResult[shellOutput]{"[the shell was closed]", shellOutput{Ended: true}}, nil
	}
	h, err := s.sessionShell(ctx, ss, c)
	if err != nil {
		return zero, err
	}
	fail := func(err error) (textResult[shellOutput], error) {
		if h.own != nil && !errors.Is(err, machine.ErrShellBusy) {
			err = own(err)
		}
		return zero, err
	}
	if in.Cols != 0 {
		if err := h.sh.Resize(ctx, in.Cols, in.Rows); err != nil {
			return fail(err)
		}
	}
	switch {
	case in.Interrupt:
		err = h.sh.Interrupt(ctx)
	case in.EOF:
		err = h.sh.EOF(ctx)
	case in.Kill:
		err = h.sh.Kill(ctx)
	}
	if err != nil && !errors.Is(err, machine.ErrShellEnded) {
		return fail(err)
	}
	wait := 10 * time.Second
	if in.WaitMS > 0 {
		wait = time.Duration(in.WaitMS) * time.Millisecond
	}
	res, err := h.sh.Run(ctx, in.Input, &machine.RunOptions{Wait: wait, MaxOutput: in.MaxOutput})
	var nr *machine.NotReadingError
	if errors.As(err, &nr) {
		return zero, notReading(nr)
	}
	if err != nil && !errors.Is(err, machine.ErrShellEnded) {
		return fail(err)
	}
	out := shellOutput{Ended: true}
	text := ""
	if res != nil {
		out = shellOutput{ExitCode: res.ExitCode, Running: res.Running, MoreInput: res.MoreInput, Cut: res.Cut, Ended: res.Ended}
		text = res.Output
	}
	if out.Ended {
		s.shells.drop(ss, h)
		h.close()
	}
	if note := shellNote(out); note != "" {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += note
	}
	return textResult[shellOutput]{text, out}, ctx.Err()
}

// sessionShell returns the MCP session's shell, starting it on its own
// ACI session when the Server can dial one (so that closing it ends every
// process it started), and ending it with the MCP session.
func (s *Server) sessionShell(ctx context.Context, ss *mcp.ServerSession, c *client.Client) (*hostShell, error) {
	return s.shells.get(ss, func() (*hostShell, error) {
		h := &hostShell{}
		on := c
		if s.opts.Dial != nil {
			dialled, err := s.opts.Dial(ctx)
			if err != nil {
				return nil, own(err)
			}
			h.own, on = dialled, dialled
		}
		sh, err := machine.New(on, nil).StartShell(ctx, &machine.ShellOptions{Lines: s.opts.ShellLines})
		if err != nil {
			if h.own != nil {
				h.own.Close()
				return nil, own(err)
			}
			return nil, err
		}
		h.sh = sh
		return h, nil
	})
}
