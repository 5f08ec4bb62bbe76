package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/backend/x11"
	"shinken.dev/go/internal/citest"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/internal/xvfb/xvfbtest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/mcpserver"
)

// TestWindowTools moves, resizes and closes a window of the headless
// desktop through the Go SDK, and checks that the operations its window
// manager lacks are not offered. Here they are made of input verbs
// (activate_window, key, drag), which the Authorizer does not judge, as it
// judges no click; on X11 they are execs, refused with them.
func TestWindowTools(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	res, err := e.sess.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	offered := map[string]bool{}
	for _, tool := range res.Tools {
		offered[tool.Name] = true
	}
	for name, want := range map[string]bool{"close_window": true, "move_window": true, "minimize_window": false, "maximize_window": false, "resize_window": true} {
		if offered[name] != want {
			t.Errorf("%s offered: %v, want %v", name, offered[name], want)
		}
	}
	var list struct {
		Windows []struct {
			ID    uint64 `json:"id"`
			Title string `json:"title"`
			BBox  []int  `json:"bbox"`
		} `json:"windows"`
	}
	structured(t, e.call(t, "list_windows", map[string]any{}), &list)
	if len(list.Windows) != 2 {
		t.Fatalf("windows %+v", list.Windows)
	}
	id := list.Windows[0].ID
	var moved struct {
		ID   uint64 `json:"id"`
		BBox []int  `json:"bbox"`
	}
	structured(t, e.call(t, "move_window", map[string]any{"id": id, "x": 300, "y": 200}), &moved)
	if moved.ID != id || len(moved.BBox) != 4 || moved.BBox[0] != 300 || moved.BBox[1] != 200 {
		t.Fatalf("moved %+v", moved)
	}
	if ws, _ := e.desk.Windows(ctx); ws[0].BBox.Min.X != 300 || ws[0].BBox.Min.Y != 200 {
		t.Fatalf("the desktop has the window at %v", ws[0].BBox)
	}
	e.fails(t, "move_window", map[string]any{"id": id, "x": 3000, "y": 200}, aci.CodeInvalidAction)
	structured(t, e.call(t, "resize_window", map[string]any{"id": id, "width": 500, "height": 380}), &moved)
	if moved.BBox[0] != 300 || moved.BBox[2] != 500 || moved.BBox[3] != 380 {
		t.Fatalf("resized %+v", moved)
	}
	e.fails(t, "resize_window", map[string]any{"id": id, "width": 0, "height": 380}, aci.CodeInvalidAction)
	e.fails(t, "close_window", map[string]any{"id": 999}, aci.CodeNoSuchWindow)
	e.ok(t, "close_window", map[string]any{"id": id})
	if ws, _ := e.desk.Windows(ctx); len(ws) != 1 || ws[0].ID == id {
		t.Fatalf("after close_window the desktop has %+v", ws)
	}
}

// TestWindowToolsX11 offers all five window tools on an X11 desktop under
// openbox with wmctrl, xdotool and xprop, and uses each on an xterm
// through the Go SDK; a refused exec refuses them.
func TestWindowToolsX11(t *testing.T) {
	srv := xvfbtest.Start(t, nil)
	citest.NeedPrograms(t, "wmctrl", "xdotool", "xprop", "xterm")
	ctx := t.Context()
	b, err := x11.Open(ctx, &x11.Options{Display: srv.Display, Xauthority: srv.Xauthority, LaunchEnv: []string{xvfb.MarkerVar + "=" + srv.Marker}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	e := &env{}
	env := append(os.Environ(), "DISPLAY="+srv.Display, "XAUTHORITY="+srv.Xauthority, xvfb.MarkerVar+"="+srv.Marker)
	e.rt = shinken.NewRuntime(b, &shinken.RuntimeOptions{Token: token, Executor: osexec.New(&osexec.Options{Env: env}), Authorizer: e})
	hs := httptest.NewServer(e.rt)
	proxy := schematest.NewProxy(t, "ws"+strings.TrimPrefix(hs.URL, "http"))
	t.Cleanup(func() {
		e.rt.Close()
		hs.Close()
	})
	c, err := client.Dial(ctx, proxy.URL, &client.DialOptions{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.LaunchApp(ctx, "xterm", "-title", "mcp-geometry"); err != nil {
		t.Fatal(err)
	}
	var id uint64
	for id == 0 { // the xterm maps its window in its own time
		ws, err := c.ListWindows(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if w.Title == "mcp-geometry" {
				id = w.ID
			}
		}
	}
	e.srv, err = mcpserver.New(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	var done func()
	e.sess, done = connectInMemory(t, ctx, e.srv, nil)
	t.Cleanup(done)

	res, err := e.sess.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	offered := map[string]bool{}
	for _, tool := range res.Tools {
		offered[tool.Name] = true
	}
	for _, name := range []string{"close_window", "minimize_window", "maximize_window", "move_window", "resize_window"} {
		if !offered[name] {
			t.Errorf("%s is not offered", name)
		}
	}
	var w struct {
		BBox []int `json:"bbox"`
	}
	structured(t, e.call(t, "move_window", map[string]any{"id": id, "x": 50, "y": 40}), &w)
	if w.BBox[0] != 50 || w.BBox[1] != 40 {
		t.Fatalf("moved to %v", w.BBox)
	}
	structured(t, e.call(t, "resize_window", map[string]any{"id": id, "width": 500, "height": 300}), &w)
	if w.BBox[2] > 500 || w.BBox[2] < 450 || w.BBox[3] > 300 || w.BBox[3] < 250 {
		t.Fatalf("resized to %v", w.BBox)
	}
	structured(t, e.call(t, "maximize_window", map[string]any{"id": id}), &w)
	if w.BBox[2] <= 500 || w.BBox[3] <= 300 {
		t.Fatalf("maximised to %v", w.BBox)
	}
	e.ok(t, "minimize_window", map[string]any{"id": id})
	e.fails(t, "close_window", map[string]any{"id": 0x7fffff01}, aci.CodeNoSuchWindow)
	e.denyAll = true
	e.fails(t, "close_window", map[string]any{"id": id}, aci.CodePermissionDenied)
	e.denyAll = false
	e.ok(t, "close_window", map[string]any{"id": id})
}
