package headless_test

import (
	"context"
	"image"
	"testing"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// benchDesktop returns a 1920×1080 desktop with both built-in apps open and
// a third app holding box, a check box.
func benchDesktop(b *testing.B) (d *headless.Desktop, box *headless.CheckBox) {
	ctx := context.Background()
	d = headless.New(&headless.Options{Width: 1920, Height: 1080})
	d.Register("bench", func(w *headless.Window) {
		box = w.AddCheckBox("Benchmark me", nil)
	})
	for _, app := range []string{"notes", "form", "bench"} {
		if err := d.Launch(ctx, app, nil); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := d.Capture(ctx, aci.ScopeScreen); err != nil {
		b.Fatal(err)
	}
	return d, box
}

// center returns the screen centre of node id.
func nodeCenter(b *testing.B, d *headless.Desktop, id string) image.Point {
	tree, err := d.Snapshot(context.Background(), shinken.SnapshotOptions{Scope: shinken.TreeDesktop})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range tree.Nodes {
		if n.ID == id {
			r := n.BBox
			return image.Pt((r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2)
		}
	}
	b.Fatalf("no node %s", id)
	return image.Point{}
}

// BenchmarkCaptureUnchanged captures a 1920×1080 screen on which nothing
// changed since the last capture (target: ≤ 1 ms).
func BenchmarkCaptureUnchanged(b *testing.B) {
	ctx := context.Background()
	d, _ := benchDesktop(b)
	for b.Loop() {
		if _, err := d.Capture(ctx, aci.ScopeScreen); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCaptureAfterWidgetChange toggles one check box, then captures
// the 1920×1080 screen (target: ≤ 8 ms).
func BenchmarkCaptureAfterWidgetChange(b *testing.B) {
	ctx := context.Background()
	d, box := benchDesktop(b)
	for b.Loop() {
		box.SetChecked(!box.Checked())
		if _, err := d.Capture(ctx, aci.ScopeScreen); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClick injects a left click (press and release) on a check box
// and reads the state it toggled (target: ≤ 50 µs).
func BenchmarkClick(b *testing.B) {
	ctx := context.Background()
	d, box := benchDesktop(b)
	p := nodeCenter(b, d, box.ID())
	want := box.Checked()
	for b.Loop() {
		want = !want
		if err := d.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerDown, X: p.X, Y: p.Y}); err != nil {
			b.Fatal(err)
		}
		if err := d.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerUp, X: p.X, Y: p.Y}); err != nil {
			b.Fatal(err)
		}
		if box.Checked() != want {
			b.Fatal("the click did not toggle the check box")
		}
	}
}

// BenchmarkTypeAndCapture types a word of accents, a check mark and CJK
// into the notes' text area, then captures the 1920×1080 screen: the cost
// of text through the fallback fonts, glyphs cached.
func BenchmarkTypeAndCapture(b *testing.B) {
	ctx := context.Background()
	d, _ := benchDesktop(b)
	if err := d.Activate(ctx, 1); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := d.Type(ctx, "é✓日本 "); err != nil {
			b.Fatal(err)
		}
		if _, err := d.Capture(ctx, aci.ScopeScreen); err != nil {
			b.Fatal(err)
		}
	}
}
