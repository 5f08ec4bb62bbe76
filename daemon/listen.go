package daemon

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/mdlayher/vsock"
)

// listener is one of the daemon's listeners, and how to name its URLs.
type listener struct {
	net.Listener
	tcp  bool
	name string // host:port, unix:/path or vsock:PORT
}

// listen opens the listener addr names: host:port, unix:/path, or
// vsock:PORT (any context id: the host of a Firecracker-style VM reaches
// the guest through its vsock device; port 0 picks a free one).
func listen(addr string) (*listener, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		os.Remove(path)
		l, err := net.Listen("unix", path)
		if err != nil {
			return nil, fmt.Errorf("daemon: listen %s: %w", addr, err)
		}
		return &listener{Listener: l, name: addr}, nil
	}
	if port, ok := strings.CutPrefix(addr, "vsock:"); ok {
		p, err := strconv.ParseUint(port, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("daemon: listen %q: want vsock:PORT, PORT a number", addr)
		}
		l, err := vsock.Listen(uint32(p), nil)
		if err != nil {
			return nil, fmt.Errorf("daemon: listen %s: %w (is there a vsock device?)", addr, err)
		}
		// Port 0 picks a free one: name the one taken.
		if va, ok := l.Addr().(*vsock.Addr); ok {
			port = strconv.FormatUint(uint64(va.Port), 10)
		}
		return &listener{Listener: l, name: "vsock:" + port}, nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("daemon: listen %s: %w", addr, err)
	}
	return &listener{Listener: l, tcp: true, name: l.Addr().String()}, nil
}

// url names path on the listener: ws://host:port/aci on TCP, else the
// socket and the path.
func (l *listener) url(path string) string {
	if l.tcp {
		return "ws://" + l.name + path
	}
	return l.name + " (path " + path + ")"
}

// httpURL is url with http://.
func (l *listener) httpURL(path string) string {
	if l.tcp {
		return "http://" + l.name + path
	}
	return l.url(path)
}
