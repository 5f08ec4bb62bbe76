package x11_test

import (
	"context"
	"fmt"
	"log"

	"shinken.dev/go/backend/x11"
	"shinken.dev/go/shinken/aci"
)

// Open a backend on a display, take a screenshot, type into the active
// window and put text on the clipboard. (It needs an X server, so it is
// compiled but not run.)
func Example() {
	ctx := context.Background()
	b, err := x11.Open(ctx, &x11.Options{Display: ":1"})
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	frame, err := b.Capture(ctx, aci.ScopeScreen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(frame.Source.Size())

	if err := b.Type(ctx, "héllo ✓ 日本"); err != nil {
		log.Fatal(err)
	}
	if err := b.SetClipboardText(ctx, "copied"); err != nil {
		log.Fatal(err)
	}
}
