package x11

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
)

// remapGrace is how long a spare keycode stays as it is after we last
// remapped or pressed it. Clients translate a keycode with the mapping they
// hold when they get to the event, which may be after a later remap; 200 ms
// is what Chromium's remoting host waits for the same reason.
const remapGrace = 200 * time.Millisecond

// Spare keycodes keep the characters they were mapped to until the
// backend closes: emptying them is only tidiness (they have no key on any
// keyboard), and every mapping change is an event a client handles in its
// own time. Chromium reloads its keyboard layout for one after it has
// answered the pings mappingSeen sends, and a shortcut that comes while it
// does is lost: a ctrl+a sent then selected nothing, and typing appended
// to a text it should have replaced. A spare is remapped only for a
// character typed, just before the keys that need it.

// keyboard is the core keyboard mapping as we know it, the pool of spare
// keycodes we remap for characters the keyboard lacks, and the keys held
// down through Key.
type keyboard struct {
	b     *Backend
	stale atomic.Bool // the server announced a mapping change

	mu     sync.Mutex
	loaded bool
	pos    map[xproto.Keysym]keyPos // where each keysym of the layout is
	shifts map[xproto.Keycode]bool  // keycodes bound to Shift_L or Shift_R
	shift  xproto.Keycode           // the Shift keycode we press ourselves
	spares []*spareKey
	down   map[xproto.Keycode]int // keycodes held through Key, with a count of reasons
	held   map[xproto.Keysym]heldKey
	closed bool
}

// keyPos is where a keysym is: its keycode and whether it needs Shift.
type keyPos struct {
	code  xproto.Keycode
	shift bool
	cased bool // a letter whose level follows Caps Lock
}

// A spareKey is a keycode with no keysym in the layout, which we map to a
// character's keysym while typing it.
type spareKey struct {
	code xproto.Keycode
	sym  xproto.Keysym // what it is mapped to now; 0 when empty
	used time.Time     // last remapped or pressed
	held bool          // down through Key: must not change
}

// heldKey is a key pressed through Key and not yet released.
type heldKey struct {
	code       xproto.Keycode
	addedShift bool
	spare      *spareKey
}

func (k *keyboard) init(b *Backend) {
	k.b = b
	k.down = make(map[xproto.Keycode]int)
	k.held = make(map[xproto.Keysym]heldKey)
}

// load reads the keyboard mapping when it changed or was never read.
// Spare keycodes are the empty ones, and the ones still holding what we
// put there.
func (k *keyboard) load() error {
	if k.loaded && !k.stale.Load() {
		return nil
	}
	k.stale.Store(false)
	b := k.b
	first, last := b.setup.MinKeycode, b.setup.MaxKeycode
	count := int(last) - int(first) + 1
	m, err := xproto.GetKeyboardMapping(b.conn, first, byte(count)).Reply()
	if err != nil {
		return fmt.Errorf("x11: reading the keyboard mapping: %w", err)
	}
	per := int(m.KeysymsPerKeycode)
	if per == 0 || len(m.Keysyms) < count*per {
		return errors.New("x11: the keyboard mapping is empty")
	}
	ours := make(map[xproto.Keycode]*spareKey, len(k.spares))
	for _, s := range k.spares {
		ours[s.code] = s
	}
	k.pos = make(map[xproto.Keysym]keyPos)
	k.shifts = make(map[xproto.Keycode]bool)
	var spares []*spareKey
	for i := 0; i < count; i++ {
		code := xproto.Keycode(int(first) + i)
		syms := m.Keysyms[i*per : (i+1)*per]
		if s := ours[code]; s != nil && (isEmpty(syms) || s.sym != 0 && syms[0] == s.sym) {
			if isEmpty(syms) {
				s.sym = 0
			}
			spares = append(spares, s)
			continue
		}
		if isEmpty(syms) {
			spares = append(spares, &spareKey{code: code})
			continue
		}
		lower, upper := syms[0], xproto.Keysym(0)
		if per > 1 {
			upper = syms[1]
		}
		cased := false
		if upper == 0 {
			// X's rule for a lone keysym: a letter has its capital on the
			// second level; anything else is the same on both.
			lower, upper = caseKeysyms(lower)
			cased = lower != upper
		} else if l, u := caseKeysyms(lower); l == lower && u == upper && l != u {
			cased = true
		}
		if p, ok := k.pos[lower]; !ok || p.shift {
			k.pos[lower] = keyPos{code: code, cased: cased}
		}
		if _, ok := k.pos[upper]; !ok && upper != 0 && upper != lower {
			k.pos[upper] = keyPos{code: code, shift: true, cased: cased}
		}
		if syms[0] == 0xffe1 || syms[0] == 0xffe2 {
			k.shifts[code] = true
		}
	}
	k.spares = spares
	k.shift = 0
	if p, ok := k.pos[0xffe1]; ok {
		k.shift = p.code
	} else if p, ok := k.pos[0xffe2]; ok {
		k.shift = p.code
	}
	k.loaded = true
	return nil
}

func isEmpty(syms []xproto.Keysym) bool {
	for _, s := range syms {
		if s != 0 {
			return false
		}
	}
	return true
}

// locate finds a keysym on the keyboard. capsLock flips the level of
// letters, as the server will.
func (k *keyboard) locate(ks xproto.Keysym, capsLock bool) (keyPos, bool) {
	p, ok := k.pos[ks]
	if ok && capsLock && p.cased {
		p.shift = !p.shift
	}
	return p, ok
}

// spareFor returns a spare keycode mapped to ks, remapping the one
// least recently used, after waiting out its grace period if need be.
// A spare it remaps is not pressed before the applications have seen the
// new mapping (mappingSeen).
func (k *keyboard) spareFor(ctx context.Context, ks xproto.Keysym) (*spareKey, error) {
	var pick *spareKey
	for _, s := range k.spares {
		if s.sym == ks {
			return s, nil
		}
		if !s.held && (pick == nil || s.used.Before(pick.used)) {
			pick = s
		}
	}
	if pick == nil {
		return nil, errors.New("x11: no spare keycode to type a character the keyboard lacks")
	}
	if wait := time.Until(pick.used.Add(remapGrace)); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	k.remap(pick, ks)
	if err := k.b.mappingSeen(ctx); err != nil {
		return nil, err
	}
	return pick, nil
}

// premap maps spare keycodes to the keysyms of syms the layout lacks, as
// many as there are spares free to remap now (none used by this text,
// none within its grace period), and waits once for the applications to
// see the new mapping: a text of characters the keyboard lacks waits
// once, not once per character.
func (k *keyboard) premap(ctx context.Context, syms []xproto.Keysym, caps bool) error {
	mapped := map[xproto.Keysym]bool{}
	for _, s := range k.spares {
		if s.sym != 0 {
			mapped[s.sym] = true
		}
	}
	keep := map[*spareKey]bool{}
	for _, s := range k.spares {
		if slices.Contains(syms, s.sym) {
			keep[s] = true
		}
	}
	remapped := false
	for _, ks := range syms {
		if _, ok := k.locate(ks, caps); ok || mapped[ks] {
			continue
		}
		var pick *spareKey
		for _, s := range k.spares {
			if !s.held && !keep[s] && time.Since(s.used) >= remapGrace && (pick == nil || s.used.Before(pick.used)) {
				pick = s
			}
		}
		if pick == nil {
			break // the rest wait for a spare in spareFor
		}
		k.remap(pick, ks)
		mapped[ks], keep[pick], remapped = true, true, true
	}
	if !remapped {
		return nil
	}
	return k.b.mappingSeen(ctx)
}

// remap maps spare s to ks on both levels (0 empties it), so Shift does
// not matter to it.
func (k *keyboard) remap(s *spareKey, ks xproto.Keysym) {
	xproto.ChangeKeyboardMapping(k.b.conn, 1, s.code, 2, []xproto.Keysym{ks, ks})
	s.sym, s.used = ks, time.Now()
}

// mappingSeen waits until the applications that may get the keys have
// seen the keyboard mapping as it is now. The server tells every client
// of a mapping change (MappingNotify) as it makes it, but a client may
// fetch the new mapping only as it handles that event, and translate
// the keys that come before the answer with the old one: Chromium types
// nothing for the first key of a remapped keycode. So the windows that
// may get the keys (the active one, the one under the pointer) are
// pinged twice in turn: the first pong says a window's client has handled
// the events before it, the notice included, and asked for the mapping;
// the server answers requests in order, so the mapping is in the client's
// hands before the second ping, and the second pong says it has handled
// it. A window that does not answer is waited for up to mappingWait.
func (b *Backend) mappingSeen(ctx context.Context) error {
	targets, _ := b.pingTargets()
	if len(targets) == 0 {
		return b.sync()
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, mappingWait)
	defer cancel()
	for range 2 {
		ids := make([]uint32, 0, len(targets))
		chans := make([]chan struct{}, 0, len(targets))
		for _, w := range targets {
			id, ch := b.sendPing(w)
			ids, chans = append(ids, id), append(chans, ch)
		}
		ok := wait(ctx, chans)
		b.settle.forget(ids)
		if !ok {
			break
		}
	}
	return parent.Err()
}

// mappingWait bounds mappingSeen's wait for a window that never answers.
const mappingWait = 500 * time.Millisecond

// fake sends one XTest event. Errors surface at the next round trip.
func (k *keyboard) fake(kind byte, code xproto.Keycode) {
	xtest.FakeInput(k.b.conn, kind, byte(code), 0, k.b.root, 0, 0, 0)
}

// press and release count the reasons a keycode is held through Key, and
// send the event only when the first reason comes or the last one goes.
func (k *keyboard) press(code xproto.Keycode) {
	if k.down[code]++; k.down[code] == 1 {
		k.fake(xproto.KeyPress, code)
	}
}

func (k *keyboard) release(code xproto.Keycode) {
	switch n := k.down[code]; {
	case n > 1:
		k.down[code]--
	case n == 1:
		delete(k.down, code)
		k.fake(xproto.KeyRelease, code)
	}
}

// controlDown reports whether a Control key is held through Key.
func (k *keyboard) controlDown() bool {
	for _, ks := range []xproto.Keysym{0xffe3, 0xffe4} {
		if p, ok := k.pos[ks]; ok && k.down[p.code] > 0 {
			return true
		}
	}
	return false
}

// shiftDown reports whether a Shift key is held through Key.
func (k *keyboard) shiftDown() bool {
	for code := range k.down {
		if k.shifts[code] {
			return true
		}
	}
	return false
}

// close releases every key held through Key and empties the spares, once
// the last characters typed have had remapGrace to reach their clients.
func (k *keyboard) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	for code := range k.down {
		k.fake(xproto.KeyRelease, code)
	}
	clear(k.down)
	clear(k.held)
	var last time.Time
	for _, s := range k.spares {
		s.held = false
		if s.sym != 0 && s.used.After(last) {
			last = s.used
		}
	}
	if last.IsZero() {
		return
	}
	// The last characters typed may still be on their way to a client.
	time.Sleep(time.Until(last.Add(remapGrace)))
	for _, s := range k.spares {
		if s.sym != 0 {
			k.remap(s, 0)
		}
	}
}
