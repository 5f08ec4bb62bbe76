package x11

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb/xproto"

	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

const unicodeSample = "héllo ✓ 日本 ß"

// appSession is a session with a window manager and a bus, for real apps.
func appSession(t *testing.T) *session {
	return newSession(t, &xvfb.Options{Width: 1024, Height: 768, SessionBus: true}, nil)
}

// startApp runs an app of the session with stdout captured, and returns a
// function that waits for it to exit and returns that output.
func (s *session) startApp(name string, args ...string) func() string {
	s.t.Helper()
	cmd := s.srv.Command(ctxT(s.t), name, args...)
	cmd.Env = append(cmd.Env, "NO_AT_BRIDGE=1", "GTK_A11Y=none")
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	s.t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	return func() string {
		s.t.Helper()
		select {
		case err := <-done:
			done <- err
			if err != nil {
				s.t.Fatalf("%s: %v", name, err)
			}
		case <-time.After(20 * time.Second):
			if f, err := s.b.Capture(context.Background(), aci.ScopeScreen); err == nil {
				writePNG(s.t, "stuck-"+name+".png", f.Image)
			}
			s.t.Fatalf("%s did not exit", name)
		}
		return out.String()
	}
}

// typeInto activates the window titled title, types text and presses
// Return.
func (s *session) typeInto(title, text string) {
	s.t.Helper()
	ctx := ctxT(s.t)
	w := s.findWindow(title)
	if err := s.b.Activate(ctx, w.ID); err != nil {
		s.t.Fatal(err)
	}
	if err := s.b.Type(ctx, text); err != nil {
		s.t.Fatal(err)
	}
	for _, down := range []bool{true, false} {
		if err := s.b.Key(ctx, shinken.KeyEvent{Key: "Return", Down: down}); err != nil {
			s.t.Fatal(err)
		}
	}
}

// TestTypeZenity types Unicode into a GTK entry (zenity --entry) and reads
// it back from zenity's output.
func TestTypeZenity(t *testing.T) {
	need(t, "zenity")
	s := appSession(t)
	wait := s.startApp("zenity", "--entry", "--title=shinken-entry", "--text=type here")
	s.typeInto("shinken-entry", unicodeSample)
	if got := wait(); got != unicodeSample+"\n" {
		t.Fatalf("zenity read %q, want %q", got, unicodeSample)
	}
	if m := s.modifiers(); m != 0 {
		t.Fatalf("modifiers held: %#x", m)
	}
}

// TestTypeXterm types the same text into xterm, a plain Xlib client, and a
// shell there writes the line it read to a file.
func TestTypeXterm(t *testing.T) {
	need(t, "xterm")
	s := appSession(t)
	out := filepath.Join(t.TempDir(), "line")
	s.startApp("xterm", "-u8", "-title", "shinken-xterm", "-e", "sh", "-c", `IFS= read -r line; printf '%s' "$line" > "$0"`, out)
	s.typeInto("shinken-xterm", unicodeSample+" Mixed CASE!")
	var got []byte
	waitFor(t, "xterm's shell to write the line", func() bool {
		var err error
		got, err = os.ReadFile(out)
		return err == nil && len(got) > 0
	})
	if string(got) != unicodeSample+" Mixed CASE!" {
		t.Fatalf("xterm read %q", got)
	}
}

// TestClipboardXclip exchanges text with xclip both ways, including a
// value of 1 MiB that must go incrementally (INCR), and checks the
// targets we offer and the loss of ownership.
func TestClipboardXclip(t *testing.T) {
	need(t, "xclip")
	s := newSession(t, &xvfb.Options{Width: 320, Height: 240, NoWM: true}, nil)
	ctx := ctxT(t)
	xclipOut := func(args ...string) string {
		t.Helper()
		out, err := s.srv.Command(ctx, "xclip", append([]string{"-o", "-selection", "clipboard"}, args...)...).Output()
		if err != nil {
			t.Fatalf("xclip -o %v: %v", args, err)
		}
		return string(out)
	}
	if got, err := s.b.ClipboardText(ctx); err != nil || got != "" {
		t.Fatalf("empty clipboard: %q %v", got, err)
	}
	if err := s.b.SetClipboardText(ctx, unicodeSample); err != nil {
		t.Fatal(err)
	}
	if got := xclipOut(); got != unicodeSample {
		t.Fatalf("xclip read %q", got)
	}
	if got := xclipOut("-t", "STRING"); got != "h\xe9llo ? ?? \xdf" {
		t.Fatalf("xclip read STRING %q", got)
	}
	targets := strings.Fields(xclipOut("-t", "TARGETS"))
	for _, want := range []string{"TARGETS", "UTF8_STRING", "STRING"} {
		if !slices.Contains(targets, want) {
			t.Fatalf("TARGETS %v lacks %s", targets, want)
		}
	}
	if got, err := s.b.ClipboardText(ctx); err != nil || got != unicodeSample {
		t.Fatalf("reading our own selection: %q %v", got, err)
	}

	s.xclipIn("from xclip: 日本")
	waitFor(t, "ownership lost", func() bool {
		s.b.clip.mu.Lock()
		defer s.b.clip.mu.Unlock()
		return !s.b.clip.owned
	})
	if got, err := s.b.ClipboardText(ctx); err != nil || got != "from xclip: 日本" {
		t.Fatalf("reading xclip's selection: %q %v", got, err)
	}

	big := bigText(1 << 20)
	if err := s.b.SetClipboardText(ctx, big); err != nil {
		t.Fatal(err)
	}
	if got := xclipOut(); got != big {
		t.Fatalf("xclip read %d bytes of 1 MiB", len(got))
	}
	if got, err := s.b.ClipboardText(ctx); err != nil || got != big {
		t.Fatalf("reading our own 1 MiB: %d bytes, %v", len(got), err)
	}
	big2 := strings.ToUpper(big)
	s.xclipIn(big2)
	if got, err := s.b.ClipboardText(ctx); err != nil || got != big2 {
		t.Fatalf("reading 1 MiB from xclip: %d bytes, %v", len(got), err)
	}
}

// xclipIn makes xclip the clipboard's owner, holding text.
func (s *session) xclipIn(text string) {
	s.t.Helper()
	cmd := s.srv.Command(ctxT(s.t), "xclip", "-i", "-selection", "clipboard")
	cmd.Stdin = strings.NewReader(text)
	// xclip forks a child that serves the selection until it loses it, and
	// that keeps any output pipe open: give it none.
	if err := cmd.Run(); err != nil {
		s.t.Fatalf("xclip -i: %v", err)
	}
	// The child takes the selection after its parent exits.
	s.waitFor("xclip to own the clipboard", func() bool {
		r, err := xproto.GetSelectionOwner(s.client, s.b.atoms.clipboard).Reply()
		return err == nil && r.Owner != xproto.WindowNone && r.Owner != s.b.win
	})
}

// bigText returns n bytes of text that is not all ASCII.
func bigText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n-40; i++ {
		fmt.Fprintf(&b, "line %d ✓ ß é\n", i)
	}
	for b.Len() < n {
		b.WriteByte('.')
	}
	return b.String()
}

// TestClipboardLimit checks the size cap both ways.
func TestClipboardLimit(t *testing.T) {
	need(t, "xclip")
	s := newSession(t, &xvfb.Options{Width: 320, Height: 240, NoWM: true}, &Options{ClipboardLimit: 1000})
	ctx := ctxT(t)
	if err := s.b.SetClipboardText(ctx, strings.Repeat("x", 1001)); !errors.Is(err, aci.ErrTooLarge) {
		t.Fatalf("setting 1001 bytes: %v", err)
	}
	if err := s.b.SetClipboardText(ctx, strings.Repeat("x", 1000)); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{2000, 300 << 10} { // direct, then INCR
		s.xclipIn(strings.Repeat("y", n))
		_, err := s.b.ClipboardText(ctx)
		if !errors.Is(err, aci.ErrTooLarge) || !strings.Contains(err.Error(), "1000") {
			t.Fatalf("reading %d bytes: %v", n, err)
		}
	}
}

// TestWindowsAndActivate lists two xterms launched through the backend and
// activates each in turn.
func TestWindowsAndActivate(t *testing.T) {
	need(t, "xterm")
	s := appSession(t)
	ctx := ctxT(t)
	for _, title := range []string{"first window", "second window"} {
		if err := s.b.Launch(ctx, "xterm", []string{"-title", title, "-geometry", "40x10+100+100"}); err != nil {
			t.Fatal(err)
		}
	}
	first, second := s.findWindow("first window"), s.findWindow("second window")
	ws, err := s.b.Windows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.ID != first.ID && w.ID != second.ID {
			continue
		}
		if w.App != "XTerm" || w.PID == 0 || w.BBox.Empty() {
			t.Fatalf("window %+v", w)
		}
		f, err := s.b.Capture(ctx, aci.WindowScope(w.ID))
		if err != nil || f.Source != w.BBox {
			t.Fatalf("capture of %q: source %v, bbox %v, %v", w.Title, f.Source, w.BBox, err)
		}
	}
	for _, w := range []uint64{first.ID, second.ID, first.ID} {
		if err := s.b.Activate(ctx, w); err != nil {
			t.Fatal(err)
		}
		ws, err := s.b.Windows(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ws {
			if x.Active != (x.ID == w) {
				t.Fatalf("after activating %d: %+v", w, x)
			}
		}
	}
	if err := s.b.Activate(ctx, 0x7fffff0); !errors.Is(err, aci.ErrNoSuchWindow) {
		t.Fatalf("unknown window: %v", err)
	}
}

// TestActivateWithoutWM activates windows with no window manager: the
// backend maps, raises and focuses them itself.
func TestActivateWithoutWM(t *testing.T) {
	s := newSession(t, &xvfb.Options{Width: 640, Height: 480, NoWM: true}, nil)
	ctx := ctxT(t)
	a := s.window(windowSpec{r: image.Rect(10, 10, 200, 200), bg: red, title: "a"})
	b := s.window(windowSpec{r: image.Rect(50, 50, 300, 300), bg: blue, title: "b"})
	ws, err := s.b.Windows(ctx)
	if err != nil || len(ws) != 2 {
		t.Fatalf("windows without a WM: %+v %v", ws, err)
	}
	for _, w := range []uint64{uint64(a), uint64(b), uint64(a)} {
		if err := s.b.Activate(ctx, w); err != nil {
			t.Fatal(err)
		}
		active, err := s.b.activeWindow()
		if err != nil || uint64(active) != w {
			t.Fatalf("active %x, want %x (%v)", active, w, err)
		}
		// Raised: the window's colour shows where the two overlap.
		f, err := s.b.Capture(ctx, aci.ScopeActiveWindow)
		if err != nil {
			t.Fatal(err)
		}
		want := red
		if w == uint64(b) {
			want = blue
		}
		if got := f.Image.RGBAAt(100, 100); got != want {
			t.Fatalf("window %x not on top: %v", w, got)
		}
	}
}

// TestLaunch checks that args arrive verbatim with no shell, the app runs
// in a session of its own with the display and bus, and a missing app is
// ErrNoSuchApp.
func TestLaunch(t *testing.T) {
	s := appSession(t)
	ctx := ctxT(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	script := `printf '%s|' "$@" > "$0.tmp"; echo >> "$0.tmp"; echo "$DISPLAY $DBUS_SESSION_BUS_ADDRESS" >> "$0.tmp";` +
		` set -- $(cat /proc/$$/stat); echo "$$ $6" >> "$0.tmp"; mv "$0.tmp" "$0"`
	args := []string{"-c", script, out, "a b", "$HOME", "*", "-x", ""}
	if err := s.b.Launch(ctx, "/bin/sh", args); err != nil {
		t.Fatal(err)
	}
	var got []byte
	waitFor(t, "the launched script", func() bool {
		var err error
		got, err = os.ReadFile(out)
		return err == nil
	})
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 3 || lines[0] != "a b|$HOME|*|-x||" {
		t.Fatalf("args: %q", got)
	}
	if lines[1] != s.srv.Display+" "+s.srv.SessionBus {
		t.Fatalf("environment %q, want %s %s", lines[1], s.srv.Display, s.srv.SessionBus)
	}
	if f := strings.Fields(lines[2]); len(f) != 2 || f[0] != f[1] {
		t.Fatalf("pid and session id %q: not a session leader", lines[2])
	}
	waitFor(t, "the launched script reaped", func() bool { return len(s.b.launched.running()) == 0 })

	for _, app := range []string{"no-such-app-shinken", "/no/such/app", "./relative", ""} {
		if err := s.b.Launch(ctx, app, nil); !errors.Is(err, aci.ErrNoSuchApp) {
			t.Fatalf("Launch(%q): %v", app, err)
		}
	}
	notExec := filepath.Join(dir, "plain")
	os.WriteFile(notExec, []byte("x"), 0o644)
	if err := s.b.Launch(ctx, notExec, nil); !errors.Is(err, aci.ErrNoSuchApp) {
		t.Fatalf("Launch of a non-executable: %v", err)
	}
}
