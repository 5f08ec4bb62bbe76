package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/daemon/daemontest"
	"shinken.dev/go/shinken/aci"
)

// TestReplayFinalTree records a short session 20 times (the agent
// observes and clicks, a person takes over and types, hands back, and the
// daemon gets SIGTERM), and replays each recording in the page in
// Chromium with the scrubber at its end: the tree shown is the one the
// session left, with what the person typed, line for line, every time.
func TestReplayFinalTree(t *testing.T) {
	chromiumPath(t)
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	viewer := start(t, bin) // serves the page that replays
	b := startBrowser(t, viewer.page)
	b.waitFor(`inspector.frames > 0`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const runs = 20
	for i := range runs {
		path := filepath.Join(dir, fmt.Sprintf("session-%02d.rec", i))
		d := start(t, bin, "-record", path)
		agent := dial(t, ctx, d)
		obs, err := agent.Observe(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		name, err := obs.Find("text", "Name")
		if err != nil {
			t.Fatal(err)
		}
		if err := agent.Click(ctx, aci.Ref(name.Ref)); err != nil {
			t.Fatal(err)
		}
		typed := fmt.Sprintf("Grace %02d", i)
		p := daemontest.DialPage(t, strings.TrimSuffix(d.aci, "/aci")+"/inspect", "tok")
		p.Send(map[string]any{"type": "take", "by": "Grace"})
		if m, err := p.Next("held"); err != nil || m["held"] != true {
			t.Fatalf("take: %v %v", m, err)
		}
		p.Send(map[string]any{"type": "type", "id": 1, "text": typed})
		if _, err := p.Next("done"); err != nil {
			t.Fatal(err)
		}
		p.Send(map[string]any{"type": "hand_back"})
		if m, err := p.Next("held"); err != nil || m["held"] != false {
			t.Fatalf("hand back: %v %v", m, err)
		}
		p.WS.CloseNow()
		agent.Close()
		d.stop(t)

		b.eval(`inspector.replay = null`, nil)
		b.setFile("#file", path)
		b.waitFor(`inspector.replay && inspector.replay.loaded`)
		var lines []string
		b.eval(`inspector.replayAt(Number(document.getElementById("scrub").max)).then(() =>
			[...document.querySelectorAll("#tree div")].map((d) => d.textContent))`, &lines)
		tree := strings.Join(lines, "\n")
		if !strings.Contains(tree, typed) {
			t.Errorf("run %d: the replay's end shows a tree without %q:\n%s", i, typed, tree)
		}
		if len(lines) < 5 {
			t.Errorf("run %d: the replayed tree lost its line breaks: %d lines", i, len(lines))
		}
	}
	viewer.stop(t)
}
