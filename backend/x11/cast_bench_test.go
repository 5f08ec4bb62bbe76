package x11

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/client"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// castSession serves a 1920×1080 X session with an xterm through a Runtime,
// and starts a 10 fps delta screencast on it.
func castSession(b *testing.B) (*session, *client.Client, *client.Screencast) {
	need(b, "xterm")
	s := newSession(b, &xvfb.Options{Width: 1920, Height: 1080}, nil)
	ctx := context.Background()
	if err := s.b.Launch(ctx, "xterm", []string{"-geometry", "80x24+100+100"}); err != nil {
		b.Fatal(err)
	}
	waitFor(b, "the xterm window", func() bool {
		ws, err := s.b.Windows(ctx)
		return err == nil && len(ws) > 0
	})
	rt := shinken.NewRuntime(s.b, &shinken.RuntimeOptions{Token: "t", Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(rt)
	b.Cleanup(func() {
		rt.Close()
		srv.Close()
	})
	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &client.DialOptions{Token: "t"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	sc, err := c.Screencast(ctx, &client.ScreencastRequest{FPS: 10, Delta: true})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := sc.Next(ctx); err != nil {
		b.Fatal(err)
	}
	return s, c, sc
}

// BenchmarkScreencastIdle measures the CPU an idle 10 fps screencast costs
// the process (runtime and client): each op is one frame interval of wall
// time in which nothing changes.
func BenchmarkScreencastIdle(b *testing.B) {
	_, _, sc := castSession(b)
	// Let the first frames and the terminal's start settle.
	time.Sleep(time.Second)
	start, wall := cpuNow(), time.Now()
	for b.Loop() {
		time.Sleep(100 * time.Millisecond) // the cost measured is per unit of time
	}
	b.ReportMetric(float64(cpuNow()-start)/float64(time.Since(wall))*100, "cpu-%")
	sc.Stop(context.Background())
}

// BenchmarkScreencastTyping types into the xterm, one character a frame,
// and reports CPU and the size of delta frames against a keyframe.
func BenchmarkScreencastTyping(b *testing.B) {
	s, c, sc := castSession(b)
	ctx := context.Background()
	ws, _ := s.b.Windows(ctx)
	c.ActivateWindow(ctx, ws[0].ID)
	key, err := c.Screenshot(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	start, wall := cpuNow(), time.Now()
	var bytes, deltas int
	for i := 0; b.Loop(); i++ {
		s.b.Type(ctx, string(rune('a'+i%26)))
		f, err := sc.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if !f.Keyframe {
			bytes += f.Bytes
			deltas++
		}
	}
	b.ReportMetric(float64(cpuNow()-start)/float64(time.Since(wall))*100, "cpu-%")
	if deltas > 0 {
		b.ReportMetric(float64(bytes)/float64(deltas), "delta-bytes")
		b.ReportMetric(float64(len(key.Data)), "keyframe-bytes")
	}
	sc.Stop(ctx)
}
