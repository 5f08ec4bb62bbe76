package mcpserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"strings"
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

// ScreenSize is the structured result of screen_size.
type ScreenSize struct {
	Width  int `json:"width" jsonschema:"screen pixels"`
	Height int `json:"height" jsonschema:"screen pixels"`
}

// OpenInput is the input of open.
type OpenInput struct {
	Target string `json:"target" jsonschema:"a file path or a URL"`
}

// fileRead and the other families' annotations: reading files changes
// nothing and reaches nothing beyond the machine.
var (
	fileRead  = hints{readOnly: true}
	fileWrite = hints{destructive: true, idempotent: true}
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
