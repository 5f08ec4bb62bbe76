package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"shinken.dev/go/daemon"
	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/guard"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
)

// agentPrograms are what -allow agent, the default, allows: the programs
// of a coding agent.
var agentPrograms = []string{"ls", "cat", "grep", "find", "git", "python3", "make", "echo", "sed", "head", "tail", "wc", "sort"}

// headlessApps are the headless desktop's applications: names, not
// programs, so the guard allows them by name (Policy.Apps).
var headlessApps = []string{"notes", "form", "settings"}

// The daemon is guarded unless told otherwise, and the way out is a flag
// of its own: an -allow that means "no guard" would read as "allow
// nothing", the opposite of what it does.

// checkGuardFlags refuses guard flags that contradict each other, or that
// would be silently ignored.
func checkGuardFlags(cfg config) error {
	switch {
	case cfg.noGuard && cfg.allowSet:
		return errors.New("-no-guard and -allow exclude each other: -allow configures the guard -no-guard turns off")
	case cfg.noGuard && len(cfg.read)+len(cfg.write) > 0:
		return errors.New("-read and -write are the guard's folders: they need the guard (drop -no-guard)")
	case cfg.remote != "" && (cfg.allowSet || len(cfg.read)+len(cfg.write) > 0):
		return errors.New("-remote serves a runtime elsewhere: its guard is that runtime's, -allow, -read and -write do not apply")
	}
	return nil
}

// pluginsFor returns the daemon's plugins: the shipped guard unless
// -no-guard, beside -plugins' folder. Escouade's Host combines them so that
// an action goes ahead only when every plugin allows it, so a folder's
// plugins can narrow what the guard allows, never widen it. nil means
// none: every command runs.
func pluginsFor(cfg config, log *slog.Logger) (*daemon.Plugins, error) {
	if cfg.noGuard {
		why := "every command the agent sends runs, as the daemon's user"
		if cfg.plugins != "" {
			why = "the -plugins alone judge what the agent runs"
		}
		log.Warn("-no-guard: the shipped guard is OFF: " + why)
		if cfg.plugins == "" {
			return nil, nil
		}
	}
	p := &daemon.Plugins{Dir: cfg.plugins, Project: cfg.project, OnAsk: protocol.Verdict(cfg.onAsk),
		Host: &escouade.Options{Languages: languages}}
	if cfg.noGuard {
		return p, nil
	}
	g, err := guardPlugin(cfg)
	if err != nil {
		return nil, err
	}
	p.Go = []daemon.GoPlugin{g}
	log.Info("the shipped guard judges the agent's commands and file tools", "allow", cfg.allow,
		"write", strings.Join(cfg.write, ","), "read", strings.Join(cfg.read, ","), "plugins", cfg.plugins)
	return p, nil
}

// guardPlugin is the shipped guard (escouade/guard) as an in-process
// plugin: -allow's programs by identity, their argument rules, dynamic
// lines refused, files changed under -write only. The shell tool is
// allowed, each line typed at it judged as a command: the runtime types a
// line only when the shell reads it as one (the MCP server's shell takes
// command lines, see shellLines), so Policy.TypedAtPrompt holds.
//
// On the headless desktop launch_app starts the desktop's own applications
// by name. On X11 there are no such names: a launch_app is the command it
// runs, judged by the program's identity like any exec, so the agent starts
// only -allow's programs. The -app programs are the operator's, started by
// the session and never asked about; the agent may not start more of them
// unless -allow names them.
func guardPlugin(cfg config) (daemon.GoPlugin, error) {
	var allow []string
	for _, name := range strings.Split(cfg.allow, ",") {
		switch name = strings.TrimSpace(name); name {
		case "":
		case "agent":
			allow = append(allow, agentPrograms...)
		default:
			allow = append(allow, name)
		}
	}
	pol := &guard.Policy{Allow: allow, Read: cfg.read, Write: cfg.write, OnInteractive: protocol.Allow, TypedAtPrompt: true}
	if cfg.backend == "headless" {
		pol.Apps = headlessApps
	}
	g, err := guard.New(pol)
	if err != nil {
		return daemon.GoPlugin{}, fmt.Errorf("-allow: %w", err)
	}
	m, err := manifest.ParseFunc([]byte(`{"id": "guard", "version": "1.0.0", "protocolVersion": 1, "permissions": {"decide": true}}`))
	if err != nil {
		return daemon.GoPlugin{}, err
	}
	return daemon.GoPlugin{Manifest: m, Handlers: plugin.Handlers{Decide: g.Decide}}, nil
}
