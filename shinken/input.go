package shinken

import (
	"context"
	"errors"
	"image"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"shinken.dev/go/internal/hosttool"
	"shinken.dev/go/shinken/aci"
)

// mutate runs a mutating verb. Input is a shared device: the runtime-wide
// input lock serialises every mutation, and each connection's input lane
// keeps its own in arrival order.
func (c *conn) mutate(callID string, a *aci.Action) (rerr error) {
	ctx := c.ctx
	rt := c.rt
	switch a.Verb {
	case aci.VerbLaunchApp:
		if err := rt.authorize(ctx, c, a); err != nil {
			return err
		}
		return rt.settled(ctx, callID, a.Verb, &c.settleRep, func() error { return rt.launcher.Launch(ctx, *a.App, a.Args) })
	case aci.VerbClipboardSet:
		if len(*a.Text) > rt.opts.MaxClipboard {
			return aci.Errorf(aci.CodeTooLarge, "clipboard_set of %d bytes; at most %d", len(*a.Text), rt.opts.MaxClipboard)
		}
		if err := rt.refuseHeld(a.Verb); err != nil {
			return err
		}
		return rt.clipboard.SetClipboardText(ctx, *a.Text)
	case aci.VerbActivateWindow:
		return rt.settled(ctx, callID, a.Verb, &c.settleRep, func() error { return rt.activate(ctx, a) })
	case aci.VerbInvokeAction:
		return rt.settled(ctx, callID, a.Verb, &c.settleRep, func() error {
			return c.obs.do(ctx, a.Target, ElementAction{Op: OpInvoke, Action: invokeName(a)})
		})
	case aci.VerbSetValue:
		return rt.settled(ctx, callID, a.Verb, &c.settleRep, func() error {
			return c.obs.do(ctx, a.Target, ElementAction{Op: OpSetValue, Text: *a.Text})
		})
	}

	if a.Verb == aci.VerbTypeText && len(*a.Text) > rt.opts.MaxTypeText {
		return aci.Errorf(aci.CodeTooLarge, "type_text of %d bytes; at most %d (set_value or the clipboard take more)", len(*a.Text), rt.opts.MaxTypeText)
	}
	// Pointer and keyboard verbs: resolve targets before taking the lock,
	// since an element_ref may need an accessibility round trip.
	var p, to image.Point
	var err error
	if a.Target != nil {
		if p, err = c.resolve(ctx, a.Target); err != nil {
			return err
		}
	} else if p, err = rt.pointerPos(ctx); err != nil {
		return err
	}
	if a.To != nil {
		if to, err = c.resolve(ctx, a.To); err != nil {
			return err
		}
	}
	if err := rt.departing.wait(ctx); err != nil {
		return err
	}
	rt.inputMu.Lock()
	defer rt.inputMu.Unlock()
	if err := rt.refuseHeld(a.Verb); err != nil {
		return err
	}
	// Settled before the lock is released (see settle.go).
	start := time.Now()
	defer func() {
		if err := rt.settle(ctx, start, callID, a.Verb, &c.settleRep); rerr == nil {
			rerr = err
		}
	}()
	in := rt.injector
	btn := buttonOf(a.Button)
	switch a.Verb {
	case aci.VerbClick:
		return withKeys(ctx, in, a.Keys, func() error { return rt.click(ctx, p, btn, 1) })
	case aci.VerbDoubleClick:
		return withKeys(ctx, in, a.Keys, func() error { return rt.click(ctx, p, btn, 2) })
	case aci.VerbRightClick:
		return withKeys(ctx, in, a.Keys, func() error { return rt.click(ctx, p, ButtonRight, 1) })
	case aci.VerbMove:
		return withKeys(ctx, in, a.Keys, func() error { return rt.pointerEvent(ctx, PointerEvent{Kind: PointerMove, X: p.X, Y: p.Y}) })
	case aci.VerbMouseDown:
		return c.mouseDown(ctx, p, btn, a.Keys)
	case aci.VerbMouseUp:
		keys, ok := c.held[btn]
		delete(c.held, btn)
		c.holding.Store(len(c.held) > 0)
		err := rt.pointerEvent(ctx, PointerEvent{Kind: PointerUp, X: p.X, Y: p.Y, Button: btn})
		if ok {
			if kerr := releaseKeys(ctx, in, keys); err == nil {
				err = kerr
			}
		}
		return err
	case aci.VerbScroll:
		return withKeys(ctx, in, a.Keys, func() error {
			return rt.pointerEvent(ctx, PointerEvent{Kind: PointerScroll, X: p.X, Y: p.Y, DX: notches(a.DX), DY: notches(a.DY)})
		})
	case aci.VerbDrag:
		return withKeys(ctx, in, a.Keys, func() error {
			return rt.drag(ctx, p, to, btn, millis(a.DurationMS, rt.opts.MaxDragDuration))
		})
	case aci.VerbTypeText:
		return in.Type(ctx, *a.Text)
	case aci.VerbKey:
		if err := rt.checkWait(a.MS); err != nil {
			return err
		}
		return pressKeys(ctx, in, a.Keys, time.Duration(max(a.MS, 0))*time.Millisecond)
	}
	return aci.Errorf(aci.CodeUnsupportedVerb, "%s", a.Verb)
}

// departures counts the sessions that are ending but have not yet released
// what they held. Input is a device every session shares: the close
// handshake completes (the client sees its session over, and may open
// another) before the ending session has released its buttons, so a later
// session's input waits for those releases rather than move a pointer
// whose button is still down. A session holding a button is counted from
// the moment its client's whole close frame arrives, before the WebSocket
// library reads it and answers (see stallConn); any other from the end of
// its reader.
type departures struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n drops to 0
}

func (d *departures) begin() {
	d.mu.Lock()
	if d.n == 0 {
		d.zero = make(chan struct{})
	}
	d.n++
	d.mu.Unlock()
}

func (d *departures) end() {
	d.mu.Lock()
	if d.n--; d.n == 0 {
		close(d.zero)
	}
	d.mu.Unlock()
}

// wait returns once no session is ending, or when ctx ends (the ending
// session's own input, cancelled, does not wait for itself).
func (d *departures) wait(ctx context.Context) error {
	d.mu.Lock()
	if d.n == 0 {
		d.mu.Unlock()
		return nil
	}
	zero := d.zero
	d.mu.Unlock()
	select {
	case <-zero:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// releaseHeld releases the buttons this connection pressed with mouse_down
// and never released: a client that leaves must not leave the shared
// pointer dragging for the next one.
func (c *conn) releaseHeld() {
	if len(c.held) == 0 || c.rt.injector == nil {
		return
	}
	rt := c.rt
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := rt.pointerPos(ctx)
	if err != nil {
		p = image.Point{}
	}
	rt.inputMu.Lock()
	defer rt.inputMu.Unlock()
	for b, keys := range c.held {
		if err := rt.pointerEvent(ctx, PointerEvent{Kind: PointerUp, X: p.X, Y: p.Y, Button: b}); err != nil {
			c.log.Warn("releasing a held button failed", "err", err)
		}
		if err := releaseKeys(ctx, rt.injector, keys); err != nil {
			c.log.Warn("releasing keys held with a button failed", "err", err)
		}
	}
	clear(c.held)
	c.holding.Store(false)
}

// mouseDown presses button at p with keys, one combination, held from
// before the press until the button's mouse_up (or the connection's end),
// so that mouse_down, moves and mouse_up make one modified drag. When the
// press fails the keys are released at once.
func (c *conn) mouseDown(ctx context.Context, p image.Point, btn Button, keys string) error {
	var combo []string
	if keys != "" {
		seq, err := ParseKeys(keys)
		if err != nil {
			return err
		}
		if len(seq) != 1 {
			return aci.Errorf(aci.CodeInvalidAction, "keys held during mouse_down must be one combination, got %d in %q", len(seq), keys)
		}
		combo = seq[0]
	}
	if old, ok := c.held[btn]; ok && len(old) > 0 {
		return aci.Errorf(aci.CodeInvalidAction, "the %s button is already held with %q: mouse_up first", buttonName(btn), strings.Join(old, "+"))
	}
	in := c.rt.injector
	c.holding.Store(true)
	for i, k := range combo {
		if err := in.Key(ctx, KeyEvent{Key: k, Down: true}); err != nil {
			c.holding.Store(len(c.held) > 0)
			return errors.Join(err, releaseKeys(ctx, in, combo[:i]))
		}
	}
	if err := c.rt.pointerEvent(ctx, PointerEvent{Kind: PointerDown, X: p.X, Y: p.Y, Button: btn}); err != nil {
		c.holding.Store(len(c.held) > 0)
		return errors.Join(err, releaseKeys(ctx, in, combo))
	}
	c.held[btn] = combo
	return nil
}

// releaseKeys releases keys in reverse order, whatever ctx says, and
// reports the first failure.
func releaseKeys(ctx context.Context, in Injector, keys []string) (err error) {
	rctx := context.WithoutCancel(ctx)
	for i := len(keys) - 1; i >= 0; i-- {
		if uerr := in.Key(rctx, KeyEvent{Key: keys[i], Down: false}); err == nil {
			err = uerr
		}
	}
	return err
}

func buttonName(b Button) string {
	switch b {
	case ButtonMiddle:
		return "middle"
	case ButtonRight:
		return "right"
	}
	return "left"
}

func invokeName(a *aci.Action) string {
	if a.Text != nil {
		return *a.Text
	}
	return ""
}

func buttonOf(b aci.PointerButton) Button {
	switch b {
	case aci.PointerMiddle:
		return ButtonMiddle
	case aci.PointerRight:
		return ButtonRight
	}
	return ButtonLeft
}

// notches rounds a scroll amount to whole wheel notches, keeping a small
// non-zero amount from vanishing.
func notches(v float64) int {
	if v == 0 || math.IsNaN(v) {
		return 0
	}
	n := math.Round(v)
	if n == 0 {
		n = math.Copysign(1, v)
	}
	return int(max(-1000, min(1000, n)))
}

// Button presses are timed as a hand times them, so that toolkits count
// clicks the way a person means them (a backend whose applications need
// presses spaced in time, as X11's do, spaces them itself; the headless
// desktop takes them as fast as they come). A double click begins no sooner than
// multiClickTime after the previous press, so the application does not take
// its first press as the end of an earlier run (GTK then sees a triple
// click where the press was at the same spot, or a single one where it was
// elsewhere); 500 ms outlasts the usual multi-click times (400 ms in GTK and
// Qt, 500 ms on Windows). A triple click is a double click and then a click
// at the same point, which continues the run.
const multiClickTime = 500 * time.Millisecond

// pressRecord is when and where the last button press was.
type pressRecord struct {
	at time.Time
	p  image.Point
}

// sinceLastPress is the time since the last press, or a long time when there
// was none.
func (rt *Runtime) sinceLastPress() time.Duration {
	if rt.lastPress.at.IsZero() {
		return time.Hour
	}
	return time.Since(rt.lastPress.at)
}

func (rt *Runtime) pointerEvent(ctx context.Context, ev PointerEvent) error {
	if err := rt.injector.Pointer(ctx, ev); err != nil {
		return err
	}
	p := image.Pt(ev.X, ev.Y)
	rt.lastPtr.Store(&p)
	if ev.Kind == PointerDown {
		rt.lastPress = pressRecord{at: time.Now(), p: p}
	}
	return nil
}

func (rt *Runtime) pointerPos(ctx context.Context) (image.Point, error) {
	if rt.pointer != nil {
		return rt.pointer.PointerPosition(ctx)
	}
	if p := rt.lastPtr.Load(); p != nil {
		return *p, nil
	}
	return image.Point{}, aci.Errorf(aci.CodeInvalidAction, "no target and the pointer position is unknown")
}

func (rt *Runtime) click(ctx context.Context, p image.Point, b Button, n int) error {
	if n > 1 {
		if err := sleep(ctx, multiClickTime-rt.sinceLastPress()); err != nil {
			return err
		}
	}
	if err := rt.pointerEvent(ctx, PointerEvent{Kind: PointerMove, X: p.X, Y: p.Y}); err != nil {
		return err
	}
	for range n {
		if err := rt.pointerEvent(ctx, PointerEvent{Kind: PointerDown, X: p.X, Y: p.Y, Button: b}); err != nil {
			return err
		}
		if err := rt.pointerEvent(ctx, PointerEvent{Kind: PointerUp, X: p.X, Y: p.Y, Button: b}); err != nil {
			return err
		}
	}
	return nil
}

// dragStep is the interval between interpolated drag moves: about one frame
// at 60 Hz, so toolkits see a continuous motion.
const dragStep = 16 * time.Millisecond

func (rt *Runtime) drag(ctx context.Context, from, to image.Point, b Button, d time.Duration) (err error) {
	d = min(d, rt.opts.MaxDragDuration)
	if err := rt.pointerEvent(ctx, PointerEvent{Kind: PointerMove, X: from.X, Y: from.Y}); err != nil {
		return err
	}
	if err := rt.pointerEvent(ctx, PointerEvent{Kind: PointerDown, X: from.X, Y: from.Y, Button: b}); err != nil {
		return err
	}
	// Whatever happens, release the button: a held button would wreck every
	// later gesture.
	defer func() {
		uerr := rt.pointerEvent(context.WithoutCancel(ctx), PointerEvent{Kind: PointerUp, X: to.X, Y: to.Y, Button: b})
		if err == nil {
			err = uerr
		}
	}()
	steps := max(int(d/dragStep), 8)
	var tick *time.Ticker
	if d > 0 {
		tick = time.NewTicker(d / time.Duration(steps))
		defer tick.Stop()
	}
	for i := 1; i <= steps; i++ {
		x := from.X + (to.X-from.X)*i/steps
		y := from.Y + (to.Y-from.Y)*i/steps
		if tick != nil {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := rt.pointerEvent(ctx, PointerEvent{Kind: PointerMove, X: x, Y: y}); err != nil {
			return err
		}
	}
	return nil
}

// resolve maps a target to a point in global action pixels.
func (c *conn) resolve(ctx context.Context, t *aci.Target) (image.Point, error) {
	switch t.Kind {
	case aci.TargetElementRef:
		return c.obs.center(ctx, t.Ref)
	case aci.TargetPointPx, aci.TargetPointNorm:
		d, err := c.rt.display(ctx)
		if err != nil {
			return image.Point{}, err
		}
		x, y := *t.X, *t.Y
		if t.Kind == aci.TargetPointNorm {
			// Map [0, 1] onto pixel centres so 1.0 lands on the last pixel.
			x = math.Min(x*float64(d.W), float64(d.W-1))
			y = math.Min(y*float64(d.H), float64(d.H-1))
		}
		px, py := int(math.Round(x)), int(math.Round(y))
		if px < 0 || py < 0 || px >= d.W || py >= d.H {
			return image.Point{}, aci.Errorf(aci.CodeInvalidAction, "point (%g, %g) lies outside the %d×%d screen", *t.X, *t.Y, d.W, d.H)
		}
		return image.Pt(px, py), nil
	}
	return image.Point{}, aci.Errorf(aci.CodeInvalidAction, "unknown target kind %q", t.Kind)
}

func (rt *Runtime) activate(ctx context.Context, a *aci.Action) error {
	if a.WindowID != nil {
		return rt.windows.Activate(ctx, *a.WindowID)
	}
	ws, err := rt.windows.Windows(ctx)
	if err != nil {
		return err
	}
	want := strings.ToLower(*a.App)
	for _, w := range ws {
		if strings.Contains(strings.ToLower(w.Title), want) {
			return rt.windows.Activate(ctx, w.ID)
		}
	}
	return aci.Errorf(aci.CodeNoSuchWindow, "no window title contains %q", *a.App)
}

func (rt *Runtime) authorize(ctx context.Context, c *conn, a *aci.Action) error {
	if rt.opts.Authorizer == nil {
		return nil
	}
	req := AuthRequest{Verb: a.Verb, Action: a, Remote: c.remote}
	if a.Verb == aci.VerbExec && a.Argv != nil {
		in, ok, err := hosttool.Recognize(a.Argv, a.Env, a.Stdin)
		if err != nil {
			return aci.Errorf(aci.CodeInvalidAction, "%v", err)
		}
		if ok && (in.Kind == hosttool.KindControl || in.Kind == hosttool.KindProbe) {
			// A keystroke or signal to the agent's own shell, or the
			// window tools' probe, runs nothing the agent chose: no
			// plugin judges it (internal/hosttool).
			return nil
		}
		if ok {
			req.Intent = &Intent{Tool: in.Tool, Kind: in.Kind, Path: in.Path, To: in.To, Line: in.Line, Dir: in.Dir, Argv: in.Argv, Interactive: in.Interactive, Dynamic: in.Dynamic}
		}
	}
	if err := rt.opts.Authorizer.Authorize(ctx, req); err != nil {
		if _, ok := err.(*aci.Error); ok && strings.HasPrefix(err.Error(), string(aci.CodePermissionDenied)) {
			return err
		}
		return &aci.Error{Code: aci.CodePermissionDenied, Detail: err.Error(), Err: err}
	}
	return nil
}

// keyAliases maps the names agents use to X keysym names.
var keyAliases = map[string]string{
	"ctrl": "Control_L", "control": "Control_L", "shift": "Shift_L", "alt": "Alt_L", "option": "Alt_L",
	"super": "Super_L", "meta": "Super_L", "cmd": "Super_L", "command": "Super_L", "win": "Super_L",
	"enter": "Return", "return": "Return", "tab": "Tab", "esc": "Escape", "escape": "Escape",
	"backspace": "BackSpace", "delete": "Delete", "del": "Delete", "insert": "Insert", "ins": "Insert",
	"home": "Home", "end": "End", "pageup": "Page_Up", "page_up": "Page_Up", "pgup": "Page_Up",
	"pagedown": "Page_Down", "page_down": "Page_Down", "pgdn": "Page_Down",
	"left": "Left", "up": "Up", "right": "Right", "down": "Down",
	"arrowleft": "Left", "arrowup": "Up", "arrowright": "Right", "arrowdown": "Down",
	"space": "space", "plus": "plus", "minus": "minus", "menu": "Menu",
	"capslock": "Caps_Lock", "printscreen": "Print", "print": "Print",
	"f1": "F1", "f2": "F2", "f3": "F3", "f4": "F4", "f5": "F5", "f6": "F6",
	"f7": "F7", "f8": "F8", "f9": "F9", "f10": "F10", "f11": "F11", "f12": "F12",
}

// KeyName normalises one key name as agents write it ("ctrl", "Enter",
// "pgdn", "a", "é") to the X keysym name an Injector receives.
func KeyName(s string) (string, error) {
	if s == "" {
		return "", aci.Errorf(aci.CodeInvalidAction, "empty key name")
	}
	if k, ok := keyAliases[strings.ToLower(s)]; ok {
		return k, nil
	}
	if utf8.RuneCountInString(s) == 1 {
		return s, nil
	}
	// Anything else is taken as a keysym name ("KP_Enter", "Control_R").
	for _, r := range s {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "", aci.Errorf(aci.CodeInvalidAction, "unknown key %q", s)
		}
	}
	return s, nil
}

// maxKeyCombos bounds one key action: input is serialised runtime-wide, and
// one client must not hold every other one's input for minutes.
const maxKeyCombos = 256

// ParseKeys parses a key expression: combos joined by '+' ("ctrl+shift+t"),
// several in sequence separated by spaces ("ctrl+a Delete"). A literal plus
// is "plus" or a trailing '+' ("ctrl++").
func ParseKeys(expr string) ([][]string, error) {
	var seq [][]string
	combos := strings.Fields(expr)
	if len(combos) > maxKeyCombos {
		return nil, aci.Errorf(aci.CodeTooLarge, "%d key combos in one key action; at most %d", len(combos), maxKeyCombos)
	}
	for _, combo := range combos {
		var names []string
		parts := strings.Split(combo, "+")
		if strings.HasSuffix(combo, "++") || combo == "+" {
			parts = append(strings.Split(strings.TrimSuffix(combo, "++"), "+"), "+")
			if combo == "+" {
				parts = []string{"+"}
			}
		}
		for _, p := range parts {
			if p == "" {
				return nil, aci.Errorf(aci.CodeInvalidAction, "empty key in %q", combo)
			}
			k, err := KeyName(p)
			if err != nil {
				return nil, err
			}
			names = append(names, k)
		}
		seq = append(seq, names)
	}
	if len(seq) == 0 {
		return nil, aci.Errorf(aci.CodeInvalidAction, "no keys in %q", expr)
	}
	return seq, nil
}

// pressKeys presses each combo: keys down in order, held for hold, up in
// reverse. Keys already pressed are always released, even when a later one
// fails or ctx ends during the hold.
func pressKeys(ctx context.Context, in Injector, expr string, hold time.Duration) error {
	seq, err := ParseKeys(expr)
	if err != nil {
		return err
	}
	for _, combo := range seq {
		if err := holdCombo(ctx, in, combo, func() error { return sleep(ctx, hold) }); err != nil {
			return err
		}
	}
	return nil
}

// withKeys runs gesture with the one combination keys ("shift",
// "ctrl+shift") held down, and releases it afterwards whatever happened.
// Empty keys run the gesture alone.
func withKeys(ctx context.Context, in Injector, keys string, gesture func() error) error {
	if keys == "" {
		return gesture()
	}
	seq, err := ParseKeys(keys)
	if err != nil {
		return err
	}
	if len(seq) != 1 {
		return aci.Errorf(aci.CodeInvalidAction, "keys held for a gesture must be one combination, got %d in %q", len(seq), keys)
	}
	return holdCombo(ctx, in, seq[0], gesture)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// holdCombo presses combo's keys in order, runs during, and releases them in
// reverse order, even when a press or during fails.
func holdCombo(ctx context.Context, in Injector, combo []string, during func() error) (err error) {
	down := 0
	defer func() {
		if uerr := releaseKeys(ctx, in, combo[:down]); err == nil {
			err = uerr
		}
	}()
	for _, k := range combo {
		if err := in.Key(ctx, KeyEvent{Key: k, Down: true}); err != nil {
			return err
		}
		down++
	}
	return during()
}

// checkWait refuses a wait or a key hold longer than MaxWait: the schema
// gives ms no clamp, so a wait the runtime would cut short is refused,
// never acked for less than was asked.
func (rt *Runtime) checkWait(ms int) error {
	if int64(ms) > int64(rt.opts.MaxWait/time.Millisecond) {
		return aci.Errorf(aci.CodeInvalidAction, "ms %d is past this runtime's MaxWait (%d ms)", ms, rt.opts.MaxWait.Milliseconds())
	}
	return nil
}

// millis converts a wire duration in milliseconds to a Duration clamped to
// [0, limit], without the overflow a plain multiplication has for the huge
// integers the schema allows.
func millis(ms int, limit time.Duration) time.Duration {
	if ms <= 0 {
		return 0
	}
	if int64(ms) > int64(limit/time.Millisecond) {
		return limit
	}
	return time.Duration(ms) * time.Millisecond
}
