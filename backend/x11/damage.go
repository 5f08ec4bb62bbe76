package x11

import (
	"sync/atomic"

	"github.com/jezek/xgb/damage"
	"github.com/jezek/xgb/xproto"
	"shinken.dev/go/backend/x11/internal/xconn"
)

// damageState counts DAMAGE notifications on the root window, so that an
// idle screencast captures nothing. DAMAGE is a hint (some clients, GL ones
// in particular, draw without reporting): the runtime still captures now
// and then to catch what it misses.
type damageState struct {
	ok  bool
	id  damage.Damage
	seq atomic.Uint64
}

func (d *damageState) init(b *Backend) {
	if xconn.Init(b.conn, xconn.Damage) != nil {
		return
	}
	if _, err := damage.QueryVersion(b.conn, 1, 1).Reply(); err != nil {
		return
	}
	id, err := damage.NewDamageId(b.conn)
	if err != nil {
		return
	}
	// NonEmpty: one event each time the damage region goes from empty to
	// not empty; subtracting it all on each event re-arms the report.
	if damage.CreateChecked(b.conn, id, xproto.Drawable(b.root), damage.ReportLevelNonEmpty).Check() != nil {
		return
	}
	d.id, d.ok = id, true
}

// notify re-arms the report, then counts. In that order: a capture that the
// new count triggers is sent after the Subtract on the same connection, so
// the server has drawn everything the Subtract cleared by the time it
// captures, and anything drawn later raises a new notification.
func (d *damageState) notify(b *Backend, e damage.NotifyEvent) {
	damage.Subtract(b.conn, e.Damage, 0, 0)
	d.seq.Add(1)
}

// DamageSeq implements shinken.DamageTracker: it grows with each damage
// the server reports, or, without DAMAGE, on every call.
func (b *Backend) DamageSeq() uint64 {
	if !b.damage.ok {
		return b.damage.seq.Add(1)
	}
	return b.damage.seq.Load()
}
