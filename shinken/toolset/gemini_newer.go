package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"slices"
	"time"

	"shinken.dev/go/shinken/aci"
)

// The newer function set of Gemini's computer use (the current models):
// click, double_click, triple_click, middle_click, right_click,
// mouse_down, mouse_up and move at x, y on the 0–999 grid; type (at the
// focus, or after a click at x, y), press_key, key_down, key_up, hotkey,
// wait, take_screenshot, scroll and drag_and_drop (start_x... end_y).

// runNewer runs a function of the newer set.
func (g *Gemini) runNewer(ctx context.Context, name string, a *geminiArgs) error {
	s := g.s
	switch name {
	case "click", "double_click", "triple_click", "middle_click", "right_click":
		p, err := g.at(a.X, a.Y)
		if err != nil {
			return err
		}
		button, n := aci.PointerLeft, 1
		switch name {
		case "double_click":
			n = 2
		case "triple_click":
			n = 3
		case "middle_click":
			button = aci.PointerMiddle
		case "right_click":
			button = aci.PointerRight
		}
		return s.click(ctx, px(p), button, "", n)
	case "mouse_down", "mouse_up":
		p, err := g.at(a.X, a.Y)
		if err != nil {
			return err
		}
		if name == "mouse_up" {
			return s.do(ctx, &aci.Action{Verb: aci.VerbMouseUp, Target: px(p)})
		}
		return s.do(ctx, &aci.Action{Verb: aci.VerbMouseDown, Target: px(p)})
	case "move":
		p, err := g.at(a.X, a.Y)
		if err != nil {
			return err
		}
		return s.do(ctx, &aci.Action{Verb: aci.VerbMove, Target: px(p)})
	case "type":
		if held := heldKeys(ctx); held != "" {
			return fmt.Errorf("toolset: typing text while %s is held would type shortcuts: key_up it first", held)
		}
		if (a.X == nil) != (a.Y == nil) {
			return fmt.Errorf("toolset: type takes both x and y, or neither")
		}
		if a.X != nil {
			p, err := g.at(a.X, a.Y)
			if err != nil {
				return err
			}
			if err := s.click(ctx, px(p), aci.PointerLeft, "", 1); err != nil {
				return err
			}
		}
		if err := s.do(ctx, &aci.Action{Verb: aci.VerbTypeText, Text: a.Text}); err != nil {
			return err
		}
		if a.PressEnter != nil && *a.PressEnter { // false by default in this set
			return s.do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: "Return"})
		}
		return nil
	case "wait":
		d := time.Second
		if a.Seconds != nil {
			d = time.Duration(*a.Seconds * float64(time.Second))
		}
		return s.wait(ctx, d)
	case "press_key":
		k, err := geminiKeys(*a.Key)
		if err != nil {
			return err
		}
		return s.do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: k})
	case "hotkey":
		var keys []string
		if err := json.Unmarshal(a.Keys, &keys); err != nil || len(keys) == 0 {
			return fmt.Errorf("toolset: hotkey keys: want a list of key names such as [\"ctrl\", \"c\"]")
		}
		k, err := openAIKeys(keys)
		if err != nil {
			return err
		}
		return s.do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: k})
	case "key_down", "key_up":
		return g.holdKey(name == "key_down", *a.Key)
	case "take_screenshot":
		return nil // every call is answered with the screenshot after it
	case "scroll":
		p, err := g.at(a.X, a.Y)
		if err != nil {
			return err
		}
		m := 300
		if a.MagnitudePixels != nil {
			m = int(*a.MagnitudePixels)
		}
		return g.scrollKeys(ctx, p, *a.Direction, m, "")
	}
	return fmt.Errorf("toolset: unknown computer use function %q", name)
}

// holdKey holds or releases a modifier for the calls that follow (see
// WithHeldKeys).
func (g *Gemini) holdKey(down bool, key string) error {
	k, err := Modifier(key)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	i := slices.Index(g.down, k)
	switch {
	case down && i < 0:
		g.down = append(g.down, k)
	case !down && i < 0:
		return fmt.Errorf("toolset: key_up %q: it is not held down", key)
	case !down:
		g.down = slices.Delete(g.down, i, i+1)
	}
	return nil
}

// heldCtx is ctx with the modifiers key_down holds.
func (g *Gemini) heldCtx(ctx context.Context) context.Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	return WithHeldKeys(ctx, g.down...)
}

var modifierKeys = []string{"Control_L", "Control_R", "Shift_L", "Shift_R", "Alt_L", "Alt_R", "Super_L", "Super_R", "Meta_L", "Meta_R"}

// scrollKeys is scroll with keys held.
func (g *Gemini) scrollKeys(ctx context.Context, p image.Point, dir string, magnitude int, keys string) error {
	sc := g.Scale()
	var dx, dy float64
	switch dir {
	case "up":
		dy = -float64(magnitude*sc.Screen.Y) / 1000
	case "down":
		dy = float64(magnitude*sc.Screen.Y) / 1000
	case "left":
		dx = -float64(magnitude*sc.Screen.X) / 1000
	case "right":
		dx = float64(magnitude*sc.Screen.X) / 1000
	}
	n := float64(g.opts.PixelsPerNotch)
	return g.s.scroll(ctx, p, dx/n, dy/n, keys)
}
