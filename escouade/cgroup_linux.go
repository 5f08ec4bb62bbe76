package escouade

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
)

// On Linux each program the Host starts for a plugin (a command plugin,
// proc/spawn's programs, launch.shared's process) is started into a cgroup
// of its own when one can be made: a child of the Host's own cgroup in the
// unified (v2) hierarchy, writable by the Host. Whatever the program
// starts lands in it too, and stays there whatever it does (setsid,
// setpgid, a double fork), so that killing the cgroup (cgroup.kill, or
// each process it lists) ends every descendant. Where none can be made
// (no cgroup v2, no right to write it), the process group is what is
// killed, and a descendant that left the group survives.

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
			return dir
		}
	}
	return ""
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
	dir := filepath.Join(parent, fmt.Sprintf("escouade-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
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

// remove kills what is left and removes the cgroup, once its processes
// have left it (the kernel moves them out as they exit, before they are
// reaped), waiting 5 s at most on a goroutine of its own.
func (c *cgroup) remove() {
	if c == nil {
		return
	}
	c.once.Do(func() {
		c.kill()
		unix.Close(c.fd)
		if err := os.Remove(c.dir); err == nil || !errors.Is(err, unix.EBUSY) {
			return
		}
		go func() {
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
				c.kill()
				if err := os.Remove(c.dir); err == nil || !errors.Is(err, unix.EBUSY) {
					return
				}
			}
		}()
	})
}
