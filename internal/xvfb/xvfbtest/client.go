package xvfbtest

import (
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// An XClient is a plain X connection of a test's, playing the applications
// a backend acts on: it reads the connection's events, as xgb needs, and
// keeps them for Next.
type XClient struct {
	Conn   *xgb.Conn
	Root   xproto.Window
	events chan xgb.Event // dropped when nobody reads
}

// NewXClient reads conn's events until t's cleanup, which closes conn.
func NewXClient(t testing.TB, conn *xgb.Conn) *XClient {
	c := &XClient{Conn: conn, Root: xproto.Setup(conn).DefaultScreen(conn).Root, events: make(chan xgb.Event, 4096)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := conn.WaitForEvent()
			if ev == nil && err == nil {
				return
			}
			if ev != nil {
				select {
				case c.events <- ev:
				default: // the test did not ask for events
				}
			}
		}
	}()
	t.Cleanup(func() {
		conn.Close()
		<-done
	})
	return c
}

// Next returns the next event keep accepts, dropping the others, and fails
// t when none comes within 10 s.
func (c *XClient) Next(t testing.TB, what string, keep func(xgb.Event) bool) xgb.Event {
	t.Helper()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	for {
		select {
		case ev := <-c.events:
			if keep(ev) {
				return ev
			}
		case <-timer.C:
			t.Fatalf("no %s within 10 s", what)
			return nil
		}
	}
}

// Drain forgets the events received so far, after a round trip makes sure
// the server has sent every event of the requests before it.
func (c *XClient) Drain() {
	xproto.GetInputFocus(c.Conn).Reply()
	for {
		select {
		case <-c.events:
		default:
			return
		}
	}
}

// Keymap returns the server's keyboard mapping: the keysyms of each
// keycode.
func (c *XClient) Keymap(t testing.TB) map[xproto.Keycode][]xproto.Keysym {
	t.Helper()
	setup := xproto.Setup(c.Conn)
	n := int(setup.MaxKeycode) - int(setup.MinKeycode) + 1
	m, err := xproto.GetKeyboardMapping(c.Conn, setup.MinKeycode, byte(n)).Reply()
	if err != nil {
		t.Fatal(err)
	}
	per := int(m.KeysymsPerKeycode)
	out := make(map[xproto.Keycode][]xproto.Keysym, n)
	for i := range n {
		out[xproto.Keycode(int(setup.MinKeycode)+i)] = m.Keysyms[i*per : (i+1)*per]
	}
	return out
}

// Pending returns an event received and not yet taken, if there is one.
func (c *XClient) Pending() (xgb.Event, bool) {
	select {
	case ev := <-c.events:
		return ev, true
	default:
		return nil, false
	}
}
