package escouade

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"shinken.dev/go/escouade/internal/beneath"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/jsonrpc"
)

// ManifestName is the name of a plugin's manifest in its folder.
const ManifestName = "plugin.json"

// maxManifest bounds the manifest read from a folder.
const maxManifest = 1 << 20

// A Manifest is a plugin's plugin.json.
type Manifest struct {
	ID              string // lower case letters, digits, '.', '_' and '-'
	Version         string // semantic version: 1.4.0, 2.0.0-beta.1
	ProtocolVersion int    // must be ProtocolVersion
	Run             Run
	Permissions     Permissions
	Contributes     Contributes
	Limits          Limits
	Launch          Launch
	// The display fields, for people: the host shows them and acts on
	// none. Author is the author's name, or the "name" of an object
	// {"name", "email", "url"} as package.json writes it.
	Name, Description, Author, Homepage string
}

// Run says how the plugin runs: exactly one field is set.
type Run struct {
	// Command is the argv of a program that speaks the protocol on its
	// standard input and output. A first word with a slash is a path in
	// the plugin's folder; without one it is looked up on PATH.
	Command []string
	WASM    string // a module in the plugin's folder, run in-process
	JS      string // a script in the plugin's folder, run in-process
}

// Permissions are what a plugin may receive and reach.
type Permissions struct {
	Events []string // the facts it receives
	Decide bool     // whether it is asked permissions/decide
	// Secrets are the keys of its secrets (secrets/get).
	Secrets []string
	// Network are the hosts its requests may reach (net/*): host names,
	// "{account}" and "local:shared".
	Network []string
	// Files maps a root (plugin, agent, agentRepo, agentHome, temp) to
	// the access it has there (fs/*); plugin is read only.
	Files map[string]Access
	// Commands are the programs it may run (proc/spawn): each entry is a
	// program and its arguments, word for word; a last word "*" lets more
	// arguments follow.
	Commands []string
	// Env are the variables, beyond a safe set (LANG, LC_*, TZ, NO_COLOR,
	// FORCE_COLOR, CLICOLOR, COLUMNS, LINES, CI), that it may set for the
	// programs it starts (proc/spawn's env), by name as written; a plugin
	// run by a command also gets the Host's values of these variables in
	// its own environment, which is otherwise minimal. PATH, LD_*, DYLD_*
	// and ESCOUADE_* are never set, nor passed.
	Env []string
}

// Access is what may be done under a root.
type Access string

// Accesses.
const (
	Read  Access = "read"
	Write Access = "write"
)

// Contributes is what a plugin adds to the application.
type Contributes struct {
	// Settings the user may set, by key.
	Settings map[string]SettingSpec
}

// A SettingType is the type of a setting's value.
type SettingType string

// Setting types: the values settings/get may return.
const (
	SettingString  SettingType = "string"
	SettingNumber  SettingType = "number"
	SettingBoolean SettingType = "boolean"
)

// A SettingSpec declares one setting.
type SettingSpec struct {
	Type        SettingType
	Default     any // a string, float64 or bool per Type; nil when none
	Description string
}

// Limits raise the protocol's limits for one plugin; zero keeps the
// protocol's.
type Limits struct {
	FetchMs    int   // how long net/fetch may take, 120000 at most
	FetchBytes int64 // how big its answer may be, 32 MiB at most
	FileBytes  int64 // how big fs/read's file may be, 4 MiB at most
}

// Launch declares processes the Host starts for the plugin.
type Launch struct {
	// Shared is a process started for the plugin whose port, read in its
	// output, local:shared opens; nil when none.
	Shared *SharedProcess
}

// A SharedProcess is a process started for a plugin.
type SharedProcess struct {
	Command []string // its argv, as Run.Command
	// Listens is a regular expression whose first group, matched in the
	// process's output, is the port it listens on.
	Listens string
}

// The manifest's rules.
var (
	idPattern      = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,99}$`)
	versionPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	keyPattern     = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)
	labelPattern   = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	fileRoots      = []string{"plugin", "agent", "agentRepo", "agentHome", "temp"}
)

// Upper bounds of Limits.
const (
	maxFetchMs    = 120_000
	maxFetchBytes = 32 << 20
	maxFileBytes  = 4 << 20
)

// ReadManifest reads and checks the manifest in dir.
func ReadManifest(dir string) (*Manifest, error) {
	f, err := beneath.OpenFileIn(dir, ManifestName)
	if err != nil {
		return nil, fmt.Errorf("escouade: %s: %w", ManifestName, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err != nil {
		return nil, fmt.Errorf("escouade: %w", err)
	}
	if len(data) > maxManifest {
		return nil, fmt.Errorf("escouade: %s is over %d bytes", ManifestName, maxManifest)
	}
	return ParseManifest(data)
}

// ParseManifest parses and checks a manifest. The JSON must be strict (UTF-8,
// no key twice) and every field known: each problem is a *FieldError naming
// the field's path, and all of them are returned, joined.
func ParseManifest(data []byte) (*Manifest, error) {
	if err := jsonrpc.Validate(data); err != nil {
		return nil, &protocol.FieldError{Err: err}
	}
	mp := &manifestParser{}
	m := mp.manifest(data)
	if err := mp.err(); err != nil {
		return nil, err
	}
	return m, nil
}

// manifestParser gathers every problem rather than stopping at the first,
// so that an author fixes a manifest in one go; past maxManifestErrors, the
// rest are counted, so that the report stays small whatever the manifest.
type manifestParser struct {
	errs []error
	more int // problems past maxManifestErrors
}

// maxManifestErrors bounds the problems a manifest's error names.
const maxManifestErrors = 50

func (mp *manifestParser) fail(err error) {
	switch {
	case err == nil:
	case len(mp.errs) < maxManifestErrors:
		mp.errs = append(mp.errs, err)
	default:
		mp.more++
	}
}

func (mp *manifestParser) failf(path, format string, args ...any) {
	mp.fail(fieldErr(path, format, args...))
}

// err joins the problems found, nil when there were none.
func (mp *manifestParser) err() error {
	if mp.more > 0 {
		return errors.Join(append(mp.errs, fmt.Errorf("escouade: and %d more problems", mp.more))...)
	}
	return errors.Join(mp.errs...)
}

// fields walks an object strictly: each unknown key is reported, and the
// known ones are still checked, so that one pass reports every problem.
func (mp *manifestParser) fields(raw []byte, path string, names []string, required uint64, set func(i int, p string, v []byte)) {
	if jsonrpc.KindOf(raw) == jsonrpc.KindObject {
		jsonrpc.Members(raw, func(k, _ []byte) error {
			if !slices.Contains(names, string(k)) {
				mp.fail(&protocol.FieldError{Path: join(path, string(k)), Err: protocol.ErrUnknownField})
			}
			return nil
		})
	}
	seen, err := object(raw, names, false, func(i int, v []byte) error {
		set(i, join(path, names[i]), v)
		return nil
	})
	if err == nil {
		err = require(seen, required, names)
	}
	if err != nil {
		mp.fail(under(path, err))
	}
}

func (mp *manifestParser) str(p string, v []byte) string {
	s, err := str(v)
	if err != nil {
		mp.fail(&protocol.FieldError{Path: p, Err: err})
	}
	return s
}

func (mp *manifestParser) strings(p string, v []byte) []string {
	if jsonrpc.KindOf(v) != jsonrpc.KindArray {
		mp.failf(p, "want an array of strings")
		return nil
	}
	out := []string{}
	jsonrpc.Elements(v, func(i int, e []byte) error {
		s, err := str(e)
		if err != nil {
			mp.fail(&protocol.FieldError{Path: fmt.Sprintf("%s[%d]", p, i), Err: err})
			return nil
		}
		out = append(out, s)
		return nil
	})
	return out
}

// unique reports the entries of list given twice.
func (mp *manifestParser) unique(p string, list []string) {
	seen := make(map[string]bool, len(list))
	for i, s := range list {
		if seen[s] {
			mp.failf(fmt.Sprintf("%s[%d]", p, i), "%q is given twice", s)
		}
		seen[s] = true
	}
}

// author reads the author field: a string, or an object with a name and
// an email and a url, as package.json has it.
func (mp *manifestParser) author(p string, v []byte) string {
	if jsonrpc.KindOf(v) != jsonrpc.KindObject {
		return mp.str(p, v)
	}
	var name string
	mp.fields(v, p, []string{"name", "email", "url"}, 0b1, func(i int, p string, v []byte) {
		s := mp.str(p, v)
		if i == 0 {
			name = s
		}
	})
	return name
}

func (mp *manifestParser) manifest(raw []byte) *Manifest {
	m := &Manifest{}
	names := []string{"id", "version", "protocolVersion", "run", "permissions", "contributes", "limits", "launch",
		"name", "description", "author", "homepage"}
	mp.fields(raw, "", names, 0b1111, func(i int, p string, v []byte) {
		switch i {
		case 0:
			if m.ID = mp.str(p, v); m.ID != "" && !idPattern.MatchString(m.ID) {
				mp.failf(p, "%q is not an id: lower case letters, digits, '.', '_' and '-', 100 at most, starting with a letter or a digit", m.ID)
			}
		case 1:
			if m.Version = mp.str(p, v); m.Version != "" && !versionPattern.MatchString(m.Version) {
				mp.failf(p, "%q is not a semantic version (1.4.0)", m.Version)
			}
		case 2:
			n, err := integer(v)
			if err != nil {
				mp.fail(&protocol.FieldError{Path: p, Err: err})
			}
			if err == nil && n != protocol.Version {
				mp.failf(p, "this host speaks protocol %d, not %d", protocol.Version, n)
			}
			m.ProtocolVersion = int(n)
		case 3:
			mp.run(p, v, &m.Run)
		case 4:
			mp.permissions(p, v, &m.Permissions)
		case 5:
			mp.contributes(p, v, &m.Contributes)
		case 6:
			mp.limits(p, v, &m.Limits)
		case 7:
			mp.launch(p, v, &m.Launch)
		case 8:
			m.Name = mp.str(p, v)
		case 9:
			m.Description = mp.str(p, v)
		case 10:
			m.Author = mp.author(p, v)
		case 11:
			if m.Homepage = mp.str(p, v); m.Homepage != "" {
				if u, err := url.Parse(m.Homepage); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
					mp.failf(p, "%q is not an http or https address", m.Homepage)
				}
			}
		}
	})
	return m
}

func (mp *manifestParser) argv(p string, v []byte) []string {
	argv := mp.strings(p, v)
	if argv != nil && len(argv) == 0 && jsonrpc.KindOf(v) == jsonrpc.KindArray {
		mp.failf(p, "want a program and its arguments, not an empty list")
	}
	if len(argv) > 0 && argv[0] == "" {
		mp.failf(p+"[0]", "the program's name is empty")
	}
	return argv
}

// inFolder checks a path that must name a file of the plugin's folder.
func (mp *manifestParser) inFolder(p, name string) {
	if name == "" || path.IsAbs(name) || filepath.IsAbs(name) || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") {
		mp.failf(p, "%q must be a clean path inside the plugin's folder", name)
	}
}

// program checks argv's program: a name found on the PATH (node), an
// absolute path, or a path inside the plugin's folder (bin/plugin), never
// one that leaves it (../../bin/sh).
func (mp *manifestParser) program(p string, argv []string) {
	if len(argv) == 0 || argv[0] == "" {
		return
	}
	prog := filepath.ToSlash(argv[0])
	if !strings.Contains(prog, "/") || path.IsAbs(prog) || filepath.IsAbs(argv[0]) {
		return
	}
	if c := path.Clean(prog); c == ".." || strings.HasPrefix(c, "../") || c != strings.TrimPrefix(prog, "./") {
		mp.failf(p+"[0]", "%q must be a clean path inside the plugin's folder", argv[0])
	}
}

func (mp *manifestParser) run(p string, raw []byte, r *Run) {
	names := []string{"command", "wasm", "js"}
	n := 0
	mp.fields(raw, p, names, 0, func(i int, p string, v []byte) {
		n++
		switch i {
		case 0:
			r.Command = mp.argv(p, v)
			mp.program(p, r.Command)
		case 1:
			r.WASM = mp.str(p, v)
			mp.inFolder(p, r.WASM)
		case 2:
			r.JS = mp.str(p, v)
			mp.inFolder(p, r.JS)
		}
	})
	if n != 1 && jsonrpc.KindOf(raw) == jsonrpc.KindObject {
		mp.failf(p, "want exactly one of command, wasm and js")
	}
}

func (mp *manifestParser) permissions(p string, raw []byte, ps *Permissions) {
	names := []string{"events", "decide", "secrets", "network", "files", "commands", "env"}
	mp.fields(raw, p, names, 0, func(i int, p string, v []byte) {
		switch i {
		case 0:
			ps.Events = mp.strings(p, v)
			for j, e := range ps.Events {
				if !protocol.IsFact(e) {
					mp.failf(fmt.Sprintf("%s[%d]", p, j), "%q is not a fact of the protocol", e)
				}
			}
			mp.unique(p, ps.Events)
		case 1:
			b, err := boolean(v)
			if err != nil {
				mp.fail(&protocol.FieldError{Path: p, Err: err})
			}
			ps.Decide = b
		case 2:
			ps.Secrets = mp.strings(p, v)
			for j, k := range ps.Secrets {
				if !keyPattern.MatchString(k) {
					mp.failf(fmt.Sprintf("%s[%d]", p, j), "%q is not a key: letters, digits, '.', '_' and '-'", k)
				}
			}
			mp.unique(p, ps.Secrets)
		case 3:
			ps.Network = mp.strings(p, v)
			for j, h := range ps.Network {
				if h != "{account}" && h != "local:shared" && !isHostName(h) {
					mp.failf(fmt.Sprintf("%s[%d]", p, j), "%q is not a host name (api.example.com), {account} or local:shared", h)
				}
			}
			mp.unique(p, ps.Network)
		case 4:
			ps.Files = map[string]Access{}
			mp.fields(v, p, fileRoots, 0, func(i int, p string, v []byte) {
				switch a := Access(mp.str(p, v)); {
				case a == Write && fileRoots[i] == "plugin":
					// A plugin's folder holds its manifest and its code:
					// no root ever writes there.
					mp.failf(p, "the plugin's folder is read only: want read")
				case a == Read, a == Write:
					ps.Files[fileRoots[i]] = a
				default:
					mp.failf(p, "want read or write, not %q", string(a))
				}
			})
		case 5:
			ps.Commands = mp.strings(p, v)
			for j, c := range ps.Commands {
				if why := commandProblem(c); why != "" {
					mp.failf(fmt.Sprintf("%s[%d]", p, j), "%q: %s", c, why)
				}
			}
			mp.unique(p, ps.Commands)
		case 6:
			ps.Env = mp.strings(p, v)
			for j, k := range ps.Env {
				item := fmt.Sprintf("%s[%d]", p, j)
				switch why := neverSet(k); {
				case !envName.MatchString(k):
					mp.failf(item, "%q is not a variable's name: letters, digits and '_'", k)
				case why != "":
					mp.failf(item, "%q: %s may never be set", k, why)
				}
			}
			mp.unique(p, ps.Env)
		}
	})
}

// envName is the shape of a variable a manifest may name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// isHostName reports whether h is a DNS name of at least two labels, in
// lower case, without a port or a scheme.
func isHostName(h string) bool {
	if len(h) > 253 || !strings.Contains(h, ".") {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if !labelPattern.MatchString(l) {
			return false
		}
	}
	return true
}

// commandProblem says what is wrong with an entry of permissions.commands,
// or "" when nothing is.
func commandProblem(c string) string {
	words := strings.Split(c, " ")
	for i, w := range words {
		switch {
		case w == "":
			return "words are separated by one space, with none around"
		case i == 0 && (w == "*" || strings.ContainsRune(w, '/')):
			return "the first word is a program's name, found on PATH, never a path"
		case w == "*" && i != len(words)-1:
			return "* may only be the last word"
		}
	}
	return ""
}

func (mp *manifestParser) contributes(p string, raw []byte, c *Contributes) {
	mp.fields(raw, p, []string{"settings"}, 0, func(_ int, p string, v []byte) {
		if jsonrpc.KindOf(v) != jsonrpc.KindObject {
			mp.failf(p, "want an object")
			return
		}
		c.Settings = map[string]SettingSpec{}
		jsonrpc.Members(v, func(k, sv []byte) error {
			key := string(k)
			sp := p + "." + key
			if !keyPattern.MatchString(key) {
				mp.failf(sp, "%q is not a key: letters, digits, '.', '_' and '-'", key)
			}
			c.Settings[key] = mp.setting(sp, sv)
			return nil
		})
	})
}

func (mp *manifestParser) setting(p string, raw []byte) SettingSpec {
	var s SettingSpec
	var def []byte
	mp.fields(raw, p, []string{"type", "default", "description"}, 0b1, func(i int, p string, v []byte) {
		switch i {
		case 0:
			switch t := SettingType(mp.str(p, v)); t {
			case SettingString, SettingNumber, SettingBoolean:
				s.Type = t
			default:
				mp.failf(p, "want string, number or boolean, not %q", t)
			}
		case 1:
			def = v
		case 2:
			s.Description = mp.str(p, v)
		}
	})
	if def != nil && s.Type != "" {
		val, err := settingValue(s.Type, def)
		if err != nil {
			mp.failf(p+".default", "%v", err)
		}
		s.Default = val
	}
	return s
}

// settingValue decodes a JSON value of type t.
func settingValue(t SettingType, v []byte) (any, error) {
	switch t {
	case SettingString:
		if s, err := jsonrpc.String(v); err == nil {
			return s, nil
		}
	case SettingNumber:
		if f, err := jsonrpc.Number(v); err == nil {
			return f, nil
		}
	case SettingBoolean:
		if b, err := jsonrpc.Bool(v); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("want a %s", t)
}

func (mp *manifestParser) limits(p string, raw []byte, l *Limits) {
	names := []string{"fetchMs", "fetchBytes", "fileBytes"}
	maxima := []int64{maxFetchMs, maxFetchBytes, maxFileBytes}
	mp.fields(raw, p, names, 0, func(i int, p string, v []byte) {
		n, err := integer(v)
		if err != nil {
			mp.fail(&protocol.FieldError{Path: p, Err: err})
			return
		}
		if n < 1 || n > maxima[i] {
			mp.failf(p, "want 1 to %d, not %d", maxima[i], n)
			return
		}
		switch i {
		case 0:
			l.FetchMs = int(n)
		case 1:
			l.FetchBytes = n
		case 2:
			l.FileBytes = n
		}
	})
}

func (mp *manifestParser) launch(p string, raw []byte, l *Launch) {
	mp.fields(raw, p, []string{"shared"}, 0, func(_ int, p string, v []byte) {
		sp := &SharedProcess{}
		mp.fields(v, p, []string{"command", "listens"}, 0b11, func(i int, p string, v []byte) {
			if i == 0 {
				sp.Command = mp.argv(p, v)
				mp.program(p, sp.Command)
				return
			}
			sp.Listens = mp.str(p, v)
			re, err := regexp.Compile(sp.Listens)
			switch {
			case err != nil:
				mp.failf(p, "not a regular expression: %v", err)
			case re.NumSubexp() < 1:
				mp.failf(p, "the port must be the expression's first group")
			}
		})
		l.Shared = sp
	})
}

// FindPlugins lists the folders directly in parent that hold a plugin.json,
// sorted by name.
func FindPlugins(parent string) ([]string, error) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil, fmt.Errorf("escouade: %w", err)
	}
	var dirs []string
	for _, e := range entries {
		dir := filepath.Join(parent, e.Name())
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, ManifestName)); err == nil && fi.Mode().IsRegular() {
			dirs = append(dirs, dir)
		}
	}
	sort.Strings(dirs)
	return dirs, nil
}
