package machine

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"shinken.dev/go/internal/hosttool"
	"shinken.dev/go/shinken/aci"
)

// Files on the runtime's machine, read, written and listed through exec:
// ACI has no file verbs. Each call runs one of the machine tools' fixed
// scripts (/bin/sh with GNU coreutils and findutils, or busybox) with the
// path as a positional argument, never spliced into the script. The
// runtime recognizes that plumbing and shows its Authorizer (and the
// Escouade plugins) what the call does, a read or an edit of the path
// (see shinken.AuthRequest.Intent), never the script; a refusal is the
// exec's, permission_denied.
//
// Paths: a relative path, and ~ or ~/..., resolve against Home
// (Options.Home, by default the agent's home on the runtime's
// machine), and the path is cleaned (path.Clean) before it is sent, so
// the path a plugin is shown is the one opened. Any name works, one
// starting with "-" included; an empty path is an *aci.Error of code
// invalid_action. Symlinks are followed as the shell follows them: a
// write through a symlink writes its target, as shell redirection does;
// Stat, Remove and Rename act on the link itself.
//
// Sizes: a file of any size moves in chunks, ReadFileAt and WriteFileAt
// (or AppendFile) each carrying at most MaxChunk and MaxWrite bytes in one
// exec; ReadFile, WriteFile and AppendFile loop over chunks for larger
// data. A listing comes in pages (ListDirPage) of at most MaxListPage
// entries.

// MaxChunk is the most ReadFileAt reads in one exec: its base64 fits the
// runtime's default exec output budget (1 MiB per channel).
const MaxChunk = hosttool.MaxReadChunk

// MaxWrite is the most one exec of WriteFile, WriteFileAt or AppendFile
// carries: its base64 fits the runtime's default 16 MiB message limit.
// Larger data is written in several execs.
const MaxWrite = hosttool.MaxWriteChunk

// MaxListPage bounds ListOptions.Limit.
const MaxListPage = hosttool.MaxListPage

// Defaults of ReadOptions.MaxBytes and ListOptions.Limit.
const (
	defaultMaxRead  = 512 << 10
	defaultListPage = 1000
)

// ReadOptions configure ReadFile. A nil *ReadOptions means defaults.
type ReadOptions struct {
	// MaxBytes refuses a larger file (too_large); default 512 KiB.
	MaxBytes int64
}

// Home returns the folder that relative paths and ~ resolve against:
// Options.Home when set, otherwise the agent's home on the runtime's
// machine, asked of the runtime once (an exec of "cd && pwd", which the
// runtime's Authorizer judges as that command line; a refusal is
// returned, and absolute paths never need it).
func (m *Tools) Home(ctx context.Context) (string, error) {
	if h := m.opts.Home; h != "" {
		if !path.IsAbs(h) {
			return "", aci.Errorf(aci.CodeInvalidAction, "Options.Home %q is not absolute", h)
		}
		return path.Clean(h), nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.home != "" {
		return m.home, nil
	}
	res, err := m.c.Exec(ctx, &aci.ExecRequest{Argv: []string{"/bin/sh", "-c", "cd && pwd"}, Timeout: 30 * time.Second})
	if err != nil {
		return "", fmt.Errorf("machine: asking the runtime for the agent's home (give Options.Home, or an absolute path): %w", err)
	}
	home := strings.TrimSuffix(res.Stdout, "\n")
	if res.ExitCode == nil || *res.ExitCode != 0 || !path.IsAbs(home) || strings.Contains(home, "\n") {
		return "", fmt.Errorf("machine: the runtime's home is not known (cd && pwd answered %q, %q): give Options.Home, or an absolute path", res.Stdout, res.Stderr)
	}
	m.home = path.Clean(home)
	return m.home, nil
}

// Abs returns the absolute, clean path that a file call given p touches:
// p cleaned when absolute, otherwise resolved against Home, with ~ and
// ~/... expanded. ~user is refused, and so is an empty path, with an
// *aci.Error of code invalid_action.
func (m *Tools) Abs(ctx context.Context, p string) (string, error) {
	switch {
	case p == "":
		return "", aci.Errorf(aci.CodeInvalidAction, "an empty path")
	case strings.IndexByte(p, 0) >= 0:
		return "", aci.Errorf(aci.CodeInvalidAction, "a path holding a NUL byte")
	case path.IsAbs(p):
		return path.Clean(p), nil
	}
	rel := p
	if strings.HasPrefix(p, "~") {
		first, rest, _ := strings.Cut(p, "/")
		if first != "~" {
			return "", aci.Errorf(aci.CodeInvalidAction, "path %q: only ~ and ~/ are expanded (another user's home is not)", p)
		}
		rel = rest
	}
	home, err := m.Home(ctx)
	if err != nil {
		return "", err
	}
	return path.Join(home, rel), nil
}

// fileCall resolves p and runs s with it (and args after) as its
// arguments, giving a failure the *fs.PathError of op on p.
func (m *Tools) fileCall(ctx context.Context, op, p string, s *hosttool.Script, stdin *string, args func(abs string) []string) (*aci.ExecResult, string, error) {
	abs, err := m.Abs(ctx, p)
	if err != nil {
		return nil, "", &fs.PathError{Op: op, Path: p, Err: err}
	}
	res, err := m.c.Exec(ctx, &aci.ExecRequest{Argv: s.Argv(args(abs)...), Stdin: stdin})
	if err != nil {
		return nil, abs, &fs.PathError{Op: op, Path: abs, Err: err}
	}
	return res, abs, fileStatus(op, abs, res)
}

// ReadFileAt reads at most n bytes (at most MaxChunk) of the regular file
// at p from offset off, in one exec, and returns them with the file's
// size: fewer than n bytes came when off+n passes the end. A missing file
// is a *fs.PathError wrapping fs.ErrNotExist; a folder or a device one
// wrapping fs.ErrInvalid.
func (m *Tools) ReadFileAt(ctx context.Context, p string, off int64, n int) (data []byte, size int64, err error) {
	if off < 0 || n < 0 || n > MaxChunk {
		return nil, 0, &fs.PathError{Op: "read", Path: p, Err: aci.Errorf(aci.CodeInvalidAction, "offset %d, length %d: a length from 0 to %d at an offset from 0", off, n, MaxChunk)}
	}
	res, abs, err := m.fileCall(ctx, "read", p, hosttool.ReadFile, nil, func(abs string) []string {
		return []string{abs, strconv.FormatInt(off, 10), strconv.Itoa(n)}
	})
	if err != nil {
		return nil, 0, err
	}
	pe := func(err error) error { return &fs.PathError{Op: "read", Path: abs, Err: err} }
	if res.StdoutTruncated {
		return nil, 0, pe(aci.Errorf(aci.CodeTooLarge, "the chunk's base64 is over the runtime's exec output budget: read smaller chunks"))
	}
	head, body, _ := strings.Cut(res.Stdout, "\n")
	size, perr := strconv.ParseInt(head, 10, 64)
	if perr != nil || size < 0 {
		return nil, 0, pe(fmt.Errorf("machine: the read script answered %q for a size", head))
	}
	data, err = base64.StdEncoding.DecodeString(strings.Map(dropSpace, body))
	if err != nil {
		return nil, 0, pe(fmt.Errorf("machine: decoding the file's base64: %w", err))
	}
	return data, size, nil
}

// ReadFile returns the contents of the regular file at p, read in chunks
// of MaxChunk. A file over ReadOptions.MaxBytes is a *fs.PathError
// wrapping an *aci.Error of code too_large; see ReadFileAt for the
// others. A file that grows while it is read is read to the size it had
// at the first chunk.
func (m *Tools) ReadFile(ctx context.Context, p string, opts *ReadOptions) ([]byte, error) {
	max := int64(defaultMaxRead)
	if opts != nil && opts.MaxBytes > 0 {
		max = opts.MaxBytes
	}
	first, size, err := m.ReadFileAt(ctx, p, 0, MaxChunk)
	if err != nil {
		return nil, err
	}
	if size > max {
		return nil, &fs.PathError{Op: "read", Path: p, Err: aci.Errorf(aci.CodeTooLarge, "%d bytes, over the %d-byte bound", size, max)}
	}
	data := make([]byte, 0, size)
	data = append(data, first...)
	for int64(len(data)) < size {
		chunk, _, err := m.ReadFileAt(ctx, p, int64(len(data)), int(min(MaxChunk, size-int64(len(data)))))
		if err != nil {
			return nil, err
		}
		if len(chunk) == 0 {
			break // the file shrank
		}
		data = append(data, chunk...)
	}
	return data, nil
}

// write runs the write script in mode on p, one exec per MaxWrite bytes.
func (m *Tools) write(ctx context.Context, p string, data []byte, mode string, off int64) error {
	for first := true; first || len(data) > 0; first = false {
		chunk := data[:min(len(data), MaxWrite)]
		data = data[len(chunk):]
		in := base64.StdEncoding.EncodeToString(chunk)
		o := "0"
		if mode == hosttool.WriteAt {
			o = strconv.FormatInt(off, 10)
		}
		if _, _, err := m.fileCall(ctx, "write", p, hosttool.WriteFile, &in, func(abs string) []string {
			return []string{mode, abs, o}
		}); err != nil {
			return err
		}
		off += int64(len(chunk))
		if mode == hosttool.WriteReplace {
			mode = hosttool.WriteAppend
		}
	}
	return nil
}

// WriteFile replaces the contents of the file at p with data, creating
// it (with the mode the umask gives, 0644 under the usual 022). It writes
// in place, as shell redirection does: an existing file keeps its mode,
// owner and hard links, a symlink's target is written, and a reader may
// see a part. Data over MaxWrite is written in several execs, the first
// truncating the file. A missing parent folder is a *fs.PathError
// wrapping fs.ErrNotExist; a folder at p one wrapping fs.ErrInvalid.
func (m *Tools) WriteFile(ctx context.Context, p string, data []byte) error {
	return m.write(ctx, p, data, hosttool.WriteReplace, 0)
}

// AppendFile adds data at the end of the file at p, creating it as
// WriteFile does.
func (m *Tools) AppendFile(ctx context.Context, p string, data []byte) error {
	return m.write(ctx, p, data, hosttool.WriteAppend, 0)
}

// WriteFileAt writes data into the file at p from offset off, keeping
// what is before and after it (a file shorter than off is extended with
// zeros), creating it as WriteFile does.
func (m *Tools) WriteFileAt(ctx context.Context, p string, data []byte, off int64) error {
	if off < 0 {
		return &fs.PathError{Op: "write", Path: p, Err: aci.Errorf(aci.CodeInvalidAction, "a negative offset, %d", off)}
	}
	return m.write(ctx, p, data, hosttool.WriteAt, off)
}

// A FileInfo is one entry of a folder listing.
type FileInfo struct {
	Name string `json:"name"`
	// Kind is "file", "dir", "symlink" or "other" (a device, a socket, a
	// pipe).
	Kind string `json:"kind"`
	// Size is a regular file's size in bytes; 0 for the other kinds.
	Size int64 `json:"size"`
}

// ListOptions choose a page of ListDirPage. A nil *ListOptions means the
// first page.
type ListOptions struct {
	// Cursor is the Next of the page before; "" for the first page.
	Cursor string
	// Limit is the most entries the page holds, up to MaxListPage;
	// default 1000.
	Limit int
}

// A DirPage is one page of a listing.
type DirPage struct {
	Entries []FileInfo
	// Next is the cursor of the next page; "" on the last one.
	Next string
}

// ListDirPage lists one page of the folder at p. The order is stable
// (names in byte order, those not starting with "." first, then those
// starting with one ".", then with ".."), and a cursor names where the
// page before ended, so a page is neither skipped nor repeated when
// entries come or go between calls. A page costs one read of the folder's
// names, and a look at its own entries only: the first page of a folder
// of 20,000 entries comes as fast as the last. A missing folder is a
// *fs.PathError wrapping fs.ErrNotExist, a file one wrapping
// fs.ErrInvalid. A page whose records pass the runtime's exec output
// budget ends early, with Next set. Names that are not UTF-8 come with
// their invalid bytes replaced.
func (m *Tools) ListDirPage(ctx context.Context, p string, opts *ListOptions) (*DirPage, error) {
	var o ListOptions
	if opts != nil {
		o = *opts
	}
	if o.Limit == 0 {
		o.Limit = defaultListPage
	}
	if o.Limit < 0 || o.Limit > MaxListPage {
		return nil, &fs.PathError{Op: "list", Path: p, Err: aci.Errorf(aci.CodeInvalidAction, "a limit of %d: from 1 to %d", o.Limit, MaxListPage)}
	}
	res, _, err := m.fileCall(ctx, "list", p, hosttool.ListFiles, nil, func(abs string) []string {
		return []string{abs, o.Cursor, strconv.Itoa(o.Limit)}
	})
	if err != nil {
		return nil, err
	}
	recs := strings.Split(res.Stdout, "\x00")
	recs = recs[:len(recs)-1] // what follows the last NUL: "" or a cut record
	page := &DirPage{Entries: make([]FileInfo, 0, min(len(recs), o.Limit))}
	for _, rec := range recs {
		if len(page.Entries) == o.Limit {
			page.Next = page.Entries[len(page.Entries)-1].Name
			break
		}
		kind, rest, _ := strings.Cut(rec, "/")
		size, name, _ := strings.Cut(rest, "/")
		e := FileInfo{Name: name, Kind: kindName(kind)}
		if e.Kind == "file" {
			e.Size, _ = strconv.ParseInt(size, 10, 64)
		}
		page.Entries = append(page.Entries, e)
	}
	if res.StdoutTruncated && page.Next == "" && len(page.Entries) > 0 {
		page.Next = page.Entries[len(page.Entries)-1].Name
	}
	return page, nil
}

func kindName(k string) string {
	switch k {
	case "f":
		return "file"
	case "d":
		return "dir"
	case "l":
		return "symlink"
	}
	return "other"
}

// ListDir lists the whole folder at p, page by page (see ListDirPage for
// the order and the errors), hidden entries included.
func (m *Tools) ListDir(ctx context.Context, p string) ([]FileInfo, error) {
	var all []FileInfo
	o := &ListOptions{Limit: MaxListPage}
	for {
		page, err := m.ListDirPage(ctx, p, o)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Entries...)
		if page.Next == "" {
			return all, nil
		}
		o.Cursor = page.Next
	}
}

// A FileStat describes one path.
type FileStat struct {
	// Path is the absolute path described.
	Path string `json:"path"`
	// Kind is "file", "dir", "symlink" or "other"; a symlink is not
	// followed.
	Kind string `json:"kind"`
	// Size is the size in bytes (a symlink's: its target's length).
	Size int64 `json:"size"`
	// Mode holds the permission bits (0644).
	Mode fs.FileMode `json:"mode"`
	// ModTime is the last modification, to the second.
	ModTime time.Time `json:"mod_time"`
	// Target is a symlink's target, as written in it.
	Target string `json:"target,omitempty"`
}

// Stat describes the path p itself (a symlink is not followed). A missing
// path is a *fs.PathError wrapping fs.ErrNotExist.
func (m *Tools) Stat(ctx context.Context, p string) (*FileStat, error) {
	res, abs, err := m.fileCall(ctx, "stat", p, hosttool.Stat, nil, func(abs string) []string { return []string{abs} })
	if err != nil {
		return nil, err
	}
	head, target, _ := strings.Cut(res.Stdout, "\n")
	f := strings.Fields(head)
	bad := &fs.PathError{Op: "stat", Path: abs, Err: fmt.Errorf("machine: the stat script answered %q", res.Stdout)}
	if len(f) != 4 {
		return nil, bad
	}
	size, err1 := strconv.ParseInt(f[1], 10, 64)
	mode, err2 := strconv.ParseUint(f[2], 8, 32)
	mtime, err3 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, bad
	}
	st := &FileStat{Path: abs, Kind: kindName(f[0]), Size: size, Mode: fs.FileMode(mode) & fs.ModePerm, ModTime: time.Unix(mtime, 0).UTC()}
	for bit, m := range map[uint64]fs.FileMode{0o4000: fs.ModeSetuid, 0o2000: fs.ModeSetgid, 0o1000: fs.ModeSticky} {
		if mode&bit != 0 {
			st.Mode |= m
		}
	}
	if st.Kind == "symlink" {
		st.Target = strings.TrimSuffix(target, "\n")
	}
	return st, nil
}

// Exists reports whether p names anything, a dangling symlink included.
func (m *Tools) Exists(ctx context.Context, p string) (bool, error) {
	res, abs, err := m.fileCall(ctx, "exists", p, hosttool.Exists, nil, func(abs string) []string { return []string{abs} })
	if err != nil {
		return false, err
	}
	switch strings.TrimSpace(res.Stdout) {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	}
	return false, &fs.PathError{Op: "exists", Path: abs, Err: fmt.Errorf("machine: the exists script answered %q", res.Stdout)}
}

// Mkdir makes the folder p. Its parent must exist (fs.ErrNotExist), and p
// must not (fs.ErrExist).
func (m *Tools) Mkdir(ctx context.Context, p string) error {
	_, _, err := m.fileCall(ctx, "mkdir", p, hosttool.Mkdir, nil, func(abs string) []string { return []string{abs, "0"} })
	return err
}

// MkdirAll makes the folder p and its missing parents; a folder already
// there is no error, a file one wrapping fs.ErrInvalid.
func (m *Tools) MkdirAll(ctx context.Context, p string) error {
	_, _, err := m.fileCall(ctx, "mkdir", p, hosttool.Mkdir, nil, func(abs string) []string { return []string{abs, "1"} })
	return err
}

// RenameOptions configure Rename. A nil *RenameOptions means defaults.
type RenameOptions struct {
	// Overwrite replaces a file (never a folder) at the destination;
	// by default an existing destination is refused with fs.ErrExist.
	Overwrite bool
}

// Rename moves from to to, a folder with everything in it. to names the
// result: a folder there is never moved into. A missing from (or folder
// of to) is a *fs.PathError wrapping fs.ErrNotExist, an existing to one
// wrapping fs.ErrExist (or, with Overwrite, fs.ErrInvalid for a folder).
func (m *Tools) Rename(ctx context.Context, from, to string, opts *RenameOptions) error {
	dst, err := m.Abs(ctx, to)
	if err != nil {
		return &fs.PathError{Op: "move", Path: to, Err: err}
	}
	over := "0"
	if opts != nil && opts.Overwrite {
		over = "1"
	}
	_, _, err = m.fileCall(ctx, "move", from, hosttool.Move, nil, func(abs string) []string { return []string{abs, dst, over} })
	return err
}

// Remove deletes the file, symlink (not its target) or empty folder at p.
// A folder with entries is a *fs.PathError wrapping ErrNotEmpty.
func (m *Tools) Remove(ctx context.Context, p string) error {
	_, _, err := m.fileCall(ctx, "delete", p, hosttool.Delete, nil, func(abs string) []string { return []string{abs, "0"} })
	return err
}

// RemoveAll deletes p and, for a folder, everything in it.
func (m *Tools) RemoveAll(ctx context.Context, p string) error {
	_, _, err := m.fileCall(ctx, "delete", p, hosttool.Delete, nil, func(abs string) []string { return []string{abs, "1"} })
	return err
}

// ErrNotEmpty is wrapped by Remove's error for a folder with entries.
var ErrNotEmpty = errors.New("machine: the folder is not empty (RemoveAll deletes it with its entries)")

// fileStatus turns a file script's exit into the error it reports.
func fileStatus(op, p string, res *aci.ExecResult) error {
	pe := func(err error) error { return &fs.PathError{Op: op, Path: p, Err: err} }
	switch {
	case res.TimedOut:
		return pe(aci.Errorf(aci.CodeTimeout, "the runtime killed the command at its deadline"))
	case res.ExitCode == nil:
		return pe(fmt.Errorf("machine: the command was killed by signal %d", deref(res.Signal)))
	}
	switch *res.ExitCode {
	case 0:
		return nil
	case hosttool.ExitNotExist:
		return pe(fs.ErrNotExist)
	case hosttool.ExitExists:
		return pe(fs.ErrExist)
	case hosttool.ExitNotEmpty:
		return pe(ErrNotEmpty)
	case hosttool.ExitWrongKind:
		switch op {
		case "list":
			return pe(fmt.Errorf("%w: not a folder", fs.ErrInvalid))
		case "write", "move":
			return pe(fmt.Errorf("%w: a folder", fs.ErrInvalid))
		case "mkdir":
			return pe(fmt.Errorf("%w: a file is there", fs.ErrInvalid))
		}
		return pe(fmt.Errorf("%w: not a regular file", fs.ErrInvalid))
	}
	msg := strings.TrimSpace(res.Stderr)
	if msg == "" {
		msg = "exit status " + strconv.Itoa(*res.ExitCode)
	}
	switch {
	case strings.Contains(msg, "ermission denied"):
		return pe(fmt.Errorf("%w: %s", fs.ErrPermission, msg))
	case strings.Contains(msg, "Not a directory"):
		return pe(fmt.Errorf("%w: %s", fs.ErrInvalid, msg))
	}
	return pe(errors.New("machine: " + msg))
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func dropSpace(r rune) rune {
	if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
		return -1
	}
	return r
}
