package headless_test

import (
	"image"
	"testing"

	"shinken.dev/go/shinken"
)

// TestResizeByCorner drags a window's bottom right corner: the frame grows
// and shrinks from its top left corner, its widgets are laid out again,
// and a press inside the content near the corner still reaches the
// content, not the grip.
func TestResizeByCorner(t *testing.T) {
	u := newUI(t, nil, "notes")
	list, _ := u.d.Windows(u.ctx)
	before := list[0].BBox
	drag := func(from, to image.Point) {
		u.pointer(shinken.PointerMove, from)
		u.pointer(shinken.PointerDown, from)
		u.pointer(shinken.PointerMove, to)
		u.pointer(shinken.PointerUp, to)
	}
	corner := before.Max.Sub(image.Pt(1, 1)) // the border's last pixel
	drag(corner, corner.Add(image.Pt(120, 60)))
	got := u.window(list[0].ID).BBox
	if want := (image.Rectangle{before.Min, before.Max.Add(image.Pt(120, 60))}); got != want {
		t.Fatalf("grown to %v, want %v", got, want)
	}
	save := u.find("push button", "Save")
	if save.BBox.Max.X > got.Max.X || save.BBox.Max.Y > got.Max.Y {
		t.Fatalf("the Save button %v lies outside the grown window %v", save.BBox, got)
	}
	drag(got.Max.Sub(image.Pt(1, 1)), got.Max.Sub(image.Pt(201, 101)))
	if shrunk := u.window(list[0].ID).BBox; shrunk.Size() != got.Size().Sub(image.Pt(200, 100)) || shrunk.Min != before.Min {
		t.Fatalf("shrunk to %v from %v", shrunk, got)
	}
	inside := u.window(list[0].ID).BBox.Max.Sub(image.Pt(3, 3))
	drag(inside, inside.Add(image.Pt(50, 50)))
	if after := u.window(list[0].ID).BBox; after.Size() != got.Size().Sub(image.Pt(200, 100)) {
		t.Fatalf("a drag inside the content resized the window to %v", after)
	}
}
