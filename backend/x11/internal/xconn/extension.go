package xconn

import (
	"fmt"
	"sync"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	// Their init functions fill xgb's per-extension decoder tables that
	// Init copies from.
	_ "github.com/jezek/xgb/damage"
	_ "github.com/jezek/xgb/shm"
	_ "github.com/jezek/xgb/xfixes"
	_ "github.com/jezek/xgb/xtest"
)

// The extensions the module uses, by their protocol names.
const (
	Damage = "DAMAGE"
	SHM    = "MIT-SHM"
	XFixes = "XFIXES"
	XTest  = "XTEST"
)

var extensions = []string{Damage, SHM, XFixes, XTest}

// base is where a server numbers an extension's events and errors.
type base struct{ event, error int }

var (
	registerOnce sync.Once
	extMu        sync.Mutex
	registered   = map[string]base{}
)

// Init makes the extension name usable on c, in place of the extension
// package's own Init (damage.Init, shm.Init, …), which writes xgb's
// process-wide decoder tables (xgb.NewEventFuncs, xgb.NewErrorFuncs) on
// every call while every other connection's reader goroutine reads them
// without a lock: a data race as soon as a second connection initialises
// an extension while the first receives events. Init writes the tables
// once per extension and process (Connect does it for every extension of
// the module on the process's first connection, before any connection
// can receive an event); afterwards it only records the extension's opcode
// on c. A server that numbers the extension's events or errors unlike the
// first one did (another X server build in the same process) cannot be
// decoded without rewriting the tables under the readers: Init refuses
// the extension there, and the caller goes without it, as for a server
// that lacks it.
func Init(c *xgb.Conn, name string) error {
	reply, err := xproto.QueryExtension(c, uint16(len(name)), name).Reply()
	if err != nil {
		return err
	}
	if !reply.Present {
		return fmt.Errorf("x11: the server has no %s extension", name)
	}
	at := base{int(reply.FirstEvent), int(reply.FirstError)}
	extMu.Lock()
	seen, ok := registered[name]
	if !ok {
		for n, f := range xgb.NewExtEventFuncs[name] {
			xgb.NewEventFuncs[at.event+n] = f
		}
		for n, f := range xgb.NewExtErrorFuncs[name] {
			xgb.NewErrorFuncs[at.error+n] = f
		}
		registered[name] = at
		seen = at
	}
	extMu.Unlock()
	if seen != at {
		return fmt.Errorf("x11: this server numbers %s's events and errors from %d and %d, another server of this process from %d and %d: not decodable at once", name, at.event, at.error, seen.event, seen.error)
	}
	c.ExtLock.Lock()
	c.Extensions[name] = reply.MajorOpcode
	c.ExtLock.Unlock()
	return nil
}

// registerAll registers the decoders of every extension of the module
// that c's server has, on the process's first connection: no connection
// made after it writes the tables again, so none races with a reader.
func registerAll(c *xgb.Conn) {
	registerOnce.Do(func() {
		for _, name := range extensions {
			Init(c, name) // a server without it: a later one registers it
		}
	})
}
