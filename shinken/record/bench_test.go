package record_test

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"testing"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/record"
)

// minute records one simulated minute at 5 frames a second of the notes
// app on a 1280×800 desktop, typing a character every frame (60 words a
// minute; a line break every 40 characters unless scrolling, when the line
// grows past the box and scrolls sideways, redrawing its whole width each
// character) or idle, with one action event per typed character. It
// returns the recording and the number of frames that changed.
func minute(b *testing.B, typing, scrolling bool) ([]byte, int) {
	ctx := context.Background()
	d := headless.New(nil)
	if err := d.Launch(ctx, "notes", nil); err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	start := time.Unix(0, 0)
	w := record.NewWriter(&buf, start, nil)
	text := []rune("The quick brown fox jumps over the lazy dog; ")
	changed := 0
	for i := range 300 {
		at := start.Add(time.Duration(i) * 200 * time.Millisecond)
		if typing {
			ch := string(text[i%len(text)])
			if !scrolling && i%40 == 39 {
				ch = "\n"
			}
			if err := d.Type(ctx, ch); err != nil {
				b.Fatal(err)
			}
			w.Event(shinken.Event{Kind: shinken.EventAction, Verb: "type_text", OK: true, DurationMS: 0.1, Time: at})
		}
		before := buf.Len()
		f, _ := d.Capture(ctx, "screen")
		if err := w.Frame(at, f.Image); err != nil {
			b.Fatal(err)
		}
		w.Flush()
		if buf.Len() != before {
			changed++
		}
	}
	w.Flush()
	return buf.Bytes(), changed
}

// BenchmarkRecordMinute measures the bytes of one minute of recording,
// typing and idle. The reference is a recorder that stores every changed
// frame whole (a PNG at the default level): the metric "vs-whole-frames"
// is our size over its.
func BenchmarkRecordMinute(b *testing.B) {
	for _, mode := range []string{"typing", "typing-scrolling", "idle"} {
		b.Run(mode, func(b *testing.B) {
			var rec []byte
			var changed int
			for b.Loop() {
				rec, changed = minute(b, mode != "idle", mode == "typing-scrolling")
			}
			// The reference's size: each changed frame as a whole PNG.
			p := record.NewPlayer(bytes.NewReader(rec))
			_, img, err := p.NextFrame()
			if err != nil && err != io.EOF {
				b.Fatal(err)
			}
			var whole bytes.Buffer
			png.Encode(&whole, img)
			b.ReportMetric(float64(len(rec)), "bytes/min")
			b.ReportMetric(float64(len(rec))/float64(max(changed, 1)*whole.Len()), "vs-whole-frames")
		})
	}
}
