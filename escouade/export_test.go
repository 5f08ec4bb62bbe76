package escouade

import (
	"context"
	"net"
	"time"

	"shinken.dev/go/escouade/internal/fence"
	"shinken.dev/go/escouade/internal/ssrf"
)

// What only this package's tests may do to a Host, before it starts a
// plugin: nothing here is reachable from Options, so no configuration can
// let a plugin reach what the fences keep it from.

// SetNetHook makes h resolve names with r, whose answers are judged as any
// are, and dial each address it judged with dial: a test maps a public
// address to its server on this machine.
func SetNetHook(h *Host, r ssrf.Resolver, dial func(ctx context.Context, network, addr string) (net.Conn, error)) {
	h.hook = &fence.NetHook{Resolver: r, Dial: dial}
}

// SetInputGrace sets how long a stop waits for a plugin to end once its
// input is closed, apart from the wait after SIGTERM (Options.StopGrace):
// a test of the SIGTERM step gives that step a hang guard's length without
// waiting as long for a plugin it knows ignores its closed input.
func SetInputGrace(h *Host, d time.Duration) { h.inputGrace = d }

// SetStreamIdle shortens the 120 s after which a silent stream ends.
func SetStreamIdle(h *Host, d time.Duration) { h.streamIdle = d }

// SetWireHooks makes h tell onLine what goes to and from its in-process
// plugins, in chunks, and onCall every answer of escouade.call.
func SetWireHooks(h *Host, onLine func(fromHost bool, b []byte), onCall func(method string, answer []byte)) {
	h.onLine, h.onCall = onLine, onCall
}

// ProcPending returns how many bytes of proc/out for the program proc
// were written to p's running instance and not yet read by it.
func ProcPending(p *Plugin, proc int64) int {
	inst := p.cur.Load()
	if inst == nil || inst.tap == nil {
		return -1
	}
	return inst.tap.pending(proc)
}

// ProcOutLimit is the bound ProcPending stays under, but for one read.
const ProcOutLimit = fence.MaxProcOut

// SetEngineLinked sets whether the program called EngineMain, and returns
// what sets it back.
func SetEngineLinked(v bool) (restore func()) {
	old := engineLinked.Swap(v)
	return func() { engineLinked.Store(old) }
}
