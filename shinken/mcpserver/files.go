package mcpserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"shinken.dev/go/shinken/machine"
)

// The file tools. Each is one exec of the machine tools' plumbing (see the
// package machine's files), which the runtime shows its Authorizer as
// what it does: a read or an edit of the absolute path.

// fileEdit annotates the tools that change files: write_file may be
// repeated to the same effect, delete and move not.
var fileEdit = hints{destructive: true}

func (s *Server) addFileTools() {
	addMachineTool(s, &mcp.Tool{
		Name: "read_file",
		Description: "Read a file on the computer, or a chunk of it: length bytes (at most 512 KiB) from offset. " +
			"UTF-8 contents come as the text; others (or all, with base64) as base64 in the structured result, with the file's size and whether the end was reached. Read a larger file in chunks.",
		Annotations: &mcp.ToolAnnotations{Title: "Read a file"},
		InputSchema: bounded[readFileInput](map[string]float64{"length": machine.MaxChunk, "offset": 1 << 53}),
	}, fileRead, func(ctx context.Context, _ *mcp.CallToolRequest, m *machine.Tools, in readFileInput) (textResult[fileContent], error) {
		n := in.Length
		if n == 0 {
			n = machine.MaxChunk
		}
		abs, err := m.Abs(ctx, in.Path)
		if err != nil {
			return textResult[fileContent]{}, fileError(err)
		}
		data, size, err := m.ReadFileAt(ctx, abs, in.Offset, n)
		if err != nil {
			return textResult[fileContent]{}, fileError(err)
		}
		out := fileContent{Path: abs, Offset: in.Offset, Length: len(data), Size: size, EOF: in.Offset+int64(len(data)) >= size}
		if !in.Base64 && utf8.Valid(data) {
			return textResult[fileContent]{string(data), out}, nil
		}
		out.Base64 = base64.StdEncoding.EncodeToString(data)
		return textResult[fileContent]{fmt.Sprintf("%s: %d bytes from offset %d of %d (base64 in the structured result)", abs, len(data), in.Offset, size), out}, nil
	})

	addMachineTool(s, &mcp.Tool{
		Name: "write_file",
		Description: "Write a file on the computer: text, or base64 for binary contents. It replaces the file, or with offset writes into it, or with append adds at its end, so a large file goes in chunks (2 MiB of contents a call fits every transport). " +
			"The folder must exist. The file is written in place: an existing file keeps its mode and links, a symlink's target is written, a new file gets the usual mode (0644).",
		Annotations: &mcp.ToolAnnotations{Title: "Write a file"},
	}, fileWrite, func(ctx context.Context, _ *mcp.CallToolRequest, m *machine.Tools, in writeFileInput) (textResult[written], error) {
		var data []byte
		switch {
		case (in.Text == nil) == (in.Base64 == nil):
			return textResult[written]{}, invalid("give text or base64, not both or neither")
		case in.Text != nil:
			data = []byte(*in.Text)
		default:
			b, err := base64.StdEncoding.DecodeString(*in.Base64)
			if err != nil {
				return textResult[written]{}, invalid("base64: %v", err)
			}
			data = b
		}
		abs, err := m.Abs(ctx, in.Path)
		if err != nil {
			return textResult[written]{}, fileError(err)
		}
		how := "wrote"
		switch {
		case in.Append && in.Offset != nil:
			return textResult[written]{}, invalid("give offset or append, not both")
		case in.Append:
			err, how = m.AppendFile(ctx, abs, data), "appended"
		case in.Offset != nil:
			if *in.Offset < 0 {
				return textResult[written]{}, invalid("offset %d is negative", *in.Offset)
			}
			err, how = m.WriteFileAt(ctx, abs, data, *in.Offset), fmt.Sprintf("wrote at offset %d", *in.Offset)
		default:
			err = m.WriteFile(ctx, abs, data)
		}
		if err != nil {
			return textResult[written]{}, fileError(err)
		}
		return textResult[written]{fmt.Sprintf("%s %d bytes to %s", how, len(data), abs), written{abs, len(data)}}, nil
	})

	addMachineTool(s, &mcp.Tool{
		Name: "list_files",
		Description: "List a folder on the computer, a page at a time: each entry's name, kind (file, dir, symlink, other) and size. " +
			"Pass the answer's next as cursor for the next page; the order is stable.",
		Annotations: &mcp.ToolAnnotations{Title: "List a folder"},
		InputSchema: bounded[listInput](map[string]float64{"limit": machine.MaxListPage}),
	}, fileRead, func(ctx context.Context, _ *mcp.CallToolRequest, m *machine.Tools, in listInput) (textResult[listing], error) {
		abs, err := m.Abs(ctx, in.Path)
		if err != nil {
			return textResult[listing]{}, fileError(err)
		}
		page, err := m.ListDirPage(ctx, abs, &machine.ListOptions{Cursor: in.Cursor, Limit: in.Limit})
		if err != nil {
			return textResult[listing]{}, fileError(err)
		}
		var b strings.Builder
		for _, e := range page.Entries {
			fmt.Fprintf(&b, "%s\t%d\t%s\n", e.Kind, e.Size, e.Name)
		}
		switch {
		case page.Next != "":
			fmt.Fprintf(&b, "(more: cursor %q)", page.Next)
		case len(page.Entries) == 0:
			b.WriteString("(empty)")
		}
		return textResult[listing]{b.String(), listing{abs, page.Entries, page.Next}}, nil
	})

	addMachineTool(s, &mcp.Tool{
		Name:        "stat",
		Description: "Describe a path on the computer itself (a symlink is not followed): kind, size, permissions, modification time, a symlink's target.",
		Annotations: &mcp.ToolAnnotations{Title: "Describe a path"},
	}, fileRead, func(ctx context.Context, _ *mcp.CallToolRequest, m *machine.Tools, in pathInput) (textResult[machine.FileStat], error) {
		st, err := m.Stat(ctx, in.Path)
		if err != nil {
			return textResult[machine.FileStat]{}, fileError(err)
		}
		text := fmt.Sprintf("%s: %s, %d bytes, mode %04o, modified %s", st.Path, st.Kind, st.Size, uint32(st.Mode.Perm()), st.ModTime.Format("2006-01-02 15:04:05Z"))
		if st.Target != "" {
			text += ", to " + st.Target
		}
		return textResult[machine.FileStat]{text, *st}, nil
	})

	addMachineTool(s, &mcp.Tool{
		Name:        "exists",
		Description: "Say whether a path on the computer names anything (a dangling symlink included).",
		Annotations: &mcp.ToolAnnotations{Title: "Check a path"},
	}, fileRead, func(ctx context.Context, _ *mcp.CallToolRequest, m *machine.Tools, in pathInput) (textResult[existence], error) {
		abs, err := m.Abs(ctx, in.Path)
		if err != nil {
			return textResult[existence]{}, fileError(err)
		}
		ok, err := m.Exists(ctx, abs)
		if err != nil {
			return textResult[existence]{}, fileError(err)
		}
		text := abs + " does not exist"
		if ok {
			text = abs + " exists"
		}
		return textResult[existence]{text, existence{abs, ok}}, nil
	})

	addMachineTool(s, &mcp.Tool{
		Name:        "mkdir",
		Description: "Make a folder on the computer; with parents, its missing parents too.",
		Annotations: &mcp.ToolAnnotations{Title: "Make a folder"},
	}, hints{idempotent: true}, func(ctx context.Context, _ *mcp.CallToolRequest, m *machine.Tools, in mkdirInput) (textResult[doneResult], error) {
		abs, err := m.Abs(ctx, in.Path)
		if err != nil {
			return textResult[doneResult]{}, fileError(err)
		}
		if in.Parents {
			err = m.MkdirAll(ctx, abs)
		} else {
			err = m.Mkdir(ctx, abs)
		}
		if err != nil {
			return textResult[doneResult]{}, fileError(err)
		}
		return done("made " + abs), nil
	})

	addMachineTool(s, &mcp.Tool{
		Name:        "move",
		Description: "Move or rename a file or a folder on the computer. to is the new path; an existing file there is replaced only with overwrite, and a folder there never.",
		Annotations: &mcp.ToolAnnotations{Title: "Move a file"},
	}, fileEdit, func(ctx context.Context, _ *mcp.CallToolRequest, m *machine.Tools, in moveInput) (textResult[doneResult], error) {
		from, err := m.Abs(ctx, in.From)
		if err != nil {
			return textResult[doneResult]{}, fileError(err)
		}
		to, err := m.Abs(ctx, in.To)
		if err != nil {
			return textResult[doneResult]{}, fileError(err)
		}
		if err := m.Rename(ctx, from, to, &machine.RenameOptions{Overwrite: in.Overwrite}); err != nil {
			return textResult[doneResult]{}, fileError(err)
		}
		return done("moved " + from + " to " + to), nil
	})

	addMachineTool(s, &mcp.Tool{
		Name:        "delete",
		Description: "Delete a file, a symlink (not its target) or an empty folder on the computer; with recursive, a folder and everything in it.",
		Annotations: &mcp.ToolAnnotations{Title: "Delete a file"},
	}, fileEdit, func(ctx context.Context, _ *mcp.CallToolRequest, m *machine.Tools, in deleteInput) (textResult[doneResult], error) {
		abs, err := m.Abs(ctx, in.Path)
		if err != nil {
			return textResult[doneResult]{}, fileError(err)
		}
		if in.Recursive {
			err = m.RemoveAll(ctx, abs)
		} else {
			err = m.Remove(ctx, abs)
		}
		if err != nil {
			return textResult[doneResult]{}, fileError(err)
		}
		return done("deleted " + abs), nil
	})
}

// addOpenTool offers open where the runtime's machine has an opener on
// the desktop: macOS, or a display the window probe found exec reaches,
// with xdg-open (never the headless desktop).
func (s *Server) addOpenTool(wc *machine.WindowControl, platformOpens bool) {
	if !platformOpens && !wc.CanOpen() {
		return
	}
	addMachineTool(s, &mcp.Tool{
		Name: "open",
		Description: "Open a file or a URL on the computer with its default application, as a double click or a link would. " +
			"A missing file or opener is an error; a failure of the application it starts is not seen.",
		Annotations: &mcp.ToolAnnotations{Title: "Open a file or URL"},
	}, hints{destructive: true, openWorld: true}, func(ctx context.Context, _ *mcp.CallToolRequest, m *machine.Tools, in openInput) (textResult[doneResult], error) {
		if err := m.Open(ctx, in.Target); err != nil {
			return textResult[doneResult]{}, fileError(err)
		}
		return done("opened " + in.Target), nil
	})
}
