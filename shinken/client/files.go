package client

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"shinken.dev/go/shinken/aci"
)

// Files on the runtime's machine, read, written and listed through exec:
// ACI has no file verbs, and an exec is what the runtime's Authorizer and
// plugins already judge, so a policy that forbids commands forbids these
// too (the refusal is the exec's, permission_denied). Each call runs one
// POSIX shell command (/bin/sh, base64, wc, mktemp, mv) on the runtime's
// machine; contents travel as base64, so they are binary-safe.

// DefaultMaxRead is the default bound of ReadFile: the base64 of a larger
// file would not fit the runtime's default output budget (1 MiB).
const DefaultMaxRead = 512 << 10

// MaxWrite bounds WriteFile: its base64 must fit one ACI message.
const MaxWrite = 8 << 20

// ReadOptions configure ReadFile. A nil *ReadOptions means defaults.
type ReadOptions struct {
	// MaxBytes refuses a larger file; default DefaultMaxRead. A file of
	// more than three quarters of the runtime's exec output budget cannot
	// be read whatever the bound.
	MaxBytes int64
}

// Exit statuses of the file commands, distinct from the tools' own.
const (
	exitNotExist  = 90
	exitWrongKind = 91
	exitTooLarge  = 92
	exitFailed    = 93
)

const readScript = `f=$1 max=$2
[ -e "$f" ] || exit 90
[ -f "$f" ] || exit 91
[ -r "$f" ] || { echo "permission denied" >&2; exit 93; }
s=$(wc -c < "$f" | tr -d ' ') || exit 93
[ "$s" -le "$max" ] || { echo "$s" >&2; exit 92; }
base64 < "$f"`

// ReadFile returns the contents of the regular file at path on the
// runtime's machine. A missing file is a *fs.PathError wrapping
// fs.ErrNotExist; a directory or device one wrapping fs.ErrInvalid; a file
// over the bound one wrapping an *aci.Error of code too_large; a refused
// exec the runtime's *aci.Error (permission_denied).
func (c *Client) ReadFile(ctx context.Context, path string, opts *ReadOptions) ([]byte, error) {
	max := int64(DefaultMaxRead)
	if opts != nil && opts.MaxBytes > 0 {
		max = opts.MaxBytes
	}
	res, err := c.fileExec(ctx, readScript, nil, path, strconv.FormatInt(max, 10))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if err := fileStatus("read", path, res, max); err != nil {
		return nil, err
	}
	if res.StdoutTruncated {
		return nil, &fs.PathError{Op: "read", Path: path, Err: aci.Errorf(aci.CodeTooLarge, "the file's base64 is over the runtime's exec output budget")}
	}
	data, err := base64.StdEncoding.DecodeString(strings.Map(dropSpace, res.Stdout))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("client: decoding the file's base64: %w", err)}
	}
	return data, nil
}

const writeScript = `f=$1
d=$(dirname -- "$f")
[ -d "$d" ] || exit 90
[ ! -d "$f" ] || exit 91
t=$(mktemp "$f.XXXXXX") || exit 93
if base64 -d > "$t" && mv -f -- "$t" "$f"; then exit 0; fi
rm -f -- "$t"
exit 93`

// WriteFile replaces the file at path on the runtime's machine with data,
// at most MaxWrite bytes: written beside it and renamed over it, so a
// reader sees the old contents or the new, never a part. A missing parent
// directory is a *fs.PathError wrapping fs.ErrNotExist; a directory at
// path one wrapping fs.ErrInvalid.
func (c *Client) WriteFile(ctx context.Context, path string, data []byte) error {
	if len(data) > MaxWrite {
		return &fs.PathError{Op: "write", Path: path, Err: aci.Errorf(aci.CodeTooLarge, "%d bytes; at most %d", len(data), MaxWrite)}
	}
	in := base64.StdEncoding.EncodeToString(data)
	res, err := c.fileExec(ctx, writeScript, &in, path)
	if err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	return fileStatus("write", path, res, 0)
}

// A FileInfo is one entry of a directory listing.
type FileInfo struct {
	Name string `json:"name"`
	// Kind is "file", "dir", "symlink" or "other" (a device, a socket, a
	// pipe).
	Kind string `json:"kind"`
	// Size is a regular file's size in bytes; 0 for the other kinds.
	Size int64 `json:"size"`
}

const listScript = `cd -- "$1" 2>/dev/null || { [ -e "$1" ] || exit 90; exit 91; }
for f in * .[!.]* ..?*; do
  [ -e "$f" ] || [ -L "$f" ] || continue
  if [ -L "$f" ]; then k=symlink s=0
  elif [ -d "$f" ]; then k=dir s=0
  elif [ -f "$f" ]; then k=file s=$(wc -c < "$f" 2>/dev/null | tr -d ' ')
  else k=other s=0; fi
  printf '%s/%s/%s\0' "$k" "${s:-0}" "$f"
done`

// ListDir lists the directory at path on the runtime's machine, in the
// shell's order (names sorted), hidden entries included. A missing
// directory is a *fs.PathError wrapping fs.ErrNotExist, a file one
// wrapping fs.ErrInvalid; a listing over the runtime's exec output budget
// is one wrapping an *aci.Error of code too_large. Names that are not
// UTF-8 come with their invalid bytes replaced.
func (c *Client) ListDir(ctx context.Context, path string) ([]FileInfo, error) {
	res, err := c.fileExec(ctx, listScript, nil, path)
	if err != nil {
		return nil, &fs.PathError{Op: "list", Path: path, Err: err}
	}
	if err := fileStatus("list", path, res, 0); err != nil {
		return nil, err
	}
	if res.StdoutTruncated {
		return nil, &fs.PathError{Op: "list", Path: path, Err: aci.Errorf(aci.CodeTooLarge, "the listing is over the runtime's exec output budget")}
	}
	var out []FileInfo
	for _, rec := range strings.Split(strings.TrimSuffix(res.Stdout, "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		kind, rest, _ := strings.Cut(rec, "/")
		size, name, _ := strings.Cut(rest, "/")
		n, _ := strconv.ParseInt(size, 10, 64)
		out = append(out, FileInfo{Name: name, Kind: kind, Size: n})
	}
	return out, nil
}

// fileExec runs script under /bin/sh with args as $1...
func (c *Client) fileExec(ctx context.Context, script string, stdin *string, args ...string) (*aci.ExecResult, error) {
	return c.Exec(ctx, &aci.ExecRequest{Argv: append([]string{"/bin/sh", "-c", script, "sh"}, args...), Stdin: stdin})
}

// fileStatus turns a file command's exit into the error it reports.
func fileStatus(op, path string, res *aci.ExecResult, max int64) error {
	pe := func(err error) error { return &fs.PathError{Op: op, Path: path, Err: err} }
	switch {
	case res.TimedOut:
		return pe(aci.Errorf(aci.CodeTimeout, "the runtime killed the command at its deadline"))
	case res.ExitCode == nil:
		return pe(fmt.Errorf("client: the command was killed by signal %d", deref(res.Signal)))
	}
	switch *res.ExitCode {
	case 0:
		return nil
	case exitNotExist:
		return pe(fs.ErrNotExist)
	case exitWrongKind:
		if op == "list" {
			return pe(fmt.Errorf("%w: not a directory", fs.ErrInvalid))
		}
		if op == "write" {
			return pe(fmt.Errorf("%w: a directory", fs.ErrInvalid))
		}
		return pe(fmt.Errorf("%w: not a regular file", fs.ErrInvalid))
	case exitTooLarge:
		return pe(aci.Errorf(aci.CodeTooLarge, "%s bytes, over the %d-byte bound", strings.TrimSpace(res.Stderr), max))
	}
	msg := strings.TrimSpace(res.Stderr)
	if msg == "" {
		msg = "exit status " + strconv.Itoa(*res.ExitCode)
	}
	if strings.Contains(msg, "ermission denied") {
		return pe(fmt.Errorf("%w: %s", fs.ErrPermission, msg))
	}
	return pe(errors.New("client: " + msg))
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
