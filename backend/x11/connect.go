package x11

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jezek/xgb"
)

// A displayName is a parsed X display name:
// [protocol/][host]:number[.screen], or /path/to/socket:number[.screen].
type displayName struct {
	network string // "unix" or "tcp"...
	host    string // "" for a local display
	socket  string // explicit socket path prefix (launchd style), or ""
	number  string
	screen  int
}

func parseDisplay(name string) (displayName, error) {
	bad := fmt.Errorf("%w: bad display name %q", ErrConnect, name)
	colon := strings.LastIndex(name, ":")
	if colon < 0 {
		return displayName{}, bad
	}
	var d displayName
	head, tail := name[:colon], name[colon+1:]
	switch {
	case strings.HasPrefix(name, "/"):
		d.network, d.socket = "unix", head
	default:
		if proto, host, ok := strings.Cut(head, "/"); ok {
			d.network, d.host = proto, host
		} else {
			d.host = head
		}
		if d.host == "unix" {
			d.host = ""
		}
		if d.network == "" {
			d.network = "tcp"
			if d.host == "" {
				d.network = "unix"
			}
		}
	}
	num, scr, hasScreen := strings.Cut(tail, ".")
	if n, err := strconv.Atoi(num); err != nil || n < 0 {
		return displayName{}, bad
	}
	d.number = num
	if hasScreen {
		n, err := strconv.Atoi(scr)
		if err != nil || n < 0 {
			return displayName{}, bad
		}
		d.screen = n
	}
	return d, nil
}

// dial opens the transport to the display: the socket file first, then
// Linux's abstract socket of the same name, which a server in another mount
// namespace still offers.
func (d displayName) dial(ctx context.Context) (net.Conn, error) {
	var dialer net.Dialer
	switch {
	case d.socket != "":
		return dialer.DialContext(ctx, "unix", d.socket+":"+d.number)
	case d.network == "unix":
		path := "/tmp/.X11-unix/X" + d.number
		c, err := dialer.DialContext(ctx, "unix", path)
		if err == nil {
			return c, nil
		}
		if c, err2 := dialer.DialContext(ctx, "unix", "@"+path); err2 == nil {
			return c, nil
		}
		return nil, err
	default:
		n, _ := strconv.Atoi(d.number)
		return dialer.DialContext(ctx, d.network, net.JoinHostPort(d.host, strconv.Itoa(6000+n)))
	}
}

// Xauthority address families, as in Xauth.h.
const (
	familyInternet  = 0
	familyInternet6 = 6
	familyLocal     = 256
	familyWild      = 65535
)

type xauthEntry struct {
	family  uint16
	address []byte
	number  string
	name    string
	data    []byte
}

// readXauthority parses an authority file. A missing file is no entries.
func readXauthority(path string) ([]xauthEntry, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: reading Xauthority: %w", ErrConnect, err)
	}
	r := bytes.NewReader(data)
	field := func() ([]byte, error) {
		var n uint16
		if err := binary.Read(r, binary.BigEndian, &n); err != nil {
			return nil, err
		}
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	var entries []xauthEntry
	for r.Len() > 0 {
		var e xauthEntry
		err := binary.Read(r, binary.BigEndian, &e.family)
		var number, name []byte
		if err == nil {
			e.address, err = field()
		}
		if err == nil {
			number, err = field()
		}
		if err == nil {
			name, err = field()
		}
		if err == nil {
			e.data, err = field()
		}
		if err != nil {
			return nil, fmt.Errorf("%w: Xauthority file %s is malformed", ErrConnect, path)
		}
		e.number, e.name = string(number), string(name)
		entries = append(entries, e)
	}
	return entries, nil
}

// cookieFor picks the MIT-MAGIC-COOKIE-1 for display d from entries, the
// way libXau does: the first entry whose family and address match the
// connection and whose display number matches (an empty number matches
// any). remote is the address dialled, nil for a local socket.
func cookieFor(entries []xauthEntry, d displayName, hostname string, remote net.IP) []byte {
	for _, e := range entries {
		if e.name != "MIT-MAGIC-COOKIE-1" || (e.number != "" && e.number != d.number) {
			continue
		}
		match := false
		switch e.family {
		case familyWild:
			match = true
		case familyLocal:
			match = (remote == nil || remote.IsLoopback()) && string(e.address) == hostname
		case familyInternet, familyInternet6:
			match = remote != nil && net.IP(e.address).Equal(remote)
		}
		if match {
			return e.data
		}
	}
	return nil
}

// xauthorityPath is where the cookie comes from: the option, then
// $XAUTHORITY, then ~/.Xauthority.
func xauthorityPath(opt string) string {
	if opt != "" {
		return opt
	}
	if p := os.Getenv("XAUTHORITY"); p != "" {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".Xauthority")
	}
	return ""
}

// connect opens an xgb connection to d with the cookie from xauth.
//
// xgb reads credentials from $XAUTHORITY by itself, which belongs to the
// whole process and ignores an explicit file. So the connection is dialled
// here and the setup request xgb writes is replaced on the wire by one
// carrying the cookie chosen above (or none).
func connect(ctx context.Context, d displayName, xauth string) (*xgb.Conn, error) {
	c, err := d.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConnect, err)
	}
	var cookie []byte
	if path := xauthorityPath(xauth); path != "" {
		entries, err := readXauthority(path)
		if err != nil {
			c.Close()
			return nil, err
		}
		hostname, _ := os.Hostname()
		var remote net.IP
		if addr, ok := c.RemoteAddr().(*net.TCPAddr); ok {
			remote = addr.IP
		}
		cookie = cookieFor(entries, d, hostname, remote)
	}
	if deadline, ok := ctx.Deadline(); ok {
		c.SetDeadline(deadline)
	}
	conn, err := xgb.NewConnNet(&setupConn{Conn: c, setup: setupRequest(cookie)})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%w: %w", ErrConnect, err)
	}
	c.SetDeadline(time.Time{})
	return conn, nil
}

// setupRequest encodes a little-endian connection-setup request, with a
// MIT-MAGIC-COOKIE-1 when cookie is not empty.
func setupRequest(cookie []byte) []byte {
	name := ""
	if len(cookie) > 0 {
		name = "MIT-MAGIC-COOKIE-1"
	}
	b := make([]byte, 12+xgb.Pad(len(name))+xgb.Pad(len(cookie)))
	b[0] = 'l' // xgb decodes everything as little-endian
	binary.LittleEndian.PutUint16(b[2:], 11)
	binary.LittleEndian.PutUint16(b[6:], uint16(len(name)))
	binary.LittleEndian.PutUint16(b[8:], uint16(len(cookie)))
	copy(b[12:], name)
	copy(b[12+xgb.Pad(len(name)):], cookie)
	return b
}

// setupConn replaces the first write on a connection, which xgb makes in a
// single call holding its own setup request.
type setupConn struct {
	net.Conn
	setup []byte
	sent  bool // written and read by xgb's goroutines in turn, never at once
}

func (c *setupConn) Write(p []byte) (int, error) {
	if c.sent {
		return c.Conn.Write(p)
	}
	c.sent = true
	if _, err := c.Conn.Write(c.setup); err != nil {
		return 0, err
	}
	return len(p), nil
}
