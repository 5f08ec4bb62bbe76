package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"strings"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// Act, then wait for what the UI does in its own time: here the form's
// summary line, which a click on Submit rewrites.
func ExampleClient_WaitFor() {
	ctx := context.Background()
	desk := headless.New(nil)
	desk.Launch(ctx, "form", nil)
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: "secret"})
	srv := httptest.NewServer(rt)
	defer srv.Close()
	defer rt.Close()
	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &client.DialOptions{Token: "secret"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	name, err := c.WaitFor(ctx, client.WaitForRequest{Role: "text", Name: "Name", Until: client.WaitAppears})
	if err != nil {
		log.Fatal(err)
	}
	submit, err := c.WaitFor(ctx, client.WaitForRequest{Role: "push button", Name: "Submit"})
	if err != nil {
		log.Fatal(err)
	}
	c.SetValue(ctx, aci.Ref(name.Ref), "Ada")
	c.Click(ctx, aci.Ref(submit.Ref))
	done, err := c.WaitFor(ctx, client.WaitForRequest{Role: "label", Name: "Submitted", Timeout: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(done.Name)
	// Output:
	// Submitted: Ada <no email>, newsletter: no.
}
