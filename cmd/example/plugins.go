package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/gate"
	"shinken.dev/go/escouade/js"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/escouade/wasm"
	"shinken.dev/go/shinken/aci"
)

// plugins are the Escouade plugins that decide exec and launch_app: the
// Host and the gate the runtime asks.
type plugins struct {
	host *escouade.Host
	gate *gate.Gate
	log  *slog.Logger
}

// startPlugins starts every plugin in cfg.plugins: each subfolder holding
// a plugin.json. A plugin that does not start is journaled and left out;
// the others and the daemon run.
// languages are the engines of the plugins' code the daemon runs: run.js
// and run.wasm, in this program started again (EngineMain in main).
var languages = []escouade.Language{js.Language(), wasm.Language()}

// onDecision, when set, is told of every decision.
func startPlugins(ctx context.Context, cfg config, log *slog.Logger, onDecision func(protocol.PermissionRequest, protocol.Decision)) (*plugins, error) {
	project := cfg.project
	if project == "" {
		project = "default"
	}
	host := escouade.New(&escouade.Options{
		Languages: languages,
		Journal:   log.Handler(),
		Version:   aci.Version,
		Projects:  escouade.ProjectMap{project: {Project: protocol.Project{ID: project, Name: project}}},
	})
	ps := &plugins{
		host: host,
		gate: gate.New(host, &gate.Options{Project: project, OnAsk: protocol.Verdict(cfg.onAsk), Log: log, OnDecision: onDecision}),
		log:  log,
	}
	dirs, err := escouade.FindPlugins(cfg.plugins)
	if err != nil {
		ps.close()
		return nil, fmt.Errorf("-plugins: %w", err)
	}
	started, _ := host.StartAll(ctx, dirs) // each failure is journaled
	for _, p := range started {
		log.Info("plugin started", "plugin", p.ID(), "dir", p.Dir())
	}
	if len(started) == 0 {
		log.Warn("no plugin started: every exec and launch_app is an unanswered ask", "dir", cfg.plugins, "on-ask", cfg.onAsk)
	}
	return ps, nil
}

func (ps *plugins) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ps.host.Close(ctx); err != nil {
		ps.log.Warn("plugins did not all stop cleanly", "err", err)
	}
}
