package escouade

import (
	"context"
	"log/slog"
	"os"
	"slices"

	"shinken.dev/go/escouade/internal/fence"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/logtext"
)

// The fences a plugin run in-process calls (fs/*, net/*, ws/*, timer/*,
// proc/*) are escouade/internal/fence's. This file hands them what only
// the Host knows of a plugin: its manifest's permissions and limits as
// plain values, and fenceHost for what changes over its life.

// fenceConfig is what the fences of p know for its whole life.
func (p *Plugin) fenceConfig() fence.Config {
	perms := p.m.Permissions
	return fence.Config{
		Files:      perms.Files,
		Network:    perms.Network,
		Commands:   perms.Commands,
		Env:        perms.Env,
		Limits:     p.m.Limits,
		Dir:        p.dir,
		Proxy:      p.h.opts.Network.Proxy,
		TLS:        p.h.opts.Network.TLS,
		StopGrace:  p.h.opts.StopGrace,
		StreamIdle: p.h.streamIdle,
		Hook:       p.h.hook,
	}
}

// fenceHost answers the fences of a plugin (fence.Host).
type fenceHost struct{ p *Plugin }

// Agent returns the agent attached to the plugin under key: a plugin
// names only the agents it was given.
func (f fenceHost) Agent(key string) (*fence.Agent, error) {
	p := f.p
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.IndexFunc(p.attached, func(a *AgentInfo) bool { return a.Key == key })
	if i < 0 {
		return nil, errorf(protocol.CodeRefused, "refused: no agent %s is attached to the plugin", logtext.Quote(key))
	}
	a := p.attached[i]
	return &fence.Agent{
		Key:     a.Key,
		Project: a.Project,
		Env:     a.Env,
		Roots:   fence.AgentRoots{Agent: a.Roots.Agent, Repo: a.Roots.Repo, Home: a.Roots.Home},
	}, nil
}

// Project returns the project whose id is id, and whether the plugin is on
// for it.
func (f fenceHost) Project(ctx context.Context, id string) (*fence.Project, error) {
	info, err := f.p.h.project(ctx, id)
	if err != nil {
		return nil, err
	}
	return f.project(info), nil
}

func (f fenceHost) project(info *ProjectInfo) *fence.Project {
	return &fence.Project{Root: info.Root, Private: info.Private, On: info.On(f.p.m.ID)}
}

// Projects lists the projects when the Host's Projects is a ProjectLister.
func (f fenceHost) Projects(ctx context.Context) ([]*fence.Project, bool, error) {
	lister, ok := f.p.h.opts.Projects.(ProjectLister)
	if !ok {
		return nil, false, nil
	}
	all, err := lister.Projects(ctx)
	if err != nil {
		return nil, true, err
	}
	out := make([]*fence.Project, len(all))
	for i, info := range all {
		out[i] = f.project(info)
	}
	return out, true, nil
}

// Accounts returns the servers of the plugin's accounts.
func (f fenceHost) Accounts(ctx context.Context) ([]string, error) {
	return f.p.h.opts.Accounts.Accounts(ctx, f.p.m.ID)
}

// TempDir returns the plugin's temporary folder, made at its first use and
// removed when the plugin stops.
func (f fenceHost) TempDir() (string, error) {
	p := f.p
	p.tmpMu.Lock()
	defer p.tmpMu.Unlock()
	switch p.tmp {
	case "-":
		return "", protocol.ErrClosed
	case "":
		dir, err := os.MkdirTemp(p.h.opts.TempDir, "escouade-"+p.m.ID+"-")
		if err != nil {
			return "", err
		}
		p.tmp = dir
	}
	return p.tmp, nil
}

// PluginDirs returns the real paths of the loaded plugins' folders.
func (f fenceHost) PluginDirs() []string { return f.p.h.pluginDirs() }

// SharedPort returns the port of the plugin's shared process, once it
// said it.
func (f fenceHost) SharedPort() (string, bool) {
	if f.p.shared == nil {
		return "", false
	}
	return f.p.shared.Port()
}

// Say journals what the Host decided to say.
func (f fenceHost) Say(level slog.Level, msg string, attrs ...slog.Attr) {
	f.p.j.say(level, msg, attrs...)
}

// Limited journals what the plugin caused, through the protocol's limiter.
func (f fenceHost) Limited(level slog.Level, msg string, attrs ...slog.Attr) {
	f.p.j.limited(f.p.j.proto, level, msg, attrs...)
}
