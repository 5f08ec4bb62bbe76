package contain

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"shinken.dev/go/internal/procfs"
)

// On Linux each program the Host starts for a plugin (a command plugin,
// proc/spawn's programs, launch.shared's process) is started into a cgroup
// of its own when one can be made: a child of the Host's own cgroup in the
// unified (v2) hierarchy, writable by the Host. Whatever the program
// starts lands in it too, and stays there whatever it does (setsid,
// setpgid, a double fork), so that killing the cgroup (cgroup.kill, or
// each process it lists) ends every descendant. Where none can be made
// (no cgroup v2, no right to write it), a shepherd holds them instead
// (shepherd_linux.go). A Host that dies
// abruptly leaves its cgroups behind; the next Host on the machine ends
// what they hold and removes them when it starts its first program.

// A cgroup is the cgroup of one program and all it starts.
type cgroup struct {
	dir string
	fd  int // the cgroup's folder, for clone3's CLONE_INTO_CGROUP

	once sync.Once
}

// cgroupParent is the Host's own cgroup v2 folder, where it makes the
// cgroups of its programs; "" when it cannot.
var cgroupParent = sync.OnceValue(func() string {
	mount := cgroup2Mount()
	if mount == "" {
		return ""
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(self), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			dir := filepath.Join(mount, filepath.Clean("/"+rest))
			if unix.Access(dir, unix.W_OK) != nil {
				return ""
			}
			sweepStale(dir)
			return dir
		}
	}
	return ""
})

// sweepStale ends what the cgroups of a Host that died abruptly still
// hold (a parent-death signal reaches the programs it started, not what
// they started), and removes them: a Host's first program sweeps them.
func sweepStale(parent string) {
	ents, _ := os.ReadDir(parent)
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), cgroupPrefix())
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || unix.Kill(pid, 0) == nil || !errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
			continue
		}
		c := &cgroup{dir: filepath.Join(parent, e.Name()), fd: -1}
		c.remove()
	}
}

// cgroupPrefix begins the names of the cgroups of the Hosts of this pid
// namespace: a pid names a Host only in its own namespace, and Hosts of
// other namespaces may share the parent.
var cgroupPrefix = sync.OnceValue(func() string {
	ns, _ := os.Readlink("/proc/self/ns/pid") // pid:[4026531836]
	ns = strings.Trim(strings.TrimPrefix(ns, "pid:"), "[]")
	if ns == "" {
		ns = "0"
	}
	return "escouade-" + ns + "-"
})

// cgroup2Mount returns where the unified hierarchy is mounted, or "".
func cgroup2Mount() string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// id parent dev root mountpoint opts... - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f := strings.Fields(pre)
		if ok && len(f) >= 5 && strings.HasPrefix(post, "cgroup2 ") {
			return f[4]
		}
	}
	return ""
}

var (
	cgroupSeq atomic.Uint64
	// noCgroups is set once a program started into a cgroup failed and
	// started without one: the kernel cannot.
	noCgroups atomic.Bool
)

// newCgroup makes a cgroup for one program, or returns nil when none can
// be made.
func newCgroup() *cgroup {
	parent := cgroupParent()
	if parent == "" || noCgroups.Load() {
		return nil
	}
	dir := filepath.Join(parent, fmt.Sprintf("%s%d-%d", cgroupPrefix(), os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(dir)
		return nil
	}
	return &cgroup{dir: dir, fd: fd}
}

// kill ends every process in the cgroup: at once with cgroup.kill (Linux
// 5.14), else by SIGKILL to each process it lists until it lists none,
// which a fork racing the kill cannot outrun for long.
func (c *cgroup) kill() {
	if c == nil {
		return
	}
	if os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0) == nil {
		return
	}
	for range 100 {
		b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
		if err != nil || len(bytes.TrimSpace(b)) == 0 {
			return
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// killEscapees kills the descendants of the cgroup's processes that are no
// longer in it. Every process a member starts is born in the cgroup, so
// one outside it moved itself out: a process with the user's rights may
// write its pid into the cgroup.procs of any cgroup its user may write,
// the Host's own included. Its parentage stays, though, while its parent
// lives in the cgroup: found by it, it dies with the cgroup. (One that was
// orphaned too, its parent gone, is not found: see the package's
// REFERENCE.md.) It runs before the process group is killed, which would
// take the parents with it.
func (c *cgroup) killEscapees() {
	if c == nil {
		return
	}
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return
	}
	inside := map[int]bool{}
	var next []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			inside[pid] = true
			next = append(next, pid)
		}
	}
	if len(next) == 0 {
		return
	}
	all, err := procfs.All()
	if err != nil {
		return
	}
	children := map[int][]int{}
	for _, st := range all {
		children[st.PPID] = append(children[st.PPID], st.PID)
	}
	seen := map[int]bool{}
	self := os.Getpid()
	for len(next) > 0 {
		p := next[len(next)-1]
		next = next[:len(next)-1]
		for _, ch := range children[p] {
			if seen[ch] {
				continue
			}
			seen[ch] = true
			if !inside[ch] && ch != self {
				syscall.Kill(ch, syscall.SIGKILL)
			}
			next = append(next, ch)
		}
	}
}

// remove kills what is left and removes the cgroup, once its processes
// have left it (the kernel moves them out as they exit, before they are
// reaped), waiting 2 s at most.
func (c *cgroup) remove() {
	if c == nil {
		return
	}
	c.once.Do(func() {
		c.kill()
		if c.fd >= 0 {
			unix.Close(c.fd)
		}
		wait := time.Millisecond
		for deadline := time.Now().Add(2 * time.Second); ; {
			if err := os.Remove(c.dir); err == nil || !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
				return
			}
			time.Sleep(wait) // the killed are on their way out
			wait = min(2*wait, 50*time.Millisecond)
			c.kill()
		}
	})
}
