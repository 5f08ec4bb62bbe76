package shinken_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"strings"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// An agent's unit test: serve a headless desktop, drive it through the
// Client exactly as over the network, and check what the agent achieved.
func Example() {
	ctx := context.Background()

	// The computer: a pure-software desktop with the form app open.
	desk := headless.New(nil)
	desk.Launch(ctx, "form", nil)
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: "secret"})
	srv := httptest.NewServer(rt)
	defer srv.Close()
	defer rt.Close()

	// The agent.
	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &client.DialOptions{Token: "secret"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	ref := map[string]string{}
	for _, el := range obs.Elements {
		ref[el.Role+" "+el.Name] = el.Ref
	}
	c.SetValue(ctx, aci.Ref(ref["text Name"]), "Ada")
	c.Click(ctx, aci.Ref(ref["push button Submit"]))

	diff, err := c.Observe(ctx, &client.ObserveRequest{Diff: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(diff.TreeText)
	// Output:
	// # diff rev 2 of rev 1
	// ~ e3 text "Name" Value:"Ada" Actions:activate
	// ~ e7 push button (focused) "Submit" Actions:click
	// ~ e8 label "Submitted: Ada <no email>, newsletter: no."
	// focus: e7
}
