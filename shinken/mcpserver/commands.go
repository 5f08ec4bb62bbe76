package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/machine"
)

// commandStartInput is the input of command_start.
type commandStartInput struct {
	Line string   `json:"line,omitempty" jsonschema:"a command line, run by /bin/sh -c"`
	Argv []string `json:"argv,omitempty" jsonschema:"a program and its arguments, run word for word (instead of line)"`
	Cwd  string   `json:"cwd,omitempty" jsonschema:"its working directory"`
}

// commandStarted is the structured result of command_start.
type commandStarted struct {
	ID string `json:"id" jsonschema:"the command's handle"`
}

// commandOutputInput is the input of command_output.
type commandOutputInput struct {
	ID        string `json:"id" jsonschema:"the command's handle"`
	Offset    int64  `json:"offset,omitempty" jsonschema:"the byte to read from (the end of the previous read); default 0"`
	MaxOutput int    `json:"max_output,omitempty" jsonschema:"the most output answered, in bytes; default 16384"`
}

// commandInputInput is the input of command_input.
type commandInputInput struct {
	ID    string `json:"id" jsonschema:"the command's handle"`
	Input string `json:"input,omitempty" jsonschema:"text written to the command's standard input as is (add a newline to end a line)"`
	EOF   bool   `json:"eof,omitempty" jsonschema:"then end its standard input"`
}

// commandKillInput is the input of command_kill.
type commandKillInput struct {
	ID     string `json:"id,omitempty" jsonschema:"the command's handle"`
	PID    int    `json:"pid,omitempty" jsonschema:"or its pid, as command_list shows it"`
	Remove bool   `json:"remove,omitempty" jsonschema:"also forget the command: its handle and its output"`
}

// commandState is a background command's state in a structured result.
type commandState struct {
	Running  bool `json:"running,omitempty" jsonschema:"it runs"`
	ExitCode *int `json:"exit_code,omitempty" jsonschema:"its exit status, once it ended by itself"`
	Killed   bool `json:"killed,omitempty" jsonschema:"command_kill ended it"`
	Lost     bool `json:"lost,omitempty" jsonschema:"it ended with the session that started it"`
}

// commandRead is the structured result of command_output; the output
// itself is the text content, never repeated here.
type commandRead struct {
	commandState
	From  int64 `json:"from" jsonschema:"the offset the output shown starts at"`
	End   int64 `json:"end" jsonschema:"the offset to read from next"`
	Total int64 `json:"total" jsonschema:"the bytes the command has printed so far"`
	Cut   int64 `json:"cut,omitempty" jsonschema:"bytes from the offset asked for that are no longer kept"`
}

// commandEntry is one command of command_list.
type commandEntry struct {
	commandState
	ID   string   `json:"id"`
	PID  int      `json:"pid,omitempty"`
	Line string   `json:"line,omitempty"`
	Argv []string `json:"argv,omitempty"`
}

// commandList is the structured result of command_list.
type commandList struct {
	Commands []commandEntry `json:"commands"`
}

// commandDone is the structured result of command_input and command_kill.
type commandDone struct {
	ID string `json:"id,omitempty"`
}

// Annotations of the background commands' tools.
var (
	commandStartHint = hints{destructive: true, openWorld: true}
	commandReadHint  = hints{readOnly: true}
	commandKillHint  = hints{destructive: true, idempotent: true}
)

func (s *Server) addCommandTools() {
	addMachineTool(s, &mcp.Tool{
		Name: "command_start",
		Description: "Start a command in the background on the computer (a line run by /bin/sh -c, or an argv) and get its handle. " +
			"Its output (stdout and stderr together) is kept on the computer, its most recent 1 MiB; read it with command_output, write to its input with command_input, end it with command_kill. " +
			"It ends with this MCP session, with everything it started. Starting one is judged as the command it runs by the computer's policy.",
		Annotations: &mcp.ToolAnnotations{Title: "Start a background command"},
	}, commandStartHint, s.commandStart)
	addMachineTool(s, &mcp.Tool{
		Name:        "command_list",
		Description: "List the background commands on the computer: their handles, pids, what they run, and whether they run or how they ended.",
		Annotations: &mcp.ToolAnnotations{Title: "List background commands"},
	}, commandReadHint, func(ctx context.Context, _ *mcp.CallToolRequest, m *machine.Tools, _ struct{}) (textResult[commandList], error) {
		cs, err := m.Commands(ctx)
		if err != nil {
			return textResult[commandList]{}, commandError(err)
		}
		out := commandList{Commands: []commandEntry{}}
		var b strings.Builder
		for _, ci := range cs {
			out.Commands = append(out.Commands, commandEntry{commandState: state(ci.CommandState), ID: ci.ID, PID: ci.PID, Line: ci.Line, Argv: ci.Argv})
			what := ci.Line
			if ci.Argv != nil {
				what = strings.Join(ci.Argv, " ")
			}
			fmt.Fprintf(&b, "%s pid %d, %s: %s\n", ci.ID, ci.PID, stateText(state(ci.CommandState)), what)
		}
		if len(cs) == 0 {
			b.WriteString("[no background commands]")
		}
		return textResult[commandList]{b.String(), out}, nil
	})
	addMachineTool(s, &mcp.Tool{
		Name: "command_output",
		Description: "Read a background command's output from an offset (0 by default; the previous read's end to follow on), at most max_output bytes (16 KiB by default, 4 MiB at most), and whether it still runs or its exit code. " +
			"Output older than what is kept is skipped, and cut says how much.",
		Annotations: &mcp.ToolAnnotations{Title: "Read a background command's output"},
		InputSchema: bounded[commandOutputInput](map[string]float64{"offset": 1 << 62, "max_output": machine.MaxCommandRead}),
	}, commandReadHint, func(ctx context.Context, _ *mcp.CallToolRequest, m *machine.Tools, in commandOutputInput) (textResult[commandRead], error) {
		r, err := m.CommandOutput(ctx, in.ID, in.Offset, in.MaxOutput)
		if err != nil {
			return textResult[commandRead]{}, commandError(err)
		}
		out := commandRead{commandState: state(r.CommandState), From: r.From, End: r.End, Total: r.Total, Cut: r.Cut}
		text := r.Output
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		note := stateText(out.commandState)
		if out.Cut > 0 {
			note = fmt.Sprintf("%d bytes before these cut; %s", out.Cut, note)
		}
		if out.End < out.Total {
			note += fmt.Sprintf("; %d more bytes from offset %d", out.Total-out.End, out.End)
		}
		return textResult[commandRead]{text + "[" + note + "]", out}, nil
	})
	addMachineTool(s, &mcp.Tool{
		Name:        "command_input",
		Description: "Write text to a background command's standard input, and/or end it (eof). The text is judged as a command line by the computer's policy, as text typed at the shell is.",
		Annotations: &mcp.ToolAnnotations{Title: "Write to a background command"},
	}, commandStartHint, func(ctx context.Context, _ *mcp.CallToolRequest, m *machine.Tools, in commandInputInput) (textResult[commandDone], error) {
		if in.Input == "" && !in.EOF {
			return textResult[commandDone]{}, invalid("give input, eof, or both")
		}
		if err := m.CommandInput(ctx, in.ID, in.Input); err != nil {
			return textResult[commandDone]{}, commandError(err)
		}
		if in.EOF {
			if err := m.CloseCommandInput(ctx, in.ID); err != nil {
				return textResult[commandDone]{}, commandError(err)
			}
		}
		return textResult[commandDone]{"[sent]", commandDone{ID: in.ID}}, nil
	})
	addMachineTool(s, &mcp.Tool{
		Name:        "command_kill",
		Description: "Kill a background command, by handle or by pid, and everything it started (SIGKILL); with remove, also forget its handle and output. Killing one that ended does nothing.",
		Annotations: &mcp.ToolAnnotations{Title: "Kill a background command"},
		InputSchema: bounded[commandKillInput](map[string]float64{"pid": 1 << 31}),
	}, commandKillHint, func(ctx context.Context, _ *mcp.CallToolRequest, m *machine.Tools, in commandKillInput) (textResult[commandDone], error) {
		if (in.ID == "") == (in.PID == 0) {
			return textResult[commandDone]{}, invalid("give id or pid")
		}
		id := in.ID
		if id == "" {
			cs, err := m.Commands(ctx)
			if err != nil {
				return textResult[commandDone]{}, commandError(err)
			}
			for _, ci := range cs {
				if ci.PID == in.PID && ci.Running {
					id = ci.ID
				}
			}
			if id == "" {
				return textResult[commandDone]{}, invalid("no running background command has pid %d", in.PID)
			}
		}
		kill := m.KillCommand
		if in.Remove {
			kill = m.RemoveCommand
		}
		if err := kill(ctx, id); err != nil {
			return textResult[commandDone]{}, commandError(err)
		}
		return textResult[commandDone]{"[killed " + id + "]", commandDone{ID: id}}, nil
	})
}

// commandError gives an unknown or ended handle the code invalid_action.
func commandError(err error) error {
	if errors.Is(err, machine.ErrNoCommand) || errors.Is(err, machine.ErrCommandEnded) {
		return &aci.Error{Code: aci.CodeInvalidAction, Detail: strings.TrimPrefix(err.Error(), "machine: "), Err: err}
	}
	return err
}

func state(st machine.CommandState) commandState {
	return commandState{Running: st.Running, ExitCode: st.ExitCode, Killed: st.Killed, Lost: st.Lost}
}

func stateText(st commandState) string {
	switch {
	case st.Running:
		return "running"
	case st.ExitCode != nil:
		return fmt.Sprintf("exit code %d", *st.ExitCode)
	case st.Killed:
		return "killed"
	}
	return "ended with its session"
}

// commandStart runs command_start: the command runs on the MCP session's
// own ACI session when the Server can dial one, so that it ends with the
// MCP session, everything it started with it.
func (s *Server) commandStart(ctx context.Context, req *mcp.CallToolRequest, m *machine.Tools, in commandStartInput) (textResult[commandStarted], error) {
	var zero textResult[commandStarted]
	if (in.Line == "") == (len(in.Argv) == 0) {
		return zero, invalid("give line or argv")
	}
	h, err := s.sessionCommands(ctx, req.Session, m)
	if err != nil {
		return zero, err
	}
	on := m
	if h.own != nil {
		on = h.on
	}
	cmd, err := on.StartCommand(ctx, in.Line, &machine.CommandOptions{Argv: in.Argv, Dir: in.Cwd})
	if err != nil {
		if h.own != nil && aci.CodeOf(err) != aci.CodePermissionDenied && aci.CodeOf(err) != aci.CodeInvalidAction {
			err = own(err)
		}
		return zero, err
	}
	h.mu.Lock()
	h.ids = append(h.ids, cmd.ID())
	h.mu.Unlock()
	return textResult[commandStarted]{"[started " + cmd.ID() + "]", commandStarted{ID: cmd.ID()}}, nil
}

// sessionCmds are one MCP session's background commands and the ACI
// session they run on.
type sessionCmds struct {
	own  *client.Client // dialled for them, closed with the MCP session; nil when on the Server's
	on   *machine.Tools // the machine of the session they run on
	mu   sync.Mutex
	ids  []string
	once sync.Once
}

// end removes the session's commands (which kills those still running)
// and closes the ACI session dialled for them.
func (h *sessionCmds) end() {
	h.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.mu.Lock()
		ids := h.ids
		h.mu.Unlock()
		for _, id := range ids {
			h.on.RemoveCommand(ctx, id)
		}
		if h.own != nil {
			h.own.Close()
		}
	})
}

func (s *Server) sessionCommands(ctx context.Context, ss *mcp.ServerSession, m *machine.Tools) (*sessionCmds, error) {
	return s.bg.get(ss, func() (*sessionCmds, error) {
		h := &sessionCmds{on: m}
		if s.opts.Dial != nil {
			dialled, err := s.opts.Dial(ctx)
			if err != nil {
				return nil, own(err)
			}
			h.own, h.on = dialled, machine.New(dialled, nil)
		}
		return h, nil
	})
}
