package daemon

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/daemon/daemontest"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/record"
)

// typingMinute records a simulated minute of typing in the notes app
// (1280×800, a character every 200 ms, a line break every 40, 5 frames a
// second).
func typingMinute(b *testing.B) []byte {
	ctx := context.Background()
	d := headless.New(nil)
	if err := d.Launch(ctx, "notes", nil); err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	start := time.Unix(0, 0)
	w := record.NewWriter(&buf, start, nil)
	text := []rune("The quick brown fox jumps over the lazy dog; ")
	for i := range 300 {
		ch := string(text[i%len(text)])
		if i%40 == 39 {
			ch = "\n"
		}
		d.Type(ctx, ch)
		f, _ := d.Capture(ctx, aci.ScopeScreen)
		if err := w.Frame(start.Add(time.Duration(i)*200*time.Millisecond), f.Image); err != nil {
			b.Fatal(err)
		}
	}
	w.Flush()
	return buf.Bytes()
}

// BenchmarkExportMinute exports one minute of a typing session: to MP4
// at 10 fps through ffmpeg (H.264, veryfast), and, as the reference, to
// a folder of PNG frames. ns/op is the export time per minute recorded.
func BenchmarkExportMinute(b *testing.B) {
	rec := typingMinute(b)
	b.Run("mp4", func(b *testing.B) {
		ffmpeg, err := exec.LookPath("ffmpeg")
		if err != nil {
			b.Fatal("ffmpeg is not installed (scripts/test installs it)")
		}
		out := filepath.Join(b.TempDir(), "m.mp4")
		for b.Loop() {
			if err := exportMP4(context.Background(), ffmpeg, bytes.NewReader(rec), out, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("frames", func(b *testing.B) {
		dir := b.TempDir()
		for b.Loop() {
			if _, err := exportFrames(bytes.NewReader(rec), dir); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTakeoverInput is one typed character's round trip from a page
// through /inspect (message, injection, "done"), against the reference:
// the same character typed by an agent through the ACI (type_text, ack).
func BenchmarkTakeoverInput(b *testing.B) {
	_, desk, url := inspectRig(b)
	b.Run("inspect", func(b *testing.B) {
		p := daemontest.DialPage(b, url, "tok")
		p.Next("welcome")
		p.Send(map[string]any{"type": "take"})
		if _, err := p.Next("held"); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			p.Send(`{"type":"type","id":1,"text":"é"}`)
			if _, err := p.Next("done"); err != nil {
				b.Fatal(err)
			}
		}
		p.Send(map[string]any{"type": "hand_back"})
		p.Next("held")
	})
	b.Run("aci", func(b *testing.B) {
		c := serveACI(b, desk)
		for b.Loop() {
			if err := c.TypeText(b.Context(), "é"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func serveACI(b *testing.B, desk *headless.Desktop) *client.Client {
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: "t"})
	srv := httptest.NewServer(rt)
	b.Cleanup(func() { srv.Close(); rt.Close() })
	c, err := client.Dial(b.Context(), "ws"+strings.TrimPrefix(srv.URL, "http"), &client.DialOptions{Token: "t"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}
