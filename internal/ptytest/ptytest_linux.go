package ptytest

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"shinken.dev/go/internal/citest"
)

// Open opens a pseudo-terminal, closed when t ends: its master, and its
// slave opened with O_NOCTTY (it becomes no one's controlling terminal by
// being opened). Where there are none, t is skipped (a failure under CI).
func Open(t testing.TB) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		citest.Skip(t, "no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// Raw turns off tty's line discipline (canonical input, echo, signals), so
// that Queued counts every byte typed, not complete lines only.
func Raw(t testing.TB, tty *os.File) {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Lflag &^= unix.ICANON | unix.ECHO | unix.ISIG | unix.IEXTEN
	if err := unix.IoctlSetTermios(int(tty.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
}

// Queued is how many bytes wait in tty's input (in canonical mode,
// complete lines: what a shell reading it would run). TIOCSTI puts its
// byte there before it returns, so a count taken after the typist ended
// is final.
func Queued(t testing.TB, tty *os.File) int {
	t.Helper()
	n, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCINQ)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Type types s into the terminal fd, a byte at a time, as TIOCSTI does;
// it stops at the first refusal.
func Type(fd uintptr, s string) error {
	for i := range len(s) {
		c := s[i]
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, fd, unix.TIOCSTI, uintptr(unsafe.Pointer(&c))); e != 0 {
			return e
		}
	}
	return nil
}

// Forbidden reports whether the kernel refuses TIOCSTI to all but
// CAP_SYS_ADMIN (dev.tty.legacy_tiocsti=0).
func Forbidden() bool {
	b, err := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti")
	return err == nil && strings.TrimSpace(string(b)) == "0"
}
