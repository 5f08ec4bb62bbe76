//go:build linux

package toolset_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"image"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/backend/x11"
	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/internal/xvfb/xvfbtest"
	"shinken.dev/go/shinken/toolset"
)

// xdesk is a private X session served by the x11 backend.
type xdesk struct {
	*desk
	srv *xvfb.Server
}

func newXDesk(t *testing.T) *xdesk {
	t.Helper()
	srv := xvfbtest.Start(t, &xvfb.Options{Width: 1280, Height: 800})
	ctx := t.Context()
	b, err := x11.Open(ctx, &x11.Options{Display: srv.Display, Xauthority: srv.Xauthority, LaunchEnv: []string{xvfb.MarkerVar + "=" + srv.Marker}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() }) // after the runtime's end
	c := schematest.Serve(t, b, nil)
	return &xdesk{desk: &desk{t: t, ctx: ctx, c: c}, srv: srv}
}

// entry starts the fixture with text and returns the centre of its window
// and a function that waits for the text it prints on Return.
func (k *xdesk) entry(text string) (image.Point, func() string) {
	k.t.Helper()
	cmd := k.srv.Command(k.ctx, atspitest.Python(k.t, "gi"), "testdata/entry.py", text)
	cmd.Env = append(cmd.Env, "NO_AT_BRIDGE=1", "GTK_A11Y=none")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		k.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	k.t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	next := func(what string) string {
		select {
		case l, ok := <-lines:
			if !ok {
				<-done
				k.t.Fatalf("the fixture ended before %s: %s", what, stderr.String())
			}
			return l
		case <-time.After(20 * time.Second):
			k.t.Fatalf("the fixture did not print %s", what)
		}
		return ""
	}
	if l := next("ready"); l != "ready" {
		k.t.Fatalf("the fixture printed %q", l)
	}
	// Poll the window list until the window manager has placed and
	// focused the window.
	var box image.Rectangle
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for box.Empty() {
		if time.Now().After(deadline) {
			k.t.Fatal("the fixture's window was never listed as active")
		}
		ws, err := k.c.ListWindows(k.ctx)
		if err != nil {
			k.t.Fatal(err)
		}
		for _, w := range ws {
			// This fixture's window: a window of one that just exited may
			// linger in the list.
			if w.Title == "toolset-entry" && w.PID == cmd.Process.Pid && len(w.BBox) == 4 && w.Active != nil && *w.Active {
				box = image.Rect(w.BBox[0], w.BBox[1], w.BBox[0]+w.BBox[2], w.BBox[1]+w.BBox[3])
			}
		}
		if box.Empty() {
			<-tick.C
		}
	}
	return centre(box).Add(image.Pt(0, 10)), func() string {
		l := next("the entry's text")
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			k.t.Fatal("the fixture did not exit after printing")
		}
		return l
	}
}

// selection copies the focused entry's selection with ctrl+c until the
// clipboard holds a text ok accepts. The copy is repeated: GTK may handle
// keys that follow a click within a few milliseconds before the click.
func (k *xdesk) selection(what string, ok func(string) bool) {
	k.t.Helper()
	if err := k.c.ClipboardSet(k.ctx, ""); err != nil {
		k.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var got string
	for !ok(got) {
		if time.Now().After(deadline) {
			k.t.Fatalf("%s: ctrl+c copies %q", what, got)
		}
		<-tick.C
		if err := k.c.Key(k.ctx, "ctrl+c"); err != nil {
			k.t.Fatal(err)
		}
		var err error
		if got, err = k.c.ClipboardGet(k.ctx); err != nil {
			k.t.Fatal(err)
		}
	}
}

// On a real X server and a GTK entry: a shift-click extends the selection,
// a triple click selects the line (where a double click would select a
// word), a held key repeats.
func TestAnthropicOnX11(t *testing.T) {
	k := newXDesk(t)
	a, err := toolset.NewAnthropic(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func(uses ...toolset.ToolUse) {
		t.Helper()
		if res, err := a.Turn(k.ctx, uses); err != nil {
			t.Fatalf("%v\n%s", err, dump(res))
		}
	}
	m := func(p image.Point) string { return xy(a.Scale().ToModel(p)) }
	text := strings.Repeat("abcde fghij ", 10)

	at, printed := k.entry(text)
	// A click places the caret, a shift-click 200 px on extends the
	// selection to it. (Pointer events only: GTK may handle a key sent a
	// few milliseconds after a click before the click.)
	run(use("1", "left_click", `{"coordinate": `+m(at.Sub(image.Pt(200, 0)))+`}`),
		use("2", "left_click", `{"coordinate": `+m(at)+`, "text": "shift"}`))
	k.selection("a click, then a shift-click 200 px on selects the text between", func(sel string) bool {
		return len(sel) > 12 && len(sel) < len(text)-12 && strings.Contains(text, sel)
	})
	// Return ends the fixture, so the next one's window is the only one.
	run(use("3", "key", `{"text": "Return"}`))
	printed()

	at, printed = k.entry(text)
	run(use("1", "left_click", `{"coordinate": `+m(at.Sub(image.Pt(200, 0)))+`}`),
		use("2", "triple_click", `{"coordinate": `+m(at)+`}`))
	k.selection("a triple click selects the whole line", func(sel string) bool { return sel == text })
	run(use("3", "key", `{"text": "Return"}`))
	printed()

	// Key names in any case, as the SDK admits them: CTRL+A selects all in
	// GTK, where ctrl+shift+a (what an upper-case A used to add) selects
	// none.
	at, printed = k.entry(text)
	run(use("1", "left_click", `{"coordinate": `+m(at)+`}`),
		use("2", "key", `{"text": "CTRL+A"}`))
	k.selection("CTRL+A selects the whole line", func(sel string) bool { return sel == text })
	run(use("3", "key", `{"text": "RETURN"}`))
	printed()

	at, printed = k.entry("")
	run(use("1", "left_click", `{"coordinate": `+m(at)+`}`),
		use("2", "hold_key", `{"text": "x", "duration": 1}`),
		use("3", "key", `{"text": "Return"}`))
	// The X server's autorepeat: 660 ms, then 25 a second.
	if got := printed(); len(got) < 5 || strings.Trim(got, "x") != "" {
		t.Fatalf("holding x for a second typed %q", got)
	}
}

// OpenAI's batches on a real X server: a shift-click through held keys, a
// double click and a click that make a triple click.
func TestOpenAIOnX11(t *testing.T) {
	k := newXDesk(t)
	o, err := toolset.NewOpenAI(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func(actions ...string) {
		t.Helper()
		call := &toolset.ComputerCall{Type: "computer_call", CallID: "c"}
		for _, a := range actions {
			call.Actions = append(call.Actions, json.RawMessage(a))
		}
		if _, err := o.Run(k.ctx, call); err != nil {
			t.Fatal(err)
		}
	}
	pt := func(p image.Point) string { return fmt.Sprintf(`"x": %d, "y": %d`, p.X, p.Y) }
	text := strings.Repeat("abcde fghij ", 10)
	between := func(sel string) bool { return len(sel) > 12 && len(sel) < len(text)-12 && strings.Contains(text, sel) }

	at, printed := k.entry(text)
	run(`{"type": "click", `+pt(at.Sub(image.Pt(200, 0)))+`}`,
		`{"type": "click", "keys": ["SHIFT"], `+pt(at)+`}`)
	k.selection("a click, then a shift-click 200 px on, selects the text between", between)
	run(`{"type": "keypress", "keys": ["ENTER"]}`)
	printed()

	at, printed = k.entry(text)
	run(`{"type": "click", `+pt(at.Sub(image.Pt(200, 0)))+`}`,
		`{"type": "double_click", `+pt(at)+`}`,
		`{"type": "click", `+pt(at)+`}`)
	k.selection("a double click and a click at one point select the whole line", func(sel string) bool { return sel == text })
	run(`{"type": "keypress", "keys": ["ENTER"]}`)
	printed()
}
