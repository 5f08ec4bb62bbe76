//go:build unix

package plugin

import (
	"io"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// stdio prepares a plugin's stdin and stdout for the connection, and
// returns what undoes it.
//
// Writing: a non-blocking copy of stdout lets a handler write its answer
// itself, in one attempt that never waits (see internal/jsonrpc), instead
// of handing it to the writing goroutine and waking another thread.
//
// Reading: with the connection serving a request on the goroutine that read
// it, the quickest wait for the next line is a plain blocking read: the
// thread sleeps in the kernel and the Host's write wakes it directly. The
// runtime's poller adds a thread hand-off to every message. A blocking read
// holds its P while it waits, though, so on a single P the poller is used
// (a worker started by the reader would otherwise wait for the scheduler to
// notice). A descriptor that is non-blocking, from the start or because it
// shares its open file with stdout, is always read through the poller.
func stdio(in io.Reader, out io.Writer) (io.Reader, io.Writer, func()) {
	var undo []func()
	if f, ok := out.(*os.File); ok {
		if nf, restore := nonblocking(f); nf != nil {
			out = nf
			undo = append(undo, restore)
		}
	}
	if f, ok := in.(*os.File); ok {
		if nf, restore := readable(f); nf != nil {
			in = nf
			undo = append(undo, restore)
		}
	}
	return in, out, func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
}

// readable returns a pollable copy of f when f is non-blocking or when a
// blocking read would be the slower choice (see stdio), or nil when f is
// best read as it is.
func readable(f *os.File) (*os.File, func()) {
	nb, ok := isNonblocking(f)
	switch {
	case !ok:
		return nil, nil
	case nb:
		// os.File polls only what was non-blocking when it was made; a
		// copy made now is polled.
		return dup(f, false)
	case runtime.GOMAXPROCS(0) > 1:
		return nil, nil
	}
	return dup(f, true)
}

// nonblocking returns a non-blocking copy of f's descriptor, polled by the
// runtime, and what makes the open file blocking again; nil when f cannot
// be copied or is already non-blocking (not ours to change).
func nonblocking(f *os.File) (*os.File, func()) {
	nb, ok := isNonblocking(f)
	if !ok || nb {
		return nil, nil
	}
	return dup(f, true)
}

func isNonblocking(f *os.File) (nonblock, ok bool) {
	sc, err := f.SyscallConn()
	if err != nil {
		return false, false
	}
	sc.Control(func(fd uintptr) {
		flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		nonblock, ok = flags&syscall.O_NONBLOCK != 0, err == nil
	})
	return nonblock, ok
}

// dup copies f's descriptor into a new *os.File, first making the open file
// non-blocking when setNonblock is set.
func dup(f *os.File, setNonblock bool) (*os.File, func()) {
	sc, err := f.SyscallConn()
	if err != nil {
		return nil, nil
	}
	fd := -1
	sc.Control(func(orig uintptr) {
		d, err := syscall.Dup(int(orig))
		if err != nil {
			return
		}
		syscall.CloseOnExec(d)
		if setNonblock && syscall.SetNonblock(d, true) != nil {
			syscall.Close(d)
			return
		}
		fd = d
	})
	if fd < 0 {
		return nil, nil
	}
	nf := os.NewFile(uintptr(fd), f.Name())
	return nf, func() {
		if setNonblock {
			if sc, err := nf.SyscallConn(); err == nil {
				sc.Control(func(fd uintptr) { syscall.SetNonblock(int(fd), false) })
			}
		}
		nf.Close()
	}
}
