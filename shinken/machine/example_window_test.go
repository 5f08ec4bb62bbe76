package machine_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"strings"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/machine"
)

// Window geometry on the headless desktop, which runs no commands: its
// window manager closes a window on alt+F4, moves one by its title bar and
// resizes one by its frame's corner, so those are the operations offered,
// and each is read back.
func ExampleTools_WindowControl() {
	ctx := context.Background()
	desk := headless.New(nil)
	desk.Launch(ctx, "notes", nil)
	desk.Launch(ctx, "form", nil)
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: "t"})
	srv := httptest.NewServer(rt)
	defer srv.Close()
	defer rt.Close()
	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &client.DialOptions{Token: "t"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	wc, err := machine.New(c, nil).WindowControl(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(wc.Ops())
	wins, _ := c.ListWindows(ctx)
	moved, err := wc.Move(ctx, wins[0].ID, 100, 60)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(moved.Title, moved.BBox[:2])
	sized, err := wc.Resize(ctx, wins[0].ID, 500, 360)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sized.BBox)
	if err := wc.Close(ctx, wins[0].ID); err != nil {
		log.Fatal(err)
	}
	left, _ := c.ListWindows(ctx)
	fmt.Println(len(left), left[0].Title)
	// Output:
	// [close move resize]
	// Notes [100 60]
	// [100 60 500 360]
	// 1 Form
}
