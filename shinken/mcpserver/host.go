package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/machine"
)

// The machine's tools: files, a shell, the screen's size and opening a
// file or a URL. ACI has no verbs of their own for these: each is made of
// exec and launch_app (see package machine's ReadFile, Shell and Open),
// so the runtime's Authorizer and plugins judge every one as they judge
// those, and a policy that forbids commands forbids them too.

// readFileInput is the input of read_file.
type readFileInput struct {
	Path   string `json:"path" jsonschema:"the file's path on the computer; a relative path and ~ resolve against the agent's home"`
	Offset int64  `json:"offset,omitempty" jsonschema:"where to start reading, in bytes; default 0"`
	Length int    `json:"length,omitempty" jsonschema:"how many bytes to read at most; default and at most 524288 (read a larger file in chunks)"`
	Base64 bool   `json:"base64,omitempty" jsonschema:"answer the bytes as base64 in the structured result even when they are text (for programs moving a file)"`
}

// fileContent is the structured result of read_file. The bytes travel
// once: as the call's text when they are UTF-8 (and base64 was not
// asked), as Base64 otherwise.
type fileContent struct {
	Path   string `json:"path" jsonschema:"the absolute path read"`
	Offset int64  `json:"offset" jsonschema:"where the bytes start"`
	Length int    `json:"length" jsonschema:"how many bytes were read"`
	Size   int64  `json:"size" jsonschema:"the file's size in bytes"`
	EOF    bool   `json:"eof" jsonschema:"the bytes reach the end of the file"`
	// Base64 carries the bytes when they are not sent as text.
	Base64 string `json:"base64,omitempty" jsonschema:"the bytes, base64, when they are not the call's text"`
}

// writeFileInput is the input of write_file: exactly one of text and
// base64.
type writeFileInput struct {
	Path   string  `json:"path" jsonschema:"the file's path on the computer; its folder must exist; a relative path and ~ resolve against the agent's home"`
	Text   *string `json:"text,omitempty" jsonschema:"the contents as text"`
	Base64 *string `json:"base64,omitempty" jsonschema:"the contents as base64, for binary files"`
	Offset *int64  `json:"offset,omitempty" jsonschema:"write at this offset, keeping the rest of the file (default: replace the whole file)"`
	Append bool    `json:"append,omitempty" jsonschema:"add at the end of the file (default: replace the whole file)"`
}

// written is the structured result of write_file.
type written struct {
	Path string `json:"path" jsonschema:"the absolute path written"`
	Size int    `json:"size" jsonschema:"bytes written"`
}

// listInput is the input of list_files.
type listInput struct {
	Path   string `json:"path" jsonschema:"the folder's path on the computer; a relative path and ~ resolve against the agent's home"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next of the page before; omit for the first page"`
	Limit  int    `json:"limit,omitempty" jsonschema:"the most entries in the page; default 1000, at most 10000"`
}

// listing is the structured result of list_files.
type listing struct {
	Path    string             `json:"path" jsonschema:"the absolute path listed"`
	Entries []machine.FileInfo `json:"entries"`
	Next    string             `json:"next,omitempty" jsonschema:"the cursor of the next page; absent on the last one"`
}

// pathInput is the input of stat and exists.
type pathInput struct {
	Path string `json:"path" jsonschema:"a path on the computer; a relative path and ~ resolve against the agent's home"`
}

// existence is the structured result of exists.
type existence struct {
	Path   string `json:"path" jsonschema:"the absolute path"`
	Exists bool   `json:"exists"`
}

// mkdirInput is the input of mkdir.
type mkdirInput struct {
	Path    string `json:"path" jsonschema:"the folder to make; a relative path and ~ resolve against the agent's home"`
	Parents bool   `json:"parents,omitempty" jsonschema:"make missing parents too, and take a folder already there for done"`
}

// moveInput is the input of move.
type moveInput struct {
	From      string `json:"from" jsonschema:"the file or folder to move"`
	To        string `json:"to" jsonschema:"its new path (never moved into a folder there)"`
	Overwrite bool   `json:"overwrite,omitempty" jsonschema:"replace a file at to (never a folder)"`
}

// deleteInput is the input of delete.
type deleteInput struct {
	Path      string `json:"path" jsonschema:"the file, symlink or folder to delete"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"delete a folder with everything in it (without it, only an empty folder)"`
}

// screenSize is the structured result of screen_size.
type screenSize struct {
	Width  int `json:"width" jsonschema:"screen pixels"`
	Height int `json:"height" jsonschema:"screen pixels"`
}

// openInput is the input of open.
type openInput struct {
	Target string `json:"target" jsonschema:"a file path or a URL"`
}

// fileRead and the other families' annotations: reading files changes
// nothing and reaches nothing beyond the machine.
var (
	fileRead  = hints{readOnly: true}
	fileWrite = hints{destructive: true, idempotent: true}
)

func (s *Server) addHostTools() {
	s.addFileTools()

	addTool(s, &mcp.Tool{
		Name:        "screen_size",
		Description: "The screen's size in pixels (the screenshot tools show it scaled to the model's screen).",
		Annotations: &mcp.ToolAnnotations{Title: "Get the screen size"},
	}, readLocal, func(ctx context.Context, _ *mcp.CallToolRequest, c *client.Client, _ struct{}) (textResult[screenSize], error) {
		sz, err := c.ScreenSize(ctx)
		if err != nil {
			return textResult[screenSize]{}, err
		}
		return textResult[screenSize]{fmt.Sprintf("%dx%d", sz.W, sz.H), screenSize{sz.W, sz.H}}, nil
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
		errors.Is(err, fs.ErrExist), errors.Is(err, machine.ErrNotEmpty):
		return &aci.Error{Code: aci.CodeInvalidAction, Detail: err.Error(), Err: err}
	}
	return err
}
