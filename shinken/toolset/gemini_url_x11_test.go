//go:build linux

package toolset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"shinken.dev/go/backend/x11"
	"shinken.dev/go/backend/x11/atspi"
	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/toolset"
)

// TestGeminiURLOnX11Chromium and TestGeminiURLOnX11Firefox run Gemini's
// function calls, as the SDK writes them, against a browser on a private X
// session with its accessibility tree: each function response carries the
// URL of the page the active window shows, with no GeminiOptions.URL:
// after an anchor, a history.pushState and navigate to a new page, the
// new URL; with a window that is not a browser's active, none.
func TestGeminiURLOnX11Chromium(t *testing.T) { testGeminiURLOnX11(t, "chromium") }
func TestGeminiURLOnX11Firefox(t *testing.T)  { testGeminiURLOnX11(t, "firefox-esr") }

func testGeminiURLOnX11(t *testing.T, browser string) {
	bin, err := exec.LookPath(browser)
	if err != nil {
		atspitest.Missing(t, browser)
	}
	sess := atspitest.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	xb, err := x11.Open(ctx, &x11.Options{
		Display: sess.Display, Xauthority: sess.Xauthority, SessionBus: sess.SessionBus, LaunchEnv: sess.Env(),
	})
	if err != nil {
		t.Fatal(err)
	}
	b := xb.WithAccessibility(&atspi.Options{Address: sess.A11yBus, SessionBus: sess.SessionBus, ScreenReader: true})
	t.Cleanup(func() { b.Close() })
	c := schematest.Serve(t, b, nil)

	page, err := filepath.Abs("testdata/url.html")
	if err != nil {
		t.Fatal(err)
	}
	base := "file://" + filepath.ToSlash(page)
	if browser == "chromium" {
		sess.LaunchEnv(t, nil, bin, "--no-sandbox", "--no-first-run", "--no-default-browser-check",
			"--disable-gpu", "--force-renderer-accessibility", "--password-store=basic",
			"--disable-features=Translate,MediaRouter", "--user-data-dir="+t.TempDir(),
			"--window-position=0,0", "--window-size=900,700", base)
	} else {
		sess.LaunchEnv(t, []string{"MOZ_CRASHREPORTER_DISABLE=1", "GNOME_ACCESSIBILITY=1"}, bin,
			"--no-remote", "--new-instance", "--profile", t.TempDir(), base)
	}
	// Readiness: the page is loaded and both its buttons are laid out
	// inside the document, in the same place in two observations in a row
	// (a window still being placed moves them; a button not yet laid out
	// may read at the screen's corner, where a click opens the window
	// manager's menu).
	var obs *aci.Observation
	var last [][]float64
	for {
		obs, err = c.Observe(ctx, &client.ObserveRequest{Settle: 50 * time.Millisecond})
		if err == nil {
			doc, derr := obs.Find("document web", "Gemini URL")
			if derr == nil && doc.Value == base && !slices.Contains(doc.States, "busy") {
				var boxes [][]float64
				for _, name := range []string{"Anchor", "Push"} {
					if b, err := obs.Find("push button", name); err == nil && within(b.BBox, doc.BBox) {
						boxes = append(boxes, b.BBox)
					}
				}
				if len(boxes) == 2 && slices.EqualFunc(boxes, last, slices.Equal) {
					break
				}
				last = boxes
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("%s never showed the page (last error %v)", browser, err)
		}
	}

	g, err := toolset.NewGemini(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	grid := toolset.Grid{Screen: g.Scale().Screen, Size: 1000, Max: 999}
	at := func(name string) string {
		t.Helper()
		e, err := obs.Find("push button", name)
		if err != nil {
			t.Fatal(err)
		}
		r := image.Rect(int(e.BBox[0]), int(e.BBox[1]), int(e.BBox[0]+e.BBox[2]), int(e.BBox[1]+e.BBox[3]))
		return gridPoint(grid, r)
	}
	// The calls as the Python SDK serialises its FunctionCall parts.
	var calls []toolset.FunctionCall
	sdk := fmt.Sprintf(`[
		{"id": "c1", "name": "hover_at", "args": {%s}},
		{"id": "c2", "name": "click_at", "args": {%s}},
		{"id": "c3", "name": "click", "args": {%s}},
		{"id": "c4", "name": "take_screenshot", "args": {}},
		{"id": "c5", "name": "navigate", "args": {"url": "%s?page=2"}}
	]`, at("Push"), at("Anchor"), at("Push"), base)
	if err := json.Unmarshal([]byte(sdk), &calls); err != nil {
		t.Fatal(err)
	}
	res, err := g.Turn(ctx, calls)
	if err != nil {
		t.Fatalf("turn: %v", err)
	}
	want := []string{base, base + "#clicked", base + "?pushed=1", base + "?pushed=1", base + "?page=2"}
	for i, r := range res {
		// What the model receives: the response as JSON.
		var got struct {
			Response map[string]any `json:"response"`
		}
		raw, _ := json.Marshal(r)
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if got.Response["url"] != want[i] {
			t.Errorf("%s (%s): url %v, want %q; response %v", calls[i].Name, calls[i].ID, got.Response["url"], want[i], got.Response)
		}
	}

	// A window that is not a browser's: no url, and the call still runs.
	desk, err := toolset.NewGemini(ctx, c, &toolset.GeminiOptions{IsBrowser: func(aci.WindowInfo) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	res, err = desk.Turn(ctx, []toolset.FunctionCall{{ID: "d1", Name: "take_screenshot", Args: json.RawMessage(`{}`)}})
	if err != nil {
		t.Fatalf("turn: %v", err)
	}
	if u, ok := res[0].Response["url"]; ok {
		t.Errorf("with no browser active, the response carries url %v", u)
	}
}

// within reports whether the box in lies inside out, both [x, y, w, h],
// and is not empty.
func within(in, out []float64) bool {
	return len(in) == 4 && len(out) == 4 && in[2] > 0 && in[3] > 0 &&
		in[0] >= out[0] && in[1] >= out[1] && in[0]+in[2] <= out[0]+out[2] && in[1]+in[3] <= out[1]+out[3]
}
