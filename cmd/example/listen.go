package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/mdlayher/vsock"
)

// listen opens the listener -listen names: host:port, unix:/path, or
// vsock:PORT (any context id: the host of a Firecracker-style VM reaches
// the guest through its vsock device; port 0 picks a free one), and names
// the URLs to print.
func listen(addr string) (l net.Listener, aci, page string, err error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		os.Remove(path)
		l, err = net.Listen("unix", path)
		return l, "unix:" + path + " (path " + pathACI + ")", "", err
	}
	if port, ok := strings.CutPrefix(addr, "vsock:"); ok {
		p, perr := strconv.ParseUint(port, 10, 32)
		if perr != nil {
			return nil, "", "", fmt.Errorf("-listen %q: want vsock:PORT, PORT a number", addr)
		}
		l, err = vsock.Listen(uint32(p), nil)
		if err != nil {
			return nil, "", "", fmt.Errorf("-listen %s: %w (is there a vsock device?)", addr, err)
		}
		// Port 0 picks a free one: name the one taken.
		if va, ok := l.Addr().(*vsock.Addr); ok {
			port = strconv.FormatUint(uint64(va.Port), 10)
		}
		return l, "vsock:" + port + " (path " + pathACI + ")", "", nil
	}
	l, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, "", "", err
	}
	host := l.Addr().String()
	return l, "ws://" + host + pathACI, "http://" + host + "/", nil
}
