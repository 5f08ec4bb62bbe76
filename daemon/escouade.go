package daemon

// Every use of package escouade by the daemon is in this file.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/gate"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// Plugins configure the Escouade plugins of a daemon: they are asked
// before every exec and launch_app, and their decision is the answer.
type Plugins struct {
	// Dir is a folder whose subfolders holding a plugin.json are
	// plugins; "" means none. A plugin of Dir that does not start is
	// journaled and left out; the others and the daemon run.
	Dir string
	// Go are plugins written in Go, run in the daemon's process (see
	// GoPlugin). One that does not start fails New.
	Go []GoPlugin
	// Project is the project every request is said to be about; "" means
	// escouade.DefaultProject. The Host knows it unless Host.Projects is
	// set, and then New fails unless they include it.
	Project string
	// OnAsk is what a plugin's "ask", or its silence, means with no
	// person to ask: protocol.Allow or protocol.Deny; "" means Deny.
	OnAsk protocol.Verdict
	// Host configures the Host beyond the above; nil means its defaults.
	// Its Journal defaults to the daemon's Logger, its Version to the ACI
	// version, its Projects to one project named Project.
	Host *escouade.Options
}

// A GoPlugin is a plugin written in Go and run in the daemon's process:
// the Host runs its Handlers over pipes in memory as it runs a command
// plugin's stdio (initialize, decisions, restarts after a crash, shutdown).
type GoPlugin struct {
	// Manifest is the plugin's manifest: manifest.ParseFunc reads one
	// that names no run (Handlers are what runs).
	Manifest *manifest.Manifest
	// Handlers answer the Host (plugin.Handlers.Decide for a guard).
	Handlers plugin.Handlers
}

// plugins are the started Host and the gate the runtime asks.
type plugins struct {
	host *escouade.Host
	gate *gate.Gate
	log  *slog.Logger
}

// startPlugins starts the Host and its plugins. On error it has closed
// what it started.
func startPlugins(ctx context.Context, p *Plugins, log *slog.Logger, onDecision func(verdict string)) (*plugins, error) {
	switch p.OnAsk {
	case "", protocol.Allow, protocol.Deny:
	default:
		return nil, fmt.Errorf("daemon: Plugins.OnAsk %q: want allow or deny", p.OnAsk)
	}
	project := p.Project
	if project == "" {
		project = escouade.DefaultProject
	}
	var ho escouade.Options
	if p.Host != nil {
		ho = *p.Host
	}
	if ho.Journal == nil {
		ho.Journal = log.Handler()
	}
	if ho.Version == "" {
		ho.Version = aci.Version
	}
	if ho.Projects == nil {
		ho.Projects = escouade.ProjectMap{project: {Project: protocol.Project{ID: project, Name: project}}}
	} else if _, err := ho.Projects.Project(ctx, project); err != nil && project != escouade.DefaultProject {
		// Else every exec would be refused at run time for want of it.
		return nil, fmt.Errorf("daemon: Plugins.Project %q is not one of Plugins.Host.Projects (set Plugins.Project to one of them, or leave Projects nil): %w", project, err)
	}
	host := escouade.New(&ho)
	var od func(protocol.PermissionRequest, protocol.Decision)
	if onDecision != nil {
		od = func(_ protocol.PermissionRequest, d protocol.Decision) { onDecision(string(d.Verdict)) }
	}
	ps := &plugins{
		host: host,
		gate: gate.New(host, &gate.Options{Project: project, OnAsk: p.OnAsk, Log: log, OnDecision: od}),
		log:  log,
	}
	for _, g := range p.Go {
		if g.Manifest == nil {
			ps.close()
			return nil, errors.New("daemon: a GoPlugin needs its Manifest")
		}
		hs := g.Handlers
		run := func(ctx context.Context, in io.Reader, out io.Writer) error { return plugin.Serve(ctx, in, out, hs) }
		pl, err := host.StartFunc(ctx, g.Manifest, "", run)
		if err != nil {
			ps.close()
			return nil, fmt.Errorf("daemon: plugin %s: %w", g.Manifest.ID, err)
		}
		log.Info("plugin started", "plugin", pl.ID(), "in", "process")
	}
	if p.Dir != "" {
		dirs, err := manifest.Find(p.Dir)
		if err != nil {
			ps.close()
			return nil, fmt.Errorf("daemon: plugins: %w", err)
		}
		started, _ := host.StartAll(ctx, dirs) // each failure is journaled
		for _, pl := range started {
			log.Info("plugin started", "plugin", pl.ID(), "dir", pl.Dir())
		}
		if len(started) == 0 && len(p.Go) == 0 {
			log.Warn("no plugin started: every exec and launch_app is an unanswered ask", "dir", p.Dir, "on-ask", p.OnAsk)
		}
	}
	return ps, nil
}

// authorizer is what the runtime asks.
func (ps *plugins) authorizer() shinken.Authorizer { return ps.gate }

func (ps *plugins) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ps.host.Close(ctx); err != nil {
		ps.log.Warn("plugins did not all stop cleanly", "err", err)
	}
}

// chainAuthorizers asks a, then b; nil ones are left out.
func chainAuthorizers(a, b shinken.Authorizer) shinken.Authorizer {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return shinken.AuthorizerFunc(func(ctx context.Context, req shinken.AuthRequest) error {
		if err := a.Authorize(ctx, req); err != nil {
			return err
		}
		return b.Authorize(ctx, req)
	})
}
