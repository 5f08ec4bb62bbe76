package client

import (
	"context"
	"errors"
	"image"
	"strings"

	"shinken.dev/go/shinken/aci"
)

// Element waits until l names exactly one element (showing or not) and
// returns it as it is now: its Ref is good for one action at most.
func (l *Locator) Element(ctx context.Context) (aci.Element, error) {
	return l.element(ctx, "read")
}

func (l *Locator) element(ctx context.Context, op string) (aci.Element, error) {
	f, err := l.poll(ctx, op, func(f *found) verdict {
		_, missing, err := f.one()
		if errors.Is(err, ErrStrict) {
			return verdict{missing: missing, stop: err}
		}
		if err != nil {
			return verdict{missing: missing}
		}
		return verdict{done: true}
	})
	if err != nil {
		return aci.Element{}, err
	}
	e, _, _ := f.one()
	return *e, nil
}

// Text waits until l names exactly one element and returns the text it
// shows: its name (a label, a button's caption), or else its value (a status
// bar left unnamed), or else its descendants' names joined (a web page's
// element). Locator.Value reads an entry's text.
func (l *Locator) Text(ctx context.Context) (string, error) {
	e, err := l.element(ctx, "text")
	if err != nil {
		return "", err
	}
	return l.c.textOf(ctx, &e)
}

// textOf is what Text reads of e.
func (c *Client) textOf(ctx context.Context, e *aci.Element) (string, error) {
	if e.Name != "" {
		return e.Name, nil
	}
	if e.Value != "" {
		return e.Value, nil
	}
	obs, err := c.Observe(ctx, &ObserveRequest{Subtree: e.Ref})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, d := range obs.Elements {
		if d.Ref != e.Ref {
			b.WriteString(d.Name)
		}
	}
	return b.String(), nil
}

// Value waits until l names one element and returns its value (an entry's).
func (l *Locator) Value(ctx context.Context) (string, error) {
	e, err := l.element(ctx, "value")
	return e.Value, err
}

// States waits until l names one element and returns its states.
func (l *Locator) States(ctx context.Context) ([]string, error) {
	e, err := l.element(ctx, "states")
	return e.States, err
}

// Box waits until l names one element and returns its box in screen pixels.
func (l *Locator) Box(ctx context.Context) (image.Rectangle, error) {
	e, err := l.element(ctx, "box")
	return box(&e), err
}

// Count returns how many elements l matches now, without waiting.
func (l *Locator) Count(ctx context.Context) (int, error) {
	f, err := l.readOnce(ctx, "count")
	if err != nil {
		return 0, err
	}
	return len(f.matches), nil
}

// All returns a Locator for each element l matches now, in tree order
// (l.Nth(0), l.Nth(1)...), without waiting.
func (l *Locator) All(ctx context.Context) ([]*Locator, error) {
	n, err := l.Count(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*Locator, n)
	for i := range out {
		out[i] = l.Nth(i)
	}
	return out, nil
}

// readOnce reads l once; a scope that names no single element counts as
// no match.
func (l *Locator) readOnce(ctx context.Context, op string) (*found, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	f, err := l.read(ctx)
	var sm *scopeMiss
	if errors.As(err, &sm) {
		if errors.Is(err, ErrStrict) {
			return nil, &LocatorError{Op: op, Locator: l.String(), Missing: sm.missing, Err: ErrStrict}
		}
		return &found{l: l}, nil
	}
	if err != nil {
		return nil, &LocatorError{Op: op, Locator: l.String(), Err: err}
	}
	return f, nil
}
