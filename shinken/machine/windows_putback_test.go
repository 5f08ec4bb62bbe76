package machine_test

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken/machine"
)

// TestWindowPutBack asks the headless desktop for a size its window
// manager cannot give (a frame smaller than its title bar and borders):
// the drag changes the window part way, to its smallest, and fails; the
// window is then given back its bounds, and the error says so.
func TestWindowPutBack(t *testing.T) {
	ctx := t.Context()
	desk := headless.New(nil)
	c := windowRig(t, desk, append(os.Environ(), "DISPLAY="), nil)
	if err := c.LaunchApp(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	wc, err := c.WindowControl(ctx)
	if err != nil {
		t.Fatal(err)
	}
	notes := windowTitled(t, c, "notes")
	placed, err := wc.Move(ctx, notes.ID, 100, 80)
	if err != nil {
		t.Fatal(err)
	}
	_, err = wc.Resize(ctx, notes.ID, 10, 10)
	if !errors.Is(err, machine.ErrWindowUnchanged) || !strings.Contains(err.Error(), "put back") {
		t.Fatalf("a resize the desktop cannot give: %v", err)
	}
	now := windowTitled(t, c, "notes")
	if !slices.Equal(now.BBox, placed.BBox) {
		t.Fatalf("after the failed resize the window is at %v, before %v (%v)", now.BBox, placed.BBox, err)
	}
}
