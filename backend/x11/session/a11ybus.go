package session

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/introspect"
	"github.com/godbus/dbus/v5/prop"
	"github.com/jezek/xgb/xproto"
)

// The accessibility bus is a dbus-daemon of its own, with at-spi2's
// configuration. at-spi-bus-launcher would start it, but as a child of its
// own that no parent-death signal reaches: a daemon killed outright would
// leave it (and the registry it activates) running. So the session starts
// the dbus-daemon itself, with the signal, and publishes its address where
// at-spi-bus-launcher does: the org.a11y.Bus service on the session bus
// (GetAddress, and org.a11y.Status, which Qt, GTK 4 and Chromium read and
// watch before exposing a tree) and the AT_SPI_BUS property of the X root
// window (GTK 3 and Qt look there first).

// a11yConfigs are where distributions install at-spi2's bus configuration,
// in the order at-spi-bus-launcher looks (a local one overrides).
var a11yConfigs = []string{
	"/etc/at-spi2/accessibility.conf",
	"/usr/share/defaults/at-spi2/accessibility.conf",
	"/usr/local/share/defaults/at-spi2/accessibility.conf",
}

// findA11yConfig returns the first accessibility bus configuration found,
// or "".
func findA11yConfig() string {
	for _, p := range a11yConfigs {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

const (
	a11yName      = "org.a11y.Bus"
	a11yPath      = dbus.ObjectPath("/org/a11y/bus")
	a11yStatus    = "org.a11y.Status"
	a11yIntrospec = `<node><interface name="org.a11y.Bus"><method name="GetAddress"><arg type="s" name="address" direction="out"/></method></interface>` +
		`<interface name="org.a11y.Status"><property name="IsEnabled" type="b" access="readwrite"/><property name="ScreenReaderEnabled" type="b" access="readwrite"/></interface>` +
		introspect.IntrospectDeclarationString + `</node>`
)

// a11yService answers org.a11y.Bus.GetAddress.
type a11yService struct{ addr string }

// GetAddress returns the accessibility bus address.
func (a a11yService) GetAddress() (string, *dbus.Error) { return a.addr, nil }

// startA11y starts the accessibility bus on a fixed socket path and waits
// until it prints its address, then publishes the address. The part is
// ready once org.a11y.Bus answers GetAddress on the session bus.
func (s *Session) startA11y(ctx context.Context, config string) (*proc, error) {
	path := filepath.Join(s.dir, "a11y-bus")
	os.Remove(path)
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	defer r.Close()
	if s.agent != nil {
		// at-spi2's configuration, which admits the bus's own user and
		// root, and the agent's uid: its applications join the tree.
		mine := filepath.Join(s.dir, "a11y-bus.conf")
		xml := busConfig("  <include>" + config + "</include>\n" + s.busPolicy())
		if err := os.WriteFile(mine, []byte(xml), 0o600); err != nil {
			return nil, fmt.Errorf("session: %w", err)
		}
		config = mine
	}
	cmd := exec.Command("dbus-daemon", "--config-file="+config, "--nofork", "--nopidfile", "--nosyslog",
		"--address=unix:path="+path, "--print-address=3")
	cmd.ExtraFiles = []*os.File{w}
	// What the bus activates (the registry) is no application to expose.
	cmd.Env = append(s.Env(), "NO_AT_BRIDGE=1")
	pr, err := s.spawn(string(PartA11yBus), cmd, true)
	w.Close()
	if err != nil {
		return nil, err
	}
	addr, err := waitLine(ctx, pr, r)
	if err != nil {
		return pr, err
	}
	peers, err := watchPeers(ctx, path)
	if err != nil {
		return pr, fmt.Errorf("session: %s: %w", PartA11yBus, err)
	}
	release, err := s.publishA11y(ctx, addr)
	if err != nil {
		peers.close()
		return pr, err
	}
	var once sync.Once
	pr.release = func() { once.Do(func() { release(); peers.close() }) }
	s.mu.Lock()
	s.a11yAddr = addr
	s.peers = peers
	s.mu.Unlock()
	return pr, nil
}

// publishA11y serves org.a11y.Bus on the session bus and sets AT_SPI_BUS
// on the X root window. release gives the name up.
func (s *Session) publishA11y(ctx context.Context, addr string) (release func(), err error) {
	conn, err := connectBus(ctx, s.busPath)
	if err != nil {
		return nil, fmt.Errorf("session: %s: session bus: %w", PartA11yBus, err)
	}
	fail := func(err error) (func(), error) {
		conn.Close()
		return nil, fmt.Errorf("session: %s: publishing on the session bus: %w", PartA11yBus, err)
	}
	if err := conn.Export(a11yService{addr}, a11yPath, a11yName); err != nil {
		return fail(err)
	}
	_, err = prop.Export(conn, a11yPath, prop.Map{a11yStatus: {
		"IsEnabled":           {Value: true, Writable: true, Emit: prop.EmitTrue},
		"ScreenReaderEnabled": {Value: false, Writable: true, Emit: prop.EmitTrue},
	}})
	if err != nil {
		return fail(err)
	}
	if err := conn.Export(introspect.Introspectable(a11yIntrospec), a11yPath, "org.freedesktop.DBus.Introspectable"); err != nil {
		return fail(err)
	}
	var reply dbus.RequestNameReply
	err = conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.RequestName", 0, a11yName, uint32(dbus.NameFlagDoNotQueue)).Store(&reply)
	if err != nil {
		return fail(err)
	}
	if reply != dbus.RequestNameReplyPrimaryOwner {
		return fail(fmt.Errorf("%s is owned by another program", a11yName))
	}
	if err := s.setRootBus(addr); err != nil {
		conn.Close()
		return nil, fmt.Errorf("session: %s: setting AT_SPI_BUS: %w", PartA11yBus, err)
	}
	return func() { conn.Close() }, nil
}

// setRootBus sets the AT_SPI_BUS property of the root window. The server
// runs with -noreset, so the property outlives the connection.
func (s *Session) setRootBus(addr string) error {
	c, err := dial(s.Display, s.Cookie)
	if err != nil {
		return err
	}
	defer c.Close()
	const name = "AT_SPI_BUS"
	atom, err := xproto.InternAtom(c, false, uint16(len(name)), name).Reply()
	if err != nil {
		return err
	}
	root := xproto.Setup(c).DefaultScreen(c).Root
	return xproto.ChangePropertyChecked(c, xproto.PropModeReplace, root, atom.Atom, xproto.AtomString, 8,
		uint32(len(addr)), []byte(addr)).Check()
}

// connectBus connects to the bus listening on the unix socket at path:
// the dial, the authentication and Hello end at ctx's deadline, while the
// connection lives on after ctx (as long as the part).
func connectBus(ctx context.Context, path string) (*dbus.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	uc := nc.(*net.UnixConn)
	if dl, ok := ctx.Deadline(); ok {
		uc.SetDeadline(dl)
	}
	conn, err := dbus.ConnectUnix(uc)
	if err != nil {
		uc.Close()
		return nil, err
	}
	uc.SetDeadline(time.Time{})
	return conn, nil
}
