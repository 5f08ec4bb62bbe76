package hosttool

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"shinken.dev/go/internal/procfs"
)

// A background command's folder lives as long as the ACI session that
// holds its command, and a listing removes it once its holder has died.
// A daemon killed with SIGKILL lists nothing more: its commands die with
// their containment, and their folders stay in the temporary folder until
// some later listing. SweepCommands removes them when a daemon starts.

// sweepSetup is how long a folder without its holder's pid is taken for
// one that a command start (of another daemon, on the same folder) is
// still setting up.
const sweepSetup = time.Minute

// SweepCommands removes from dir (the agent's temporary folder) the
// background commands' and shells' folders that no live process holds: of
// those that are folders (not links) owned by this process's user or by
// one of owners (the agent's user, when its commands run as another), each
// whose holder is not running and that no process has open (a file or its
// working directory in it). It returns the folders removed; an unreadable
// dir is an error, a folder it cannot remove is left and skipped. A folder
// of another user is removed without following any link in it.
func SweepCommands(dir string, owners ...uint32) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type key struct{ dev, ino uint64 }
	var cands []string
	owned := map[key]string{} // the folders' files and the folders themselves, to their folder
	for _, e := range ents {
		if !cmdDirRE.MatchString(e.Name()) && !shellDirRE.MatchString(e.Name()) {
			continue
		}
		d := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || int(st.Uid) != os.Geteuid() && !slices.Contains(owners, st.Uid) {
			continue
		}
		if holderAlive(d) || time.Since(fi.ModTime()) < sweepSetup && !exists(filepath.Join(d, "hpid")) || endedLately(d) {
			continue
		}
		cands = append(cands, d)
		owned[key{uint64(st.Dev), st.Ino}] = d
		inner, err := readDirMax(d, maxSweptFiles)
		if err != nil {
			// Not one of ours, or not as a holder leaves it: left alone.
			delete(owned, key{uint64(st.Dev), st.Ino})
			cands = cands[:len(cands)-1]
			continue
		}
		for _, f := range inner {
			if fi, err := os.Lstat(filepath.Join(d, f.Name())); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					owned[key{uint64(st.Dev), st.Ino}] = d
				}
			}
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	held := map[string]bool{}
	pids, err := procfs.PIDs()
	if err != nil {
		return nil, err
	}
	for _, pid := range pids {
		p := filepath.Join(procfs.Root, strconv.Itoa(pid))
		links := []string{filepath.Join(p, "cwd")}
		if fds, err := os.ReadDir(filepath.Join(p, "fd")); err == nil {
			for _, fd := range fds {
				links = append(links, filepath.Join(p, "fd", fd.Name()))
			}
		}
		for _, l := range links {
			fi, err := os.Stat(l)
			if err != nil {
				continue
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				if d, ok := owned[key{uint64(st.Dev), st.Ino}]; ok {
					held[d] = true
				}
			}
		}
	}
	var removed []string
	for _, d := range cands {
		if held[d] {
			continue
		}
		if err := os.RemoveAll(d); err == nil {
			removed = append(removed, d)
		}
	}
	return removed, nil
}

// endedLately reports whether folder d's command ended, its holder saying
// so, within the last sweepEnded: its output is still the session's to
// read, whether that session's daemon is this one or another on the same
// folder. A daemon killed leaves no such word: its commands' holders die
// with it.
func endedLately(d string) bool {
	fi, err := os.Lstat(filepath.Join(d, "exit"))
	return err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) < sweepEnded
}

// sweepEnded is how long an ended command's folder is kept, as a listing
// of commands keeps it.
const sweepEnded = time.Hour

// maxSweptFiles bounds the entries of a folder the sweep removes: a
// command's or a shell's folder holds a handful.
const maxSweptFiles = 64

// readDirMax reads folder d's entries, an error past max of them.
func readDirMax(d string, max int) ([]os.DirEntry, error) {
	f, err := os.OpenFile(d, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(max + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(ents) > max {
		return nil, errors.New("too many entries")
	}
	return ents, nil
}

// holderAlive reports whether the holder that folder d's hpid names (its
// pid and start time) still runs, as this process sees it.
func holderAlive(d string) bool {
	b, err := readSmall(filepath.Join(d, "hpid"))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return false
	}
	stat, err := os.ReadFile(filepath.Join(procfs.Root, f[0], "stat"))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return false
	}
	rest := strings.Fields(string(stat[i+1:]))
	return len(rest) > 19 && rest[19] == f[1]
}

// readSmall reads the regular file p, never through a link, never
// waiting on a fifo or a device another user may have put there, and at
// most 128 bytes of it.
func readSmall(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	b := make([]byte, 128)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:n], nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return !errors.Is(err, os.ErrNotExist)
}
