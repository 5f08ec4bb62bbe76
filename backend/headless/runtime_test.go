package headless_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// dialSettings serves a desktop with the settings app open through a
// Runtime, behind a proxy that validates every message the runtime sends
// against the schema, and returns a connected client.
func dialSettings(t *testing.T) (*headless.Desktop, *client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	desk := headless.New(nil)
	if err := desk.Launch(ctx, "settings", nil); err != nil {
		t.Fatal(err)
	}
	return desk, schematest.Serve(t, desk, &shinken.RuntimeOptions{Logger: slog.New(slog.DiscardHandler)})
}

// refOf returns the ref of the element with role and name.
func refOf(t *testing.T, obs *aci.Observation, role, name string) string {
	t.Helper()
	for _, el := range obs.Elements {
		if el.Role == role && el.Name == name {
			return el.Ref
		}
	}
	t.Fatalf("no %s %q in\n%s", role, name, obs.TreeText)
	return ""
}

// TestEverydayWidgetsThroughRuntime drives the settings app as an agent
// does, by refs over the protocol: the tree shows every widget, set_value
// chooses a combo box option and a radio button, the password never shows,
// and an unknown key name is refused with invalid_action.
func TestEverydayWidgetsThroughRuntime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, conn := dialSettings(t)
	obs, err := conn.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`menu bar`, `menu "File"`, `password text "Password"`,
		`combo box "Language" Value:"English"`, `panel "Theme"`, `radio button (checked) "Light"`, `scroll pane "Permissions"`} {
		if !strings.Contains(obs.TreeText, want) {
			t.Errorf("the tree has no %s:\n%s", want, obs.TreeText)
		}
	}
	// A closed menu's items are hidden: left out of the text, counted in its
	// trailer, and still in the elements with their state.
	if strings.Contains(obs.TreeText, "About Settings") || !strings.Contains(obs.TreeText, "hidden: ") {
		t.Errorf("a closed menu's items show in the tree text:\n%s", obs.TreeText)
	}
	if e, err := obs.Find("menu item", "About Settings"); err != nil || !slices.Contains(e.States, "hidden") && slices.Contains(e.States, "showing") {
		t.Errorf("the elements lack the hidden menu item: %+v", e)
	}
	if err := conn.Click(ctx, aci.Ref(refOf(t, obs, "password text", "Password"))); err != nil {
		t.Fatal(err)
	}
	if err := conn.TypeText(ctx, "pa55word"); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetValue(ctx, aci.Ref(refOf(t, obs, "combo box", "Language")), "Deutsch"); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetValue(ctx, aci.Ref(refOf(t, obs, "panel", "Theme")), "Dark"); err != nil {
		t.Fatal(err)
	}
	err = conn.Key(ctx, "ctrl+frob")
	if code := aci.WireError(err); !strings.HasPrefix(code, "invalid_action: ") || !strings.Contains(code, "frob") {
		t.Fatalf("key ctrl+frob: %v", err)
	}
	if err := conn.Key(ctx, "Return"); err != nil { // the default button, Save
		t.Fatal(err)
	}
	after, err := conn.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(after.TreeText, "pa55word") {
		t.Fatalf("the tree shows the password:\n%s", after.TreeText)
	}
	for _, want := range []string{`combo box "Language" Value:"Deutsch"`, `radio button (checked, focused) "Dark"`,
		`label "Saved: nobody, a password of 8 characters, Deutsch, dark theme, 0 permissions."`} {
		if !strings.Contains(after.TreeText, want) {
			t.Errorf("after the actions the tree has no %s:\n%s", want, after.TreeText)
		}
	}
}
