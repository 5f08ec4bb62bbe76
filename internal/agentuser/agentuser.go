// Package agentuser is the operating-system user the agent's commands run
// as: who it is (looked up in the user database), whether this process can
// switch to it, what the commands' credential and environment are, and
// whether a file the agent must not touch is within its reach.
package agentuser

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
)

// A User is the agent's user: ids, groups, name and home folder.
type User struct {
	Name   string
	UID    uint32
	GID    uint32
	Groups []uint32 // supplementary groups, the primary one excluded
	Home   string
}

// ErrSameUser is a user that is this process's own: no boundary.
var ErrSameUser = errors.New("is the daemon's own user: no boundary between the agent and the daemon")

// Lookup finds the user named name (a login name, or a numeric uid) in the
// user database and the groups it belongs to. Root is refused: a command
// run as root is no boundary at all.
func Lookup(name string) (*User, error) {
	if name == "" {
		return nil, errors.New("agent user: empty name")
	}
	var u *user.User
	var err error
	if _, nerr := strconv.ParseUint(name, 10, 32); nerr == nil {
		u, err = user.LookupId(name)
	} else {
		u, err = user.Lookup(name)
	}
	if err != nil {
		return nil, fmt.Errorf("agent user %q: %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("agent user %q: non-numeric ids %s:%s", name, u.Uid, u.Gid)
	}
	if uid == 0 {
		return nil, fmt.Errorf("agent user %q is root: the agent's commands must run as another user", name)
	}
	au := &User{Name: u.Username, UID: uint32(uid), GID: uint32(gid), Home: u.HomeDir}
	ids, err := u.GroupIds()
	if err != nil {
		return nil, fmt.Errorf("agent user %q: groups: %w", name, err)
	}
	for _, s := range ids {
		g, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("agent user %q: non-numeric group %s", name, s)
		}
		if uint32(g) != au.GID && !slices.Contains(au.Groups, uint32(g)) {
			au.Groups = append(au.Groups, uint32(g))
		}
	}
	slices.Sort(au.Groups)
	return au, nil
}

// Env returns base without its HOME, USER and LOGNAME, followed by u's.
func (u *User) Env(base []string) []string { return UserEnv(base, u.Name, u.Home) }

// UserEnv returns base without its HOME, USER and LOGNAME, followed by
// those of the user name whose home is home.
func UserEnv(base []string, name, home string) []string {
	env := make([]string, 0, len(base)+3)
	for _, kv := range base {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "HOME", "USER", "LOGNAME":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "USER="+name, "LOGNAME="+name)
}

// inGroup reports whether u is a member of group gid.
func (u *User) inGroup(gid uint32) bool {
	return gid == u.GID || slices.Contains(u.Groups, gid)
}

// CanSwitch says why this process cannot start and stop a command as u,
// or nil: u must not be this process's user, this process needs
// CAP_SETUID and CAP_SETGID (to switch) and CAP_KILL (to kill what runs
// as u at its deadline), and in a user namespace u's ids must be mapped.
func (u *User) CanSwitch() error {
	if uint32(os.Geteuid()) == u.UID {
		return fmt.Errorf("agent user %s (uid %d) %w", u.Name, u.UID, ErrSameUser)
	}
	caps, err := effectiveCaps()
	if err != nil {
		return fmt.Errorf("agent user %s: reading this process's capabilities: %w", u.Name, err)
	}
	const capKill, capSetgid, capSetuid = 5, 6, 7
	var missing []string
	if caps&(1<<capSetuid) == 0 {
		missing = append(missing, "CAP_SETUID")
	}
	if caps&(1<<capSetgid) == 0 {
		missing = append(missing, "CAP_SETGID")
	}
	if caps&(1<<capKill) == 0 {
		missing = append(missing, "CAP_KILL")
	}
	if len(missing) > 0 {
		return fmt.Errorf("agent user %s: the daemon (uid %d) lacks %s: run it as root, or give it those capabilities",
			u.Name, os.Geteuid(), strings.Join(missing, ", "))
	}
	ids := []struct {
		file string
		ids  []uint32
	}{{"/proc/self/uid_map", []uint32{u.UID}}, {"/proc/self/gid_map", append([]uint32{u.GID}, u.Groups...)}}
	for _, m := range ids {
		for _, id := range m.ids {
			ok, err := mapped(m.file, id)
			if err != nil {
				return fmt.Errorf("agent user %s: %w", u.Name, err)
			}
			if !ok {
				return fmt.Errorf("agent user %s: id %d is not mapped in this user namespace (%s)", u.Name, id, m.file)
			}
		}
	}
	return nil
}

// effectiveCaps reads this process's effective capability set.
func effectiveCaps() (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, errors.New("no CapEff in /proc/self/status")
}

// mapped reports whether id lies in a range of the id map file.
func mapped(file string, id uint32) (bool, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil // no user namespaces: every id is this kernel's
	}
	if err != nil {
		return false, err
	}
	return inIDMap(b, id), nil
}

// inIDMap reports whether id lies in a range of an id map (lines of
// "inside outside count", as /proc/PID/uid_map has them).
func inIDMap(idMap []byte, id uint32) bool {
	for line := range strings.Lines(string(idMap)) {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		in, err1 := strconv.ParseUint(f[0], 10, 32)
		n, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 == nil && err2 == nil && uint64(id) >= in && uint64(id) < in+n {
			return true
		}
	}
	return false
}
