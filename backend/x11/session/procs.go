package session

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"sync"

	"shinken.dev/go/internal/procfs"
)

// marked lists the processes whose environment holds MarkerVar=marker.
func marked(marker string) ([]int, error) {
	all, err := procfs.PIDs()
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	want := []byte(MarkerVar + "=" + marker + "\x00")
	self := os.Getpid()
	var pids []int
	for _, pid := range all {
		if pid == self {
			continue
		}
		env, err := os.ReadFile(procfs.Root + "/" + strconv.Itoa(pid) + "/environ")
		if err != nil || !bytes.Contains(append([]byte{0}, env...), append([]byte{0}, want...)) {
			continue
		}
		if !procfs.Alive(pid) {
			continue // dead already; its parent reaps it
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// xauthEntry encodes one Xauthority entry for any address (FamilyWild) and
// display number (empty means any).
func xauthEntry(cookie []byte, number string) []byte {
	var b bytes.Buffer
	field := func(s []byte) {
		binary.Write(&b, binary.BigEndian, uint16(len(s)))
		b.Write(s)
	}
	binary.Write(&b, binary.BigEndian, uint16(0xffff))
	field(nil)
	field([]byte(number))
	field([]byte("MIT-MAGIC-COOKIE-1"))
	field(cookie)
	return b.Bytes()
}

// limitedWriter keeps the first max bytes written to it, for error messages.
type limitedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (w *limitedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
