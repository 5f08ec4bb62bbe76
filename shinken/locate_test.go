package shinken_test

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"sync"
	"testing"

	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// locatingDesk is a backend with a fixed tree that is a Locator, and
// records the pointer events it is sent.
type locatingDesk struct {
	staticTree
	mu        sync.Mutex
	snapshots int
	located   map[string][]string // id -> ancestors it was located with
	where     map[string]image.Rectangle
	fail      error
	events    []shinken.PointerEvent
}

func (d *locatingDesk) Snapshot(ctx context.Context, o shinken.SnapshotOptions) (*shinken.Tree, error) {
	d.mu.Lock()
	d.snapshots++
	d.mu.Unlock()
	return d.staticTree.Snapshot(ctx, o)
}

func (d *locatingDesk) Locate(_ context.Context, id string, ancestors []string) (image.Rectangle, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.located[id] = ancestors
	if d.fail != nil {
		return image.Rectangle{}, fmt.Errorf("%w: %s cannot be scrolled", d.fail, id)
	}
	return d.where[id], nil
}

func (d *locatingDesk) Pointer(_ context.Context, ev shinken.PointerEvent) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events = append(d.events, ev)
	return nil
}

func (d *locatingDesk) Key(context.Context, shinken.KeyEvent) error { return nil }
func (d *locatingDesk) Type(context.Context, string) error          { return nil }

// A click by ref asks the Locator where the element is, with its
// ancestors, instead of taking a snapshot, and aims at the middle of the
// visible part it returns; the Locator's errors name the ref.
func TestClickByRefLocates(t *testing.T) {
	d := &locatingDesk{staticTree: staticTree{page()}, located: map[string][]string{}, where: map[string]image.Rectangle{}}
	c := schematest.Serve(t, d, nil)
	ctx := testCtx(t)
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var edge aci.Element
	for _, e := range obs.Elements {
		if e.Name == "Edge" {
			edge = e
		}
	}
	id := ""
	for _, n := range page().Nodes {
		if n.Name == "Edge" {
			id = n.ID
		}
	}
	// The visible part: the upper half of the button.
	d.where[id] = image.Rect(300, 590, 350, 600)
	if err := c.Click(ctx, aci.Ref(edge.Ref)); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	snapshots, ancestors, events := d.snapshots, d.located[id], d.events
	d.mu.Unlock()
	if snapshots != 1 {
		t.Errorf("%d snapshots for one observe and a click by ref, want 1", snapshots)
	}
	if len(ancestors) != 3 || !strings.HasPrefix(ancestors[0], "document web") || !strings.HasPrefix(ancestors[2], "application") {
		t.Errorf("located with ancestors %q, want the document, the frame and the application", ancestors)
	}
	if len(events) == 0 || events[0].X != 325 || events[0].Y != 595 {
		t.Errorf("pointer events %+v, want the first at (325, 595)", events)
	}

	// Nothing of it visible: refused, naming the ref.
	d.mu.Lock()
	d.where[id] = image.Rectangle{}
	d.mu.Unlock()
	if err := c.Click(ctx, aci.Ref(edge.Ref)); !errors.Is(err, aci.ErrElementNotActionable) || !strings.Contains(err.Error(), edge.Ref) {
		t.Errorf("click with nothing visible: %v", err)
	}
	// A backend error names the ref, never the backend's node ID.
	d.mu.Lock()
	d.fail = aci.ErrElementNotActionable
	d.mu.Unlock()
	err = c.Click(ctx, aci.Ref(edge.Ref))
	if !errors.Is(err, aci.ErrElementNotActionable) || !strings.Contains(err.Error(), edge.Ref+" cannot be scrolled") || strings.Contains(err.Error(), id) {
		t.Errorf("click with a failing Locator: %v", err)
	}
	// A node gone: stale, and the ref evicted.
	d.mu.Lock()
	d.fail = aci.ErrStaleElementRef
	d.mu.Unlock()
	if err := c.Click(ctx, aci.Ref(edge.Ref)); !errors.Is(err, aci.ErrStaleElementRef) {
		t.Errorf("click on a gone node: %v", err)
	}
}
