package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"shinken.dev/go/backend/x11"
	"shinken.dev/go/backend/x11/atspi"
	"shinken.dev/go/shinken"
)

// x11Desktop is a real X server with the accessibility tree of its apps.
// The welcome always advertises the structured observation engine: when
// AT-SPI is not reachable, observations answer a11y_unavailable, and the
// bus is looked for again on the next one.
type x11Desktop struct {
	*x11.Backend
	a11y *lazyA11y
}

func openX11(ctx context.Context) (shinken.Backend, func(), error) {
	b, err := x11.Open(ctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("-backend x11: %w", err)
	}
	d := &x11Desktop{Backend: b, a11y: &lazyA11y{}}
	return d, func() {
		d.a11y.close()
		b.Close()
	}, nil
}

// Snapshot implements shinken.A11y.
func (d *x11Desktop) Snapshot(ctx context.Context, opts shinken.SnapshotOptions) (*shinken.Tree, error) {
	c, err := d.a11y.client(ctx)
	if err != nil {
		return nil, err
	}
	return c.Snapshot(ctx, opts)
}

// Do implements shinken.A11y.
func (d *x11Desktop) Do(ctx context.Context, id string, act shinken.ElementAction) error {
	c, err := d.a11y.client(ctx)
	if err != nil {
		return err
	}
	return c.Do(ctx, id, act)
}

// Watch implements shinken.ChangeWatcher; without a bus it reports nothing.
func (d *x11Desktop) Watch(ctx context.Context) <-chan struct{} {
	c, err := d.a11y.client(ctx)
	if err != nil {
		ch := make(chan struct{})
		context.AfterFunc(ctx, func() { close(ch) })
		return ch
	}
	return c.Watch(ctx)
}

// lazyA11y connects to the accessibility bus on first use, and again after
// a failure, at most every few seconds.
type lazyA11y struct {
	mu    sync.Mutex
	c     *atspi.Client
	err   error
	tried time.Time
}

func (l *lazyA11y) client(ctx context.Context) (*atspi.Client, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c != nil {
		return l.c, nil
	}
	if l.err != nil && time.Since(l.tried) < 5*time.Second {
		return nil, l.err
	}
	l.tried = time.Now()
	l.c, l.err = atspi.Connect(ctx, nil)
	return l.c, l.err
}

func (l *lazyA11y) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c != nil {
		l.c.Close()
	}
}
