// Package plugintest runs a Go plugin's Handlers in-process against a real
// Host, without a process, so that a plugin's tests can publish facts, ask
// for decisions and check what the plugin did. It links the Host (and so
// its engines); package plugin, which a plugin's program links, does not.
package plugintest

import (
	"context"
	"io"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/plugin"
)

// Connect starts a plugin made of hs in h, in-process, with the manifest m
// and the folder dir ("" for none): the Host runs it as it runs a command
// plugin (initialize, facts, decisions, restarts, stop), over pipes in
// memory instead of a process's stdio.
func Connect(ctx context.Context, h *escouade.Host, m *manifest.Manifest, dir string, hs plugin.Handlers) (*escouade.Plugin, error) {
	return h.StartFunc(ctx, m, dir, func(ctx context.Context, in io.Reader, out io.Writer) error {
		return plugin.Serve(ctx, in, out, hs)
	})
}
