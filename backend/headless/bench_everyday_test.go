package headless_test

import (
	"context"
	"testing"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// settingsDesktop returns a 1920×1080 desktop with the built-in apps open,
// settings last (active), captured once.
func settingsDesktop(b *testing.B) *headless.Desktop {
	ctx := context.Background()
	d := headless.New(&headless.Options{Width: 1920, Height: 1080})
	for _, app := range []string{"notes", "form", "settings"} {
		if err := d.Launch(ctx, app, nil); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := d.Capture(ctx, aci.ScopeScreen); err != nil {
		b.Fatal(err)
	}
	return d
}

// BenchmarkSnapshotSettings snapshots the whole desktop's tree with the
// settings app open (74 nodes).
func BenchmarkSnapshotSettings(b *testing.B) {
	ctx := context.Background()
	d := settingsDesktop(b)
	for b.Loop() {
		if _, err := d.Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeDesktop}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkComboOpenClose opens the settings app's combo box list with a
// click, captures the screen, closes it with Escape and captures again.
func BenchmarkComboOpenClose(b *testing.B) {
	ctx := context.Background()
	d := settingsDesktop(b)
	p := nodeCenter(b, d, findID(b, d, "combo box", "Language"))
	for b.Loop() {
		for _, kind := range []shinken.PointerKind{shinken.PointerDown, shinken.PointerUp} {
			if err := d.Pointer(ctx, shinken.PointerEvent{Kind: kind, X: p.X, Y: p.Y}); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := d.Capture(ctx, aci.ScopeScreen); err != nil {
			b.Fatal(err)
		}
		if err := d.Key(ctx, shinken.KeyEvent{Key: "Escape", Down: true}); err != nil {
			b.Fatal(err)
		}
		if _, err := d.Capture(ctx, aci.ScopeScreen); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScrollAndCapture scrolls the settings app's permissions a notch
// down or up, then captures the screen.
func BenchmarkScrollAndCapture(b *testing.B) {
	ctx := context.Background()
	d := settingsDesktop(b)
	p := nodeCenter(b, d, findID(b, d, "scroll pane", "Permissions"))
	dy := 1
	for b.Loop() {
		dy = -dy
		if err := d.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerScroll, X: p.X, Y: p.Y, DY: dy}); err != nil {
			b.Fatal(err)
		}
		if _, err := d.Capture(ctx, aci.ScopeScreen); err != nil {
			b.Fatal(err)
		}
	}
}

// findID returns the ID of the first node with role and name.
func findID(b *testing.B, d *headless.Desktop, role, name string) string {
	tree, err := d.Snapshot(context.Background(), shinken.SnapshotOptions{Scope: shinken.TreeDesktop})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range tree.Nodes {
		if n.Role == role && n.Name == name {
			return n.ID
		}
	}
	b.Fatalf("no %s %q", role, name)
	return ""
}
