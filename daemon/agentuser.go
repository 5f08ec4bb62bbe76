package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/internal/agentuser"
	"shinken.dev/go/shinken"
)

// TokenEnv is the environment variable a program may hand the token in
// (cmd/example reads it). Children inherit it, so remove it (os.Unsetenv)
// before New; the daemon's executor never passes it on. A token file the
// agent's user cannot read (Options.TokenFile) is better.
const TokenEnv = "SHINKEN_TOKEN"

// agentBoundary is what New found of Options.AgentUser: the user the
// agent's commands run as, or why they run as the daemon's own.
type agentBoundary struct {
	user *agentuser.User // nil: no switch
	why  error           // why there is no switch (nil with a user)
}

// newAgentBoundary looks up o.AgentUser and finds whether the daemon can
// switch to it; it refuses what cannot hold. It logs what it found.
func newAgentBoundary(o *Options, rt *shinken.RuntimeOptions, b shinken.Backend, log *slog.Logger) (*agentBoundary, error) {
	if o.AgentUser == "" {
		if o.RequireAgentUser {
			return nil, errors.New("daemon: Options.RequireAgentUser needs Options.AgentUser")
		}
		log.Warn("the agent's commands run as the daemon's own user: they can change its plugins and read its files (set Options.AgentUser, -agent-user)", "uid", os.Geteuid())
		return &agentBoundary{why: errors.New("no agent user is set")}, nil
	}
	if _, runs := b.(shinken.Executor); rt != nil && rt.Executor != nil || runs {
		return nil, errors.New("daemon: Options.AgentUser switches the daemon's own executor, and the commands run elsewhere (Options.Runtime.Executor, or the backend's): set the user there (osexec.Options.User)")
	}
	u, err := agentuser.Lookup(o.AgentUser)
	if err != nil {
		return nil, fmt.Errorf("daemon: Options.AgentUser: %w", err)
	}
	if err := u.CanSwitch(); err != nil {
		log.Warn("CANNOT RUN THE AGENT'S COMMANDS AS THEIR OWN USER: they run as the daemon's, and can change its plugins and read its files",
			"agent-user", u.Name, "why", err)
		return &agentBoundary{why: err}, nil
	}
	if err := checkOutOfReach(u, o, log); err != nil {
		return nil, err
	}
	log.Info("the agent's commands run as their own user", "agent-user", u.Name, "uid", u.UID, "gid", u.GID, "groups", u.Groups)
	return &agentBoundary{user: u}, nil
}

// executor is the daemon's own executor: as the agent's user when there
// is one, never passing on TokenEnv.
func (ab *agentBoundary) executor() shinken.Executor {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, TokenEnv+"=") {
			env = append(env, kv)
		}
	}
	o := &osexec.Options{Env: env}
	if u := ab.user; u != nil {
		o.User = &osexec.User{Name: u.Name, UID: u.UID, GID: u.GID, Groups: u.Groups, Home: u.Home}
	}
	return osexec.New(o)
}

// check is the readiness check of RequireAgentUser.
func (ab *agentBoundary) check(context.Context) error {
	if ab.user == nil {
		return NotReady("the agent user", "is not switched to", ab.why)
	}
	return nil
}

// checkOutOfReach refuses to start when the agent's user can write the
// plugins folder, anything in it, or the token file (or the folder it
// will appear in): the agent could swap its own guard, or set the token.
// A token file the agent's user can read is logged as a warning: it
// holds no more than the agent's own access, but the page's takeover and
// every other session's too.
func checkOutOfReach(u *agentuser.User, o *Options, log *slog.Logger) error {
	if o.Plugins != nil && o.Plugins.Dir != "" {
		r, err := u.CanWriteTree(o.Plugins.Dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("daemon: checking the plugins folder against the agent user: %w", err)
		}
		if r != nil {
			return fmt.Errorf("daemon: the agent's user %s can change the plugins: %w (give the folder to another user, mode 0755 or tighter)", u.Name, r)
		}
	}
	if o.TokenFile == "" {
		return nil
	}
	r, err := u.CanWrite(existing(o.TokenFile))
	if err != nil {
		return fmt.Errorf("daemon: checking the token file against the agent user: %w", err)
	}
	if r != nil {
		return fmt.Errorf("daemon: the agent's user %s can write the token file: %w", u.Name, r)
	}
	if _, err := os.Stat(o.TokenFile); err == nil {
		r, err := u.CanRead(o.TokenFile)
		if err != nil {
			return fmt.Errorf("daemon: checking the token file against the agent user: %w", err)
		}
		if r != nil {
			log.Warn("THE AGENT'S USER CAN READ THE TOKEN FILE: make it readable by the daemon only (mode 0400 or 0440)", "agent-user", u.Name, "file", o.TokenFile, "why", r.Error())
		}
	}
	return nil
}

// existing is path, or the nearest folder above it that exists: where
// the agent's user would create it.
func existing(path string) string {
	for p := path; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || filepath.Dir(p) == p {
			return p
		}
	}
}
