package escouade

import (
	"shinken.dev/go/escouade/internal/fence"
	"shinken.dev/go/escouade/manifest"
)

// The environment of what the Host starts for a plugin is built by
// allowlist, in escouade/internal/fence, for proc/spawn's programs and
// command plugins alike.

// commandEnv is the environment of a command plugin (run.command), as
// fence.CommandEnv builds it for the variables m names in permissions.env.
func commandEnv(m *manifest.Manifest) []string { return fence.CommandEnv(m.Permissions.Env) }
