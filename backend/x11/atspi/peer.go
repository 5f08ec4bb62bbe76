package atspi

import (
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// samePeerUser reports whether the process at the other end of c runs as
// this process's user. An application's bridge admits to its
// peer-to-peer socket only its own user: with an agent's applications run
// as a user of their own, it takes this process's authentication, then
// hangs up before any answer. Those are read through the bus, whose
// policy admits both users.
func samePeerUser(c net.Conn) bool {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) { cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil || credErr != nil {
		return false
	}
	return int(cred.Uid) == os.Geteuid()
}
