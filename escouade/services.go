package escouade

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.yaml.in/yaml/v3"

	"shinken.dev/go/escouade/internal/beneath"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/logtext"
	"shinken.dev/go/internal/strictjson"
)

// The services a Host is given by the program that links it. Each is a
// small interface with an implementation in memory (a map) and a working
// default used when Options leave it nil.

// A SecretStore keeps the plugins' secrets: the keychain.
type SecretStore interface {
	// Secret returns the secret kept for owner under key; ok is false when
	// none is kept. An error means the store cannot be reached: the plugin
	// is answered keychain.
	Secret(ctx context.Context, owner SecretOwner, key string) (value string, ok bool, err error)
}

// A SecretOwner is the plugin a secret belongs to, bound to both its id and
// its folder: a folder claiming another's id reads none of its secrets.
type SecretOwner struct {
	ID  string
	Dir string // the real path of its folder; "" for a plugin without one
}

// SecretMap is a SecretStore in memory: owner, then key, to secret. An
// owner is "id@/real/path/of/its/folder", or "id" for any folder claiming
// the id (plugins without one, tests), looked up second.
type SecretMap map[string]map[string]string

// Secret implements SecretStore.
func (m SecretMap) Secret(_ context.Context, owner SecretOwner, key string) (string, bool, error) {
	if owner.Dir != "" {
		if v, ok := m[owner.ID+"@"+owner.Dir][key]; ok {
			return v, true, nil
		}
	}
	v, ok := m[owner.ID][key]
	return v, ok, nil
}

// A SettingsSource gives the values set for plugins' settings, which the
// Host then checks against the manifest's contributes.settings.
type SettingsSource interface {
	// UserSettings returns the values the user set for plugin, by key.
	UserSettings(ctx context.Context, plugin string) (map[string]any, error)
	// ProjectSettings returns what project's .escouade.yml gives plugin
	// (plugins.<id>), asked only for a project where the plugin is on.
	ProjectSettings(ctx context.Context, project *ProjectInfo, plugin string) (map[string]any, error)
}

// ProjectFile is the name of a project's settings file, in its root.
const ProjectFile = ".escouade.yml"

// maxProjectFile bounds the .escouade.yml read.
const maxProjectFile = 1 << 20

// FileSettings is the default SettingsSource: the user's values from User,
// a project's from the .escouade.yml in its Root (if any).
type FileSettings struct {
	User map[string]map[string]any // plugin id, then key, to value
}

// UserSettings implements SettingsSource.
func (s *FileSettings) UserSettings(_ context.Context, plugin string) (map[string]any, error) {
	if s == nil {
		return nil, nil
	}
	return s.User[plugin], nil
}

// ProjectSettings implements SettingsSource by reading the project's
// .escouade.yml; a missing file gives no values.
func (s *FileSettings) ProjectSettings(_ context.Context, project *ProjectInfo, plugin string) (map[string]any, error) {
	if project.Root == "" {
		return nil, nil
	}
	f, err := beneath.OpenFileIn(project.Root, ProjectFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("escouade: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxProjectFile+1))
	if err != nil {
		return nil, fmt.Errorf("escouade: %w", err)
	}
	if len(data) > maxProjectFile {
		return nil, fmt.Errorf("escouade: %s of project %s is over %d bytes", ProjectFile, project.ID, maxProjectFile)
	}
	return ParseProjectFile(data, plugin)
}

// ParseProjectFile returns what a .escouade.yml gives plugin: the mapping
// under plugins.<id>; other sections are not looked at, a key given twice
// is an error, and the file is read in time linear in its size.
func ParseProjectFile(data []byte, plugin string) (map[string]any, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("escouade: %s: %w", ProjectFile, err)
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind == 0 {
		return nil, nil // an empty file
	}
	if doc.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("escouade: %s: want a mapping at the top", ProjectFile)
	}
	var plugins *yaml.Node
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if k := doc.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "plugins" {
			if plugins != nil {
				return nil, fmt.Errorf("escouade: %s: line %d: plugins given twice", ProjectFile, k.Line)
			}
			plugins = doc.Content[i+1]
		}
	}
	if plugins == nil {
		return nil, nil
	}
	yd := yamlDecoder{budget: maxProjectNodes}
	v, err := yd.value(plugins)
	if err != nil {
		return nil, fmt.Errorf("escouade: %s: %w", ProjectFile, err)
	}
	all, ok := v.(map[string]any)
	if !ok && v != nil {
		return nil, fmt.Errorf("escouade: %s: line %d: plugins: want a mapping", ProjectFile, plugins.Line)
	}
	var mine map[string]any
	for id, section := range all {
		m, ok := section.(map[string]any)
		if !ok && section != nil {
			return nil, fmt.Errorf("escouade: %s: plugins.%s: want a mapping", ProjectFile, id)
		}
		if id == plugin {
			mine = m
		}
	}
	return mine, nil
}

// maxProjectNodes bounds the values a .escouade.yml's plugins section
// makes, aliases expanded, so that aliases of aliases cannot multiply a
// small file into a huge one.
const maxProjectNodes = 1 << 16

// yamlDecoder turns a YAML tree into the values encoding/json would make
// (maps with string keys, slices, scalars). yaml.v3's own decoding looks
// for a duplicate key by comparing each key with every later one, which
// takes seconds on a mapping of a few tens of thousands of keys: here a
// set does it, and a mapping's size is bounded.
type yamlDecoder struct{ budget int }

func (yd *yamlDecoder) value(n *yaml.Node) (any, error) {
	if yd.budget--; yd.budget < 0 {
		return nil, fmt.Errorf("line %d: more than %d values, aliases expanded", n.Line, maxProjectNodes)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return yd.value(n.Alias)
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
		return v, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := yd.value(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		if len(n.Content)/2 > strictjson.MaxKeys {
			return nil, fmt.Errorf("line %d: a mapping of more than %d keys", n.Line, strictjson.MaxKeys)
		}
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a key must be a plain value", k.Line)
			}
			if k.Tag == "!!merge" {
				return nil, fmt.Errorf("line %d: merge keys (<<) are not read here: write the keys out", k.Line)
			}
			if _, dup := out[k.Value]; dup {
				return nil, fmt.Errorf("line %d: key %s given twice", k.Line, logtext.Quote(k.Value))
			}
			v, err := yd.value(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

// A ProjectInfo is a project as the Host needs it.
type ProjectInfo struct {
	protocol.Project
	Root string // its folder, where its .escouade.yml is; "" for none
	// Plugins says, by plugin id, whether the user turned the plugin on
	// (true) or off (false) for the project. One not listed is on unless
	// the project is private.
	Plugins map[string]bool
}

// On reports whether plugin is on for the project.
func (p *ProjectInfo) On(plugin string) bool {
	if on, ok := p.Plugins[plugin]; ok {
		return on
	}
	return !p.Private
}

// Projects knows the projects.
type Projects interface {
	// Project returns the project id, or an error wrapping ErrNoProject.
	Project(ctx context.Context, id string) (*ProjectInfo, error)
}

// A ProjectLister is a Projects that lists every project it knows: the
// fences of fs/* then refuse a private project's folder by whatever path
// reaches it (an agent's home that holds it, a link).
type ProjectLister interface {
	Projects(ctx context.Context) ([]*ProjectInfo, error)
}

// DefaultProject is the project a request is about when the program has
// no projects (a Gate given no Project). The Host always knows it: unless
// Projects does, it is "default", not private, with no folder.
const DefaultProject = "default"

// project returns the project whose id is id: Projects' answer, or the
// default project's when Projects does not know it.
func (h *Host) project(ctx context.Context, id string) (*ProjectInfo, error) {
	info, err := h.opts.Projects.Project(ctx, id)
	if err != nil && id == DefaultProject && errors.Is(err, ErrNoProject) {
		return &ProjectInfo{Project: protocol.Project{ID: DefaultProject, Name: DefaultProject}}, nil
	}
	return info, err
}

// ProjectMap is Projects in memory, by project id.
type ProjectMap map[string]*ProjectInfo

// Project implements Projects.
func (m ProjectMap) Project(_ context.Context, id string) (*ProjectInfo, error) {
	if p, ok := m[id]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrNoProject, logtext.Quote(id))
}

// Projects implements ProjectLister.
func (m ProjectMap) Projects(context.Context) ([]*ProjectInfo, error) {
	out := make([]*ProjectInfo, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	return out, nil
}

// An AgentInfo is an agent as the Host needs it.
type AgentInfo struct {
	protocol.Agent
	Key   string     // names the agent to plugins (agent/attach, fs/*)
	Roots AgentRoots // fs/*'s roots agent, agentRepo, agentHome ("" for none)
	// Project is the project the agent works on ("" for none): when it is
	// private, a plugin not on for it reaches none of the agent's folders.
	// proc/spawn's dir project defaults to it.
	Project string
	// Env is the environment of the agent's programs, as os.Environ gives
	// one (nil: the Host's), which proc/spawn starts from, less ESCOUADE_*.
	Env []string
}

// AgentRoots are an agent's folders.
type AgentRoots struct {
	Agent string // its working folder
	Repo  string // its repository's top folder
	Home  string // its home
}

// Agents knows the agents and their roots.
type Agents interface {
	// Agent returns the agent key, or an error wrapping ErrNoAgent.
	Agent(ctx context.Context, key string) (*AgentInfo, error)
}

// AgentMap is Agents in memory, by key.
type AgentMap map[string]*AgentInfo

// Agent implements Agents.
func (m AgentMap) Agent(_ context.Context, key string) (*AgentInfo, error) {
	if a, ok := m[key]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrNoAgent, logtext.Quote(key))
}

// Accounts gives the servers the user typed for a plugin's accounts, which
// {account} in permissions.network opens to it: that host and port alone,
// in http or https, even on the local network.
type Accounts interface {
	// Accounts returns plugin's servers, each an http or https URL with a
	// host and an optional port (https://git.example.org:8443).
	Accounts(ctx context.Context, plugin string) ([]string, error)
}

// AccountMap is Accounts in memory: plugin id to its servers.
type AccountMap map[string][]string

// Accounts implements Accounts.
func (m AccountMap) Accounts(_ context.Context, plugin string) ([]string, error) {
	return m[plugin], nil
}

// A Clock tells the time of facts and of crashes. Restart delays and
// timeouts run on real time.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }
