package shinken_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http/httptest"
	"strings"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// Watch a session: every action reaches the feed's subscribers with its
// outcome and times, without ever waiting for them. This subscriber reads
// only the actions, not the sessions, settles or screenshots.
func ExampleFeed() {
	ctx := context.Background()
	desk := headless.New(nil)
	desk.Launch(ctx, "form", nil)
	feed := shinken.NewFeed()
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: "secret", Feed: feed})
	srv := httptest.NewServer(rt)
	defer srv.Close()
	defer rt.Close()
	sub := feed.Subscribe(0, shinken.EventAction)
	defer sub.Close()

	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &client.DialOptions{Token: "secret"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	c.Key(ctx, "Tab")
	c.Click(ctx, aci.Ref("e99"))

	for range 2 {
		e := <-sub.Events()
		fmt.Printf("%s %s target=%q ok=%v settle=%q error=%q\n", e.Kind, e.Verb, e.Target, e.OK, e.Settle, e.Error)
	}
	// Output:
	// action key target="" ok=true settle="sync" error=""
	// action click target="e99" ok=false settle="" error="stale_element_ref: e99 is gone or was never observed in this session: observe again"
}

// A person takes the input over: the agent's input is refused, the
// person's goes through, until they hand back.
func ExampleRuntime_TakeOver() {
	ctx := context.Background()
	desk := headless.New(nil)
	desk.Launch(ctx, "form", nil)
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: "secret", Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(rt)
	defer srv.Close()
	defer rt.Close()
	agent, err := client.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &client.DialOptions{Token: "secret"})
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()

	tk, err := rt.TakeOver("Ada")
	if err != nil {
		log.Fatal(err)
	}
	err = agent.TypeText(ctx, "agent")
	fmt.Println(errors.Is(err, aci.ErrPermissionDenied), strings.Contains(err.Error(), "held by Ada"))
	tk.Type(ctx, "Ada é✓")
	tk.Release()
	fmt.Println(agent.TypeText(ctx, "!"))
	obs, _ := agent.Observe(ctx, nil)
	name, _ := obs.Find("text", "Name")
	fmt.Println(name.Value)
	// Output:
	// true true
	// <nil>
	// Ada é✓!
}
