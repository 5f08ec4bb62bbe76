package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"strings"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/client"
)

// Act by name: each locator finds its element when it acts, waits until
// the element can take the action, and expectations wait until they hold.
// No observation, no ref, no sleep.
func ExampleLocator() {
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

	if err := c.ByRole("text", "Name").Fill(ctx, "Ada"); err != nil {
		log.Fatal(err)
	}
	if err := c.ByRole("text", "Email").Fill(ctx, "ada@example.com"); err != nil {
		log.Fatal(err)
	}
	if err := c.ByRole("check box", "Subscribe to the newsletter").Check(ctx); err != nil {
		log.Fatal(err)
	}
	if err := c.ByRole("push button", "Submit").Click(ctx); err != nil {
		log.Fatal(err)
	}
	summary := c.ByRole("label", "").Last()
	if err := summary.Expect().ToHaveText(ctx, "Submitted: Ada <ada@example.com>, newsletter: yes."); err != nil {
		log.Fatal(err)
	}
	text, err := summary.Text(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(text)

	// Two elements named "Name": a locator that must name one refuses.
	fmt.Println(c.ByRole("", "Name").Click(ctx))
	// Output:
	// Submitted: Ada <ada@example.com>, newsletter: yes.
	// shinken: click: element "Name": 2 elements match: e2 label "Name"; e3 text "Name" value "Ada"
}
