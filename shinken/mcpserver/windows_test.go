package mcpserver_test

import (
	"context"
	"testing"

	"shinken.dev/go/shinken/aci"
)

// TestWindowTools moves and closes a window of the headless desktop through
// the Go SDK, checks that the operations its window manager lacks are not
// offered. Here they are made of input verbs (activate_window, key, drag),
// which the Authorizer does not judge, as it judges no click; on X11 they
// are execs, refused with them (TestWindowControlX11 in the client
// package).
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
	for name, want := range map[string]bool{"close_window": true, "move_window": true, "minimize_window": false, "maximize_window": false, "resize_window": false} {
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
	e.fails(t, "close_window", map[string]any{"id": 999}, aci.CodeNoSuchWindow)
	e.ok(t, "close_window", map[string]any{"id": id})
	if ws, _ := e.desk.Windows(ctx); len(ws) != 1 || ws[0].ID == id {
		t.Fatalf("after close_window the desktop has %+v", ws)
	}
}
