package escouade

import "shinken.dev/go/escouade/internal/fence"

// The environment of what the Host starts for a plugin is built by
// allowlist, in escouade/internal/fence, for proc/spawn's programs and
// command plugins alike.

// commandEnv is the environment of a command plugin (run.command), as
// fence.CommandEnv builds it for the variables m names in permissions.env.
func commandEnv(m *Manifest) []string { return fence.CommandEnv(m.Permissions.Env) }

// neverSet says why a variable may never be set by a plugin, whatever its
// manifest says, or "" (fence.NeverSet): the manifest refuses to name one.
func neverSet(key string) string { return fence.NeverSet(key) }
