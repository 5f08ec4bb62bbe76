//go:build unix

package jsonrpc

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// tryWriterFor returns a function that writes to w in one attempt that
// never waits, or nil when w cannot make one. Only a non-blocking file
// (a pipe from os.Pipe, a socket) can: the runtime's poller would park a
// blocked write, but a write(2) of its own returns EAGAIN at once.
func tryWriterFor(w io.Writer) func([]byte) (int, error) {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	nonblock := false
	if rc.Control(func(fd uintptr) {
		flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		nonblock = err == nil && flags&unix.O_NONBLOCK != 0
	}) != nil || !nonblock {
		return nil
	}
	return func(p []byte) (int, error) {
		var n int
		var werr error
		err := rc.Write(func(fd uintptr) bool {
			for n < len(p) {
				m, err := syscall.Write(int(fd), p[n:])
				if m > 0 {
					n += m
				}
				switch {
				case err == syscall.EINTR:
					continue
				case err == syscall.EAGAIN:
					return true // what is left goes to the writing goroutine
				case err != nil:
					werr = err
					return true
				case m == 0:
					werr = io.ErrUnexpectedEOF
					return true
				}
			}
			return true
		})
		if err != nil {
			return n, err
		}
		if werr != nil {
			return n, &os.PathError{Op: "write", Path: f.Name(), Err: werr}
		}
		return n, nil
	}
}
