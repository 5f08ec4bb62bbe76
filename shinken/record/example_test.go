package record_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/record"
)

// Record frames and events, then play them back.
func Example() {
	ctx := context.Background()
	desk := headless.New(&headless.Options{Width: 320, Height: 200})
	desk.Launch(ctx, "notes", nil)
	var file bytes.Buffer
	start := time.Now()
	w := record.NewWriter(&file, start, nil)
	for i, text := range []string{"", "H", "i"} {
		desk.Type(ctx, text)
		f, _ := desk.Capture(ctx, "screen")
		at := start.Add(time.Duration(i) * time.Second)
		w.Frame(at, f.Image)
		w.Event(shinken.Event{Kind: shinken.EventAction, Verb: "type_text", OK: true, Time: at})
	}
	w.Flush()

	p := record.NewPlayer(&file)
	for {
		at, img, err := p.NextFrame()
		if err == io.EOF {
			break
		}
		fmt.Println(at, img.Rect.Dx(), img.Rect.Dy())
	}
	fmt.Println(len(p.Events), "events")
	// Output:
	// 0s 320 200
	// 1s 320 200
	// 2s 320 200
	// 3 events
}
