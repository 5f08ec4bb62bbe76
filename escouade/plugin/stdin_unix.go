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
	if nf := nonblocking(f); nf != nil {
		return nf, restoreFunc(nf)
	}
	return in, func() {}
}

// pollableOut is pollable for the writing side: on a non-blocking copy of
// stdout the connection writes each answer from the handler that made it,
// in one attempt that never waits, instead of handing it to its writing
// goroutine (see internal/jsonrpc). A peer that stops reading still blocks
// nobody: what the attempt leaves waits for the writing goroutine.
func pollableOut(out io.Writer) (w io.Writer, restore func()) {
	f, ok := out.(*os.File)
	if !ok {
		return out, func() {}
	}
	if nf := nonblocking(f); nf != nil {
		return nf, restoreFunc(nf)
	}
	return out, func() {}
}

// nonblocking returns a non-blocking copy of f's descriptor, or nil when f
// is already non-blocking (the runtime polls it, or it is not ours to
// change) or cannot be copied.
func nonblocking(f *os.File) *os.File {
	sc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	fd := -1
	sc.Control(func(orig uintptr) {
		flags, err := unix.FcntlInt(orig, unix.F_GETFL, 0)
		if err != nil || flags&syscall.O_NONBLOCK != 0 {
			return
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
		return nil
	}
	return os.NewFile(uintptr(fd), f.Name())
}

func restoreFunc(nf *os.File) func() {
	return func() {
		if sc, err := nf.SyscallConn(); err == nil {
			sc.Control(func(fd uintptr) { syscall.SetNonblock(int(fd), false) })
		}
		nf.Close()
	}
}
