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

// A screenshot, then the same one again: the second costs no encoding,
// because the client sends the frame hash it holds and the runtime answers
// not_modified.
func ExampleClient_Screenshot() {
	ctx := context.Background()
	desk := headless.New(nil)
	desk.Launch(ctx, "notes", nil)
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: "t"})
	srv := httptest.NewServer(rt)
	defer srv.Close()
	defer rt.Close()
	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &client.DialOptions{Token: "t"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	first, _ := c.Screenshot(ctx, &client.ScreenshotRequest{MaxLongEdge: 640})
	second, _ := c.Screenshot(ctx, &client.ScreenshotRequest{MaxLongEdge: 640})
	fmt.Println(first.Width, first.Height, first.Display.SourceRect.W, first.Cached)
	fmt.Println(second.Cached, second.Hash == first.Hash)
	// Output:
	// 640 400 1280 false
	// true true
}
