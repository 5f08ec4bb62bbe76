package toolset_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/toolset"
)

// The calls below are written as Anthropic's SDK types and its reference
// agent write them: tool_use blocks whose input is the member's JSON.

// TestAnthropicKeyNamesAnyCase feeds key names in the cases the SDK's key
// input admits and checks the presses that reached the desktop: a letter's
// case in a combination never adds Shift, names match in any case, and an
// unknown name is refused with nothing pressed.
func TestAnthropicKeyNamesAnyCase(t *testing.T) {
	k, rec := newRecDesk(t, 1280, 800, nil, "form")
	a := newAnthropic(t, k, nil)
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"CTRL+S", []string{"+Control_L", "+s", "-s", "-Control_L"}},
		{"ctrl+A", []string{"+Control_L", "+a", "-a", "-Control_L"}},
		{"ctrl+shift+T", []string{"+Control_L", "+Shift_L", "+t", "-t", "-Shift_L", "-Control_L"}},
		{"Return", []string{"+Return", "-Return"}},
		{"return", []string{"+Return", "-Return"}},
		{"ESCAPE", []string{"+Escape", "-Escape"}},
		{"page_down", []string{"+Page_Down", "-Page_Down"}},
		{"kp_enter", []string{"+KP_Enter", "-KP_Enter"}},
		{"Alt+F4", []string{"+Alt_L", "+F4", "-F4", "-Alt_L"}},
		{"super", []string{"+Super_L", "-Super_L"}},
		{"ctrl++", []string{"+Control_L", "+plus", "-plus", "-Control_L"}},
		{"A", []string{"+A", "-A"}}, // a lone character is typed as itself
	} {
		rec.take()
		turn(t, k, a, use("k", "key", `{"text": `+quote(tt.text)+`}`))
		if got := rec.take(); !slices.Equal(got, tt.want) {
			t.Errorf("key %q reached the desktop as %v, want %v", tt.text, got, tt.want)
		}
	}
	for _, bad := range []string{"ctrl+bogus", "Hyper_X", "ctrl+"} {
		rec.take()
		if r, err := a.Call(k.ctx, "key", json.RawMessage(`{"text": `+quote(bad)+`}`)); err == nil || !r.IsError {
			t.Errorf("key %q was accepted", bad)
		}
		if got := rec.take(); len(got) > 0 {
			t.Errorf("key %q pressed %v", bad, got)
		}
	}
	// Held modifiers of a click take the same names.
	rec.take()
	turn(t, k, a, use("c", "left_click", `{"coordinate": [10, 10], "text": "SHIFT"}`))
	if got := rec.take(); len(got) < 4 || got[0] != "+Shift_L" || got[len(got)-1] != "-Shift_L" {
		t.Errorf("shift-click reached the desktop as %v", got)
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestAnthropicRepeatAndCoordinates checks what the SDK's types accept
// and the toolset used to refuse: a repeat above 100 (sent in parts the
// runtime takes) and fractional coordinates (rounded).
func TestAnthropicRepeatAndCoordinates(t *testing.T) {
	k, rec := newRecDesk(t, 1280, 800, nil, "form")
	a := newAnthropic(t, k, nil)
	rec.take()
	turn(t, k, a, use("k", "key", `{"text": "Tab", "repeat": 300}`))
	if got := rec.take(); len(got) != 600 || got[598] != "+Tab" {
		t.Fatalf("repeat 300 pressed %d keys", len(got))
	}
	turn(t, k, a, use("m", "mouse_move", `{"coordinate": [100.4, 199.6]}`))
	res := turn(t, k, a, use("c", "cursor_position", `{}`))
	if got := res[0].Content[0].Text; got != "X=100,Y=200" {
		t.Fatalf("after a move to [100.4, 199.6], cursor_position says %q", got)
	}
}

// TestAnthropicWaitsAsLongAsAsked runs waits and holds longer than the
// runtime's MaxWait: a wait is as long as asked (in parts the runtime
// takes), a hold the runtime cannot make is an error, never OK.
func TestAnthropicWaitsAsLongAsAsked(t *testing.T) {
	k, rec := newRecDesk(t, 1280, 800, &shinken.RuntimeOptions{MaxWait: 40 * time.Millisecond}, "form")
	a := newAnthropic(t, k, nil)
	start := time.Now()
	turn(t, k, a, use("w", "wait", `{"duration": 0.2}`))
	if got := time.Since(start); got < 200*time.Millisecond {
		t.Fatalf("wait 0.2 answered OK after %s (the runtime's MaxWait is 40 ms)", got)
	}
	rec.take()
	r, err := a.Call(k.ctx, "hold_key", json.RawMessage(`{"text": "shift", "duration": 0.2}`))
	if err == nil || !r.IsError || !strings.Contains(r.Text, "MaxWait") {
		t.Fatalf("a hold of 0.2 s under a 40 ms MaxWait: %v %+v", err, r)
	}
	// The runtime refuses a hold past its MaxWait before it presses
	// anything (one that cut the hold short would be measured, and later
	// longer holds refused here).
	if got := rec.take(); len(got) > 0 {
		t.Fatalf("a refused hold pressed %v", got)
	}
	turn(t, k, a, use("h", "hold_key", `{"text": "shift", "duration": 0.01}`))
}

// TestAnthropicTurnKeepsOtherToolsetNames answers a turn that mixes this
// toolset's calls with a custom tool's: each result carries its use's
// toolset_name, or none.
func TestAnthropicTurnKeepsOtherToolsetNames(t *testing.T) {
	k := newDesk(t, 1280, 800, "form")
	a := newAnthropic(t, k, nil)
	res, err := a.Turn(k.ctx, []toolset.ToolUse{
		{Type: "tool_use", ID: "1", Name: "get_weather", Input: json.RawMessage(`{"city": "Paris"}`)},
	})
	if err == nil || len(res) != 1 || res[0].ToolsetName != "" || !res[0].IsError {
		t.Fatalf("a custom tool's use: %v %s", err, dump(res))
	}
	res, _ = a.Turn(k.ctx, []toolset.ToolUse{{Type: "tool_use", ID: "2", Name: "read", ToolsetName: "files", Input: json.RawMessage(`{}`)}})
	if res[0].ToolsetName != "files" {
		t.Fatalf("another toolset's use answered as %q", res[0].ToolsetName)
	}
}
