package mcpserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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
	Path     string `json:"path" jsonschema:"the file's path on the computer"`
	MaxBytes int64  `json:"max_bytes,omitempty" jsonschema:"refuse a larger file; default and at most 524288"`
}

// FileContent is the structured result of read_file.
type FileContent struct {
	Path string `json:"path"`
	Size int    `json:"size" jsonschema:"bytes"`
	// Base64 carries the contents whatever they are.
	Base64 string `json:"base64" jsonschema:"the contents, base64"`
	// Text carries them too when they are UTF-8.
	Text *string `json:"text,omitempty" jsonschema:"the contents as text, when they are valid UTF-8"`
}

// WriteFileInput is the input of write_file: exactly one of text and
// base64.
type WriteFileInput struct {
	Path   string  `json:"path" jsonschema:"the file's path on the computer; its directory must exist"`
	Text   *string `json:"text,omitempty" jsonschema:"the new contents as text"`
	Base64 *string `json:"base64,omitempty" jsonschema:"the new contents as base64, for binary files"`
}

// Written is the structured result of write_file.
type Written struct {
	Path string `json:"path"`
	Size int    `json:"size" jsonschema:"bytes written"`
}

// ListInput is the input of list_files.
type ListInput struct {
	Path string `json:"path" jsonschema:"the directory's path on the computer"`
}

// Listing is the structured result of list_files.
type Listing struct {
	Path    string            `json:"path"`
	Entries []client.FileInfo `json:"entries"`
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
	addTool(s, &mcp.Tool{
		Name:        "read_file",
		Description: "Read a file on the computer. Its contents come as base64, and as text too when they are UTF-8. Files over max_bytes (512 KiB at most) are refused.",
		Annotations: &mcp.ToolAnnotations{Title: "Read a file"},
		InputSchema: bounded[ReadFileInput](map[string]float64{"max_bytes": client.DefaultMaxRead}),
	}, fileRead, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, in ReadFileInput) (textResult[FileContent], error) {
		data, err := c.ReadFile(ctx, in.Path, &client.ReadOptions{MaxBytes: in.MaxBytes})
		if err != nil {
			return textResult[FileContent]{}, fileError(err)
		}
		out := FileContent{Path: in.Path, Size: len(data), Base64: base64.StdEncoding.EncodeToString(data)}
		text := fmt.Sprintf("%s: %d bytes, binary (base64 in the structured result)", in.Path, len(data))
		if utf8.Valid(data) {
			t := string(data)
			out.Text, text = &t, t
		}
		return textResult[FileContent]{text, out}, nil
	})

	addTool(s, &mcp.Tool{
		Name:        "write_file",
		Description: "Write a file on the computer, replacing it: text, or base64 for binary contents. The directory must exist. A reader sees the old contents or the new, never a part.",
		Annotations: &mcp.ToolAnnotations{Title: "Write a file"},
	}, fileWrite, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, in WriteFileInput) (textResult[Written], error) {
		var data []byte
		switch {
		case (in.Text == nil) == (in.Base64 == nil):
			return textResult[Written]{}, invalid("give text or base64, not both or neither")
		case in.Text != nil:
			data = []byte(*in.Text)
		default:
			b, err := base64.StdEncoding.DecodeString(*in.Base64)
			if err != nil {
				return textResult[Written]{}, invalid("base64: %v", err)
			}
			data = b
		}
		if err := c.WriteFile(ctx, in.Path, data); err != nil {
			return textResult[Written]{}, fileError(err)
		}
		return textResult[Written]{fmt.Sprintf("wrote %d bytes to %s", len(data), in.Path), Written{in.Path, len(data)}}, nil
	})

	addTool(s, &mcp.Tool{
		Name:        "list_files",
		Description: "List a directory on the computer: each entry's name, kind (file, dir, symlink, other) and size.",
		Annotations: &mcp.ToolAnnotations{Title: "List a directory"},
	}, fileRead, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, in ListInput) (textResult[Listing], error) {
		entries, err := c.ListDir(ctx, in.Path)
		if err != nil {
			return textResult[Listing]{}, fileError(err)
		}
		var b strings.Builder
		for _, e := range entries {
			fmt.Fprintf(&b, "%s\t%d\t%s\n", e.Kind, e.Size, e.Name)
		}
		if entries == nil {
			entries = []client.FileInfo{}
			b.WriteString("(empty)")
		}
		return textResult[Listing]{b.String(), Listing{in.Path, entries}}, nil
	})

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

	addTool(s, &mcp.Tool{
		Name:        "open",
		Description: "Open a file or a URL on the computer with its default application, as a double click or a link would.",
		Annotations: &mcp.ToolAnnotations{Title: "Open a file or URL"},
	}, hints{destructive: true, openWorld: true}, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, in OpenInput) (textResult[Done], error) {
		if err := c.Open(ctx, in.Target); err != nil {
			return textResult[Done]{}, err
		}
		return done("opened " + in.Target), nil
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
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrInvalid), errors.Is(err, fs.ErrPermission):
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
