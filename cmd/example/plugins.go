package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/shinken"
)

// pluginGate asks Escouade plugins whether the agent may run a command or
// launch an app. It is the runtime's Authorizer.
type pluginGate struct {
	host    *escouade.Host
	project string
	onAsk   string
	log     *slog.Logger
	seq     atomic.Uint64
	decided func(verdict string) // told of every decision, for metrics; may be nil
}

// startPlugins starts every plugin in cfg.plugins: each subfolder holding
// a plugin.json.
func startPlugins(ctx context.Context, cfg config, log *slog.Logger) (*pluginGate, error) {
	project := cfg.project
	if project == "" {
		project = "default"
	}
	host := escouade.New(&escouade.Options{
		Journal:  log.Handler(),
		Version:  shinken.Version,
		Projects: escouade.ProjectMap{project: {Project: escouade.Project{ID: project, Name: project}}},
	})
	g := &pluginGate{host: host, project: project, onAsk: cfg.onAsk, log: log}
	dirs, err := escouade.FindPlugins(cfg.plugins)
	if err != nil {
		return nil, fmt.Errorf("-plugins: %w", err)
	}
	started := 0
	for _, dir := range dirs {
		p, err := host.Start(ctx, dir)
		if err != nil {
			g.close()
			return nil, fmt.Errorf("plugin in %s: %w", dir, err)
		}
		log.Info("plugin started", "plugin", p.ID(), "dir", dir)
		started++
	}
	if started == 0 {
		log.Warn("no plugin found: every exec and launch_app is an unanswered ask", "dir", cfg.plugins, "on-ask", cfg.onAsk)
	}
	return g, nil
}

// Authorize implements shinken.Authorizer: it publishes request.permission,
// asks the plugins, publishes request.answered, and refuses unless the
// combined verdict is allow (or ask, with -on-ask allow).
func (g *pluginGate) Authorize(ctx context.Context, req shinken.AuthRequest) error {
	a := req.Action
	input := map[string]any{}
	switch req.Verb {
	case shinken.VerbExec:
		if a.Argv != nil {
			input["argv"] = a.Argv
		}
		if a.Shell != nil {
			input["shell"] = *a.Shell
		}
		if a.Cwd != nil {
			input["cwd"] = *a.Cwd
		}
	case shinken.VerbLaunchApp:
		input["app"] = *a.App
		input["args"] = append([]string{}, a.Args...)
	}
	preq := escouade.PermissionRequest{
		ID:    "shinken-" + strconv.FormatUint(g.seq.Add(1), 10),
		Kind:  "command",
		Tool:  string(req.Verb),
		Input: input,
	}
	about := escouade.About{Project: g.project}
	if _, err := g.host.Fact(ctx, "request.permission", map[string]any{"request": preq}, about); err != nil {
		g.log.Warn("fact not published", "fact", "request.permission", "err", err)
	}
	d, err := g.host.Decide(ctx, preq, about)
	if err != nil {
		return err
	}
	if g.decided != nil {
		g.decided(string(d.Verdict))
	}
	verdict := d.Verdict
	if verdict == escouade.Ask {
		// There is no person to ask: -on-ask says what the silence means.
		verdict = escouade.Verdict(g.onAsk)
	}
	if _, err := g.host.Fact(ctx, "request.answered", map[string]any{
		"id": preq.ID, "decision": string(verdict), "message": d.Message, "plugin": d.Plugin,
	}, about); err != nil {
		g.log.Warn("fact not published", "fact", "request.answered", "err", err)
	}
	g.log.Info("permission", "tool", preq.Tool, "input", input, "verdict", verdict, "plugin", d.Plugin)
	if verdict == escouade.Allow {
		return nil
	}
	msg := d.Message
	switch {
	case msg != "":
	case d.Verdict == escouade.Ask:
		msg = "no plugin allowed it and there is no person to ask"
	default:
		msg = "refused by plugin " + d.Plugin
	}
	return errors.New(msg)
}

func (g *pluginGate) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.host.Close(ctx); err != nil {
		g.log.Warn("plugins did not all stop cleanly", "err", err)
	}
}
