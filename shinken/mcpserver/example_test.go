package mcpserver_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/mcpserver"
)

// Serve a desktop over MCP and drive it as an MCP client would: observe
// the tree, fill the form by ref, submit it and wait for the answer. Here
// both ends are in memory; a program would Run the server on
// &mcp.StdioTransport{} or mount Handler on its HTTP server.
func Example() {
	ctx := context.Background()

	// The computer: a headless desktop behind an ACI runtime.
	desk := headless.New(nil)
	desk.Launch(ctx, "form", nil)
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: "secret"})
	hs := httptest.NewServer(rt)
	defer hs.Close()
	defer rt.Close()

	// The MCP server, over one ACI session.
	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), &client.DialOptions{Token: "secret"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	srv, err := mcpserver.New(ctx, c, nil)
	if err != nil {
		log.Fatal(err)
	}

	// An MCP client: any will do; this one is the Go SDK's.
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.MCP().Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	call := func(name string, args map[string]any) string {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			log.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}

	fmt.Println(call("observe", nil))
	fmt.Println(call("set_value", map[string]any{"ref": "e3", "value": "Ada"}))
	fmt.Println(call("click_element", map[string]any{"ref": "e7"}))
	fmt.Println(call("wait_for", map[string]any{"role": "label", "name": "submitted"}))
	fmt.Println(call("click_element", map[string]any{"ref": "e99"}))
	// Output:
	// # app "form" window "Form" rev 1
	// e1 frame (active) "Form" Actions:activate
	//   e3 text (focused) "Name" Actions:activate
	//   e5 text "Email" Actions:activate
	//   e6 check box "Subscribe to the newsletter" Actions:toggle
	//   e7 push button "Submit" Actions:click
	//   e8 label "Fill in the form and press Submit."
	// focus: e3
	// set e3
	// clicked e7
	// e8 label "Submitted: Ada <no email>, newsletter: no." (already)
	// stale_element_ref: e99 is gone or was never observed in this session: observe again
}

// Serve MCP over streamable HTTP behind a bearer token, as a daemon mounts
// it beside its ACI endpoint, and call it from an HTTP MCP client.
func ExampleServer_Handler() {
	ctx := context.Background()
	desk := headless.New(nil)
	desk.Launch(ctx, "form", nil)
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: "secret"})
	mux := http.NewServeMux()
	mux.Handle("/aci", rt)
	hs := httptest.NewServer(mux)
	defer hs.Close()
	defer rt.Close()

	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"/aci", &client.DialOptions{Token: "secret"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	srv, err := mcpserver.New(ctx, c, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	mux.Handle("/mcp", srv.Handler("secret"))

	// Without the token: 401, and no tool is reached.
	resp, err := http.Post(hs.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("no token:", resp.StatusCode)

	// With it.
	hc := &http.Client{Transport: bearer{"secret", http.DefaultTransport}}
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "list_windows", Arguments: map[string]any{}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// no token: 401
	// 1 "Form" app=form (active)
}

// bearer adds an Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// Keep an MCP session across a rotation of the runtime's token: the
// Server's Dial reads the token in force, and the program that rotates it
// tells the Server to reconnect, so the next call, an input one included,
// runs on a session opened with the new token.
func ExampleServer_Reconnect() {
	ctx := context.Background()
	desk := headless.New(nil)
	desk.Launch(ctx, "form", nil)
	var mu sync.Mutex
	token := "first"
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: token})
	hs := httptest.NewServer(rt)
	defer hs.Close()
	defer rt.Close()
	dial := func(ctx context.Context) (*client.Client, error) {
		mu.Lock()
		t := token
		mu.Unlock()
		return client.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), &client.DialOptions{Token: t})
	}
	c, err := dial(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	srv, err := mcpserver.New(ctx, c, &mcpserver.Options{Dial: dial})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.MCP().Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()

	// The rotation closes every session opened with the old token.
	mu.Lock()
	token = "second"
	mu.Unlock()
	rt.SetToken("second")
	if err := srv.Reconnect(ctx); err != nil {
		log.Fatal(err)
	}
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "left_click", Arguments: map[string]any{"coordinate": []int{100, 100}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// false OK
}
