package client_test

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

// The agent's main path, as the README shows it: dial, observe, find
// elements by role and name, act on them by ref, and observe again as a
// diff. Here the runtime serves the headless desktop's form; against a
// daemon, Dial its URL instead.
func Example() {
	ctx := context.Background()
	desk := headless.New(nil)
	if err := desk.Launch(ctx, "form", nil); err != nil {
		log.Fatal(err)
	}
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: "secret"})
	srv := httptest.NewServer(rt)
	defer srv.Close()
	defer rt.Close()

	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &client.DialOptions{Token: "secret"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	name, err := obs.Find("text", "Name")
	if err != nil {
		log.Fatal(err)
	}
	submit, err := obs.Find("push button", "Submit")
	if err != nil {
		log.Fatal(err)
	}
	if err := c.SetValue(ctx, aci.Ref(name.Ref), "Ada Lovelace"); err != nil {
		log.Fatal(err)
	}
	if err := c.Click(ctx, aci.Ref(submit.Ref)); err != nil {
		log.Fatal(err)
	}
	diff, err := c.Observe(ctx, &client.ObserveRequest{Diff: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(diff.TreeText)

	// A missing element is an error, not a nil to dereference.
	_, err = obs.Find("push button", "Cancel")
	fmt.Println(err)
	// Output:
	// # diff rev 2 of rev 1
	// ~ e3 text "Name" Value:"Ada Lovelace" Actions:activate
	// ~ e7 push button (focused) "Submit" Actions:click
	// ~ e8 label "Submitted: Ada Lovelace <no email>, newsletter: no."
	// focus: e7
	// aci: no element matches: role "push button", name "Cancel"
}
