package headless_test

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log"
	"strings"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// desktop is what the agent below needs of a computer: the same interfaces
// a Shinken runtime serves, whatever the backend behind them.
type desktop interface {
	shinken.A11y
	shinken.Injector
}

// fillForm is an agent under test. It finds the form's Name entry and its
// Submit button in the accessibility tree, clicks the entry, types, clicks
// Submit, and returns what the form then says.
func fillForm(ctx context.Context, d desktop, name string) (string, error) {
	tree, err := d.Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp})
	if err != nil {
		return "", err
	}
	entry, err := tree.Find("text", "Name")
	if err != nil {
		return "", err
	}
	submit, err := tree.Find("push button", "Submit")
	if err != nil {
		return "", err
	}
	if err := click(ctx, d, entry.BBox); err != nil {
		return "", err
	}
	if err := d.Type(ctx, name); err != nil {
		return "", err
	}
	if err := click(ctx, d, submit.BBox); err != nil {
		return "", err
	}
	if tree, err = d.Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}); err != nil {
		return "", err
	}
	summary, err := tree.Find("label", "Submitted")
	if err != nil {
		return "", err
	}
	return summary.Name, nil
}

// click clicks the middle of r.
func click(ctx context.Context, d desktop, r image.Rectangle) error {
	p := image.Pt((r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2)
	for _, kind := range []shinken.PointerKind{shinken.PointerMove, shinken.PointerDown, shinken.PointerUp} {
		if err := d.Pointer(ctx, shinken.PointerEvent{Kind: kind, X: p.X, Y: p.Y}); err != nil {
			return err
		}
	}
	return nil
}

// A unit test of an agent: launch the built-in form on a headless desktop,
// let the agent fill it in, and check what the form says.
func Example() {
	ctx := context.Background()
	d := headless.New(nil)
	if err := d.Launch(ctx, "form", nil); err != nil {
		log.Fatal(err)
	}
	summary, err := fillForm(ctx, d, "Ada Lovelace")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(summary)
	// Output: Submitted: Ada Lovelace <no email>, newsletter: no.
}

// An application built from the package's widgets, driven by keys and read
// back through the accessibility tree.
func ExampleDesktop_Register() {
	ctx := context.Background()
	d := headless.New(nil)
	d.Register("greeter", func(w *headless.Window) {
		w.SetTitle("Greeter")
		name := w.AddEntry("Your name")
		var out *headless.Label
		greet := w.AddButton("Greet", func() { out.SetText("Hello, " + name.Text() + "!") })
		out = w.AddLabel("")
		w.SetDefault(greet)
	})
	if err := d.Launch(ctx, "greeter", nil); err != nil {
		log.Fatal(err)
	}
	// The entry has the focus; Return presses the default button.
	if err := d.Type(ctx, "Grace Hopper\n"); err != nil {
		log.Fatal(err)
	}
	tree, err := d.Snapshot(ctx, shinken.SnapshotOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, n := range tree.Nodes {
		fmt.Printf("%s%s %q value=%q %v\n", strings.Repeat("  ", n.Depth), n.Role, n.Name, n.Value, n.Actions)
	}
	// Output:
	// frame "Greeter" value="" [activate]
	//   label "Your name" value="" []
	//   text "Your name" value="Grace Hopper" [activate]
	//   push button "Greet" value="" [click]
	//   label "Hello, Grace Hopper!" value="" []
}

// Accessible actions reach widgets without the pointer, and fail with the
// protocol's error codes.
func ExampleDesktop_Perform() {
	ctx := context.Background()
	d := headless.New(nil)
	if err := d.Launch(ctx, "form", nil); err != nil {
		log.Fatal(err)
	}
	tree, err := d.Snapshot(ctx, shinken.SnapshotOptions{})
	if err != nil {
		log.Fatal(err)
	}
	box, err := tree.Find("check box", "Subscribe to the newsletter")
	if err != nil {
		log.Fatal(err)
	}
	if err := d.Perform(ctx, box.ID, shinken.ElementAction{Op: shinken.OpInvoke, Action: "toggle"}); err != nil {
		log.Fatal(err)
	}
	tree, _ = d.Snapshot(ctx, shinken.SnapshotOptions{})
	box, _ = tree.Find("check box", "Subscribe to the newsletter")
	fmt.Println(box.States)
	err = d.Perform(ctx, box.ID, shinken.ElementAction{Op: shinken.OpInvoke, Action: "scroll"})
	fmt.Println(errors.Is(err, aci.ErrNoSuchAction))
	err = d.Perform(ctx, "w9999", shinken.ElementAction{Op: shinken.OpInvoke})
	fmt.Println(aci.WireError(err))
	// Output:
	// [enabled sensitive showing visible focusable checked]
	// true
	// stale_element_ref: w9999 is gone, observe again
}

// Captures cost nothing while the screen is unchanged: the same image comes
// back. A window capture covers the window, title bar included.
func ExampleDesktop_Capture() {
	ctx := context.Background()
	d := headless.New(nil)
	if err := d.Launch(ctx, "notes", nil); err != nil {
		log.Fatal(err)
	}
	first, _ := d.Capture(ctx, aci.ScopeScreen)
	again, _ := d.Capture(ctx, aci.ScopeScreen)
	fmt.Println(first.Source, first.Image == again.Image)
	win, _ := d.Capture(ctx, aci.ScopeActiveWindow)
	fmt.Println(win.Source, win.Image.Bounds())
	// Output:
	// (0,0)-(1280,800) true
	// (24,24)-(486,397) (0,0)-(462,373)
}

// The everyday widgets in the accessibility tree: a menu bar with its
// menus and items, a password entry that shows no value, a combo box
// driven by set_value, a radio group and a scroll view.
func ExampleWindow_AddComboBox() {
	ctx := context.Background()
	d := headless.New(nil)
	d.Register("signup", func(w *headless.Window) {
		w.SetTitle("Sign up")
		w.AddMenuBar().AddMenu("Help").AddItem("About", nil)
		w.AddPasswordEntry("Password").SetText("hunter2")
		w.AddComboBox("Plan", nil, "Free", "Pro")
		w.AddRadioGroup("Billing", nil, "Monthly", "Yearly").Select(0)
		w.AddScrollView("Terms", 40).AddLabel("You agree.")
	})
	if err := d.Launch(ctx, "signup", nil); err != nil {
		log.Fatal(err)
	}
	tree, err := d.Snapshot(ctx, shinken.SnapshotOptions{})
	if err != nil {
		log.Fatal(err)
	}
	plan, err := tree.Find("combo box", "Plan")
	if err != nil {
		log.Fatal(err)
	}
	if err := d.Perform(ctx, plan.ID, shinken.ElementAction{Op: shinken.OpSetValue, Text: "Pro"}); err != nil {
		log.Fatal(err)
	}
	if tree, err = d.Snapshot(ctx, shinken.SnapshotOptions{}); err != nil {
		log.Fatal(err)
	}
	for _, n := range tree.Nodes {
		fmt.Printf("%s%s %q value=%q %v\n", strings.Repeat("  ", n.Depth), n.Role, n.Name, n.Value, n.Actions)
	}
	// Output:
	// frame "Sign up" value="" [activate]
	//   menu bar "" value="" []
	//     menu "Help" value="" [click]
	//       menu item "About" value="" [click]
	//   label "Password" value="" []
	//   password text "Password" value="" [activate]
	//   label "Plan" value="" []
	//   combo box "Plan" value="Pro" [press]
	//     menu "" value="" []
	//       menu item "Free" value="" [click]
	//       menu item "Pro" value="" [click]
	//   label "Billing" value="" []
	//   panel "Billing" value="" []
	//     radio button "Monthly" value="" [click]
	//     radio button "Yearly" value="" [click]
	//   label "Terms" value="" []
	//   scroll pane "Terms" value="" []
	//     label "You agree." value="" []
}
