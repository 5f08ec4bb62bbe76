package mcpserver

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/shinken/client"
)

// ShellInput is the input of shell.
type ShellInput struct {
	Input  string `json:"input,omitempty" jsonschema:"text typed at the shell; end a command with a newline"`
	WaitMS int    `json:"wait_ms,omitempty" jsonschema:"wait up to this long for output, returning early once it pauses; default 2000"`
	Close  bool   `json:"close,omitempty" jsonschema:"end the shell and its jobs (the next call starts a new one)"`
}

// ShellOutput is the structured result of shell.
type ShellOutput struct {
	Output  string `json:"output" jsonschema:"what the shell printed since the previous call"`
	Dropped int    `json:"dropped,omitempty" jsonschema:"bytes of older output dropped unread"`
	Ended   bool   `json:"ended,omitempty" jsonschema:"the shell has ended; the next call starts a new one"`
}

// Bounds of the machine's tools.
const (
	maxShellWait = time.Minute
	// shellQuiet is the pause in its output after which shell answers
	// before wait_ms: the command has most likely printed its answer and
	// is waiting.
	shellQuiet = 200 * time.Millisecond
)

// shellHint: the shell can do anything the machine lets it.
var shellHint = hints{destructive: true, openWorld: true}

func (s *Server) addShellTool() {
	addTool(s, &mcp.Tool{
		Name: "shell",
		Description: "Type at a persistent shell on the computer, on a terminal, and read what it printed since the last call. " +
			"Its working directory, variables and jobs persist between calls; the first call starts it, and it ends with the MCP session (or with close). " +
			"It answers once the output pauses, or after wait_ms.",
		Annotations: &mcp.ToolAnnotations{Title: "Use a shell"},
		InputSchema: bounded[ShellInput](map[string]float64{"wait_ms": float64(maxShellWait.Milliseconds())}),
	}, shellHint, s.shell)
}

// shells are the MCP sessions' shells.
type shells struct {
	mu sync.Mutex
	m  map[*mcp.ServerSession]*hostShell
}

// hostShell is one MCP session's shell and the ACI session it runs on.
type hostShell struct {
	sh   *client.Shell
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
func (s *Server) shell(ctx context.Context, req *mcp.CallToolRequest, c *client.Client, in ShellInput) (textResult[ShellOutput], error) {
	var zero textResult[ShellOutput]
	if in.WaitMS < 0 {
		return zero, invalid("wait_ms %d is negative", in.WaitMS)
	}
	wait := 2 * time.Second
	if in.WaitMS > 0 {
		wait = time.Duration(in.WaitMS) * time.Millisecond
	}
	ss := req.Session
	if in.Close {
		s.shells.mu.Lock()
		h := s.shells.m[ss]
		delete(s.shells.m, ss)
		s.shells.mu.Unlock()
		if h == nil {
			return textResult[ShellOutput]{"no shell was running", ShellOutput{Ended: true}}, nil
		}
		out, dropped := h.sh.Read()
		h.close()
		return textResult[ShellOutput]{out + "\n(shell closed)", ShellOutput{Output: out, Dropped: dropped, Ended: true}}, nil
	}
	h, err := s.sessionShell(ctx, ss, c)
	if err != nil {
		return zero, err
	}
	if in.Input != "" {
		if err := h.sh.Write(ctx, in.Input); err != nil && !errors.Is(err, client.ErrShellEnded) {
			if h.own != nil {
				err = own(err)
			}
			return zero, err
		}
	}
	// Answer once the output pauses, at the latest after wait.
	deadline, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var b strings.Builder
	dropped := 0
	for {
		quiet, stop := context.WithTimeout(deadline, shellQuiet)
		err := h.sh.Wait(quiet)
		stop()
		out, d := h.sh.Read()
		b.WriteString(out)
		dropped += d
		if err != nil {
			break // quiet, past the deadline, or ended
		}
	}
	out := ShellOutput{Output: b.String(), Dropped: dropped}
	select {
	case <-h.sh.Done():
		out.Ended = true
		s.shells.mu.Lock()
		if s.shells.m[ss] == h {
			delete(s.shells.m, ss)
		}
		s.shells.mu.Unlock()
		h.close()
	default:
	}
	text := out.Output
	if out.Ended {
		text += "\n(the shell has ended)"
	}
	return textResult[ShellOutput]{text, out}, ctx.Err()
}

// sessionShell returns the MCP session's shell, starting it on its own
// ACI session when the Server can dial one (so that closing it ends every
// process it started), and ending it with the MCP session.
func (s *Server) sessionShell(ctx context.Context, ss *mcp.ServerSession, c *client.Client) (*hostShell, error) {
	s.shells.mu.Lock()
	defer s.shells.mu.Unlock()
	if h := s.shells.m[ss]; h != nil {
		return h, nil
	}
	h := &hostShell{}
	on := c
	if s.opts.Dial != nil {
		dialled, err := s.opts.Dial(ctx)
		if err != nil {
			return nil, own(err)
		}
		h.own, on = dialled, dialled
	}
	sh, err := on.StartShell(ctx, nil)
	if err != nil {
		if h.own != nil {
			h.own.Close()
			return nil, own(err)
		}
		return nil, err
	}
	h.sh = sh
	if s.shells.m == nil {
		s.shells.m = map[*mcp.ServerSession]*hostShell{}
	}
	s.shells.m[ss] = h
	if ss != nil {
		go func() {
			ss.Wait()
			s.shells.mu.Lock()
			if s.shells.m[ss] == h {
				delete(s.shells.m, ss)
			}
			s.shells.mu.Unlock()
			h.close()
		}()
	}
	return h, nil
}

// closeShells ends every session's shell.
func (s *Server) closeShells() {
	s.shells.mu.Lock()
	hs := s.shells.m
	s.shells.m = nil
	s.shells.mu.Unlock()
	for _, h := range hs {
		h.close()
	}
}
