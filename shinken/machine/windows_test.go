package machine_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/backend/x11"
	"shinken.dev/go/internal/citest"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/internal/xvfb/xvfbtest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/machine"
)

// windowRig dials a runtime over desk through a schema proxy, exec
// running on this machine with env, judged by auth (nil allows all).
func windowRig(t *testing.T, desk shinken.Backend, env []string, auth shinken.Authorizer) *agent {
	t.Helper()
	return tools(schematest.Serve(t, desk, &shinken.RuntimeOptions{Executor: osexec.New(&osexec.Options{Env: env}), Authorizer: auth}))
}

// windowTitled waits until a window whose title contains title
// (ignoring case) is listed, failing t after a minute.
func windowTitled(t *testing.T, c *agent, title string) aci.WindowInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for {
		ws, err := c.ListWindows(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if strings.Contains(strings.ToLower(w.Title), title) && len(w.BBox) == 4 {
				return w
			}
		}
		if err := c.Wait(ctx, 0); err != nil { // a round trip: the app maps its window meanwhile
			t.Fatalf("no window titled %q: %v (windows: %+v)", title, err, ws)
		}
	}
}

// TestWindowControlHeadless closes, moves and resizes windows of the
// headless desktop through input (its window manager has no other), and
// offers nothing else.
func TestWindowControlHeadless(t *testing.T) {
	ctx := t.Context()
	desk := headless.New(nil)
	c := windowRig(t, desk, append(os.Environ(), "DISPLAY="), nil)
	for _, app := range []string{"notes", "form"} {
		if err := c.LaunchApp(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	wc, err := c.WindowControl(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := wc.Ops(); !slices.Equal(got, []machine.WindowOp{machine.WindowClose, machine.WindowMove, machine.WindowResize}) {
		t.Fatalf("ops %v, want close, move and resize", got)
	}
	notes := windowTitled(t, c, "notes")
	moved, err := wc.Move(ctx, notes.ID, 200, 150)
	if err != nil {
		t.Fatal(err)
	}
	if moved.BBox[0] != 200 || moved.BBox[1] != 150 || moved.BBox[2] != notes.BBox[2] {
		t.Fatalf("moved to %v", moved.BBox)
	}
	if _, err := wc.Move(ctx, notes.ID, 5000, 10); !errors.Is(err, aci.ErrInvalidAction) {
		t.Fatalf("a move off the screen: %v", err)
	}
	sized, err := wc.Resize(ctx, notes.ID, 520, 300)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{200, 150, 520, 300}; !slices.Equal(sized.BBox, want) {
		t.Fatalf("resized to %v, want %v", sized.BBox, want)
	}
	if _, err := wc.Resize(ctx, notes.ID, 5000, 300); !errors.Is(err, aci.ErrInvalidAction) {
		t.Fatalf("a resize off the screen: %v", err)
	}
	for _, err := range []error{
		func() error { _, err := wc.Maximize(ctx, notes.ID); return err }(),
		wc.Minimize(ctx, notes.ID),
	} {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("an operation headless lacks: %v", err)
		}
	}
	if err := wc.Close(ctx, notes.ID); err != nil {
		t.Fatal(err)
	}
	ws, err := c.ListWindows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 || ws[0].ID == notes.ID {
		t.Fatalf("after close: %+v", ws)
	}
	if err := wc.Close(ctx, notes.ID); !errors.Is(err, aci.ErrNoSuchWindow) {
		t.Fatalf("closing a closed window: %v", err)
	}
}

// TestWindowControlBesideAnotherDisplay probes a headless desktop whose
// exec reaches an X display of the same size, with wmctrl, xdotool and
// xprop on it, as a developer's machine does: the display is not the
// desktop's, so nothing goes through it, whether the desktop has windows
// or none.
func TestWindowControlBesideAnotherDisplay(t *testing.T) {
	srv := xvfbtest.Start(t, nil)
	ctx := t.Context()
	b, err := x11.Open(ctx, &x11.Options{Display: srv.Display, Xauthority: srv.Xauthority, LaunchEnv: []string{xvfb.MarkerVar + "=" + srv.Marker}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	env := append(os.Environ(), "DISPLAY="+srv.Display, "XAUTHORITY="+srv.Xauthority, xvfb.MarkerVar+"="+srv.Marker)
	x := windowRig(t, b, env, nil)
	if err := x.LaunchApp(ctx, "xterm", "-title", "elsewhere"); err != nil {
		t.Fatal(err)
	}
	w := windowTitled(t, x, "elsewhere")
	xwc, err := x.WindowControl(ctx)
	if err != nil || !xwc.Supports(machine.WindowMaximize) {
		t.Fatalf("the display's own runtime: %v", err)
	}
	c := windowRig(t, headless.New(nil), env, nil) // 1280×800, as the display
	for _, apps := range [][]string{nil, {"notes"}} {
		for _, app := range apps {
			if err := c.LaunchApp(ctx, app); err != nil {
				t.Fatal(err)
			}
		}
		wc, err := c.WindowControl(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := wc.Ops(); !slices.Equal(got, []machine.WindowOp{machine.WindowClose, machine.WindowMove, machine.WindowResize}) {
			t.Fatalf("with apps %v: ops %v, want the headless desktop's own", apps, got)
		}
	}
	if err := xwc.Close(ctx, w.ID); err != nil {
		t.Fatal(err)
	}
}

// TestWindowControlX11 closes, minimises, maximises, moves and resizes an
// xterm under openbox, through wmctrl and xdotool run by exec, and
// checks that a refused exec refuses them.
func TestWindowControlX11(t *testing.T) {
	srv := xvfbtest.Start(t, nil)
	citest.NeedPrograms(t, "wmctrl", "xdotool", "xprop", "xterm")
	ctx := t.Context()
	b, err := x11.Open(ctx, &x11.Options{Display: srv.Display, Xauthority: srv.Xauthority, LaunchEnv: []string{xvfb.MarkerVar + "=" + srv.Marker}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	env := append(os.Environ(), "DISPLAY="+srv.Display, "XAUTHORITY="+srv.Xauthority, xvfb.MarkerVar+"="+srv.Marker)
	deny := &atomic.Bool{}
	c := windowRig(t, b, env, shinken.AuthorizerFunc(func(context.Context, shinken.AuthRequest) error {
		if deny.Load() {
			return errors.New("the policy forbids commands")
		}
		return nil
	}))
	if err := c.LaunchApp(ctx, "xterm", "-title", "geometry-one"); err != nil {
		t.Fatal(err)
	}
	if err := c.LaunchApp(ctx, "xterm", "-title", "geometry-two"); err != nil {
		t.Fatal(err)
	}
	one := windowTitled(t, c, "geometry-one")
	two := windowTitled(t, c, "geometry-two")
	wc, err := c.WindowControl(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []machine.WindowOp{machine.WindowClose, machine.WindowMinimize, machine.WindowMaximize, machine.WindowMove, machine.WindowResize}
	if got := wc.Ops(); !slices.Equal(got, want) {
		t.Fatalf("ops %v, want %v", got, want)
	}
	// open: an opener on this display, and its failures told.
	if _, err := exec.LookPath("xdg-open"); err == nil {
		if !wc.CanOpen() {
			t.Error("xdg-open is on the display's machine, and CanOpen says no")
		}
		missing := filepath.Join(t.TempDir(), "nope.txt")
		err := c.Open(ctx, missing)
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("open of a missing file: %v", err)
		}
	}
	moved, err := wc.Move(ctx, one.ID, 120, 90)
	if err != nil {
		t.Fatal(err)
	}
	if moved.BBox[0] != 120 || moved.BBox[1] != 90 {
		t.Fatalf("moved to %v", moved.BBox)
	}
	if _, err := wc.Move(ctx, one.ID, -1, 90); !errors.Is(err, aci.ErrInvalidAction) {
		t.Fatalf("a move to x=-1: %v", err)
	}
	if _, err := wc.Resize(ctx, one.ID, 0, 90); !errors.Is(err, aci.ErrInvalidAction) {
		t.Fatalf("a resize to no width: %v", err)
	}
	sized, err := wc.Resize(ctx, one.ID, 600, 400)
	if err != nil {
		t.Fatal(err)
	}
	if sized.BBox[0] != 120 || sized.BBox[1] != 90 || sized.BBox[2] > 600 || sized.BBox[2] < 560 || sized.BBox[3] > 400 || sized.BBox[3] < 360 {
		t.Fatalf("resized to %v", sized.BBox)
	}
	max, err := wc.Maximize(ctx, one.ID)
	if err != nil {
		t.Fatal(err)
	}
	if max.BBox[2] <= sized.BBox[2] || max.BBox[3] <= sized.BBox[3] {
		t.Fatalf("maximised to %v from %v", max.BBox, sized.BBox)
	}
	if err := wc.Minimize(ctx, two.ID); err != nil {
		t.Fatal(err)
	}
	wins, err := c.ListWindows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	states, err := wc.States(ctx, wins)
	if err != nil {
		t.Fatal(err)
	}
	if st := states[one.ID]; !st.Maximized || st.Minimized {
		t.Errorf("the maximised window's state: %+v", st)
	}
	if st := states[two.ID]; !st.Minimized || st.Maximized {
		t.Errorf("the minimised window's state: %+v", st)
	}
	// Maximising a minimised window brings it back: maximised and shown.
	if _, err := wc.Maximize(ctx, two.ID); err != nil {
		t.Fatal(err)
	}
	wins, _ = c.ListWindows(ctx)
	if states, err = wc.States(ctx, wins); err != nil || !states[two.ID].Maximized || states[two.ID].Minimized {
		t.Fatalf("a minimised window maximised: %+v, %v", states[two.ID], err)
	}
	// Past the screen: refused, and the window is left as it was.
	size, _ := c.ScreenSize(ctx)
	small, err := wc.Resize(ctx, two.ID, 300, 200)
	if err != nil {
		t.Fatal(err)
	}
	for name, do := range map[string]func() error{
		"move past the right edge": func() error { _, err := wc.Move(ctx, two.ID, size.W-small.BBox[2]+1, 0); return err },
		"move far off":             func() error { _, err := wc.Move(ctx, two.ID, 5000, 5000); return err },
		"resize past the bottom":   func() error { _, err := wc.Resize(ctx, two.ID, 300, size.H-small.BBox[1]+1); return err },
		"resize to 5000×5000":      func() error { _, err := wc.Resize(ctx, two.ID, 5000, 5000); return err },
	} {
		if err := do(); !errors.Is(err, aci.ErrInvalidAction) {
			t.Errorf("%s: %v, want invalid_action", name, err)
		}
		if now := windowTitled(t, c, "geometry-two"); !slices.Equal(now.BBox, small.BBox) {
			t.Errorf("%s: the window went from %v to %v", name, small.BBox, now.BBox)
		}
	}
	if moved, err := wc.Move(ctx, two.ID, size.W-small.BBox[2], size.H-small.BBox[3]); err != nil || moved.BBox[0] != size.W-small.BBox[2] {
		t.Fatalf("a move to the screen's corner: %v, %v", moved.BBox, err)
	}
	if err := wc.Minimize(ctx, two.ID); err != nil {
		t.Fatal(err)
	}
	if err := wc.Close(ctx, 0x7fffff01); !errors.Is(err, aci.ErrNoSuchWindow) {
		t.Fatalf("closing no window: %v", err)
	}
	// A refused exec refuses the operation, and the window stays.
	deny.Store(true)
	if err := wc.Close(ctx, one.ID); !errors.Is(err, aci.ErrPermissionDenied) {
		t.Fatalf("a close the Authorizer refuses: %v", err)
	}
	deny.Store(false)
	windowTitled(t, c, "geometry-one")
	if err := wc.Close(ctx, one.ID); err != nil {
		t.Fatal(err)
	}

	// A machine with xdotool but no wmctrl: move and resize through
	// xdotool, close through activate_window and alt+F4, no maximise.
	bin := t.TempDir()
	for _, p := range []string{"xdotool", "xprop", "sed", "grep", "sleep"} {
		path, err := exec.LookPath(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(path, filepath.Join(bin, p)); err != nil {
			t.Fatal(err)
		}
	}
	c2 := windowRig(t, b, append(env, "PATH="+bin), nil) // a second runtime on the same backend
	wc2, err := c2.WindowControl(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want = []machine.WindowOp{machine.WindowClose, machine.WindowMinimize, machine.WindowMove, machine.WindowResize}
	if got := wc2.Ops(); !slices.Equal(got, want) {
		t.Fatalf("ops without wmctrl %v, want %v", got, want)
	}
	if _, err := wc2.Maximize(ctx, two.ID); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("maximise without wmctrl: %v", err)
	}
	if err := c2.ActivateWindow(ctx, two.ID); err != nil { // back from its minimised state
		t.Fatal(err)
	}
	if moved, err := wc2.Move(ctx, two.ID, 300, 200); err != nil || moved.BBox[0] != 300 || moved.BBox[1] != 200 {
		t.Fatalf("moved by xdotool to %v: %v", moved.BBox, err)
	}
	if sized, err := wc2.Resize(ctx, two.ID, 420, 320); err != nil || sized.BBox[2] > 420 || sized.BBox[2] < 380 || sized.BBox[3] > 320 || sized.BBox[3] < 280 {
		t.Fatalf("resized by xdotool to %v: %v", sized.BBox, err)
	}
	if err := wc2.Close(ctx, two.ID); err != nil {
		t.Fatal(err)
	}
}
