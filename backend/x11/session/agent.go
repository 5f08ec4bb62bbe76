package session

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"shinken.dev/go/internal/agentuser"
	"shinken.dev/go/internal/procfs"
)

// The agent's applications run as a user of their own (Options.AgentUser),
// while the session's parts run as this process's user. What an
// application needs of the session is then opened to that user alone:
// the session's folder can be crossed (not listed: its files are 0600),
// the buses' sockets in it admit the agent's uid, and the display's cookie
// is copied into a folder the agent owns, with its runtime folder.

// lookupAgent finds the agent's user, nil when there is none or when this
// process cannot switch to it (said in the log, and why is refused).
func lookupAgent(name string, log *slog.Logger) (u *agentuser.User, refused, err error) {
	if name == "" {
		return nil, nil, nil
	}
	u, err = agentuser.Lookup(name)
	if err != nil {
		return nil, nil, fmt.Errorf("session: Options.AgentUser: %w", err)
	}
	if err := u.CanSwitch(); err != nil {
		log.Warn("the desktop's applications run as the session's own user, not the agent's", "agent-user", u.Name, "why", err)
		return nil, err, nil
	}
	return u, nil, nil
}

// makeAgentDir opens the session's folder to be crossed and makes the
// agent's own folder in it, with its runtime folder. The cookie's copy is
// written once the display number is known (writeAgentXauthority). A
// process that may not give files away (no CAP_CHOWN) runs the
// applications as its own user, and says so.
func (s *Session) makeAgentDir() error {
	if s.agent == nil {
		return nil
	}
	agentDir := filepath.Join(s.dir, "agent")
	run := filepath.Join(agentDir, "run")
	for _, d := range []string{agentDir, run} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		err := os.Chown(d, int(s.agent.UID), int(s.agent.GID))
		if errors.Is(err, os.ErrPermission) {
			s.log.Warn("the desktop's applications run as the session's own user, not the agent's: it may not give the agent its files (CAP_CHOWN)", "agent-user", s.agent.Name, "err", err)
			s.agent, s.AgentRefused = nil, fmt.Errorf("it may not give the agent's user its files (CAP_CHOWN): %w", err)
			return os.RemoveAll(agentDir)
		}
		if err != nil {
			return fmt.Errorf("session: giving the agent's user its folder: %w", err)
		}
	}
	if err := os.Chmod(s.dir, 0o711); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	s.AgentRuntimeDir = run
	return nil
}

// writeAgentXauthority writes the agent's copy of the authority file, in
// its folder, before any of its processes runs.
func (s *Session) writeAgentXauthority(entry []byte) error {
	if s.agent == nil {
		return nil
	}
	path := filepath.Join(s.dir, "agent", "Xauthority")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	_, err = f.Write(entry)
	if err == nil {
		err = f.Chown(int(s.agent.UID), int(s.agent.GID))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("session: the agent's authority file: %w", err)
	}
	s.AgentXauthority = path
	return nil
}

// agentEnv returns the environment for an application run as
// Options.AgentUser: AppEnv with the agent's authority file, runtime
// folder, HOME, USER and LOGNAME. Without an agent's user it is AppEnv.
func (s *Session) agentEnv() []string {
	env := s.AppEnv()
	if s.agent == nil {
		return env
	}
	drop := map[string]bool{"XAUTHORITY": true, "XDG_RUNTIME_DIR": true}
	kept := env[:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			kept = append(kept, kv)
		}
	}
	return append(s.agent.Env(kept), "XAUTHORITY="+s.AgentXauthority, "XDG_RUNTIME_DIR="+s.AgentRuntimeDir)
}

// asAgent makes cmd, an application of the session, run as the agent's
// user when there is one: its credential, environment and folder.
func (s *Session) asAgent(cmd *exec.Cmd) {
	if s.agent == nil {
		return
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.agent.Credential()}
	cmd.Env = s.agentEnv()
	cmd.Dir = s.AgentRuntimeDir
	if fi, err := os.Stat(s.agent.Home); err == nil && fi.IsDir() {
		cmd.Dir = s.agent.Home
	}
}

// busPolicy is the policy that admits the agent's uid to a bus besides
// this process's, "" without an agent's user. dbus-daemon admits only its
// own uid unless a policy names others.
func (s *Session) busPolicy() string {
	if s.agent == nil {
		return ""
	}
	return `  <policy context="default">
    <allow user="` + strconv.Itoa(os.Geteuid()) + `"/>
    <allow user="` + strconv.FormatUint(uint64(s.agent.UID), 10) + `"/>
  </policy>
`
}

// procCredential is the real uid, gid and supplementary groups of process
// pid, nil when its uid is this process's.
func procCredential(pid int) (*syscall.Credential, error) {
	b, err := os.ReadFile(procfs.Root + "/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	var cred syscall.Credential
	var seen int
	for line := range strings.Lines(string(b)) {
		key, val, _ := strings.Cut(line, ":")
		f := strings.Fields(val)
		switch key {
		case "Uid", "Gid":
			if len(f) == 0 {
				return nil, fmt.Errorf("session: process %d: no %s", pid, key)
			}
			id, err := strconv.ParseUint(f[0], 10, 32)
			if err != nil {
				return nil, fmt.Errorf("session: process %d: %s %q", pid, key, f[0])
			}
			if key == "Uid" {
				cred.Uid = uint32(id)
			} else {
				cred.Gid = uint32(id)
			}
			seen++
		case "Groups":
			for _, g := range f {
				id, err := strconv.ParseUint(g, 10, 32)
				if err != nil {
					return nil, fmt.Errorf("session: process %d: group %q", pid, g)
				}
				cred.Groups = append(cred.Groups, uint32(id))
			}
		}
	}
	if seen != 2 {
		return nil, fmt.Errorf("session: process %d: no Uid or Gid in its status", pid)
	}
	if int(cred.Uid) == os.Geteuid() {
		return nil, nil
	}
	return &cred, nil
}

// agentGroups returns the process groups of the agent's processes below
// this one: the applications started for the agent (each in a session,
// so a group, of its own) and what they started. An application may
// rewrite its environment (Chromium does), so the marker misses it and
// its children; their group does not change.
func (s *Session) agentGroups() map[int]bool {
	if s.agent == nil {
		return nil
	}
	below, err := procfs.Descendants(os.Getpid())
	if err != nil {
		return nil
	}
	groups := map[int]bool{}
	for _, pid := range below {
		st, err := procfs.ReadStat(pid)
		if err == nil && st.PGID > 1 && s.isAgents(pid) {
			groups[st.PGID] = true
		}
	}
	return groups
}

// inAgentGroups lists the live processes of the agent's user in groups.
func (s *Session) inAgentGroups(groups map[int]bool) []int {
	if len(groups) == 0 {
		return nil
	}
	all, err := procfs.All()
	if err != nil {
		return nil
	}
	var pids []int
	for _, st := range all {
		if groups[st.PGID] && st.Live() && s.isAgents(st.PID) {
			pids = append(pids, st.PID)
		}
	}
	return pids
}

// isAgents reports whether process pid runs as the agent's user.
func (s *Session) isAgents(pid int) bool {
	c, err := procCredential(pid)
	return err == nil && c != nil && c.Uid == s.agent.UID
}
