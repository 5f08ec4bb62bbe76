package toolset_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"shinken.dev/go/shinken/toolset"
)

// The calls below are computer_call items as OpenAI's SDK types and its
// sample app write them, decoded from JSON.

func decodeCall(t *testing.T, s string) *toolset.ComputerCall {
	t.Helper()
	var c toolset.ComputerCall
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// TestOpenAISingleAction runs a computer_use_preview call, which carries
// one "action" rather than "actions": the click reaches the desktop.
func TestOpenAISingleAction(t *testing.T) {
	k, rec := newRecDesk(t, 1280, 800, nil, "form")
	o, err := toolset.NewOpenAI(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	box := centre(rect(k.element("check box", "Subscribe to the newsletter")))
	rec.take()
	call := decodeCall(t, fmt.Sprintf(`{"type": "computer_call", "id": "cu_1", "call_id": "call_1",
		"action": {"type": "click", "button": "left", "x": %d, "y": %d},
		"pending_safety_checks": [], "status": "completed"}`, box.X, box.Y))
	out, err := o.Run(k.ctx, call)
	if err != nil || out.CallID != "call_1" {
		t.Fatalf("run: %v %+v", err, out)
	}
	want := []string{fmt.Sprintf("down:0@%d,%d", box.X, box.Y), fmt.Sprintf("up:0@%d,%d", box.X, box.Y)}
	if got := rec.take(); !slices.Equal(filter(got, "down:", "up:"), want) {
		t.Fatalf("the click reached the desktop as %v", got)
	}
	if el := k.element("check box", "Subscribe to the newsletter"); !slices.Contains(el.States, "checked") {
		t.Fatal("the box is not checked")
	}
	// Neither form, or both, is an error, and nothing runs.
	for _, bad := range []string{
		`{"type": "computer_call", "call_id": "c"}`,
		`{"type": "computer_call", "call_id": "c", "action": {"type": "type", "text": "x"}, "actions": [{"type": "type", "text": "y"}]}`,
	} {
		if _, err := o.Run(k.ctx, decodeCall(t, bad)); err == nil {
			t.Errorf("%s ran", bad)
		}
	}
	if got := rec.take(); len(got) > 0 {
		t.Fatalf("a refused call reached the desktop: %v", got)
	}
}

func filter(l []string, prefixes ...string) []string {
	var out []string
	for _, s := range l {
		for _, p := range prefixes {
			if strings.HasPrefix(s, p) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// TestOpenAIMoveWithKeys runs a move with keys held, as the SDK's
// ActionMove defines it, and a fractional coordinate.
func TestOpenAIMoveWithKeys(t *testing.T) {
	k, rec := newRecDesk(t, 1280, 800, nil, "form")
	o, err := toolset.NewOpenAI(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec.take()
	if _, err := o.Run(k.ctx, computerCall(`{"type": "move", "x": 100.6, "y": 200, "keys": ["SHIFT", "CTRL"]}`)); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); !slices.Equal(got, []string{"+Shift_L", "+Control_L", "move@101,200", "-Control_L", "-Shift_L"}) {
		t.Fatalf("the move reached the desktop as %v", got)
	}
}

// TestOpenAIUnreadableActionSaysNoneRan checks the error of a batch whose
// second action cannot be read: the first did not run either, and the
// error says so.
func TestOpenAIUnreadableActionSaysNoneRan(t *testing.T) {
	k, rec := newRecDesk(t, 1280, 800, nil, "form")
	o, err := toolset.NewOpenAI(k.ctx, k.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec.take()
	_, err = o.Run(k.ctx, computerCall(`{"type": "keypress", "keys": ["TAB"]}`, `{"type": "click", "x": 1}`, `{"type": "wait"}`))
	var be *toolset.BatchError
	if !errors.As(err, &be) || be.Ran != 0 || !strings.Contains(err.Error(), "none of the batch's 3 actions ran") {
		t.Fatalf("error %v", err)
	}
	if got := rec.take(); len(got) > 0 {
		t.Fatalf("an action of the batch ran: %v", got)
	}
	_, err = o.Run(k.ctx, computerCall(`{"type": "keypress", "keys": ["TAB"]}`, `{"type": "click", "x": 99999, "y": 1}`, `{"type": "wait"}`))
	if !errors.As(err, &be) || be.Ran != 1 || !strings.Contains(err.Error(), "failed after 1 ran; 1 after it not executed") {
		t.Fatalf("error %v", err)
	}
}

// TestLongScrollsAreWhole scrolls further than the runtime takes in one
// action (it clamps at 1000 notches): every notch reaches the desktop.
func TestLongScrollsAreWhole(t *testing.T) {
	k, rec := newRecDesk(t, 1280, 800, nil, "notes")
	o, err := toolset.NewOpenAI(k.ctx, k.c, &toolset.OpenAIOptions{PixelsPerNotch: 1})
	if err != nil {
		t.Fatal(err)
	}
	rec.take()
	if _, err := o.Run(k.ctx, computerCall(`{"type": "scroll", "x": 100, "y": 100, "scroll_x": 0, "scroll_y": 2500}`)); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, e := range rec.take() {
		var dx, dy, x, y int
		if _, err := fmt.Sscanf(e, "scroll:%d,%d@%d,%d", &dx, &dy, &x, &y); err == nil {
			total += dy
		}
	}
	if total != 2500 {
		t.Fatalf("a 2500-notch scroll scrolled %d", total)
	}
}
