package machine

import (
	"context"
	"errors"
	"fmt"
	"image"
	"slices"
	"strconv"
	"strings"
	"time"

	"shinken.dev/go/internal/hosttool"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// Window geometry on the runtime's machine: close, minimise, maximise,
// move and resize a top-level window. ACI has no verbs for these, so each
// is made of the verbs it has, and the runtime's Authorizer and plugins
// judge every one as they judge those:
//
//   - On an X11 desktop whose window manager speaks EWMH, through exec:
//     wmctrl (close, maximise, move, resize) and xdotool (minimise; move
//     and resize without wmctrl), with xprop reading the window back.
//     They must be installed on the runtime's machine and reach the
//     desktop's display. Without wmctrl, close is made of input (below)
//     and nothing maximises.
//   - Elsewhere (the headless desktop, or a display without those
//     programs), through input, as a user would: close is activate_window
//     and alt+F4, move a drag of the window's title bar, resize a drag of
//     its frame's bottom right corner. Minimise and maximise have no such
//     path and are not offered.
//
// Each operation reads the window back afterwards and fails when the
// window is not as asked: nothing is reported done that did not happen.

// A WindowOp names one thing a WindowControl can do to a window.
type WindowOp string

// The window operations.
const (
	WindowClose    WindowOp = "close"
	WindowMinimize WindowOp = "minimize"
	WindowMaximize WindowOp = "maximize"
	WindowMove     WindowOp = "move"
	WindowResize   WindowOp = "resize"
)

// ErrWindowUnchanged is wrapped by a window operation's error when the
// means it used ran but the window is not as asked afterwards (the window
// manager ignored the request, the application refused to close, a
// window's size hints kept it from the size asked).
var ErrWindowUnchanged = errors.New("machine: the window is not as asked")

// maxProbed bounds the windows the probe looks for on the display.
const maxProbed = hosttool.MaxProbed

// windowProbeWait bounds the probe's exec.
const windowProbeWait = 10 * time.Second

// windowSettle bounds how long an operation waits for the window manager
// and the application to carry it out before it reports the window
// unchanged.
const windowSettle = 5 * time.Second

// A WindowControl carries out window operations with the means a probe of
// the runtime found (see Tools.WindowControl). It is bound to one
// Client; On binds the same means to another session of that runtime.
type WindowControl struct {
	c *client.Client
	// wmctrl, xdotool: the program, and xprop, run on the desktop's
	// display.
	wmctrl, xdotool bool
	// keys: activate_window and key; drag: activate_window and drag.
	keys, drag bool
	// opener: xdg-open, run on the desktop's display.
	opener bool
}

// WindowControl probes the runtime once for the means of each window
// operation; Supports says which work. The probe is one exec (which programs
// the machine has, and whether they reach the desktop's display: the same
// screen size and windows), fixed plumbing the runtime runs without asking
// its Authorizer, as it runs nothing the agent chose; refused all the same,
// unavailable, or unanswered within 10 s, it leaves the input paths only. A
// runtime that cannot list windows gets none. It is an error only when the
// runtime cannot be asked at all.
func (m *Tools) WindowControl(ctx context.Context) (*WindowControl, error) {
	wc := &WindowControl{c: m.c}
	wins, err := m.c.ListWindows(ctx)
	var e *aci.Error
	switch {
	case errors.As(err, &e) && (e.Code == aci.CodeUnsupported || e.Code == aci.CodeUnsupportedVerb), errors.Is(err, errors.ErrUnsupported):
		return wc, nil // no window list to read an operation back from: nothing is offered
	case err != nil:
		return nil, err
	}
	verbs := m.c.Welcome().Capabilities.Verbs
	if slices.Contains(verbs, aci.VerbActivateWindow) {
		wc.keys = slices.Contains(verbs, aci.VerbKey)
		wc.drag = slices.Contains(verbs, aci.VerbDrag)
	}
	if !slices.Contains(verbs, aci.VerbExec) {
		return wc, nil
	}
	size, err := m.c.ScreenSize(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, w := range wins[:min(len(wins), maxProbed)] {
		ids = append(ids, xid(w.ID))
	}
	argv := hosttool.WindowProbe.Argv(ids...)
	// A gate that holds the exec for a person's approval must not hold
	// the caller: past windowProbeWait the exec path is taken as absent.
	pctx, cancel := context.WithTimeout(ctx, windowProbeWait)
	defer cancel()
	res, err := m.c.Exec(pctx, &aci.ExecRequest{Argv: argv, Timeout: windowProbeWait})
	if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return wc, nil // refused, unavailable, held or killed: no exec path
	}
	p := parseWindowProbe(res.Stdout)
	// The display is the desktop's when it has the same size and every
	// window the runtime listed (or, listing none, has none either): a
	// machine whose exec reaches some other display, as a developer's
	// does beside a headless desktop, gets no exec path.
	given := min(len(wins), maxProbed)
	ours := p.size == size && p.has["xprop"] && p.known == given && (given > 0 || p.clients == 0)
	wc.wmctrl = ours && p.has["wmctrl"]
	wc.xdotool = ours && p.has["xdotool"]
	wc.opener = ours && p.has["xdg-open"]
	return wc, nil
}

// windowProbe is what the probe script printed.
type windowProbe struct {
	has     map[string]bool // the programs found
	size    aci.ScreenSize  // the display's; zero when none was read
	known   int             // how many of the windows given the display has
	clients int             // how many windows the display's window manager lists
}

// parseWindowProbe reads the probe script's output, ignoring any line it
// does not know.
func parseWindowProbe(out string) windowProbe {
	p := windowProbe{has: map[string]bool{}}
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "has":
			p.has[f[1]] = true
		case len(f) == 3 && f[0] == "size":
			w, errW := strconv.Atoi(f[1])
			h, errH := strconv.Atoi(f[2])
			if errW == nil && errH == nil && w > 0 && h > 0 {
				p.size = aci.ScreenSize{W: w, H: h}
			}
		case len(f) == 2 && f[0] == "knows":
			p.known++
		case len(f) == 2 && f[0] == "clients":
			p.clients, _ = strconv.Atoi(f[1])
		}
	}
	return p
}

// parseIncrement reads the resize script's "inc W H" line: the window's
// size steps, 1×1 when it has none.
func parseIncrement(out string) image.Point {
	inc := image.Pt(1, 1)
	if f := strings.Fields(out); len(f) == 3 && f[0] == "inc" {
		if x, err := strconv.Atoi(f[1]); err == nil && x > 1 && x < 1<<16 {
			inc.X = x
		}
		if y, err := strconv.Atoi(f[2]); err == nil && y > 1 && y < 1<<16 {
			inc.Y = y
		}
	}
	return inc
}

// On returns the same means bound to c, another session of the runtime
// that was probed.
func (w *WindowControl) On(c *client.Client) *WindowControl {
	cp := *w
	cp.c = c
	return &cp
}

// Supports reports whether op works on the runtime.
func (w *WindowControl) Supports(op WindowOp) bool {
	switch op {
	case WindowClose:
		return w.wmctrl || w.keys
	case WindowMove:
		return w.wmctrl || w.xdotool || w.drag
	case WindowResize:
		return w.wmctrl || w.xdotool || w.drag
	case WindowMaximize:
		return w.wmctrl
	case WindowMinimize:
		return w.xdotool
	}
	return false
}

// CanOpen reports whether the probe found xdg-open on the machine whose
// exec reaches the desktop's display, so that Tools.Open has an opener
// there (a headless desktop, or a display exec does not reach, has none).
func (w *WindowControl) CanOpen() bool { return w.opener }

// Ops lists the operations that work on the runtime, in the order of the
// constants.
func (w *WindowControl) Ops() []WindowOp {
	var ops []WindowOp
	for _, op := range []WindowOp{WindowClose, WindowMinimize, WindowMaximize, WindowMove, WindowResize} {
		if w.Supports(op) {
			ops = append(ops, op)
		}
	}
	return ops
}

func (w *WindowControl) unsupported(op WindowOp) error {
	return fmt.Errorf("machine: the runtime has no means to %s a window: %w", op, errors.ErrUnsupported)
}

// Close closes the window with id, as its title bar's close button would:
// the application may ask to save first. It returns once the window is
// gone, or an error wrapping ErrWindowUnchanged when it is still there
// after a few seconds.
func (w *WindowControl) Close(ctx context.Context, id uint64) error {
	switch {
	case w.wmctrl:
		if err := w.script(ctx, id, `wmctrl -i -c "$1"`); err != nil {
			return err
		}
	case w.keys:
		if err := w.c.ActivateWindow(ctx, id); err != nil {
			return err
		}
		if err := w.c.Key(ctx, "alt+F4"); err != nil {
			return err
		}
	default:
		return w.unsupported(WindowClose)
	}
	_, err := w.settle(ctx, id, "closed", func(win *aci.WindowInfo) bool { return win == nil })
	return err
}

// Minimize iconifies the window with id and returns once the window
// manager says it is.
func (w *WindowControl) Minimize(ctx context.Context, id uint64) error {
	if !w.xdotool {
		return w.unsupported(WindowMinimize)
	}
	return w.script(ctx, id, `xdotool windowminimize "$1" || exit 93
`+pollState(`xprop -id "$1" WM_STATE | grep -q Iconic`))
}

// Maximize maximises the window with id and returns its bounds once the
// window manager says it is maximised.
func (w *WindowControl) Maximize(ctx context.Context, id uint64) (aci.WindowInfo, error) {
	if !w.wmctrl {
		return aci.WindowInfo{}, w.unsupported(WindowMaximize)
	}
	// A minimised window is brought back first (wmctrl -a maps and
	// raises it): maximised but hidden is not what was asked.
	if err := w.script(ctx, id, `if xprop -id "$1" WM_STATE | grep -q Iconic; then wmctrl -i -a "$1" || exit 93; fi
wmctrl -i -r "$1" -b add,maximized_vert,maximized_horz || exit 93
`+pollState(`xprop -id "$1" WM_STATE | grep -q Normal && s=$(xprop -id "$1" _NET_WM_STATE) && case $s in *MAXIMIZED_VERT*MAXIMIZED_HORZ*|*MAXIMIZED_HORZ*MAXIMIZED_VERT*) true;; *) false;; esac`)); err != nil {
		return aci.WindowInfo{}, err
	}
	return w.settle(ctx, id, "listed", func(win *aci.WindowInfo) bool { return win != nil })
}

// Move moves the window with id so that its top left corner (its frame's,
// title bar included, as ListWindows reports its bounds) is at x, y in
// screen pixels, and returns its bounds once it is there. Through wmctrl
// (X11), x and y must not be negative; through a drag of the title bar
// (the headless desktop), the point grabbed must stay on the screen.
func (w *WindowControl) Move(ctx context.Context, id uint64, x, y int) (aci.WindowInfo, error) {
	if !w.Supports(WindowMove) {
		return aci.WindowInfo{}, w.unsupported(WindowMove)
	}
	before, err := w.fits(ctx, id, func(b image.Rectangle) image.Rectangle { return b.Add(image.Pt(x, y).Sub(b.Min)) })
	if err != nil {
		return aci.WindowInfo{}, err
	}
	win, err := w.move(ctx, id, x, y)
	if err != nil {
		return w.putBack(ctx, id, before, err)
	}
	return win, nil
}

// move is Move without its checks, and without putting the window back
// when it fails.
func (w *WindowControl) move(ctx context.Context, id uint64, x, y int) (aci.WindowInfo, error) {
	at := func(win *aci.WindowInfo) bool {
		return win != nil && len(win.BBox) == 4 && win.BBox[0] == x && win.BBox[1] == y
	}
	switch {
	case w.wmctrl:
		if err := w.script(ctx, id, `wmctrl -i -r "$1" -b remove,maximized_vert,maximized_horz && wmctrl -i -r "$1" -e "0,$2,$3,-1,-1" || exit 93`,
			strconv.Itoa(x), strconv.Itoa(y)); err != nil {
			return aci.WindowInfo{}, err
		}
	case w.xdotool:
		// Under a reparenting window manager the position given places
		// the frame, as wmctrl's gravity 0 does.
		if err := w.script(ctx, id, `xdotool windowmove "$1" "$2" "$3" || exit 93`, strconv.Itoa(x), strconv.Itoa(y)); err != nil {
			return aci.WindowInfo{}, err
		}
	case w.drag:
		if err := w.dragWindow(ctx, id, WindowMove, image.Pt(x, y)); err != nil {
			return aci.WindowInfo{}, err
		}
	}
	return w.settle(ctx, id, fmt.Sprintf("at %d,%d", x, y), at)
}

// Resize gives the window with id the size width × height in screen
// pixels, its frame's (title bar and borders included, as ListWindows
// reports its bounds), keeping its top left corner, and returns its
// bounds. A window that asks for sizes in steps (a terminal's character
// cells) gets the size of its steps nearest below or at the one asked.
// Through a drag of the frame's corner (the headless desktop), the corner
// must stay on the screen.
func (w *WindowControl) Resize(ctx context.Context, id uint64, width, height int) (aci.WindowInfo, error) {
	if !w.Supports(WindowResize) {
		return aci.WindowInfo{}, w.unsupported(WindowResize)
	}
	if width <= 0 || height <= 0 {
		return aci.WindowInfo{}, aci.Errorf(aci.CodeInvalidAction, "a window's size must be positive, not %d×%d", width, height)
	}
	before, err := w.fits(ctx, id, func(b image.Rectangle) image.Rectangle {
		return image.Rectangle{b.Min, b.Min.Add(image.Pt(width, height))}
	})
	if err != nil {
		return aci.WindowInfo{}, err
	}
	win, err := w.resize(ctx, id, width, height)
	if err != nil {
		return w.putBack(ctx, id, before, err)
	}
	return win, nil
}

// resize is Resize without its checks, and without putting the window
// back when it fails.
func (w *WindowControl) resize(ctx context.Context, id uint64, width, height int) (aci.WindowInfo, error) {
	exact := func(win *aci.WindowInfo) bool {
		return win != nil && len(win.BBox) == 4 && win.BBox[2] == width && win.BBox[3] == height
	}
	if !w.wmctrl && !w.xdotool {
		if err := w.dragWindow(ctx, id, WindowResize, image.Pt(width, height)); err != nil {
			return aci.WindowInfo{}, err
		}
		return w.settle(ctx, id, fmt.Sprintf("%d×%d", width, height), exact)
	}
	// The frame's extents come off the size asked (wmctrl and xdotool
	// size the client); the size increments say how near the result must
	// be.
	resize := `wmctrl -i -r "$1" -b remove,maximized_vert,maximized_horz && wmctrl -i -r "$1" -e "0,-1,-1,$w,$h" || exit 93`
	if !w.wmctrl {
		resize = `xdotool windowsize "$1" "$w" "$h" || exit 93`
	}
	res, err := w.run(ctx, id, `e=$(xprop -id "$1" _NET_FRAME_EXTENTS | sed -n 's/.*= *\([0-9]*\), *\([0-9]*\), *\([0-9]*\), *\([0-9]*\).*/\1 \2 \3 \4/p')
set -- "$1" "$2" "$3" ${e:-0 0 0 0}
w=$(($2 - $4 - $5)) h=$(($3 - $6 - $7))
[ "$w" -gt 0 ] && [ "$h" -gt 0 ] || exit 95
`+resize+`
xprop -id "$1" WM_NORMAL_HINTS | sed -n 's/.*resize increment: *\([0-9]*\) by \([0-9]*\).*/inc \1 \2/p'`,
		strconv.Itoa(width), strconv.Itoa(height))
	if err != nil {
		return aci.WindowInfo{}, err
	}
	inc := parseIncrement(res.Stdout)
	sized := func(win *aci.WindowInfo) bool {
		if win == nil || len(win.BBox) != 4 {
			return false
		}
		dw, dh := width-win.BBox[2], height-win.BBox[3]
		return dw >= 0 && dw < inc.X && dh >= 0 && dh < inc.Y
	}
	return w.settle(ctx, id, fmt.Sprintf("%d×%d", width, height), sized)
}

// fits checks, before a move or a resize, that the window's frame would
// stay on the screen with the bounds to gives its present ones: one rule
// for every desktop, a window is never moved or sized past the screen's
// edges (a request that would is refused with invalid_action, and the
// window is left as it was). It returns the window as it is.
func (w *WindowControl) fits(ctx context.Context, id uint64, to func(image.Rectangle) image.Rectangle) (*aci.WindowInfo, error) {
	win, err := w.window(ctx, id)
	if err != nil {
		return nil, err
	}
	if win == nil {
		return nil, fmt.Errorf("%w: no window %d", aci.ErrNoSuchWindow, id)
	}
	if len(win.BBox) != 4 {
		return nil, fmt.Errorf("machine: window %d has no bounds: %w", id, errors.ErrUnsupported)
	}
	size, err := w.c.ScreenSize(ctx)
	if err != nil {
		return nil, err
	}
	b := to(image.Rect(win.BBox[0], win.BBox[1], win.BBox[0]+win.BBox[2], win.BBox[1]+win.BBox[3]))
	if screen := image.Rect(0, 0, size.W, size.H); !b.In(screen) {
		return nil, aci.Errorf(aci.CodeInvalidAction, "window %d's frame would be at %d,%d, %d×%d, past the %d×%d screen: windows are not moved or sized past the screen's edges (it was left as it is)",
			id, b.Min.X, b.Min.Y, b.Dx(), b.Dy(), size.W, size.H)
	}
	return win, nil
}

// putBack follows a move or a resize that failed (err): a window it
// changed part way (moved but not sized, sized to its minimum rather than
// as asked) is given back the bounds it had before, size first, then
// position. The error then says whether the window is as it was, was put
// back, or could not be (and what it is now); the window is returned as it
// is.
func (w *WindowControl) putBack(ctx context.Context, id uint64, before *aci.WindowInfo, err error) (aci.WindowInfo, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*windowSettle+10*time.Second)
	defer cancel()
	same := func(win *aci.WindowInfo) bool { return win != nil && slices.Equal(win.BBox, before.BBox) }
	now, rerr := w.window(ctx, id)
	if rerr != nil || now == nil || len(now.BBox) != 4 {
		return aci.WindowInfo{}, err
	}
	if same(now) {
		return *now, fmt.Errorf("%w (the window is as it was: bounds %v)", err, before.BBox)
	}
	b := before.BBox
	if now.BBox[2] != b[2] || now.BBox[3] != b[3] {
		w.resize(ctx, id, b[2], b[3])
	}
	if now, _ = w.window(ctx, id); now != nil && len(now.BBox) == 4 && (now.BBox[0] != b[0] || now.BBox[1] != b[1]) {
		w.move(ctx, id, b[0], b[1])
	}
	now, _ = w.window(ctx, id)
	if same(now) {
		return *now, fmt.Errorf("%w (the window was put back as it was: bounds %v)", err, b)
	}
	if now == nil {
		return aci.WindowInfo{}, fmt.Errorf("%w (the window is gone; before: bounds %v)", err, b)
	}
	return *now, fmt.Errorf("%w (it could not be put back: bounds now %v, before %v)", err, now.BBox, b)
}

// dragWindow moves (op WindowMove) or resizes (WindowResize) the window
// with id as a user would, raised first so that nothing covers what is
// dragged: its title bar to put its top left corner at to, or its frame's
// bottom right corner to give it the size to.
func (w *WindowControl) dragWindow(ctx context.Context, id uint64, op WindowOp, to image.Point) error {
	win, err := w.window(ctx, id)
	if err != nil {
		return err
	}
	if win == nil {
		return fmt.Errorf("%w: no window %d", aci.ErrNoSuchWindow, id)
	}
	if len(win.BBox) != 4 {
		return fmt.Errorf("machine: window %d has no bounds to drag it by: %w", id, errors.ErrUnsupported)
	}
	x, y, wd, ht := win.BBox[0], win.BBox[1], win.BBox[2], win.BBox[3]
	var grab, drop image.Point
	what := "its title bar"
	if op == WindowMove {
		// A point of the title bar: a third of the way across (clear of
		// the buttons at either end), a few pixels below the frame's top.
		grab = image.Pt(x+wd/3, y+min(8, ht/2))
		drop = grab.Add(to.Sub(image.Pt(x, y)))
	} else {
		// The last pixel of the frame's border, its resize grip.
		what = "its bottom right corner"
		grab = image.Pt(x+wd-1, y+ht-1)
		drop = grab.Add(to.Sub(image.Pt(wd, ht)))
	}
	size, err := w.c.ScreenSize(ctx)
	if err != nil {
		return err
	}
	screen := image.Rect(0, 0, size.W, size.H)
	if !grab.In(screen) || !drop.In(screen) {
		return aci.Errorf(aci.CodeInvalidAction, "window %d would be dragged by %s from %d,%d to %d,%d, off the screen; this desktop %ss windows only by dragging", id, what, grab.X, grab.Y, drop.X, drop.Y, op)
	}
	if err := w.c.ActivateWindow(ctx, id); err != nil {
		return err
	}
	return w.c.Drag(ctx, aci.Px(float64(grab.X), float64(grab.Y)), aci.Px(float64(drop.X), float64(drop.Y)), 0)
}

// Exit statuses of the window scripts.
const (
	exitNoWindow  = 90 // the display has no such window
	exitUnchanged = 94 // the state did not come within windowSettle
	exitTooSmall  = 95 // the size asked leaves no room inside the frame
)

// pollState is a script fragment that succeeds once test does, or exits
// exitUnchanged after windowSettle.
func pollState(test string) string {
	n := int(windowSettle / (50 * time.Millisecond))
	return fmt.Sprintf(`i=0
while [ $i -lt %d ]; do
  if %s; then exit 0; fi
  sleep 0.05; i=$((i+1))
done
exit %d`, n, test, exitUnchanged)
}

// script runs body under /bin/sh with the window's X id as $1 and args
// after it, once the display is checked to have that window.
func (w *WindowControl) script(ctx context.Context, id uint64, body string, args ...string) error {
	_, err := w.run(ctx, id, body, args...)
	return err
}

func (w *WindowControl) run(ctx context.Context, id uint64, body string, args ...string) (*aci.ExecResult, error) {
	script := `xprop -id "$1" WM_STATE >/dev/null 2>&1 || exit 90` + "\n" + body
	res, err := w.c.Exec(ctx, &aci.ExecRequest{Argv: append([]string{"/bin/sh", "-c", script, "sh", xid(id)}, args...), Timeout: 3 * windowSettle})
	if err != nil {
		return nil, err
	}
	switch {
	case res.TimedOut:
		return nil, aci.Errorf(aci.CodeTimeout, "the runtime killed the window command at its deadline")
	case res.ExitCode == nil:
		return nil, fmt.Errorf("machine: the window command was killed by signal %d", deref(res.Signal))
	}
	switch *res.ExitCode {
	case 0:
		return res, nil
	case exitNoWindow:
		return nil, fmt.Errorf("%w: the display has no window %d", aci.ErrNoSuchWindow, id)
	case exitUnchanged:
		return nil, fmt.Errorf("%w: window %d, after %v", ErrWindowUnchanged, id, windowSettle)
	case exitTooSmall:
		return nil, aci.Errorf(aci.CodeInvalidAction, "the size asked leaves no room inside window %d's frame", id)
	}
	msg := strings.TrimSpace(res.Stderr)
	if msg == "" {
		msg = "exit status " + strconv.Itoa(*res.ExitCode)
	}
	return nil, fmt.Errorf("machine: the window command failed: %s", msg)
}

// settle reads the window list until ok holds for the window with id (nil
// when it is not listed), and returns the window; after windowSettle it
// fails wrapping ErrWindowUnchanged, saying what was asked and what is.
func (w *WindowControl) settle(ctx context.Context, id uint64, want string, ok func(*aci.WindowInfo) bool) (aci.WindowInfo, error) {
	deadline := time.Now().Add(windowSettle)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		win, err := w.window(ctx, id)
		if err != nil {
			return aci.WindowInfo{}, err
		}
		if ok(win) {
			if win == nil {
				return aci.WindowInfo{ID: id}, nil
			}
			return *win, nil
		}
		if time.Now().After(deadline) {
			now := "gone"
			if win != nil {
				now = fmt.Sprintf("now: bounds %v", win.BBox)
			}
			return aci.WindowInfo{}, fmt.Errorf("%w: window %d is not %s after %v (%s)", ErrWindowUnchanged, id, want, windowSettle, now)
		}
		select {
		case <-ctx.Done():
			return aci.WindowInfo{}, ctx.Err()
		case <-tick.C:
		}
	}
}

// window returns the listed window with id, or nil.
func (w *WindowControl) window(ctx context.Context, id uint64) (*aci.WindowInfo, error) {
	wins, err := w.c.ListWindows(ctx)
	if err != nil {
		return nil, err
	}
	for i := range wins {
		if wins[i].ID == id {
			return &wins[i], nil
		}
	}
	return nil, nil
}

// xid spells a window id as X programs take it.
func xid(id uint64) string { return "0x" + strconv.FormatUint(id, 16) }

// A WindowState is what the window manager says of a window beyond its
// bounds.
type WindowState struct {
	Minimized  bool `json:"minimized,omitempty"`
	Maximized  bool `json:"maximized,omitempty"`
	Fullscreen bool `json:"fullscreen,omitempty"`
}

const windowStatesScript = `for w; do
  s=$(xprop -id "$w" WM_STATE _NET_WM_STATE 2>/dev/null) || continue
  f=
  case $s in *Iconic*|*_NET_WM_STATE_HIDDEN*) f="${f}m" ;; esac
  case $s in *MAXIMIZED_VERT*MAXIMIZED_HORZ*|*MAXIMIZED_HORZ*MAXIMIZED_VERT*) f="${f}M" ;; esac
  case $s in *_NET_WM_STATE_FULLSCREEN*) f="${f}F" ;; esac
  echo "$w ${f:--}"
done`

// States returns the state of each window in wins that the window
// manager reports, by id, in one exec of xprop (judged by the runtime's
// Authorizer as that command). Where the probe found no xprop on the
// desktop's display (the headless desktop), it returns an error wrapping
// errors.ErrUnsupported.
func (w *WindowControl) States(ctx context.Context, wins []aci.WindowInfo) (map[uint64]WindowState, error) {
	if !w.wmctrl && !w.xdotool {
		return nil, fmt.Errorf("machine: the runtime has no means to read window states: %w", errors.ErrUnsupported)
	}
	argv := []string{"/bin/sh", "-c", windowStatesScript, "sh"}
	for _, win := range wins {
		argv = append(argv, xid(win.ID))
	}
	res, err := w.c.Exec(ctx, &aci.ExecRequest{Argv: argv, Timeout: windowProbeWait})
	if err != nil {
		return nil, err
	}
	if res.ExitCode == nil || *res.ExitCode != 0 {
		return nil, fmt.Errorf("machine: reading window states: %s", strings.TrimSpace(res.Stderr))
	}
	out := map[uint64]WindowState{}
	for line := range strings.Lines(res.Stdout) {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		id, err := strconv.ParseUint(strings.TrimPrefix(f[0], "0x"), 16, 64)
		if err != nil {
			continue
		}
		out[id] = WindowState{Minimized: strings.Contains(f[1], "m"), Maximized: strings.Contains(f[1], "M"), Fullscreen: strings.Contains(f[1], "F")}
	}
	return out, nil
}
