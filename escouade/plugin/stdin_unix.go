//go:build unix

package plugin

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// pollable returns a reader of in that parks a goroutine, not an OS thread,
// while it waits. A program's stdin is a blocking descriptor: a read on it
// holds a thread in a system call, and the handler the reader just started
// waits for the scheduler to notice before it runs, which costs a request
// tens of microseconds. A non-blocking copy of the descriptor goes through
// the runtime's poller instead. The copy shares the open file with in, so in
// is non-blocking too until restore is called.
func pollable(in io.Reader) (r io.Reader, restore func()) {
	f, ok := in.(*os.File)
	if !ok {
		return in, func() {}
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return in, func() {}
	}
	fd := -1
	sc.Control(func(orig uintptr) {
		flags, err := unix.FcntlInt(orig, unix.F_GETFL, 0)
		if err != nil || flags&syscall.O_NONBLOCK != 0 {
			return // already non-blocking: the runtime polls it, or it is not ours to change
		}
		dup, err := syscall.Dup(int(orig))
		if err != nil {
			return
		}
		syscall.CloseOnExec(dup)
		if syscall.SetNonblock(dup, true) != nil {
			syscall.Close(dup)
			return
		}
		fd = dup
	})
	if fd < 0 {
		return in, func() {}
	}
	nf := os.NewFile(uintptr(fd), f.Name())
	return nf, func() {
		syscall.SetNonblock(fd, false)
		nf.Close()
	}
}
