package main

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/daemon/daemontest"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// TestTakeoverX11: on a real X session, a person's takeover through
// /inspect clicks zenity's entry, types Unicode and presses Return; zenity
// prints what was typed. The agent is refused meanwhile.
func TestTakeoverX11(t *testing.T) {
	sess := atspitest.Start(t)
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	zenity := sess.Launch(t, "zenity", "--entry", "--title", "Shinken", "--text", "Your name?")

	cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-token", "tok", "-backend", "x11")
	cmd.Env = append(sess.Env(), "AT_SPI_BUS_ADDRESS="+sess.A11yBus)
	d := startCmd(t, cmd)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := dial(t, ctx, d)

	var entry *aci.Element
	deadline := time.Now().Add(20 * time.Second)
	for entry == nil {
		if time.Now().After(deadline) {
			t.Fatal("zenity's entry never showed in the tree")
		}
		obs, err := c.Observe(ctx, &client.ObserveRequest{Settle: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		for _, el := range obs.Elements {
			if el.Role == "text" && len(el.BBox) == 4 && el.BBox[2] > 0 {
				entry = &el
				break
			}
		}
	}

	p := daemontest.DialPage(t, strings.TrimSuffix(d.aci, "/aci")+"/inspect", "tok")
	if _, err := p.Next("welcome"); err != nil {
		t.Fatal(err)
	}
	p.Send(map[string]any{"type": "take", "by": "Grace"})
	if m, err := p.Next("held"); err != nil || m["held"] != true {
		t.Fatalf("take: %v %v", m, err)
	}
	if err := c.TypeText(ctx, "agent"); !errors.Is(err, aci.ErrPermissionDenied) {
		t.Fatalf("the agent typed while Grace held the input: %v", err)
	}
	x, y := entry.BBox[0]+entry.BBox[2]/2, entry.BBox[1]+entry.BBox[3]/2
	id := 0
	do := func(m map[string]any) {
		t.Helper()
		id++
		m["id"] = id
		p.Send(m)
		if r, err := p.Next("done"); err != nil || r["id"] != float64(id) {
			t.Fatalf("%v: %v %v", m, r, err)
		}
	}
	for _, kind := range []string{"move", "down", "up"} {
		do(map[string]any{"type": "pointer", "kind": kind, "x": x, "y": y, "button": "left"})
	}
	do(map[string]any{"type": "keys", "keys": "ctrl+a"})
	do(map[string]any{"type": "keys", "keys": "BackSpace"})
	do(map[string]any{"type": "type", "text": "Grace é✓日本"})
	do(map[string]any{"type": "keys", "keys": "Return"})
	select {
	case <-zenity.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("zenity did not exit after the person's Return")
	}
	if got := strings.TrimSpace(zenity.Stdout()); got != "Grace é✓日本" {
		t.Fatalf("zenity printed %q", got)
	}
	p.Send(map[string]any{"type": "hand_back"})
	if m, err := p.Next("held"); err != nil || m["held"] != false {
		t.Fatalf("hand back: %v %v", m, err)
	}
	p.WS.CloseNow()
	c.Close()
	d.stop(t)
}
