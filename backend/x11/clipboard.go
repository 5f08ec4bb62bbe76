package x11

import (
	"context"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"shinken.dev/go/shinken/aci"
)

// clipboardStep bounds each wait on another client during a clipboard
// read: for its answer, then for each chunk of an incremental transfer.
const clipboardStep = 5 * time.Second

// transferIdle is how long an incremental transfer we serve may wait for
// its requestor before it is dropped.
const transferIdle = 10 * time.Second

// inboxMax bounds the events queued for a clipboard read.
const inboxMax = 4096

// clipboard is the X selection machinery: the CLIPBOARD selection we own
// and serve from the event loop, and the reads we make from other owners.
type clipboard struct {
	mu        sync.Mutex
	owned     bool
	data      []byte // UTF-8
	since     xproto.Timestamp
	transfers map[transferKey]*transfer
	owners    uint64        // clipboard owner changes seen
	changed   chan struct{} // closed at the next owner change
	promised  bool          // a copy key was pressed at owners changes
	promiseAt uint64

	readMu     sync.Mutex // one read at a time: they share a property
	inMu       sync.Mutex
	collecting bool
	inbox      []xgb.Event
	wake       chan struct{}
}

type transferKey struct {
	win  xproto.Window
	prop xproto.Atom
}

// A transfer is an incremental (INCR) send in progress.
type transfer struct {
	typ  xproto.Atom
	data []byte
	off  int
	done bool // the closing empty chunk is written
	idle time.Time
}

func (c *clipboard) init() {
	c.transfers = make(map[transferKey]*transfer)
	c.wake = make(chan struct{}, 1)
	c.changed = make(chan struct{})
}

// copyWait bounds a clipboard read's wait for the owner change that a
// copy key pressed before it promised. The wait ends at the change; the
// bound is paid only when the key copied nothing (no selection, or an
// application that does not copy on it).
const copyWait = 3 * time.Second

// ownerChanged counts a change of the CLIPBOARD's owner, reported by
// XFixes; it runs on the event loop.
func (c *clipboard) ownerChanged() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.owners++
	close(c.changed)
	c.changed = make(chan struct{})
}

// promiseCopy notes that a key that copies (ctrl+C, ctrl+X, ctrl+Insert)
// was pressed: the application copies when it gets to the key, after
// the key's settle may have ended (Chromium copies in its page's process,
// then takes the selection in its browser process).
func (c *clipboard) promiseCopy() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.promised, c.promiseAt = true, c.owners
}

// awaitCopy waits, when a copy key was pressed and the owner has not
// changed since, for the change, for at most copyWait.
func (c *clipboard) awaitCopy(ctx context.Context) error {
	c.mu.Lock()
	pending, ch := c.promised && c.owners == c.promiseAt, c.changed
	c.promised = false
	c.mu.Unlock()
	if !pending {
		return nil
	}
	t := time.NewTimer(copyWait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// chunk is the largest property value one request can carry.
func (b *Backend) chunk() int {
	return (b.maxReq - 24) &^ 3
}

// SetClipboardText makes text the CLIPBOARD selection, served (UTF8_STRING,
// TEXT, STRING, incrementally when large) until another client takes it.
// Text over the size limit wraps aci.ErrTooLarge.
func (b *Backend) SetClipboardText(ctx context.Context, text string) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	if len(text) > b.opts.ClipboardLimit {
		return fmt.Errorf("%w: clipboard text of %d bytes is over the %d-byte limit",
			aci.ErrTooLarge, len(text), b.opts.ClipboardLimit)
	}
	t, err := b.now(ctx)
	if err != nil {
		return err
	}
	c := &b.clip
	c.mu.Lock()
	c.owned, c.data, c.since = true, []byte(text), t
	c.mu.Unlock()
	xproto.SetSelectionOwner(b.conn, b.win, b.atoms.clipboard, t)
	owner, err := xproto.GetSelectionOwner(b.conn, b.atoms.clipboard).Reply()
	if err == nil && owner.Owner != b.win {
		err = fmt.Errorf("%w: another client holds the clipboard", ErrClipboard)
	}
	if err != nil {
		c.mu.Lock()
		c.owned, c.data = false, nil
		c.mu.Unlock()
		return err
	}
	return nil
}

// serve answers a SelectionRequest. It runs on the event loop and never
// waits for another client: incremental transfers go on in progress.
func (c *clipboard) serve(b *Backend, e xproto.SelectionRequestEvent) {
	prop := e.Property
	if prop == xproto.AtomNone {
		prop = e.Target // an obsolete requestor
	}
	notify := func(p xproto.Atom) {
		ev := xproto.SelectionNotifyEvent{Time: e.Time, Requestor: e.Requestor,
			Selection: e.Selection, Target: e.Target, Property: p}
		xproto.SendEvent(b.conn, false, e.Requestor, 0, string(ev.Bytes()))
	}
	c.mu.Lock()
	owned, data, since := c.owned, c.data, c.since
	c.mu.Unlock()
	if !owned || e.Selection != b.atoms.clipboard || e.Owner != b.win ||
		(e.Time != xproto.TimeCurrentTime && e.Time < since) {
		notify(xproto.AtomNone)
		return
	}
	a := &b.atoms
	switch e.Target {
	case a.targets:
		list := []xproto.Atom{a.targets, a.timestamp, a.utf8String, a.text, xproto.AtomString}
		buf := make([]byte, 4*len(list))
		for i, t := range list {
			xgb.Put32(buf[4*i:], uint32(t))
		}
		xproto.ChangeProperty(b.conn, xproto.PropModeReplace, e.Requestor, prop, xproto.AtomAtom, 32, uint32(len(list)), buf)
	case a.timestamp:
		buf := make([]byte, 4)
		xgb.Put32(buf, uint32(since))
		xproto.ChangeProperty(b.conn, xproto.PropModeReplace, e.Requestor, prop, xproto.AtomInteger, 32, 1, buf)
	case a.utf8String, a.text:
		c.send(b, e.Requestor, prop, a.utf8String, data)
	case xproto.AtomString:
		c.send(b, e.Requestor, prop, xproto.AtomString, toLatin1(data))
	default:
		notify(xproto.AtomNone)
		return
	}
	notify(prop)
}

// send writes data to the requestor's property, in one piece when a
// request can carry it and as an INCR transfer otherwise.
func (c *clipboard) send(b *Backend, win xproto.Window, prop, typ xproto.Atom, data []byte) {
	if len(data) <= b.chunk() {
		xproto.ChangeProperty(b.conn, xproto.PropModeReplace, win, prop, typ, 8, uint32(len(data)), data)
		return
	}
	// The requestor deletes the INCR property to ask for the first chunk,
	// and each chunk to ask for the next: we need its property events.
	if win != b.win { // ours always has them
		xproto.ChangeWindowAttributes(b.conn, win, xproto.CwEventMask, []uint32{xproto.EventMaskPropertyChange})
	}
	size := make([]byte, 4)
	xgb.Put32(size, uint32(len(data)))
	xproto.ChangeProperty(b.conn, xproto.PropModeReplace, win, prop, b.atoms.incr, 32, 1, size)
	c.mu.Lock()
	c.transfers[transferKey{win, prop}] = &transfer{typ: typ, data: data, idle: time.Now().Add(transferIdle)}
	c.mu.Unlock()
}

// progress moves an INCR transfer on when its requestor deleted the
// property, and drops transfers whose requestor went quiet.
func (c *clipboard) progress(b *Backend, e xproto.PropertyNotifyEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	for k, t := range c.transfers {
		if now.After(t.idle) {
			delete(c.transfers, k)
		}
	}
	key := transferKey{e.Window, e.Atom}
	t := c.transfers[key]
	if t == nil || e.State != xproto.PropertyDelete {
		return
	}
	if t.done {
		delete(c.transfers, key)
		for k := range c.transfers {
			if k.win == e.Window {
				return // another transfer to that window still needs its events
			}
		}
		if e.Window == b.win {
			return
		}
		xproto.ChangeWindowAttributes(b.conn, e.Window, xproto.CwEventMask, []uint32{0})
		return
	}
	n := min(b.chunk(), len(t.data)-t.off)
	xproto.ChangeProperty(b.conn, xproto.PropModeReplace, e.Window, e.Atom, t.typ, 8, uint32(n), t.data[t.off:t.off+n])
	t.off += n
	t.done = n == 0 // the empty chunk ends the transfer
	t.idle = now.Add(transferIdle)
}

// lost handles another client taking the selection.
func (c *clipboard) lost(e xproto.SelectionClearEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.Time >= c.since || e.Time == xproto.TimeCurrentTime {
		c.owned, c.data = false, nil
	}
}

// ClipboardText returns the text of the CLIPBOARD selection (UTF8_STRING,
// then STRING); an empty or non-text clipboard reads as "", text over the
// size limit wraps aci.ErrTooLarge. After a copy key (ctrl+C, ctrl+X,
// ctrl+Insert) through Key, it first waits up to 3 s for the copy to land.
func (b *Backend) ClipboardText(ctx context.Context) (string, error) {
	if err := b.check(ctx); err != nil {
		return "", err
	}
	c := &b.clip
	c.readMu.Lock()
	defer c.readMu.Unlock()
	if err := c.awaitCopy(ctx); err != nil {
		return "", err
	}
	owner, err := xproto.GetSelectionOwner(b.conn, b.atoms.clipboard).Reply()
	if err != nil {
		return "", fmt.Errorf("x11: reading the clipboard owner: %w", err)
	}
	if owner.Owner == xproto.WindowNone {
		return "", nil
	}
	c.collect(true)
	defer c.collect(false)
	for _, target := range []xproto.Atom{b.atoms.utf8String, xproto.AtomString} {
		text, ok, err := b.convert(ctx, target)
		if err != nil || ok {
			return text, err
		}
	}
	return "", nil
}

// convert asks the owner for the selection as target. It reports false when
// the owner refuses that target.
func (b *Backend) convert(ctx context.Context, target xproto.Atom) (string, bool, error) {
	c := &b.clip
	prop := b.atoms.shinkenSelection
	limit := b.opts.ClipboardLimit
	xproto.DeleteProperty(b.conn, b.win, prop)
	c.drain()
	xproto.ConvertSelection(b.conn, b.win, b.atoms.clipboard, target, prop, xproto.TimeCurrentTime)
	ev, err := c.wait(ctx, b, func(ev xgb.Event) bool {
		n, ok := ev.(xproto.SelectionNotifyEvent)
		return ok && n.Selection == b.atoms.clipboard
	})
	if err != nil {
		return "", false, err
	}
	if ev.(xproto.SelectionNotifyEvent).Property == xproto.AtomNone {
		return "", false, nil
	}
	tooLarge := func(n int) error {
		xproto.DeleteProperty(b.conn, b.win, prop)
		return fmt.Errorf("%w: the clipboard holds at least %d bytes, over the %d-byte limit", aci.ErrTooLarge, n, limit)
	}
	// Deleting as we read asks an INCR owner for the first chunk; the
	// server deletes only when the whole value was read.
	words := uint32(limit/4 + 1)
	r, err := xproto.GetProperty(b.conn, true, b.win, prop, xproto.GetPropertyTypeAny, 0, words).Reply()
	if err != nil {
		return "", false, fmt.Errorf("x11: reading the clipboard: %w", err)
	}
	if r.Type != b.atoms.incr {
		if r.BytesAfter > 0 || len(r.Value) > limit {
			return "", false, tooLarge(len(r.Value) + int(r.BytesAfter))
		}
		return b.decodeText(r.Type, r.Value), true, nil
	}
	if len(r.Value) >= 4 && int(xgb.Get32(r.Value)) > limit {
		return "", false, tooLarge(int(xgb.Get32(r.Value)))
	}
	var buf []byte
	typ := target
	for {
		_, err := c.wait(ctx, b, func(ev xgb.Event) bool {
			n, ok := ev.(xproto.PropertyNotifyEvent)
			return ok && n.Atom == prop && n.State == xproto.PropertyNewValue
		})
		if err != nil {
			return "", false, err
		}
		r, err := xproto.GetProperty(b.conn, true, b.win, prop, xproto.GetPropertyTypeAny, 0, words).Reply()
		if err != nil {
			return "", false, fmt.Errorf("x11: reading the clipboard: %w", err)
		}
		if len(r.Value) == 0 {
			return b.decodeText(typ, buf), true, nil
		}
		if r.BytesAfter > 0 || len(buf)+len(r.Value) > limit {
			return "", false, tooLarge(len(buf) + len(r.Value) + int(r.BytesAfter))
		}
		buf = append(buf, r.Value...)
		typ = r.Type
	}
}

func (b *Backend) decodeText(typ xproto.Atom, v []byte) string {
	return textProperty(typ == b.atoms.utf8String, v)
}

// collect turns on or off the queueing of our window's selection events.
func (c *clipboard) collect(on bool) {
	c.inMu.Lock()
	defer c.inMu.Unlock()
	c.collecting, c.inbox = on, nil
}

// drain forgets queued events, left over from an earlier conversion.
func (c *clipboard) drain() {
	c.inMu.Lock()
	defer c.inMu.Unlock()
	c.inbox = c.inbox[:0]
}

// deliver queues an event for the read in progress; it runs on the event
// loop and never blocks.
func (c *clipboard) deliver(ev xgb.Event) {
	c.inMu.Lock()
	if c.collecting && len(c.inbox) < inboxMax {
		c.inbox = append(c.inbox, ev)
	}
	c.inMu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// wait returns the first queued event that match accepts, dropping the
// events before it, for at most clipboardStep.
func (c *clipboard) wait(ctx context.Context, b *Backend, match func(xgb.Event) bool) (xgb.Event, error) {
	timer := time.NewTimer(clipboardStep)
	defer timer.Stop()
	for {
		c.inMu.Lock()
		for len(c.inbox) > 0 {
			ev := c.inbox[0]
			c.inbox = c.inbox[1:]
			if match(ev) {
				c.inMu.Unlock()
				return ev, nil
			}
		}
		c.inMu.Unlock()
		select {
		case <-c.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-b.events:
			return nil, fmt.Errorf("%w: x11 connection", aci.ErrClosed)
		case <-timer.C:
			return nil, fmt.Errorf("%w: the clipboard owner did not answer within %v", ErrClipboard, clipboardStep)
		}
	}
}

// toLatin1 encodes UTF-8 text as ISO 8859-1 for STRING requestors, with
// "?" for what Latin-1 cannot hold.
func toLatin1(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		s = s[n:]
		if r > 0xff {
			r = '?'
		}
		out = append(out, byte(r))
	}
	return out
}
