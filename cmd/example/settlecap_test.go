package main

import (
	"context"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/shinken/aci"
)

// settledLine is the runtime's debug log line for a settle that reached
// the cap.
var settledLine = regexp.MustCompile(`msg=settled .*outcome=cap took=(\S+)`)

// TestSettleCapFlag checks that -settle-cap reaches the runtime: with a
// terminal scrolling over most of the screen (a change too large to be set
// aside as ambient), an input action's settle lasts until the cap, and a
// capped settle lasts at least its cap, which is twice the default here.
func TestSettleCapFlag(t *testing.T) {
	const settleCap = 3 * time.Second
	sess := atspitest.Start(t)
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	sess.Launch(t, "xterm", "-geometry", "200x58+0+0", "-e", "sh", "-c", "i=0; while :; do i=$((i+1)); echo $i; done")

	cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-token", "tok", "-backend", "x11",
		"-log", "debug", "-settle-cap", settleCap.String())
	cmd.Env = append(sess.Env(), "AT_SPI_BUS_ADDRESS="+sess.A11yBus)
	d := startCmd(t, cmd)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := dial(t, ctx, d)
	// The terminal may pause (a loaded machine), letting a settle end
	// quiet: a few moves make sure one of them meets the scrolling.
	for i := range 5 {
		if err := c.Move(ctx, aci.Px(float64(600+i), 400)); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	d.stop(t)

	m := settledLine.FindAllStringSubmatch(d.stderr.String(), -1)
	if m == nil {
		t.Fatalf("no settle reached the cap while a terminal scrolled:\n%s", d.stderr)
	}
	for _, sm := range m {
		took, err := time.ParseDuration(sm[1])
		if err != nil {
			t.Fatal(err)
		}
		if took < settleCap {
			t.Errorf("a settle capped after %v, before the -settle-cap of %v", took, settleCap)
		}
	}
}
