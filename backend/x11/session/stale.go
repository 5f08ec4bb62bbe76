package session

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A session's folder (its cookie, its buses' sockets, the agent's runtime
// folder) goes with Close. A daemon killed outright leaves it behind: its
// processes die with it, its folder stays in the temporary folder. While
// a session lives it holds a lock on a file in its folder, which the
// kernel lets go with the process, so Start removes the folders of this
// user's sessions whose lock is free.

const (
	dirPrefix = "shinken-session-"
	lockName  = "lock"
	// staleSetup is how long a session's folder is taken for one being
	// set up (made, but not locked yet) by another Start.
	staleSetup = time.Minute
)

// lockDir creates dir's lock file and holds it, until the file returned is
// closed or the process ends.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// sweepStale removes from tmp the session folders of this user that no
// live session holds: a folder whose lock file is missing is left (a
// session being set up, or one of a version without the lock), as is one
// younger than setup. It returns the folders removed.
func sweepStale(tmp string, setup time.Duration) []string {
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), dirPrefix) || !e.IsDir() {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < setup {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
			continue
		}
		if removeUnlocked(dir) {
			removed = append(removed, dir)
		}
	}
	return removed
}

// removeUnlocked removes dir when its lock is free, holding the lock while
// it does.
func removeUnlocked(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false // a live session's, or not a lock we can take
	}
	return os.RemoveAll(dir) == nil
}
