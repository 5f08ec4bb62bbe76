// Package xconn opens xgb connections to an X display, with the cookie
// chosen here rather than by xgb: xgb reads credentials from $XAUTHORITY,
// which belongs to the whole process and ignores an explicit file, so the
// connection is dialled here and the setup request xgb writes is replaced
// on the wire. The backend and the test session's own connections both
// open theirs through it.
package xconn

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jezek/xgb"
)

// A Display is a parsed X display name:
// [protocol/][host]:number[.screen], or /path/to/socket:number[.screen].
type Display struct {
	network string // "unix" or "tcp"...
	host    string // "" for a local display
	socket  string // explicit socket path prefix (launchd style), or ""
	number  string
	// Screen is the screen the name asks for (0 when it names none).
	Screen int
}

// ParseDisplay parses an X display name.
func ParseDisplay(name string) (Display, error) {
	bad := fmt.Errorf("bad display name %q", name)
	colon := strings.LastIndex(name, ":")
	if colon < 0 {
		return Display{}, bad
	}
	var d Display
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
		return Display{}, bad
	}
	d.number = num
	if hasScreen {
		n, err := strconv.Atoi(scr)
		if err != nil || n < 0 {
			return Display{}, bad
		}
		d.Screen = n
	}
	return d, nil
}

// dial opens the transport to the display: the socket file first, then
// Linux's abstract socket of the same name, which a server in another mount
// namespace still offers.
func (d Display) dial(ctx context.Context) (net.Conn, error) {
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
		return nil, fmt.Errorf("reading Xauthority: %w", err)
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
			return nil, fmt.Errorf("the authority file %s is malformed", path)
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
func cookieFor(entries []xauthEntry, d Display, hostname string, remote net.IP) []byte {
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

// Connect opens an xgb connection to d. The cookie is cookie when it is
// not nil (an empty one connects with none), otherwise the
// MIT-MAGIC-COOKIE-1 that the authority file xauthority (default
// $XAUTHORITY, then ~/.Xauthority) holds for d, as libXau picks it.
func Connect(ctx context.Context, d Display, xauthority string, cookie []byte) (*xgb.Conn, error) {
	quietXGB.Do(quiet)
	c, err := d.dial(ctx)
	if err != nil {
		return nil, err
	}
	if cookie == nil {
		if path := xauthorityPath(xauthority); path != "" {
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
	}
	if deadline, ok := ctx.Deadline(); ok {
		c.SetDeadline(deadline)
	}
	conn, err := xgb.NewConnNet(&setupConn{Conn: c, setup: setupRequest(cookie)})
	if err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	registerAll(conn)
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

var quietXGB sync.Once

// quiet keeps xgb from saying, on every connection, that it found no
// authority: it looks for one itself before writing the setup request
// that this package replaces, so the line is always false. Every other
// line of xgb's logger goes where it went.
func quiet() {
	xgb.Logger = log.New(&dropAuthority{w: xgb.Logger.Writer()}, xgb.Logger.Prefix(), xgb.Logger.Flags())
}

// dropAuthority passes on every log line but xgb's two about the
// authority it looked for.
type dropAuthority struct{ w io.Writer }

func (d *dropAuthority) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("Could not get authority info")) || bytes.Contains(p, []byte("Trying connection without authority info")) {
		return len(p), nil
	}
	return d.w.Write(p)
}
