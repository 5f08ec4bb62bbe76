package escouade

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"path"
	"path/filepath"
	"shinken.dev/go/escouade/internal/beneath"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/logtext"
	"strings"
	"syscall"
	"unicode/utf8"
)

// A method serves one of the plugin's requests. It returns a value for
// encoding/json (nil is null), an *Error to answer with a code, or a
// *FieldError for params that do not hold.
type method func(ctx context.Context, p *Plugin, params []byte) (any, error)

// commandMethods are what a plugin run by a command may call, and a plugin
// run in-process too. The rest of the protocol's toEscouade methods
// (net/*, ws/*, timer/*, fs/*, proc/*) are for plugins run in-process
// alone: the fences (escouade/internal/fence).
var commandMethods = map[string]method{
	"secrets/get":  secretsGet,
	"settings/get": settingsGet,
	"files/read":   filesRead,
	"log":          logLine,
}

func secretsGet(ctx context.Context, p *Plugin, params []byte) (any, error) {
	var kp struct {
		Key string `json:"key" wire:"required"`
	}
	if err := decodeParams(params, &kp); err != nil {
		return nil, err
	}
	key := kp.Key
	if !p.secrets[key] {
		return nil, errorf(protocol.CodeNotYours, "notYours: %s is not a key of permissions.secrets", logtext.Quote(key))
	}
	v, ok, err := p.h.opts.Secrets.Secret(ctx, p.secretOwner(), key)
	if err != nil {
		p.j.say(slog.LevelWarn, "the keychain cannot be reached", slog.String("key", key), slog.String("error", err.Error()))
		return nil, errorf(protocol.CodeKeychain, "keychain: the system's keychain cannot be reached")
	}
	if !ok {
		return nil, nil
	}
	return v, nil
}

// secretOwner is whom the plugin's secrets belong to: its id and its
// folder, links followed.
func (p *Plugin) secretOwner() SecretOwner {
	o := SecretOwner{ID: p.m.ID}
	if p.dir != "" {
		o.Dir = p.dir
		if r, err := filepath.EvalSymlinks(p.dir); err == nil {
			o.Dir = r
		}
	}
	return o
}

func settingsGet(ctx context.Context, p *Plugin, params []byte) (any, error) {
	var sp struct {
		Project string `json:"project"`
	}
	if err := decodeParams(params, &sp); err != nil {
		return nil, err
	}
	project := sp.Project
	specs := p.m.Contributes.Settings
	values := make(map[string]any, len(specs))
	for k, s := range specs {
		if s.Default != nil {
			values[k] = s.Default
		}
	}
	user, err := p.h.opts.Settings.UserSettings(ctx, p.m.ID)
	if err != nil {
		p.j.say(slog.LevelWarn, "the user's settings cannot be read", slog.String("error", err.Error()))
		return nil, errorf(protocol.CodeFailed, "failed: the user's settings cannot be read")
	}
	p.overlay(values, user, "user")
	if project == "" {
		return values, nil
	}
	// A project the plugin does not know, or is not on for, gives the
	// user's values alone: the answer does not tell which.
	info, err := p.h.project(ctx, project)
	if err != nil || !info.On(p.m.ID) {
		return values, nil
	}
	pv, err := p.h.opts.Settings.ProjectSettings(ctx, info, p.m.ID)
	if err != nil {
		p.j.say(slog.LevelWarn, "the project's settings cannot be read", slog.String("project", project), slog.String("error", err.Error()))
		return nil, errorf(protocol.CodeFailed, "failed: the settings of project %s cannot be read (%s)", project, ProjectFile)
	}
	p.overlay(values, pv, ProjectFile)
	return values, nil
}

// overlay sets the values of from over values, for the settings the
// manifest declares and with the type it declares; the rest is journaled
// and left out.
func (p *Plugin) overlay(values, from map[string]any, source string) {
	for k, v := range from {
		s, ok := p.m.Contributes.Settings[k]
		if !ok {
			p.j.say(slog.LevelWarn, "a setting the manifest does not declare is ignored", slog.String("key", k), slog.String("source", source))
			continue
		}
		if v, ok := settingOfType(s.Type, v); ok {
			values[k] = v
			continue
		}
		p.j.say(slog.LevelWarn, "a setting of the wrong type is ignored", slog.String("key", k), slog.String("want", string(s.Type)), slog.String("source", source))
	}
}

// settingOfType returns v when it is of type t (any Go number for a
// number).
func settingOfType(t manifest.SettingType, v any) (any, bool) {
	switch t {
	case manifest.SettingString:
		s, ok := v.(string)
		return s, ok
	case manifest.SettingBoolean:
		b, ok := v.(bool)
		return b, ok
	case manifest.SettingNumber:
		switch n := v.(type) {
		case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
			return n, true
		case float32:
			return n, !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0)
		case float64:
			return n, !math.IsNaN(n) && !math.IsInf(n, 0)
		}
	}
	return nil, false
}

// maxFileRead is the largest file files/read returns.
const maxFileRead = 256 << 10

func filesRead(ctx context.Context, p *Plugin, params []byte) (any, error) {
	var fp struct {
		Path string `json:"path" wire:"required"`
	}
	if err := decodeParams(params, &fp); err != nil {
		return nil, err
	}
	name := fp.Path
	if why := refusedPath(name); why != "" {
		return nil, errorf(protocol.CodeRefused, "refused: %s", why)
	}
	if p.dir == "" {
		return nil, errorf(protocol.CodeNotFound, "notFound: the plugin has no folder")
	}
	// The name is judged as written, then as it resolves, links followed:
	// a link inside the folder to .env or to the manifest is refused as
	// they are. What is opened is the resolved path, with no link on the
	// way, non-blocking, and checked to be the file judged: a name swapped
	// for a link meanwhile is refused, not followed.
	dir, rel, why := p.resolvePluginFile(name)
	switch {
	case why == errNoSuchFile:
		return nil, errorf(protocol.CodeNotFound, "notFound: no file %s in the plugin's folder", name)
	case why != nil:
		return nil, errorf(protocol.CodeRefused, "refused: %v", why)
	}
	f, fi, err := beneath.OpenRegular(dir, rel, true)
	switch {
	case errors.Is(err, beneath.ErrNotRegular):
		return nil, errorf(protocol.CodeNotFound, "notFound: %s is not a file", name)
	case errors.Is(err, beneath.ErrHardLinked):
		return nil, errorf(protocol.CodeRefused, "refused: %s is %v", name, err)
	case err != nil:
		return nil, openError(name, err)
	}
	defer f.Close()
	if fi.Size() > maxFileRead {
		return nil, errorf(protocol.CodeFailed, "failed: %s is over 256 KiB", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileRead+1))
	if err != nil {
		return nil, errorf(protocol.CodeFailed, "failed: %s cannot be read", name)
	}
	if len(data) > maxFileRead {
		return nil, errorf(protocol.CodeFailed, "failed: %s is over 256 KiB", name)
	}
	if !utf8.Valid(data) {
		return nil, errorf(protocol.CodeFailed, "failed: %s is not UTF-8", name)
	}
	return string(data), nil
}

// refusedPath says why files/read refuses name as written, or "".
func refusedPath(name string) string {
	switch {
	case name == "":
		return "an empty path"
	case strings.HasPrefix(name, "/") || filepath.IsAbs(name):
		return "an absolute path: the path is relative to the plugin's folder"
	case strings.ContainsRune(name, '\\'):
		return "a backslash: the parts of a path are separated by /"
	}
	for _, part := range strings.Split(name, "/") {
		switch {
		case part == "..":
			return "a path with .. leaves the plugin's folder"
		case part == "" || part == ".":
			return "a path that is not clean: " + name
		case strings.HasPrefix(part, "."):
			return "a hidden file or folder: " + part
		}
	}
	if strings.EqualFold(name, manifest.Name) {
		return "the manifest"
	}
	return ""
}

// errNoSuchFile is resolvePluginFile's answer for a name that is not there.
var errNoSuchFile = errors.New("no such file")

// resolvePluginFile judges name once its links are followed, and returns
// the plugin's real folder and the path of the file under it, links
// followed.
func (p *Plugin) resolvePluginFile(name string) (dir, rel string, why error) {
	dir, err := filepath.EvalSymlinks(p.dir)
	if err != nil {
		return "", "", errors.New("the plugin's folder cannot be resolved")
	}
	real, err := filepath.EvalSymlinks(filepath.Join(dir, filepath.FromSlash(name)))
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return "", "", errNoSuchFile
	case err != nil:
		return "", "", errors.New("a link that cannot be followed")
	}
	rel, err = filepath.Rel(dir, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", "", errors.New("a link that leaves the plugin's folder")
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		return dir, rel, nil
	}
	if why := refusedPath(rel); why != "" {
		return "", "", errors.New("a link to " + why)
	}
	return dir, rel, nil
}

// openError turns an error of os.Root.Open into the protocol's: a missing
// file is notFound, a file the Host may not read failed, and a path that
// escapes the folder (os.Root's refusal) refused.
func openError(name string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return errorf(protocol.CodeNotFound, "notFound: no file %s in the plugin's folder", name)
	case errors.Is(err, fs.ErrPermission):
		return errorf(protocol.CodeFailed, "failed: %s cannot be read", name)
	case errors.Is(err, beneath.ErrLinkOnTheWay), errors.Is(err, beneath.ErrMoved):
		return errorf(protocol.CodeRefused, "refused: %s: %v", name, err)
	}
	return errorf(protocol.CodeRefused, "refused: %s leaves the plugin's folder", path.Clean(name))
}

var logLevels = map[string]slog.Level{
	"debug": slog.LevelDebug,
	"info":  slog.LevelInfo,
	"warn":  slog.LevelWarn,
	"error": slog.LevelError,
}

// logLine writes the plugin's log notification to the journal.
func logLine(_ context.Context, p *Plugin, params []byte) (any, error) {
	var lp struct {
		Level   string `json:"level" wire:"required"`
		Message string `json:"message" wire:"required"`
	}
	if err := decodeParams(params, &lp); err != nil {
		return nil, err
	}
	level, ok := logLevels[lp.Level]
	if !ok {
		return nil, fieldErr("level", "want debug, info, warn or error, not %s", logtext.Quote(lp.Level))
	}
	msg := lp.Message
	line, long := cut([]byte(msg))
	attrs := []slog.Attr{slog.String("stream", "log")}
	if long {
		attrs = append(attrs, slog.Bool("cut", true))
	}
	p.j.limited(p.j.lines, level, line, attrs...)
	return nil, nil
}
