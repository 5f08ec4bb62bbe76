package main

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/shinken/aci"
)

// settledLine is the runtime's debug log line for an input action's
// settle.
var settledLine = regexp.MustCompile(`msg=settled .*verb=(\S+) outcome=(\S+) took=(\S+)`)

// TestSettleCapFlag checks that -settle-cap reaches the runtime: with the
// active application hung (stopped: its window takes _NET_WM_PING, and its
// pong never comes), an input action's settle lasts until the cap, and a
// capped settle lasts at least its cap, which is twice the default here.
// A hung application holds the settle whatever the machine's load; a
// terminal scrolling does not (a loaded machine pauses it for longer than
// the quiet window).
func TestSettleCapFlag(t *testing.T) {
	const settleCap = 3 * time.Second
	const title = "settle-cap-hung"
	sess := atspitest.Start(t)
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	app := sess.Launch(t, "zenity", "--info", "--title="+title, "--text=this application hangs")

	cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-token", "tok", "-backend", "x11",
		"-log", "debug", "-settle-cap", settleCap.String())
	cmd.Env = append(sess.Env(), "AT_SPI_BUS_ADDRESS="+sess.A11yBus)
	d := startCmd(t, cmd)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := dial(t, ctx, d)
	// Ready: the application's window is on the screen and active, so
	// both of the settle's ping targets are it.
	var win aci.WindowInfo
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for win.ID == 0 {
		ws, err := c.ListWindows(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if strings.Contains(w.Title, title) && w.Active != nil && *w.Active && len(w.BBox) == 4 {
				win = w
			}
		}
		if win.ID == 0 {
			select {
			case <-tick.C:
			case <-ctx.Done():
				t.Fatalf("no active window titled %q: %v", title, ws)
			}
		}
	}
	if err := app.Stop(); err != nil {
		t.Fatal(err)
	}
	x, y := win.BBox[0]+win.BBox[2]/2, win.BBox[1]+win.BBox[3]/2
	if err := c.Move(ctx, aci.Px(float64(x), float64(y))); err != nil {
		t.Fatal(err)
	}
	c.Close()
	d.stop(t)

	var moves int
	for _, sm := range settledLine.FindAllStringSubmatch(d.stderr.String(), -1) {
		if sm[1] != "move" {
			continue
		}
		moves++
		took, err := time.ParseDuration(sm[3])
		if err != nil {
			t.Fatal(err)
		}
		if sm[2] != "cap" {
			t.Errorf("the move over a hung application settled %s after %v, want the cap", sm[2], took)
		} else if took < settleCap {
			t.Errorf("a settle capped after %v, before the -settle-cap of %v", took, settleCap)
		}
	}
	if moves != 1 {
		t.Fatalf("%d settles logged for one move:\n%s", moves, d.stderr)
	}
}
