package x11

// Benchmarks for BENCHMARKS.md, each ours against the usual alternative in
// the same run:
//
//	go test -run '^$' -bench . -benchtime 20x ./backend/x11/
//
// They need Xvfb, openbox, scrot, xdotool and zenity, like the tests.

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"shinken.dev/go/internal/imaging"
	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// benchSession is a 1920×1080 session with a few real windows on it, so
// that captures and encodings see a desktop rather than a black screen.
func benchSession(b *testing.B, bopts *Options) *session {
	need(b, "xterm", "gtk3-widget-factory")
	s := newSession(b, &xvfb.Options{Width: 1920, Height: 1080, SessionBus: true}, bopts)
	ctx := ctxT(b)
	s.b.Launch(ctx, "gtk3-widget-factory", nil)
	s.b.Launch(ctx, "xterm", []string{"-title", "bench-xterm", "-geometry", "100x30+900+500", "-e", "sh", "-c", "ls -l /usr/bin | head -40; sleep 1000"})
	s.findWindow("gtk3-widget-factory")
	s.findWindow("bench-xterm")
	// Let the apps paint before measuring.
	waitFor(b, "the desktop painted", func() bool {
		f, err := s.b.Capture(ctx, aci.ScopeScreen)
		if err != nil {
			b.Fatal(err)
		}
		lit := 0
		for i := 0; i < len(f.Image.Pix); i += 4 * 97 {
			if f.Image.Pix[i] != 0 {
				lit++
			}
		}
		return lit > len(f.Image.Pix)/(4*97)/3
	})
	return s
}

// timings records the duration of each iteration and reports the median.
type timings []time.Duration

func (t timings) report(b *testing.B) {
	if len(t) == 0 {
		return
	}
	s := slices.Clone(t)
	slices.Sort(s)
	b.ReportMetric(float64(s[len(s)/2])/1e6, "p50-ms")
}

// BenchmarkCapture1080p captures the whole 1920×1080 screen into an RGBA
// image through MIT-SHM and through GetImage in bands.
func BenchmarkCapture1080p(b *testing.B) {
	s := benchSession(b, nil)
	plain, err := Open(ctxT(b), &Options{Display: s.srv.Display, Xauthority: s.srv.Xauthority, DisableSHM: true})
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close()
	for _, c := range []struct {
		name string
		b    *Backend
	}{{"shm", s.b}, {"getimage", plain}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			var ts timings
			for b.Loop() {
				start := time.Now()
				if _, err := c.b.Capture(ctx, aci.ScopeScreen); err != nil {
					b.Fatal(err)
				}
				ts = append(ts, time.Since(start))
			}
			ts.report(b)
		})
	}
	if !s.b.usingSHM() {
		b.Fatal("SHM was not used")
	}
}

// BenchmarkScreenshotPNG makes a full-screen PNG, end to end: our capture
// and encoder against a scrot subprocess writing a file that is then read.
func BenchmarkScreenshotPNG(b *testing.B) {
	need(b, "scrot")
	s := benchSession(b, nil)
	dir := b.TempDir()
	ctx := context.Background()
	run := func(name string, shot func() []byte) {
		b.Run(name, func(b *testing.B) {
			var ts timings
			var size int
			for b.Loop() {
				start := time.Now()
				size = len(shot())
				ts = append(ts, time.Since(start))
			}
			ts.report(b)
			b.ReportMetric(float64(size)/1024, "KiB")
		})
	}
	run("shinken-imaging", func() []byte {
		f, err := s.b.Capture(ctx, aci.ScopeScreen)
		if err != nil {
			b.Fatal(err)
		}
		out, err := imaging.EncodePNG(nil, f.Image)
		if err != nil {
			b.Fatal(err)
		}
		return out
	})
	run("shinken-stdlib-bestspeed", func() []byte {
		f, err := s.b.Capture(ctx, aci.ScopeScreen)
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		if err := enc.Encode(&buf, f.Image); err != nil {
			b.Fatal(err)
		}
		return buf.Bytes()
	})
	run("scrot", func() []byte {
		path := filepath.Join(dir, "shot.png")
		os.Remove(path)
		if out, err := s.srv.Command(ctx, "scrot", "--overwrite", path).CombinedOutput(); err != nil {
			b.Fatalf("scrot: %v: %s", err, out)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		return data
	})
	// The two screenshots show the same pixels.
	f, _ := s.b.Capture(ctx, aci.ScopeScreen)
	data, _ := os.ReadFile(filepath.Join(dir, "shot.png"))
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	r, g, bl, _ := img.At(960, 540).RGBA()
	if c := f.Image.RGBAAt(960, 540); uint8(r>>8) != c.R || uint8(g>>8) != c.G || uint8(bl>>8) != c.B {
		b.Fatalf("scrot and our capture disagree at the centre: %v vs %v", img.At(960, 540), c)
	}
	writePNG2(b, "bench-desktop.png", f.Image)
}

func writePNG2(b *testing.B, name string, img *image.RGBA) {
	if dir := os.Getenv("SHINKEN_X11_PNG"); dir != "" {
		data, _ := imaging.EncodePNG(nil, img)
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
}

// BenchmarkClicks100 makes 100 left clicks on a window through XTest, then
// through 100 xdotool processes, and checks the window got every click.
func BenchmarkClicks100(b *testing.B) {
	need(b, "xdotool")
	s := newSession(b, &xvfb.Options{Width: 1920, Height: 1080, NoWM: true}, nil)
	s.window(windowSpec{r: image.Rect(400, 400, 600, 600), bg: white, override: true,
		events: xproto.EventMaskButtonPress})
	ctx := context.Background()
	countClicks := func(b *testing.B, want int) {
		sb := s.with(b)
		for range want {
			sb.nextEvent("a click", func(e xgb.Event) bool {
				p, ok := e.(xproto.ButtonPressEvent)
				return ok && p.Detail == 1
			})
		}
	}
	b.Run("xtest", func(b *testing.B) {
		var ts timings
		for b.Loop() {
			s.x.Drain()
			start := time.Now()
			for range 100 {
				s.b.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerDown, X: 500, Y: 500})
				s.b.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerUp, X: 500, Y: 500})
			}
			if err := s.b.sync(); err != nil {
				b.Fatal(err)
			}
			ts = append(ts, time.Since(start))
			countClicks(b, 100)
		}
		ts.report(b)
	})
	b.Run("xdotool", func(b *testing.B) {
		var ts timings
		for b.Loop() {
			s.x.Drain()
			start := time.Now()
			for range 100 {
				if out, err := s.srv.Command(ctx, "xdotool", "mousemove", "500", "500", "click", "1").CombinedOutput(); err != nil {
					b.Fatalf("xdotool: %v: %s", err, out)
				}
			}
			ts = append(ts, time.Since(start))
			countClicks(b, 100)
		}
		ts.report(b)
	})
}

// typingSample is 200 characters of mixed text: ASCII with capitals and
// punctuation, Latin accents, symbols and Japanese, 15 of them off a US
// keyboard.
func typingSample() string {
	parts := []string{"Hello wörld, naïve café ✓ ", "日本語のテキスト ", "Straße €5 — ok! ", "The Quick brown fox; "}
	var r []rune
	for i := 0; len(r) < 200; i++ {
		r = append(r, []rune(parts[i%len(parts)])...)
	}
	r[199] = '.'
	return string(r[:200])
}

// BenchmarkType200 types 200 mixed characters into a zenity entry, then
// Return, and checks what zenity read: through Type, then through
// xdotool type (its default 12 ms delay and no delay). It reports the time
// until the typing call returns (call-ms) and until zenity has read the
// whole line and exited (p50-ms).
func BenchmarkType200(b *testing.B) {
	need(b, "xdotool", "zenity")
	s := newSession(b, &xvfb.Options{Width: 1280, Height: 800, SessionBus: true}, nil)
	text := typingSample()
	if n := len([]rune(text)); n != 200 {
		b.Fatalf("sample has %d characters", n)
	}
	ctx := context.Background()
	run := func(name string, mustBeRight bool, typeIt func(b *testing.B)) {
		b.Run(name, func(b *testing.B) {
			var total, call timings
			wrong := 0
			sb := s.with(b)
			for b.Loop() {
				b.StopTimer()
				wait := sb.startApp("zenity", "--entry", "--title=bench-entry", "--text=type")
				w := sb.findWindow("bench-entry")
				if err := s.b.Activate(ctxT(b), w.ID); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				typeIt(b)
				call = append(call, time.Since(start))
				got := wait()
				total = append(total, time.Since(start))
				if got != text+"\n" {
					if mustBeRight {
						b.Fatalf("%s typed %q, want %q", name, got, text)
					}
					wrong++
					b.Logf("%s typed %q, want %q", name, got, text)
				}
			}
			total.report(b)
			b.ReportMetric(float64(wrong), "wrong-runs")
			slices.Sort(call)
			b.ReportMetric(float64(call[len(call)/2])/1e6, "call-ms")
		})
	}
	run("shinken", true, func(b *testing.B) {
		if err := s.b.Type(ctx, text); err != nil {
			b.Fatal(err)
		}
		s.b.Key(ctx, shinken.KeyEvent{Key: "Return", Down: true})
		s.b.Key(ctx, shinken.KeyEvent{Key: "Return", Down: false})
		s.b.sync()
	})
	for _, delay := range []string{"12", "0"} {
		run("xdotool-delay"+delay, false, func(b *testing.B) {
			cmd := s.srv.Command(ctx, "xdotool", "type", "--delay", delay, "--", text)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("xdotool: %v: %s", err, out)
			}
			if out, err := s.srv.Command(ctx, "xdotool", "key", "Return").CombinedOutput(); err != nil {
				b.Fatalf("xdotool: %v: %s", err, out)
			}
		})
	}
}
