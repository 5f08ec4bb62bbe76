package atspi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// dialControl opens a godbus connection to a bus, bounded by ctx: the dial,
// the authentication and Hello all end at ctx's deadline or after 5 s.
func dialControl(ctx context.Context, address string, opts ...dbus.ConnOption) (*dbus.Conn, error) {
	var lastErr error
	for _, entry := range strings.Split(address, ";") {
		sockPath, err := unixSocketPath(entry)
		if err != nil {
			lastErr = err
			continue
		}
		var d net.Dialer
		nc, err := d.DialContext(ctx, "unix", sockPath)
		if err != nil {
			lastErr = err
			continue
		}
		uc := nc.(*net.UnixConn)
		deadline := time.Now().Add(5 * time.Second)
		if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
			deadline = dl
		}
		uc.SetDeadline(deadline)
		conn, err := dbus.ConnectUnix(uc, opts...)
		if err != nil {
			uc.Close()
			lastErr = err
			continue
		}
		uc.SetDeadline(time.Time{})
		return conn, nil
	}
	if lastErr == nil {
		lastErr = errors.New("atspi: empty D-Bus address")
	}
	return nil, lastErr
}

// sessionBusAddress returns the session bus address: the option, the
// environment, or the per-user bus socket.
func sessionBusAddress(o *Options) string {
	if o.SessionBus != "" {
		return o.SessionBus
	}
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" {
		return a
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		p := filepath.Join(dir, "bus")
		if _, err := os.Stat(p); err == nil {
			return "unix:path=" + p
		}
	}
	return ""
}

// findBus returns the accessibility bus address and, when it could reach
// one, a connection to the session bus (for org.a11y.Status). It tries, in
// order: Options.Address, AT_SPI_BUS_ADDRESS, org.a11y.Bus.GetAddress on
// the session bus, and the AT_SPI_BUS property of the X root window. The
// error lists why each source failed.
func findBus(ctx context.Context, o *Options) (string, *dbus.Conn, error) {
	var why []string
	var session *dbus.Conn
	if sa := sessionBusAddress(o); sa != "" {
		conn, err := dialControl(ctx, sa)
		if err != nil {
			why = append(why, "session bus: "+err.Error())
		} else {
			session = conn
		}
	} else {
		why = append(why, "no session bus address")
	}
	if o.Address != "" {
		return o.Address, session, nil
	}
	if a := os.Getenv("AT_SPI_BUS_ADDRESS"); a != "" {
		return a, session, nil
	}
	if session != nil {
		var addr string
		err := session.Object("org.a11y.Bus", "/org/a11y/bus").
			CallWithContext(ctx, "org.a11y.Bus.GetAddress", 0).Store(&addr)
		if err == nil && addr != "" {
			return addr, session, nil
		}
		if err == nil {
			err = errors.New("empty address")
		}
		why = append(why, "org.a11y.Bus.GetAddress: "+err.Error())
	}
	addr, err := rootWindowBus(o.Display)
	if err == nil {
		return addr, session, nil
	}
	why = append(why, "X root property AT_SPI_BUS: "+err.Error())
	return "", session, errors.New(strings.Join(why, "; "))
}

// rootWindowBus reads the AT_SPI_BUS property that at-spi-bus-launcher sets
// on the X root window, for sessions whose session bus cannot be reached.
func rootWindowBus(display string) (string, error) {
	if display == "" {
		display = os.Getenv("DISPLAY")
	}
	if display == "" {
		return "", errors.New("no X display")
	}
	x, err := xgb.NewConnDisplay(display)
	if err != nil {
		return "", err
	}
	defer x.Close()
	atom, err := xproto.InternAtom(x, true, uint16(len("AT_SPI_BUS")), "AT_SPI_BUS").Reply()
	if err != nil {
		return "", err
	}
	if atom.Atom == 0 {
		return "", errors.New("not set")
	}
	root := xproto.Setup(x).DefaultScreen(x).Root
	prop, err := xproto.GetProperty(x, false, root, atom.Atom, xproto.GetPropertyTypeAny, 0, 1024).Reply()
	if err != nil {
		return "", err
	}
	if prop.Format != 8 || len(prop.Value) == 0 {
		return "", errors.New("not set")
	}
	return string(prop.Value), nil
}

// enable sets org.a11y.Status so that toolkits which ask before exposing a
// tree (GTK 4, Qt; Chromium and Electron for ScreenReaderEnabled) do so.
func enable(ctx context.Context, session *dbus.Conn, screenReader bool) error {
	obj := session.Object("org.a11y.Bus", "/org/a11y/bus")
	props := []string{"IsEnabled"}
	if screenReader {
		props = append(props, "ScreenReaderEnabled")
	}
	for _, p := range props {
		err := obj.CallWithContext(ctx, "org.freedesktop.DBus.Properties.Set", 0,
			"org.a11y.Status", p, dbus.MakeVariant(true)).Err
		if err != nil {
			return fmt.Errorf("atspi: setting org.a11y.Status.%s: %w", p, err)
		}
	}
	return nil
}

// watchedEvents are the events Watch reports. Registering them also makes
// toolkit bridges emit them and build the cache that Cache.GetItems serves.
var watchedEvents = []string{
	"object:children-changed",
	"object:state-changed",
	"object:property-change",
	"object:bounds-changed",
	"object:text-changed",
}

// register registers our interest in watchedEvents with the registry. The
// one-argument form is the one every registry version accepts.
func register(ctx context.Context, bus *dbus.Conn) error {
	obj := bus.Object(registryName, pathRegistry)
	for _, ev := range watchedEvents {
		if err := obj.CallWithContext(ctx, "org.a11y.atspi.Registry.RegisterEvent", 0, ev).Err; err != nil {
			return fmt.Errorf("atspi: registering %s with the registry: %w", ev, err)
		}
	}
	return nil
}
