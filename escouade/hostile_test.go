package escouade_test

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/plugin"
)

// The hostile-plugin suite: plugins that crash, race, inject and lie, each
// case checking that the Host stays up, the other plugins are unaffected,
// the answer carries the protocol's code, and nothing leaks (TestMain
// checks goroutines and processes after the run).

// TestHostileGuardPastItsBudget: a guard that denies, but crashes on some
// requests, is restarted within its budget, then disabled; while it
// restarts and once it is disabled it counts as ask, so another plugin's
// allow never wins, until the guard is removed.
func TestHostileGuardPastItsBudget(t *testing.T) {
	v := newValidator(t)
	h, j := newHost(t, &escouade.Options{CrashBudget: 1, Backoff: time.Millisecond, Projects: escouade.ProjectMap{
		"p": {Project: escouade.Project{ID: "p", Name: "P"}},
	}})
	ctx := context.Background()
	var lives atomic.Int32
	guard, err := h.StartFunc(ctx, manifest(t, "guard", `,"permissions":{"decide":true}`), "", v.wrap(func(ctx context.Context, in io.Reader, out io.Writer) error {
		if lives.Add(1) > 1 {
			return errors.New("crashed at start")
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		return plugin.Serve(ctx, in, out, plugin.Handlers{
			Decide: func(context.Context, *plugin.Conn, escouade.DecideParams) (escouade.Decision, error) {
				cancel() // crashes on its first request
				return escouade.Decision{Verdict: escouade.Deny, Message: "never"}, nil
			},
		})
	}))
	if err != nil {
		t.Fatal(err)
	}
	connect(t, h, v, "lax", `,"permissions":{"decide":true}`, "", decider(escouade.Decision{Verdict: escouade.Allow}, 0))
	bystander := newSink()
	connect(t, h, v, "bystander", `,"permissions":{"events":["ticket.report"]}`, "", bystander.handlers())

	req := escouade.PermissionRequest{ID: "r1", Kind: "command", Tool: "exec", Input: map[string]any{"command": "rm -rf /"}}
	if d, err := h.Decide(ctx, req, escouade.About{Project: "p"}); err != nil || d.Verdict == escouade.Allow {
		t.Fatalf("while the guard crashes: %+v, %v", d, err)
	}
	j.wait(t, "guard", "disabled")
	waitFor(t, "the guard is disabled", func() bool { return guard.State() == escouade.StateDisabled })
	for i := range 3 {
		d, err := h.Decide(ctx, req, escouade.About{Project: "p"})
		if err != nil || d.Verdict != escouade.Ask || d.Plugin != "guard" {
			t.Fatalf("decision %d with the guard disabled: %+v, %v; want ask from the guard", i, d, err)
		}
	}
	// The others are unaffected.
	h.Fact(ctx, "ticket.report", nil, escouade.About{})
	waitFor(t, "the bystander's fact", func() bool { return len(bystander.names()) == 1 })

	// Removed by a person, the guard no longer counts.
	if err := guard.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if d, err := h.Decide(ctx, req, escouade.About{Project: "p"}); err != nil || d.Verdict != escouade.Allow {
		t.Fatalf("with the guard removed: %+v, %v", d, err)
	}
}
