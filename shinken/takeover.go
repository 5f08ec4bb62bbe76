package shinken

import (
	"context"
	"errors"
	"image"
	"sync"
	"time"

	"shinken.dev/go/internal/logtext"
	"shinken.dev/go/shinken/aci"
)

// Takeover.
//
// A person watching an agent can take the input over: [Runtime.TakeOver]
// marks the runtime's input as held by that person and returns a
// [Takeover] through which their pointer and keyboard reach the backend.
// While it is held, every agent action that would change the desktop (the
// mutating verbs: pointer, keyboard, invoke_action, set_value,
// clipboard_set, launch_app, activate_window) is refused, not queued,
// with the code permission_denied and a detail saying that a person holds
// the input: an agent learns at once, and can observe, wait and retry.
// Reads (screenshot, observe, screencast, exec, wait) go on as before. The
// hold ends with [Takeover.Release], which the person's page calls when
// they hand back.
//
// Refusing rather than queueing is deliberate: actions an agent decided
// on a screen the person has since changed would land blind.

// ErrInputHeld is wrapped by the error that refuses agent input while a
// person holds it; it also answers a second [Runtime.TakeOver].
var ErrInputHeld = errors.New("shinken: input is held by a person")

// hold is a person's hold on the input; guarded by the runtime's input lock.
type hold struct {
	by    string
	since time.Time
}

// A Takeover is a person's hold on the runtime's input. Its methods inject
// input as the person gives it, serialised with every other input. They
// fail with [aci.ErrClosed] after Release. A Takeover is safe for
// concurrent use.
type Takeover struct {
	rt *Runtime

	mu       sync.Mutex
	released bool
	buttons  map[Button]bool // pressed and not yet released
	first    time.Time       // the first input, for the settle on Release
}

// TakeOver marks the input as held by a person named by, from now until
// the returned Takeover is released, and publishes an [EventTakeover]. It
// fails wrapping [ErrInputHeld] when someone already holds it, and with
// errors.ErrUnsupported when the backend injects no input.
func (rt *Runtime) TakeOver(by string) (*Takeover, error) {
	if rt.injector == nil {
		return nil, &aci.Error{Code: aci.CodeUnsupported, Detail: "the backend injects no input", Err: errors.ErrUnsupported}
	}
	if by == "" {
		by = "a person"
	}
	rt.inputMu.Lock()
	if h := rt.held; h != nil {
		rt.inputMu.Unlock()
		return nil, &aci.Error{Code: aci.CodePermissionDenied, Detail: "input is already held by " + h.by, Err: ErrInputHeld}
	}
	rt.held = &hold{by: by, since: time.Now()}
	rt.inputMu.Unlock()
	rt.emit(Event{Kind: EventTakeover, Held: true, By: by, OK: true})
	rt.log.Info("input taken over", logtext.String("by", by))
	return &Takeover{rt: rt, buttons: map[Button]bool{}}, nil
}

// HeldBy reports who holds the input, if a person does.
func (rt *Runtime) HeldBy() (by string, held bool) {
	rt.inputMu.Lock()
	defer rt.inputMu.Unlock()
	if rt.held == nil {
		return "", false
	}
	return rt.held.by, true
}

// refuseHeld refuses an agent's mutating verb while a person holds the
// input. The caller holds the input lock.
func (rt *Runtime) refuseHeld(v aci.Verb) error {
	h := rt.held
	if h == nil {
		return nil
	}
	return &aci.Error{Code: aci.CodePermissionDenied, Err: ErrInputHeld,
		Detail: string(v) + " refused: the input is held by " + h.by + " since " + h.since.UTC().Format(time.TimeOnly) +
			" (takeover); agent input is refused until they hand back: observe, wait and retry"}
}

// run injects f's input under the input lock.
func (t *Takeover) run(f func() error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released {
		return aci.ErrClosed
	}
	t.rt.inputMu.Lock()
	defer t.rt.inputMu.Unlock()
	if t.first.IsZero() {
		t.first = time.Now()
	}
	return f()
}

// Pointer injects one pointer event.
func (t *Takeover) Pointer(ctx context.Context, ev PointerEvent) error {
	return t.run(func() error {
		if err := t.rt.pointerEvent(ctx, ev); err != nil {
			return err
		}
		switch ev.Kind {
		case PointerDown:
			t.buttons[ev.Button] = true
		case PointerUp:
			delete(t.buttons, ev.Button)
		}
		return nil
	})
}

// Type types text, whatever its characters.
func (t *Takeover) Type(ctx context.Context, text string) error {
	if len(text) > t.rt.opts.MaxTypeText {
		return aci.Errorf(aci.CodeTooLarge, "%d bytes of text; at most %d", len(text), t.rt.opts.MaxTypeText)
	}
	return t.run(func() error { return t.rt.injector.Type(ctx, text) })
}

// Keys presses a key expression as the key verb takes it ("ctrl+a",
// "Return", "shift+Tab"): each combo's keys down in order, then up.
func (t *Takeover) Keys(ctx context.Context, expr string) error {
	return t.run(func() error { return pressKeys(ctx, t.rt.injector, expr, 0) })
}

// Release hands the input back: buttons the person left pressed are
// released, the UI is settled (the backend's [Settler] waits until it has
// handled the person's input, so the agent's next action sees its
// effects; the person's own input is not settled event by event), agent
// input is accepted again, and an [EventTakeover] with
// Held false is published. It is safe to call more than once.
func (t *Takeover) Release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released {
		return
	}
	t.released = true
	rt := t.rt
	rt.inputMu.Lock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for b := range t.buttons {
		var p image.Point
		if lp := rt.lastPtr.Load(); lp != nil {
			p = *lp
		}
		if err := rt.pointerEvent(ctx, PointerEvent{Kind: PointerUp, X: p.X, Y: p.Y, Button: b}); err != nil {
			rt.log.Warn("releasing a held button failed", "err", err)
		}
	}
	// The agent's next action must see the UI after the person's input,
	// as after any acked action (see settle.go).
	if rt.settler != nil && !t.first.IsZero() {
		if _, err := rt.settler.Settle(ctx, t.first, rt.opts.SettleCap); err != nil {
			rt.log.Warn("settling the person's input failed", "err", err)
		}
	}
	by := rt.held.by
	rt.held = nil
	rt.inputMu.Unlock()
	rt.emit(Event{Kind: EventTakeover, Held: false, By: by, OK: true})
	rt.log.Info("input handed back", logtext.String("by", by))
}
