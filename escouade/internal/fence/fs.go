package fence

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"shinken.dev/go/escouade/internal/beneath"
	"shinken.dev/go/escouade/internal/fields"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/protocol"
)

// The fences of fs/*.
const (
	maxFsRead  = 256 << 10 // fs/read, unless limits.fileBytes asks for more (4 MiB at most)
	maxFsWrite = 4 << 20   // fs/write
	maxFsList  = 4096      // fs/list's entries; past it the list is truncated
)

// An fsRoot is one of the folders fs/* may reach: its name in
// permissions.files, its real path (links followed), and its access.
type fsRoot struct {
	name   string
	dir    string // as configured
	real   string // links followed
	access manifest.Access
}

func isAgentRoot(name string) bool {
	return name == "agent" || name == "agentRepo" || name == "agentHome"
}

// fsParams are the params of fs/*: FsPath, and FsWriteParams for fs/write.
type fsParams struct {
	agent   string
	root    string
	path    string
	data    []byte
	hasData bool
	append  bool
}

// The params of fs/* as they are written, decoded by name: every method
// names a path, and fs/write what to write.
type (
	fsPathJSON struct {
		Agent string  `json:"agent"`
		Root  *string `json:"root"` // nil for none; "" is no root
		Path  string  `json:"path" wire:"required"`
	}
	fsWriteJSON struct {
		Text       *string `json:"text"`
		DataBase64 *string `json:"dataBase64"`
		Append     bool    `json:"append"`
	}
)

func parseFsParams(params []byte, write bool) (*fsParams, error) {
	var pj fsPathJSON
	var wj fsWriteJSON
	err := decodeParams(params, &pj)
	if write {
		err = errors.Join(err, decodeParams(params, &wj))
	}
	if err != nil {
		return nil, err
	}
	fp := &fsParams{agent: pj.Agent, path: pj.Path, append: wj.Append}
	if pj.Root != nil {
		if !slices.Contains(manifest.FileRoots(), *pj.Root) {
			return nil, fields.Errorf("root", "want plugin, agent, agentRepo, agentHome or temp")
		}
		fp.root = *pj.Root
	}
	if write {
		switch {
		case wj.Text != nil && wj.DataBase64 != nil:
			return nil, fields.Errorf("dataBase64", "text or dataBase64, not both")
		case wj.Text != nil:
			fp.data, fp.hasData = []byte(*wj.Text), true
		case wj.DataBase64 != nil:
			data, err := base64.StdEncoding.Strict().DecodeString(*wj.DataBase64)
			if err != nil {
				return nil, fields.Errorf("dataBase64", "not base64")
			}
			fp.data, fp.hasData = data, true
		default:
			return nil, fields.Errorf("text", "what to write: text or dataBase64")
		}
	}
	return fp, nil
}

// partRefusal says why one part of a path is refused, or "".
func partRefusal(part string) string {
	switch {
	case part == "..":
		return "a .. leaves its root"
	case strings.HasPrefix(part, "~"):
		return "a ~ is never expanded: " + part
	case strings.HasPrefix(part, "."):
		return "a hidden file or folder: " + part
	}
	return ""
}

// pathRefusal says why a path, relative to a root, is refused as written,
// or "". Hidden files and folders are refused under every root: an agent's
// home holds .ssh and .aws, a repository .git and .env.
func pathRefusal(rel string) string {
	if rel == "." || rel == "" {
		return ""
	}
	for _, part := range strings.Split(rel, "/") {
		if part == "" || part == "." {
			continue
		}
		if why := partRefusal(part); why != "" {
			return why
		}
	}
	return ""
}

// syntaxRefusal says why a path is refused before anything else is looked
// at, or "".
func syntaxRefusal(p string) string {
	switch {
	case strings.ContainsRune(p, 0):
		return "a NUL in a path"
	case strings.ContainsRune(p, '\\'):
		return "a backslash: the parts of a path are separated by /"
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "a .. leaves its root"
		}
		if strings.HasPrefix(part, "~") {
			return "a ~ is never expanded: " + part
		}
	}
	return ""
}

// realPath follows the links of p, as far as the path exists: the parts
// that do not exist yet are kept as they are.
func realPath(p string) (string, error) {
	var rest []string
	cur := filepath.Clean(p)
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				r = filepath.Join(r, rest[i])
			}
			return r, nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", err
		}
		rest = append(rest, filepath.Base(cur))
		cur = parent
	}
}

// fsRoots returns the roots the plugin declared that exist for agent (nil
// for none: plugin and temp need no agent).
func (p *Plugin) fsRoots(agent *Agent) []fsRoot {
	var roots []fsRoot
	for _, name := range manifest.FileRoots() {
		access, ok := p.cfg.Files[name]
		if !ok {
			continue
		}
		var dir string
		switch name {
		case "plugin":
			dir = p.cfg.Dir
		case "temp":
			dir, _ = p.h.TempDir()
		case "agent", "agentRepo", "agentHome":
			if agent == nil {
				continue
			}
			dir = map[string]string{"agent": agent.Roots.Agent, "agentRepo": agent.Roots.Repo, "agentHome": agent.Roots.Home}[name]
		}
		if dir == "" {
			continue
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			continue
		}
		roots = append(roots, fsRoot{name: name, dir: filepath.Clean(dir), real: real, access: access})
	}
	return roots
}

// longest returns the root of roots that holds p most closely; match
// picks which of a root's paths to compare.
func longest(roots []fsRoot, p string, match func(fsRoot) string) (fsRoot, bool) {
	var best fsRoot
	found := false
	for _, r := range roots {
		d := match(r)
		if beneath.Within(d, p) && (!found || len(d) > len(match(best))) {
			best, found = r, true
		}
	}
	return best, found
}

// An fsTarget is what an fs/* request names, judged: the root it falls
// under once links are followed, and its path there.
type fsTarget struct {
	root fsRoot
	rel  string // under root.real, slash-separated, links followed; "." for the root
	real string // its real path
	// linked: the path as written went through a link (one the agent's
	// roots hold); a read follows it, a write is refused.
	linked bool
	avoid  []beneath.Key // the private projects' folders, by identity
}

// resolve judges what fp names, for an access of need, on the paths as
// written and on the paths once links are followed.
func (p *Plugin) resolve(ctx context.Context, fp *fsParams, need manifest.Access) (*fsTarget, error) {
	if why := syntaxRefusal(fp.path); why != "" {
		return nil, errorf(protocol.CodeRefused, "refused: %s", why)
	}
	var agent *Agent
	if fp.agent != "" && (fp.root == "" || isAgentRoot(fp.root)) {
		a, err := p.h.Agent(fp.agent)
		if err != nil {
			return nil, err
		}
		agent = a
	}
	roots := p.fsRoots(agent)
	var full, writtenRoot, writtenRel string
	if fp.root != "" {
		access, ok := p.cfg.Files[fp.root]
		if !ok {
			return nil, errorf(protocol.CodeRefused, "refused: the root %s is not declared in permissions.files", fp.root)
		}
		if need == manifest.AccessWrite && access != manifest.AccessWrite {
			return nil, errorf(protocol.CodeRefused, "refused: the root %s is declared read, not write", fp.root)
		}
		if isAgentRoot(fp.root) && agent == nil {
			return nil, fields.Errorf("agent", "the root %s is an agent's: name the agent", fp.root)
		}
		if strings.HasPrefix(fp.path, "/") || filepath.IsAbs(fp.path) {
			return nil, errorf(protocol.CodeRefused, "refused: an absolute path with a root: the path is relative to the root")
		}
		i := slices.IndexFunc(roots, func(r fsRoot) bool { return r.name == fp.root })
		if i < 0 {
			return nil, errorf(protocol.CodeRefused, "refused: the root %s is not there", fp.root)
		}
		if why := pathRefusal(fp.path); why != "" {
			return nil, errorf(protocol.CodeRefused, "refused: %s", why)
		}
		full = filepath.Join(roots[i].real, filepath.FromSlash(fp.path))
		writtenRoot, writtenRel = roots[i].name, filepath.ToSlash(filepath.Clean(filepath.FromSlash(fp.path)))
	} else {
		if !filepath.IsAbs(fp.path) {
			return nil, errorf(protocol.CodeRefused, "refused: a path without a root must be absolute, under a root of the agent")
		}
		full = filepath.Clean(fp.path)
		// The parts below the root, as written, are judged as a relative
		// path's are; the root's own path may hold anything.
		if r, ok := longest(roots, full, func(r fsRoot) string { return r.dir }); ok {
			rel, _ := filepath.Rel(r.dir, full)
			if why := pathRefusal(filepath.ToSlash(rel)); why != "" {
				return nil, errorf(protocol.CodeRefused, "refused: %s", why)
			}
			writtenRoot, writtenRel = r.name, filepath.ToSlash(rel)
		}
	}
	real, err := realPath(full)
	if err != nil {
		return nil, errorf(protocol.CodeRefused, "refused: the path cannot be resolved")
	}
	root, ok := longest(roots, real, func(r fsRoot) string { return r.real })
	if !ok {
		return nil, errorf(protocol.CodeRefused, "refused: the path, links followed, is not under a root of the plugin or of the agent")
	}
	if need == manifest.AccessWrite && root.access != manifest.AccessWrite {
		return nil, errorf(protocol.CodeRefused, "refused: the path, links followed, is under the root %s, declared read", root.name)
	}
	rel, err := filepath.Rel(root.real, real)
	if err != nil {
		return nil, errorf(protocol.CodeRefused, "refused: the path cannot be resolved")
	}
	rel = filepath.ToSlash(rel)
	if why := pathRefusal(rel); why != "" {
		return nil, errorf(protocol.CodeRefused, "refused: links followed, %s", why)
	}
	if root.name == "plugin" && strings.EqualFold(rel, manifest.Name) {
		return nil, errorf(protocol.CodeRefused, "refused: the manifest")
	}
	if why := p.fenceRefusal(ctx, real, root, agent); why != "" {
		return nil, errorf(protocol.CodeRefused, "refused: %s", why)
	}
	linked := writtenRoot != root.name || writtenRel != rel
	_, avoid, err := p.listPrivate(ctx)
	if err != nil {
		return nil, errorf(protocol.CodeRefused, "refused: the projects cannot be listed to judge the path")
	}
	return &fsTarget{root: root, rel: rel, real: real, linked: linked, avoid: avoid}, nil
}

// fenceRefusal applies the fence of private projects: a plugin not turned
// on for a private project reaches nothing of it, neither through the agent
// that works on it nor through a path into its folder.
func (p *Plugin) fenceRefusal(ctx context.Context, real string, root fsRoot, agent *Agent) string {
	if agent != nil && agent.Project != "" && isAgentRoot(root.name) {
		if info, err := p.h.Project(ctx, agent.Project); err == nil && info.Private && !info.On {
			return "« Projet privé »: the agent works on a private project the plugin is not on for"
		}
	}
	private, err := p.listPrivateRoots(ctx)
	if err != nil {
		return "the projects cannot be listed to judge the path"
	}
	for _, pr := range private {
		if beneath.Within(pr, real) {
			return "« Projet privé »: the path is in a private project the plugin is not on for"
		}
	}
	return ""
}

// listPrivateRoots returns the real paths of the folders of the private
// projects the plugin is not on for.
func (p *Plugin) listPrivateRoots(ctx context.Context) ([]string, error) {
	roots, _, err := p.listPrivate(ctx)
	return roots, err
}

// listPrivate returns the real paths of the folders of the private
// projects the plugin is not on for, and their identities as first seen:
// a folder exchanged with one later takes its path, not its identity.
func (p *Plugin) listPrivate(ctx context.Context) ([]string, []beneath.Key, error) {
	all, ok, err := p.h.Projects(ctx)
	if !ok || err != nil {
		return nil, nil, err
	}
	var roots []string
	var keys []beneath.Key
	for _, info := range all {
		if info.Root == "" || !info.Private || info.On {
			continue
		}
		if pr, err := realPath(info.Root); err == nil {
			roots = append(roots, pr)
			if fi, err := os.Stat(pr); err == nil {
				if dev, ino, ok := beneath.IdentityOf(fi); ok {
					keys = append(keys, p.rootIDs.First(pr, beneath.Key{Dev: dev, Ino: ino}))
				}
			}
		}
	}
	return roots, keys, nil
}

// privateRoots is listPrivateRoots for fs/list, which leaves them out of
// what it lists (a listing that fails to know them lists what resolve let
// through).
func (p *Plugin) privateRoots(ctx context.Context) []string {
	roots, _ := p.listPrivateRoots(ctx)
	return roots
}

// fsError turns an error of os.Root into the protocol's: a missing path is
// notFound, a path that escapes its root refused, anything else failed.
func fsError(err error) error {
	switch {
	case errors.Is(err, beneath.ErrLinkOnTheWay), errors.Is(err, beneath.ErrPluginFolder), errors.Is(err, beneath.ErrMoved), errors.Is(err, beneath.ErrAvoided),
		errors.Is(err, beneath.ErrNotBeneath), errors.Is(err, beneath.ErrBadRelative):
		return errorf(protocol.CodeRefused, "refused: %v", err)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return errorf(protocol.CodeNotFound, "notFound: no such file or folder")
	case errors.Is(err, syscall.ELOOP), strings.Contains(err.Error(), "escapes"):
		return errorf(protocol.CodeRefused, "refused: the path, links followed, leaves its root")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return errorf(protocol.CodeFailed, "failed: %s: %v", pe.Op, pe.Err)
	}
	return errorf(protocol.CodeFailed, "failed: the path cannot be reached")
}

// fsFit keeps an error of method within the codes its description lists:
// fs/write has no notFound (failed), fs/stat and fs/list no failed
// (refused: the path cannot be reached), fs/canon neither (refused).
func fsFit(method string, err error) error {
	var e *protocol.Error
	if !errors.As(err, &e) {
		return err
	}
	code := e.Code
	switch {
	case method == "fs/write" && code == protocol.CodeNotFound:
		code = protocol.CodeFailed
	case (method == "fs/stat" || method == "fs/list") && code == protocol.CodeFailed:
		code = protocol.CodeRefused
	case method == "fs/canon" && (code == protocol.CodeFailed || code == protocol.CodeNotFound):
		code = protocol.CodeRefused
	}
	if code == e.Code {
		return err
	}
	_, msg, _ := strings.Cut(e.Message, ": ")
	return &protocol.Error{Code: code, Message: code.String() + ": " + msg}
}

// fsReadResult is the answer to fs/read: Text when the file is UTF-8,
// DataBase64 otherwise.
type fsReadResult struct {
	Text       *string `json:"text,omitempty"`
	DataBase64 *string `json:"dataBase64,omitempty"`
}

// fsOpenRead parses the params of a reading fs method, resolves the path
// for reading and opens it, with flag, under its root (openBeneath): the
// steps fs/read, fs/stat and fs/list share. The caller closes the file.
func fsOpenRead(ctx context.Context, r *Instance, params []byte, flag int) (*fsTarget, *os.File, error) {
	fp, err := parseFsParams(params, false)
	if err != nil {
		return nil, nil, err
	}
	p := r.p
	t, err := p.resolve(ctx, fp, manifest.AccessRead)
	if err != nil {
		return nil, nil, err
	}
	f, err := beneath.Open(t.root.real, t.rel, flag, 0, p.openOptions(t, false))
	if err != nil {
		return nil, nil, fsError(err)
	}
	return t, f, nil
}

// beneath returns how fs/* opens under t's root: no write and no root but
// plugin reaches into a plugin's folder (one holding a plugin.json, or a
// loaded plugin's), and the root plugin reads into no other plugin's.
func (p *Plugin) openOptions(t *fsTarget, mkdirs bool) beneath.Options {
	o := beneath.Options{MkDirs: mkdirs, NoPluginFolder: mkdirs || t.root.name != "plugin", Avoid: &p.avoid, AvoidHidden: true, AvoidKeys: t.avoid}
	for _, d := range p.h.PluginDirs() {
		if !mkdirs && t.root.name == "plugin" && d == t.root.real {
			continue
		}
		o.NotIn = append(o.NotIn, d)
	}
	return o
}

func fsRead(ctx context.Context, r *Instance, _ Call, params []byte) (_ any, err error) {
	defer func() { err = fsFit("fs/read", err) }()
	p := r.p
	limit := int64(maxFsRead)
	if p.cfg.Limits.FileBytes > 0 {
		limit = p.cfg.Limits.FileBytes
	}
	t, f, err := fsOpenRead(ctx, r, params, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, errorf(protocol.CodeFailed, "failed: the file cannot be read")
	}
	if !fi.Mode().IsRegular() {
		return nil, errorf(protocol.CodeFailed, "failed: %s is not a file", filepath.Base(t.real))
	}
	if beneath.LinkCount(fi) > 1 {
		// Its other name may be anywhere the user's files are: .ssh's
		// keys, a private project's file. No link is followed to get
		// there, so only the count tells.
		return nil, errorf(protocol.CodeRefused, "refused: %s", beneath.ErrHardLinked)
	}
	if fi.Size() > limit {
		return nil, errorf(protocol.CodeFailed, "failed: the file is over %d bytes", limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, errorf(protocol.CodeFailed, "failed: the file cannot be read")
	}
	if int64(len(data)) > limit {
		return nil, errorf(protocol.CodeFailed, "failed: the file is over %d bytes", limit)
	}
	text, b64, ok := textOrBase64(data)
	if ok {
		return fsReadResult{Text: &text}, nil
	}
	return fsReadResult{DataBase64: &b64}, nil
}

// fsWriteResult is the answer to fs/write.
type fsWriteResult struct {
	Path  string `json:"path"` // its real path
	Bytes int    `json:"bytes"`
}

func fsWrite(ctx context.Context, r *Instance, _ Call, params []byte) (_ any, err error) {
	defer func() { err = fsFit("fs/write", err) }()
	p := r.p
	fp, err := parseFsParams(params, true)
	if err != nil {
		return nil, err
	}
	if len(fp.data) > maxFsWrite {
		return nil, errorf(protocol.CodeFailed, "failed: %d bytes to write, over 4 MiB", len(fp.data))
	}
	t, err := p.resolve(ctx, fp, manifest.AccessWrite)
	if err != nil {
		return nil, err
	}
	if t.rel == "." {
		return nil, errorf(protocol.CodeFailed, "failed: a root is a folder, not a file")
	}
	if t.linked {
		return nil, errorf(protocol.CodeRefused, "refused: a write goes through no link: the path names %s", t.real)
	}
	if t.root.name == "plugin" {
		return nil, errorf(protocol.CodeRefused, "refused: %v", beneath.ErrPluginFolder)
	}
	for _, part := range strings.Split(t.rel, "/") {
		if strings.EqualFold(part, manifest.Name) {
			// A manifest written anywhere would make a plugin of its
			// folder at the next start, with the rights it names; and a
			// folder of that name makes its parent look like a plugin's
			// folder, which no fence then lets anyone write or list.
			return nil, errorf(protocol.CodeRefused, "refused: a manifest (%s) is never written, nor a folder of its name", manifest.Name)
		}
	}
	flags := os.O_WRONLY | os.O_CREATE
	if fp.append {
		flags |= os.O_APPEND
	}
	f, err := beneath.Open(t.root.real, t.rel, flags, 0o644, p.openOptions(t, true))
	if err != nil {
		return nil, fsError(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, errorf(protocol.CodeRefused, "refused: %s is not a file", filepath.Base(t.real))
	}
	if beneath.LinkCount(fi) > 1 {
		return nil, errorf(protocol.CodeRefused, "refused: %s", beneath.ErrHardLinked)
	}
	if !fp.append {
		if err := f.Truncate(0); err != nil {
			return nil, errorf(protocol.CodeFailed, "failed: the file cannot be written")
		}
	}
	n, err := f.Write(fp.data)
	if err == nil {
		err = f.Close()
	}
	p.h.Say(slog.LevelInfo, "fs/write", slog.String("path", t.real), slog.String("root", t.root.name),
		slog.Int("bytes", n), slog.Bool("append", fp.append))
	if err != nil {
		return nil, errorf(protocol.CodeFailed, "failed: the file cannot be written")
	}
	return fsWriteResult{Path: t.real, Bytes: n}, nil
}

// fsStatResult is the answer to fs/stat.
type fsStatResult struct {
	Kind     string `json:"kind"` // file, dir or other
	Bytes    int64  `json:"bytes"`
	Modified *int64 `json:"modified"` // milliseconds since 1970
}

func fsStat(ctx context.Context, r *Instance, _ Call, params []byte) (_ any, err error) {
	defer func() { err = fsFit("fs/stat", err) }()
	_, f, err := fsOpenRead(ctx, r, params, beneath.OpenForStat)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fsError(err)
	}
	kind := "other"
	var size int64
	switch {
	case fi.Mode().IsRegular():
		kind, size = "file", fi.Size()
	case fi.IsDir():
		kind = "dir"
	}
	ms := fi.ModTime().UnixMilli()
	return fsStatResult{Kind: kind, Bytes: size, Modified: &ms}, nil
}

// An fsEntry is an entry of fs/list.
type fsEntry struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"` // file, dir, link or other
	Bytes int64  `json:"bytes"`
}

// fsListResult is the answer to fs/list.
type fsListResult struct {
	Entries   []fsEntry `json:"entries"`
	Truncated bool      `json:"truncated"`
}

func fsList(ctx context.Context, r *Instance, _ Call, params []byte) (_ any, err error) {
	defer func() { err = fsFit("fs/list", err) }()
	t, f, err := fsOpenRead(ctx, r, params, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		return nil, errorf(protocol.CodeNotFound, "notFound: %s is not a folder", filepath.Base(t.real))
	}
	// A private project the plugin is not on for is not to be known to
	// it: its folder is left out, as it would be refused.
	private := r.p.privateRoots(ctx)
	res := fsListResult{Entries: []fsEntry{}}
	for {
		batch, err := f.ReadDir(256)
		for _, e := range batch {
			// Hidden entries are left out, as they are refused.
			if strings.HasPrefix(e.Name(), ".") || slices.Contains(private, filepath.Join(t.real, e.Name())) {
				continue
			}
			if len(res.Entries) == maxFsList {
				res.Truncated = true
				break
			}
			ent := fsEntry{Name: e.Name(), Kind: "other"}
			switch t := e.Type(); {
			case t&fs.ModeSymlink != 0:
				ent.Kind = "link" // listed, never followed
			case t.IsDir():
				ent.Kind = "dir"
			case t.IsRegular():
				ent.Kind = "file"
				if fi, err := e.Info(); err == nil {
					ent.Bytes = fi.Size()
				}
			}
			res.Entries = append(res.Entries, ent)
		}
		if res.Truncated || err != nil || len(batch) == 0 {
			break
		}
	}
	slices.SortFunc(res.Entries, func(a, b fsEntry) int { return strings.Compare(a.Name, b.Name) })
	return res, nil
}

// fsCanonResult is the answer to fs/canon.
type fsCanonResult struct {
	Path string `json:"path"`
}

func fsCanon(ctx context.Context, r *Instance, _ Call, params []byte) (_ any, err error) {
	defer func() { err = fsFit("fs/canon", err) }()
	fp, err := parseFsParams(params, false)
	if err != nil {
		return nil, err
	}
	t, err := r.p.resolve(ctx, fp, manifest.AccessRead)
	if err != nil {
		return nil, err
	}
	return fsCanonResult{Path: t.real}, nil
}
