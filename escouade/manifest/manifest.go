// Package manifest reads a plugin's manifest, plugin.json (Name), as the
// Escouade protocol defines it: its id and version, how it runs, what it
// may receive and reach, the settings it adds, its limits and the process
// the Host starts beside it.
//
// Parse checks a manifest's text, Read a folder's, and Find lists the
// folders of a parent that hold one. The JSON must be strict (UTF-8, no key
// twice, keys matched as written) and every field known but the display
// fields. Every problem is a *protocol.FieldError naming the field's path
// ("run.command[0]"), and all of them, up to 50, are returned together.
// A Manifest that Parse returns holds every rule below; the Host relies on
// them.
package manifest

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"shinken.dev/go/escouade/internal/beneath"
	"shinken.dev/go/escouade/internal/fields"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/strictjson"
)

// Name is the name of a plugin's manifest in its folder.
const Name = "plugin.json"

// MaxSize bounds the manifest Read reads from a folder, in bytes.
const MaxSize = 1 << 20

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
	AccessRead  Access = "read"
	AccessWrite Access = "write"
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
)

// FileRoots returns the roots permissions.files may name, in the order
// tried: plugin (its folder, read only), agent, agentRepo and agentHome
// (an attached agent's folders), temp (its temporary folder).
func FileRoots() []string { return []string{"plugin", "agent", "agentRepo", "agentHome", "temp"} }

// Upper bounds of Limits.
const (
	MaxFetchMs    = 120_000  // Limits.FetchMs
	MaxFetchBytes = 32 << 20 // Limits.FetchBytes
	MaxFileBytes  = 4 << 20  // Limits.FileBytes
)

// Read reads and checks the manifest in dir, a file of at most MaxSize
// bytes opened with no link on the way.
func Read(dir string) (*Manifest, error) {
	f, err := beneath.OpenFileIn(dir, Name)
	if err != nil {
		return nil, fmt.Errorf("escouade: %s: %w", Name, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("escouade: %w", err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("escouade: %s is over %d bytes", Name, MaxSize)
	}
	return Parse(data)
}

// Parse parses and checks a manifest; its errors, joined, are as the
// package doc says.
func Parse(data []byte) (*Manifest, error) {
	if err := strictjson.Validate(data); err != nil {
		return nil, &protocol.FieldError{Err: err}
	}
	var mj manifestJSON
	mc := manifestChecker{}
	fields.DecodeStrict(data, "", &mj, &mc.Problems)
	m := mc.manifest(&mj)
	if err := mc.Err(); err != nil {
		return nil, err
	}
	return m, nil
}

// The manifest as it is written, decoded by name (package fields) before
// its values are checked. A pointer tells a field that is present.
type (
	manifestJSON struct {
		ID              string          `json:"id" wire:"required"`
		Version         string          `json:"version" wire:"required"`
		ProtocolVersion int64           `json:"protocolVersion" wire:"required"`
		Run             runJSON         `json:"run" wire:"required"`
		Permissions     permissionsJSON `json:"permissions"`
		Contributes     contributesJSON `json:"contributes"`
		Limits          limitsJSON      `json:"limits"`
		Launch          launchJSON      `json:"launch"`
		// The display fields; author is a string or an object.
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Author      json.RawMessage `json:"author"`
		Homepage    string          `json:"homepage"`
	}
	authorJSON struct {
		Name  string `json:"name" wire:"required"`
		Email string `json:"email"`
		URL   string `json:"url"`
	}
	runJSON struct {
		Command *[]string `json:"command"`
		WASM    *string   `json:"wasm"`
		JS      *string   `json:"js"`
	}
	permissionsJSON struct {
		Events   []string   `json:"events"`
		Decide   bool       `json:"decide"`
		Secrets  []string   `json:"secrets"`
		Network  []string   `json:"network"`
		Files    *filesJSON `json:"files"`
		Commands []string   `json:"commands"`
		Env      []string   `json:"env"`
	}
	// filesJSON names the roots a plugin's files may be under.
	filesJSON struct {
		Plugin    *Access `json:"plugin"`
		Agent     *Access `json:"agent"`
		AgentRepo *Access `json:"agentRepo"`
		AgentHome *Access `json:"agentHome"`
		Temp      *Access `json:"temp"`
	}
	contributesJSON struct {
		Settings map[string]settingJSON `json:"settings"`
	}
	settingJSON struct {
		Type        SettingType     `json:"type" wire:"required"`
		Default     json.RawMessage `json:"default"`
		Description string          `json:"description"`
	}
	limitsJSON struct {
		FetchMs    *int64 `json:"fetchMs"`
		FetchBytes *int64 `json:"fetchBytes"`
		FileBytes  *int64 `json:"fileBytes"`
	}
	launchJSON struct {
		Shared *sharedJSON `json:"shared"`
	}
	sharedJSON struct {
		Command *[]string `json:"command" wire:"required"`
		Listens *string   `json:"listens" wire:"required"`
	}
)

// manifestChecker checks the values of a decoded manifest, gathering every
// problem rather than stopping at the first, so that an author fixes a
// manifest in one go; past fields.MaxProblems, the rest are counted, so
// that the report stays small whatever the manifest. A value that did not
// decode is not checked further: its problem is named once.
type manifestChecker struct {
	fields.Problems
}

func (mc *manifestChecker) manifest(mj *manifestJSON) *Manifest {
	m := &Manifest{
		ID: mj.ID, Version: mj.Version, ProtocolVersion: int(mj.ProtocolVersion),
		Name: mj.Name, Description: mj.Description, Homepage: mj.Homepage,
	}
	if m.ID != "" && !idPattern.MatchString(m.ID) {
		mc.Addf("id", "%q is not an id: lower case letters, digits, '.', '_' and '-', 100 at most, starting with a letter or a digit", m.ID)
	}
	if m.Version != "" && !versionPattern.MatchString(m.Version) {
		mc.Addf("version", "%q is not a semantic version (1.4.0)", m.Version)
	}
	if n := mj.ProtocolVersion; n != protocol.Version && !mc.At("protocolVersion") && !mc.At("") {
		mc.Addf("protocolVersion", "this host speaks protocol %d, not %d", protocol.Version, n)
	}
	if !mc.At("run") && !mc.At("") {
		m.Run = mc.run(&mj.Run)
	}
	m.Permissions = mc.permissions(&mj.Permissions)
	m.Contributes = mc.contributes(&mj.Contributes)
	m.Limits = mc.limits(&mj.Limits)
	m.Launch = mc.launch(&mj.Launch)
	m.Author = mc.author(mj.Author)
	if m.Homepage != "" {
		if u, err := url.Parse(m.Homepage); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			mc.Addf("homepage", "%q is not an http or https address", m.Homepage)
		}
	}
	return m
}

// author reads the author field: a string, or an object with a name and
// an email and a url, as package.json has it.
func (mc *manifestChecker) author(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	if strictjson.KindOf(raw) == strictjson.KindObject {
		var a authorJSON
		fields.DecodeStrict(raw, "author", &a, &mc.Problems)
		return a.Name
	}
	var name string
	fields.DecodeStrict(raw, "author", &name, &mc.Problems)
	return name
}

// strings checks each entry of the list at p with check, which says what
// is wrong with one ("" when nothing is), and reports the entries given
// twice.
func (mc *manifestChecker) strings(p string, list []string, check func(string) string) {
	seen := make(map[string]bool, len(list))
	for i, s := range list {
		if mc.Full() {
			return // past the problems reported: no more to find here
		}
		item := func() string { return p + "[" + strconv.Itoa(i) + "]" }
		if mc.Any() && mc.At(item()) {
			continue
		}
		if why := check(s); why != "" {
			mc.Addf(item(), "%s", why)
		}
		if seen[s] {
			mc.Addf(item(), "%q is given twice", s)
		}
		seen[s] = true
	}
}

func (mc *manifestChecker) argv(p string, argv *[]string) []string {
	if argv == nil || mc.At(p) {
		return nil
	}
	if len(*argv) == 0 {
		mc.Addf(p, "want a program and its arguments, not an empty list")
	}
	if len(*argv) > 0 && (*argv)[0] == "" && !mc.At(p+"[0]") {
		mc.Addf(p+"[0]", "the program's name is empty")
	}
	mc.program(p, *argv)
	return *argv
}

// inFolder checks a path that must name a file of the plugin's folder.
func (mc *manifestChecker) inFolder(p, name string) {
	if name == "" || path.IsAbs(name) || filepath.IsAbs(name) || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") {
		mc.Addf(p, "%q must be a clean path inside the plugin's folder", name)
	}
}

// program checks argv's program: a name found on the PATH (node), an
// absolute path, or a path inside the plugin's folder (bin/plugin), never
// one that leaves it (../../bin/sh).
func (mc *manifestChecker) program(p string, argv []string) {
	if len(argv) == 0 || argv[0] == "" {
		return
	}
	prog := filepath.ToSlash(argv[0])
	if !strings.Contains(prog, "/") || path.IsAbs(prog) || filepath.IsAbs(argv[0]) {
		return
	}
	if c := path.Clean(prog); c == ".." || strings.HasPrefix(c, "../") || c != strings.TrimPrefix(prog, "./") {
		mc.Addf(p+"[0]", "%q must be a clean path inside the plugin's folder", argv[0])
	}
}

func (mc *manifestChecker) run(rj *runJSON) Run {
	var r Run
	// A field is given when it holds a value, even one that did not
	// decode (null, a number).
	n := 0
	for _, given := range []bool{rj.Command != nil || mc.At("run.command"), rj.WASM != nil || mc.At("run.wasm"), rj.JS != nil || mc.At("run.js")} {
		if given {
			n++
		}
	}
	if rj.Command != nil {
		r.Command = mc.argv("run.command", rj.Command)
	}
	if rj.WASM != nil {
		r.WASM = *rj.WASM
		mc.inFolder("run.wasm", r.WASM)
	}
	if rj.JS != nil {
		r.JS = *rj.JS
		mc.inFolder("run.js", r.JS)
	}
	if n != 1 {
		mc.Addf("run", "want exactly one of command, wasm and js")
	}
	return r
}

func (mc *manifestChecker) permissions(pj *permissionsJSON) Permissions {
	ps := Permissions{Events: pj.Events, Decide: pj.Decide, Secrets: pj.Secrets, Network: pj.Network, Commands: pj.Commands, Env: pj.Env}
	mc.strings("permissions.events", ps.Events, func(e string) string {
		if !protocol.IsFact(e) {
			return fmt.Sprintf("%q is not a fact of the protocol", e)
		}
		return ""
	})
	mc.strings("permissions.secrets", ps.Secrets, func(k string) string {
		if !keyPattern.MatchString(k) {
			return fmt.Sprintf("%q is not a key: letters, digits, '.', '_' and '-'", k)
		}
		return ""
	})
	mc.strings("permissions.network", ps.Network, func(h string) string {
		if h != "{account}" && h != "local:shared" && !isHostName(h) {
			return fmt.Sprintf("%q is not a host name (api.example.com), {account} or local:shared", h)
		}
		return ""
	})
	mc.strings("permissions.commands", ps.Commands, func(c string) string {
		if why := commandProblem(c); why != "" {
			return fmt.Sprintf("%q: %s", c, why)
		}
		return ""
	})
	mc.strings("permissions.env", ps.Env, func(k string) string {
		switch why := NeverSet(k); {
		case !envName.MatchString(k):
			return fmt.Sprintf("%q is not a variable's name: letters, digits and '_'", k)
		case why != "":
			return fmt.Sprintf("%q: %s may never be set", k, why)
		}
		return ""
	})
	if f := pj.Files; f != nil && !mc.At("permissions.files") {
		ps.Files = map[string]Access{}
		for _, root := range []struct {
			name   string
			access *Access
		}{{"plugin", f.Plugin}, {"agent", f.Agent}, {"agentRepo", f.AgentRepo}, {"agentHome", f.AgentHome}, {"temp", f.Temp}} {
			p := "permissions.files." + root.name
			if root.access == nil || mc.At(p) {
				continue
			}
			switch a := *root.access; {
			case a == AccessWrite && root.name == "plugin":
				// A plugin's folder holds its manifest and its code: no
				// root ever writes there.
				mc.Addf(p, "the plugin's folder is read only: want read")
			case a == AccessRead, a == AccessWrite:
				ps.Files[root.name] = a
			default:
				mc.Addf(p, "want read or write, not %q", string(a))
			}
		}
	}
	return ps
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

func (mc *manifestChecker) contributes(cj *contributesJSON) Contributes {
	if cj.Settings == nil || mc.At("contributes.settings") {
		return Contributes{}
	}
	c := Contributes{Settings: make(map[string]SettingSpec, len(cj.Settings))}
	for _, key := range slices.Sorted(maps.Keys(cj.Settings)) {
		sj := cj.Settings[key]
		sp := "contributes.settings." + key
		if !keyPattern.MatchString(key) {
			mc.Addf(sp, "%q is not a key: letters, digits, '.', '_' and '-'", key)
		}
		s := SettingSpec{Description: sj.Description}
		switch sj.Type {
		case SettingString, SettingNumber, SettingBoolean:
			s.Type = sj.Type
		default:
			if !mc.At(sp+".type") && !mc.At(sp) {
				mc.Addf(sp+".type", "want string, number or boolean, not %q", string(sj.Type))
			}
		}
		if sj.Default != nil && s.Type != "" {
			val, err := settingValue(s.Type, sj.Default)
			if err != nil {
				mc.Addf(sp+".default", "%v", err)
			}
			s.Default = val
		}
		c.Settings[key] = s
	}
	return c
}

// settingValue decodes a JSON value of type t.
func settingValue(t SettingType, v []byte) (any, error) {
	switch t {
	case SettingString:
		if s, err := strictjson.String(v); err == nil {
			return s, nil
		}
	case SettingNumber:
		if f, err := strictjson.Number(v); err == nil {
			return f, nil
		}
	case SettingBoolean:
		if b, err := strictjson.Bool(v); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("want a %s", t)
}

func (mc *manifestChecker) limits(lj *limitsJSON) Limits {
	var l Limits
	for _, f := range []struct {
		name string
		n    *int64
		max  int64
		set  func(int64)
	}{
		{"fetchMs", lj.FetchMs, MaxFetchMs, func(n int64) { l.FetchMs = int(n) }},
		{"fetchBytes", lj.FetchBytes, MaxFetchBytes, func(n int64) { l.FetchBytes = n }},
		{"fileBytes", lj.FileBytes, MaxFileBytes, func(n int64) { l.FileBytes = n }},
	} {
		p := "limits." + f.name
		switch {
		case f.n == nil || mc.At(p):
		case *f.n < 1 || *f.n > f.max:
			mc.Addf(p, "want 1 to %d, not %d", f.max, *f.n)
		default:
			f.set(*f.n)
		}
	}
	return l
}

func (mc *manifestChecker) launch(lj *launchJSON) Launch {
	sj := lj.Shared
	if sj == nil || mc.At("launch.shared") {
		return Launch{}
	}
	sp := &SharedProcess{Command: mc.argv("launch.shared.command", sj.Command)}
	if sj.Listens != nil && !mc.At("launch.shared.listens") {
		sp.Listens = *sj.Listens
		re, err := regexp.Compile(sp.Listens)
		switch {
		case err != nil:
			mc.Addf("launch.shared.listens", "not a regular expression: %v", err)
		case re.NumSubexp() < 1:
			mc.Addf("launch.shared.listens", "the port must be the expression's first group")
		}
	}
	return Launch{Shared: sp}
}

// Find lists the folders directly in parent that hold a plugin.json,
// sorted by name.
func Find(parent string) ([]string, error) {
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
		if fi, err := os.Stat(filepath.Join(dir, Name)); err == nil && fi.Mode().IsRegular() {
			dirs = append(dirs, dir)
		}
	}
	sort.Strings(dirs)
	return dirs, nil
}

// NeverSet says why a plugin may never set a variable, whatever its
// manifest (one naming it in permissions.env is refused); "" when it may.
func NeverSet(name string) string {
	k := strings.ToUpper(name)
	switch {
	case strings.HasPrefix(k, "ESCOUADE_"):
		return "Escouade's own variables (ESCOUADE_*)"
	case strings.HasPrefix(k, "SHINKEN_"):
		// The runtime that links the Host keeps its token there: a
		// plugin holding it would drive the computer as the agent does.
		return "the Shinken runtime's variables (SHINKEN_*: its token)"
	case k == "PATH":
		return "PATH: the program is found on the agent's PATH"
	case strings.HasPrefix(k, "LD_"), strings.HasPrefix(k, "DYLD_"):
		return "the loader's variables (LD_*, DYLD_*)"
	}
	return ""
}
