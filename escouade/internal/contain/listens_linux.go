package contain

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"shinken.dev/go/internal/procfs"
)

// listensOn reports whether a process of g (its cgroup, or else its
// process group) holds a TCP socket listening on port, on the loopback
// or every address: what local:shared opens is a port the shared process
// is seen to listen on, not whatever port it prints.
func ListensOn(g *Group, port int) bool {
	inodes := listeningSockets(port)
	if len(inodes) == 0 {
		return false
	}
	for _, pid := range g.members() {
		fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name()))
			if err != nil {
				continue
			}
			if ino, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(ino, "]")] {
				return true
			}
		}
	}
	return false
}

// listeningSockets returns the inodes of the TCP sockets listening on port
// on 127.0.0.1, ::1 or every address.
func listeningSockets(port int) map[string]bool {
	inodes := map[string]bool{}
	hexPort := strings.ToUpper(strconv.FormatInt(int64(port), 16))
	for len(hexPort) < 4 {
		hexPort = "0" + hexPort
	}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Scan() // the header
		for sc.Scan() {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			f := strings.Fields(sc.Text())
			if len(f) < 10 || f[3] != "0A" {
				continue
			}
			addr, p, ok := strings.Cut(f[1], ":")
			if !ok || p != hexPort {
				continue
			}
			switch addr {
			case "0100007F", "00000000", // 127.0.0.1, 0.0.0.0
				"00000000000000000000000001000000", "00000000000000000000000000000000", // ::1, ::
				"0000000000000000FFFF00000100007F": // ::ffff:127.0.0.1
				inodes[f[9]] = true
			}
		}
	}
	return inodes
}

// members returns the pids of g's processes: its cgroup's, those below its
// shepherd, or else those of its process group.
func (g *Group) members() []int {
	if g.sh != nil {
		return descendants(g.pgid)
	}
	var pids []int
	if g.cg != nil {
		if b, err := os.ReadFile(filepath.Join(g.cg.dir, "cgroup.procs")); err == nil {
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
			return pids
		}
	}
	all, _ := procfs.All()
	for _, p := range all {
		if p.PGID == g.pgid {
			pids = append(pids, p.PID)
		}
	}
	return pids
}
