package x11

import (
	"context"
	"sync"
	"time"

	"shinken.dev/go/backend/x11/atspi"
	"shinken.dev/go/shinken"
)

// Accessible is a Backend with the accessibility tree of its applications,
// read over AT-SPI. It implements everything Backend does plus shinken.A11y
// and shinken.ChangeWatcher, so a Runtime serving it advertises the
// structured observation engine. The accessibility bus is found on first
// use, and looked for again (at most every few seconds) while it cannot be
// reached: until then observations answer a11y_unavailable, which is a
// condition of the machine, not of the binary.
type Accessible struct {
	*Backend

	opts atspi.Options

	mu    sync.Mutex
	c     *atspi.Client
	err   error
	tried time.Time
}

// retryA11y is how long a failed connection to the accessibility bus is
// remembered before the next try.
const retryA11y = 3 * time.Second

// WithAccessibility returns b with the accessibility tree of its apps. opts
// configures the AT-SPI client (nil means defaults); when it sets no
// ActivePID, the active window's _NET_WM_PID is used, so that the active
// application is the one that owns the focused window. Close the
// Accessible rather than b: it closes both.
func (b *Backend) WithAccessibility(opts *atspi.Options) *Accessible {
	a := &Accessible{Backend: b}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.ActivePID == nil {
		a.opts.ActivePID = b.ActivePID
	}
	if a.opts.Display == "" {
		a.opts.Display = b.display
	}
	// Every object event is a change the settle waits out.
	user := a.opts.OnEvent
	a.opts.OnEvent = func(e atspi.Event) {
		b.settle.a11yEvent(e)
		if user != nil {
			user(e)
		}
	}
	return a
}

// Settle implements shinken.Settler: [Backend.Settle], with the events of
// the accessibility bus among the changes it waits out. The bus is
// connected on first use, so that the events flow from the first action
// on.
func (a *Accessible) Settle(ctx context.Context, start time.Time, limit time.Duration) (shinken.SettleReport, error) {
	a.client(ctx) // an unreachable bus leaves the screen alone to watch
	return a.Backend.Settle(ctx, start, limit)
}

func (a *Accessible) client(ctx context.Context) (*atspi.Client, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.c != nil {
		return a.c, nil
	}
	if a.err != nil && time.Since(a.tried) < retryA11y {
		return nil, a.err
	}
	a.tried = time.Now()
	a.c, a.err = atspi.Connect(ctx, &a.opts)
	return a.c, a.err
}

// Snapshot implements shinken.A11y.
func (a *Accessible) Snapshot(ctx context.Context, opts shinken.SnapshotOptions) (*shinken.Tree, error) {
	c, err := a.client(ctx)
	if err != nil {
		return nil, err
	}
	return c.Snapshot(ctx, opts)
}

// Do implements shinken.A11y.
func (a *Accessible) Do(ctx context.Context, id string, act shinken.ElementAction) error {
	c, err := a.client(ctx)
	if err != nil {
		return err
	}
	return c.Do(ctx, id, act)
}

// Watch implements shinken.ChangeWatcher. Without a bus it reports no
// change, and closes with ctx.
func (a *Accessible) Watch(ctx context.Context) <-chan struct{} {
	c, err := a.client(ctx)
	if err != nil {
		ch := make(chan struct{})
		context.AfterFunc(ctx, func() { close(ch) })
		return ch
	}
	return c.Watch(ctx)
}

// Close closes the AT-SPI client, if one was connected, and the Backend.
func (a *Accessible) Close() error {
	a.mu.Lock()
	c := a.c
	a.c, a.err = nil, shinken.ErrClosed
	a.tried = time.Now().Add(time.Hour)
	a.mu.Unlock()
	if c != nil {
		c.Close()
	}
	return a.Backend.Close()
}
