package main

import (
	"fmt"
	"strings"

	"shinken.dev/go/daemon"
	"shinken.dev/go/escouade/guard"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/plugin"
)

// agentPrograms are what -allow agent allows: the programs of a coding
// agent.
var agentPrograms = []string{"ls", "cat", "grep", "find", "git", "python3", "make", "echo", "sed", "head", "tail", "wc", "sort"}

// guardPlugin is the shipped guard (escouade/guard) as an in-process
// plugin: -allow's programs by identity, their argument rules, dynamic
// lines and interactive shells refused, files changed under -write only.
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
	pol := &guard.Policy{Allow: allow, Read: cfg.read, Write: cfg.write}
	if cfg.backend == "headless" {
		// The headless desktop's applications are names, not programs.
		pol.Apps = []string{"notes", "form", "settings"}
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
