package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// The machine's tools: files, a shell, the screen's size and opening a
// file or a URL. ACI has no verbs of their own for these: each is made of
// exec and launch_app (see the client package's ReadFile, Shell and Open),
// so the runtime's Authorizer and plugins judge every one as they judge
// those, and a policy that forbids commands forbids them too.

// ReadFileInput is the input of read_file.
type ReadFileInput struct {
	Path   string `json:"path" jsonschema:"the file's path on the computer; a relative path and ~ resolve against the agent's home"`
	Offset int64  `json:"offset,omitempty" jsonschema:"where to start reading, in bytes; default 0"`
	Length int    `json:"length,omitempty" jsonschema:"how many bytes to read at most; default and at most 524288 (read a larger file in chunks)"`
	Base64 bool   `json:"base64,omitempty" jsonschema:"answer the bytes as base64 in the structured result even when they are text (for programs moving a file)"`
}

// FileContent is the structured result of read_file. The bytes travel
// once: as the call's text when they are UTF-8 (and base64 was not
// asked), as Base64 otherwise.
type FileContent struct {
	Path   string `json:"path" jsonschema:"the absolute path read"`
	Offset int64  `json:"offset" jsonschema:"where the bytes start"`
	Length int    `json:"length" jsonschema:"how many bytes were read"`
	Size   int64  `json:"size" jsonschema:"the file's size in bytes"`
	EOF    bool   `json:"eof" jsonschema:"the bytes reach the end of the file"`
	// Base64 carries the bytes when they are not sent as text.
	Base64 string `json:"base64,omitempty" jsonschema:"the bytes, base64, when they are not the call's text"`
}

// WriteFileInput is the input of write_file: exactly one of text and
// base64.
type WriteFileInput struct {
	Path   string  `json:"path" jsonschema:"the file's path on the computer; its folder must exist; a relative path and ~ resolve against the agent's home"`
	Text   *string `json:"text,omitempty" jsonschema:"the contents as text"`
	Base64 *string `json:"base64,omitempty" jsonschema:"the contents as base64, for binary files"`
	Offset *int64  `json:"offset,omitempty" jsonschema:"write at this offset, keeping the rest of the file (default: replace the whole file)"`
	Append bool    `json:"append,omitempty" jsonschema:"add at the end of the file (default: replace the whole file)"`
}

// Written is the structured result of write_file.
type Written struct {
	Path string `json:"path" jsonschema:"the absolute path written"`
	Size int    `json:"size" jsonschema:"bytes written"`
}

// ListInput is the input of list_files.
type ListInput struct {
	Path   string `json:"path" jsonschema:"the folder's path on the computer; a relative path and ~ resolve against the agent's home"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next of the page before; omit for the first page"`
	Limit  int    `json:"limit,omitempty" jsonschema:"the most entries in the page; default 1000, at most 10000"`
}

// Listing is the structured result of list_files.
type Listing struct {
	Path    string            `json:"path" jsonschema:"the absolute path listed"`
	Entries []client.FileInfo `json:"entries"`
	Next    string            `json:"next,omitempty" jsonschema:"the cursor of the next page; absent on the last one"`
}

// PathInput is the input of stat and exists.
type PathInput struct {
	Path string `json:"path" jsonschema:"a path on the computer; a relative path and ~ resolve against the agent's home"`
}

// Existence is the structured result of exists.
type Existence struct {
	Path   string `json:"path" jsonschema:"the absolute path"`
	Exists bool   `json:"exists"`
}

// MkdirInput is the input of mkdir.
type MkdirInput struct {
	Path    string `json:"path" jsonschema:"the folder to make; a relative path and ~ resolve against the agent's home"`
	Parents bool   `json:"parents,omitempty" jsonschema:"make missing parents too, and take a folder already there for done"`
}

// MoveInput is the input of move.
type MoveInput struct {
	From      string `json:"from" jsonschema:"the file or folder to move"`
	To        string `json:"to" jsonschema:"its new path (never moved into a folder there)"`
	Overwrite bool   `json:"overwrite,omitempty" jsonschema:"replace a file at to (never a folder)"`
}

// DeleteInput is the input of delete.
type DeleteInput struct {
	Path      string `json:"path" jsonschema:"the file, symlink or folder to delete"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"delete a folder with everything in it (without it, only an empty folder)"`
}

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

// ScreenSize is the structured result of screen_size.
type ScreenSize struct {
	Width  int `json:"width" jsonschema:"screen pixels"`
	Height int `json:"height" jsonschema:"screen pixels"`
}

// OpenInput is the input of open.
type OpenInput struct {
	Target string `json:"target" jsonschema:"a file path or a URL"`
}

// Bounds of the machine's tools.
const (
	maxShellWait = time.Minute
	// shellQuiet is the pause in its output after which shell answers
	// before wait_ms: the command has most likely printed its answer and
	// is waiting.
	shellQuiet = 200 * time.Millisecond
)

// fileRead and the other families' annotations: reading files changes
// nothing and reaches nothing beyond the machine.
var (
	fileRead  = hints{readOnly: true}
	fileWrite = hints{destructive: true, idempotent: true}
	shellHint = hints{destructive: true, openWorld: true}
)

func (s *Server) addHostTools() {
	s.addFileTools()

	addTool(s, &mcp.Tool{
		Name: "shell",
		Description: "Type at a persistent shell on the computer, on a terminal, and read what it printed since the last call. " +
			"Its working directory, variables and jobs persist between calls; the first call starts it, and it ends with the MCP session (or with close). " +
			"It answers once the output pauses, or after wait_ms.",
		Annotations: &mcp.ToolAnnotations{Title: "Use a shell"},
		InputSchema: bounded[ShellInput](map[string]float64{"wait_ms": float64(maxShellWait.Milliseconds())}),
	}, shellHint, s.shell)

	addTool(s, &mcp.Tool{
		Name:        "screen_size",
		Description: "The screen's size in pixels (the screenshot tools show it scaled to the model's screen).",
		Annotations: &mcp.ToolAnnotations{Title: "Get the screen size"},
	}, readLocal, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, _ struct{}) (textResult[ScreenSize], error) {
		sz, err := c.ScreenSize(ctx)
		if err != nil {
			return textResult[ScreenSize]{}, err
		}
		return textResult[ScreenSize]{fmt.Sprintf("%dx%d", sz.W, sz.H), ScreenSize{sz.W, sz.H}}, nil
	})
}

// fileError gives a file tool's failure its code: a missing or wrong-kind
// path is the call's mistake (invalid_action); a refusal, a size limit or
// a timeout keeps the runtime's code.
func fileError(err error) error {
	var e *aci.Error
	switch {
	case errors.As(err, &e):
		return err
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrInvalid), errors.Is(err, fs.ErrPermission),
		errors.Is(err, fs.ErrExist), errors.Is(err, client.ErrNotEmpty):
		return &aci.Error{Code: aci.CodeInvalidAction, Detail: err.Error(), Err: err}
	}
	return err
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
