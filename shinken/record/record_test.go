package record_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/record"
	"shinken.dev/go/shinken/shinkentest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func capture(t testing.TB, d *headless.Desktop) *image.RGBA {
	t.Helper()
	f, err := d.Capture(context.Background(), aci.ScopeScreen)
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(f.Image.Rect)
	copy(img.Pix, f.Image.Pix)
	return img
}

// scripted drives the form app, capturing a frame after each step at
// times 0, 137, 274... ms; it returns the frames and their times.
func scripted(t testing.TB, d *headless.Desktop, w *record.Writer, start time.Time) ([]*image.RGBA, []time.Duration) {
	ctx := context.Background()
	var frames []*image.RGBA
	var times []time.Duration
	step := func(i int) {
		at := time.Duration(i) * 137 * time.Millisecond
		img := capture(t, d)
		if err := w.Frame(start.Add(at), img); err != nil {
			t.Fatal(err)
		}
		if err := w.Event(shinken.Event{Kind: shinken.EventAction, Verb: "type_text", Time: start.Add(at), OK: true}); err != nil {
			t.Fatal(err)
		}
		frames, times = append(frames, img), append(times, at)
	}
	step(0)
	for i, s := range []string{"A", "d", "a", " ", "é", "✓", "日"} {
		if err := d.Type(ctx, s); err != nil {
			t.Fatal(err)
		}
		step(i + 1)
	}
	step(8) // unchanged: costs nothing, replays as the frame before
	return frames, times
}

// TestReplaySameFrames: a recording of a scripted session replays with
// the same frames at the same timestamps.
func TestReplaySameFrames(t *testing.T) {
	d := headless.New(nil)
	if err := d.Launch(context.Background(), "form", nil); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	start := time.Now()
	w := record.NewWriter(&buf, start, &record.WriterOptions{KeyEvery: 500 * time.Millisecond})
	frames, times := scripted(t, d, w, start)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	p := record.NewPlayer(bytes.NewReader(buf.Bytes()))
	var keyframes, got int
	r := record.NewReader(bytes.NewReader(buf.Bytes()))
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == record.KindKeyframe {
			keyframes++
		}
	}
	if keyframes < 2 {
		t.Errorf("%d keyframes over %v with a 500 ms interval", keyframes, times[len(times)-1])
	}
	for i := 0; ; i++ {
		at, img, err := p.NextFrame()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if at != times[i] {
			t.Errorf("frame %d at %v, recorded at %v", i, at, times[i])
		}
		if !bytes.Equal(img.Pix, frames[i].Pix) {
			t.Errorf("frame %d differs from the one recorded", i)
		}
		got++
	}
	// The last step changed nothing and was not stored.
	if got != len(frames)-1 {
		t.Errorf("replayed %d frames, want %d", got, len(frames)-1)
	}
	if len(p.Events) != len(frames) || p.Header.W != 1280 || !p.Header.Start.Equal(start) {
		t.Errorf("events %d, header %+v", len(p.Events), p.Header)
	}
}

// TestRecord records a live session through the Runtime's feed.
func TestRecord(t *testing.T) {
	d := headless.New(nil)
	ctx := t.Context()
	if err := d.Launch(ctx, "form", nil); err != nil {
		t.Fatal(err)
	}
	feed := shinken.NewFeed()
	c := shinkentest.Serve(t, d, &shinken.RuntimeOptions{Feed: feed})
	sub := feed.Subscribe(0)
	var buf bytes.Buffer
	done := make(chan error, 1)
	rctx, cancel := context.WithCancel(ctx)
	go func() { done <- record.Record(rctx, &buf, d, sub, &record.Options{FPS: 30}) }()
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	name, err := obs.Find("text", "Name")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetValue(ctx, aci.Ref(name.Ref), "Ada"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Observe(ctx, nil); err != nil {
		t.Fatal(err)
	}
	sub.Close() // Record drains what was published, then returns
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cancel()
	p := record.NewPlayer(bytes.NewReader(buf.Bytes()))
	var last *image.RGBA
	for {
		_, img, err := p.NextFrame()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		last = img
	}
	if last == nil {
		t.Fatal("no frame recorded")
	}
	var verbs []string
	trees := 0
	for _, e := range p.Events {
		if e.Kind == shinken.EventAction {
			verbs = append(verbs, string(e.Verb))
		}
		if e.TreeText != "" {
			trees++
		}
	}
	if len(verbs) != 3 || verbs[1] != "set_value" || trees != 2 {
		t.Errorf("recorded actions %v, %d tree texts", verbs, trees)
	}
}

func TestReaderRefusesGarbage(t *testing.T) {
	for name, data := range map[string][]byte{
		"empty":       nil,
		"magic":       []byte("NOTAREC\x00\x01\x00\x00\x00"),
		"version":     []byte("SHINKREC\x09\x00\x00\x00"),
		"kind":        []byte("SHINKREC\x01\x00\x00\x00z\x00\x00\x00\x00\x00\x00\x00\x00"),
		"huge":        []byte("SHINKREC\x01\x00\x00\x00e\x00\x00\x00\x00\xff\xff\xff\xff"),
		"truncated":   []byte("SHINKREC\x01\x00\x00\x00e\x00\x00\x00\x00\x10\x00\x00\x00{}"),
		"early tiles": []byte("SHINKREC\x01\x00\x00\x00t\x00\x00\x00\x00\x0a\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
	} {
		_, err := record.NewReader(bytes.NewReader(data)).Next()
		if !errors.Is(err, record.ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzReader: any bytes give entries or a format error, never a panic
// or a huge allocation.
func FuzzReader(f *testing.F) {
	d := headless.New(&headless.Options{Width: 200, Height: 130})
	var buf bytes.Buffer
	start := time.Now()
	w := record.NewWriter(&buf, start, nil)
	w.Frame(start, capture(f, d))
	w.Event(shinken.Event{Kind: shinken.EventAction, Verb: "click", Time: start})
	d.Launch(context.Background(), "notes", nil)
	w.Frame(start.Add(time.Second), capture(f, d))
	w.Flush()
	if os.Getenv("SHINKEN_WRITE_SEEDS") != "" {
		os.WriteFile(filepath.Join(os.Getenv("SHINKEN_WRITE_SEEDS"), "small.rec"), buf.Bytes(), 0o644)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		r := record.NewReader(bytes.NewReader(data))
		for range 100 {
			_, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				if !errors.Is(err, record.ErrFormat) {
					t.Fatalf("error %v wraps no ErrFormat", err)
				}
				return
			}
		}
	})
}

// TestRecordFrameAfterEachAction: a quick agent's every settled step has
// its frame, whatever the capture rate (here one frame in 1000 s).
func TestRecordFrameAfterEachAction(t *testing.T) {
	d := headless.New(nil)
	ctx := t.Context()
	if err := d.Launch(ctx, "form", nil); err != nil {
		t.Fatal(err)
	}
	feed := shinken.NewFeed()
	c := shinkentest.Serve(t, d, &shinken.RuntimeOptions{Feed: feed})
	sub := feed.Subscribe(0)
	var buf bytes.Buffer
	done := make(chan error, 1)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	captured := make(chan struct{}, 16)
	capt := countingCapturer{d, captured}
	go func() { done <- record.Record(rctx, &buf, capt, sub, &record.Options{FPS: 0.001}) }()
	<-captured // the first frame
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	name, err := obs.Find("text", "Name")
	if err != nil {
		t.Fatal(err)
	}
	const steps = 4
	for i := range steps {
		if err := c.SetValue(ctx, aci.Ref(name.Ref), strings.Repeat("A", i+1)); err != nil {
			t.Fatal(err)
		}
		// The recorder hears of the step after its answer, as an
		// agent's next step comes after it: wait for its capture (the
		// bound is a hang guard).
		select {
		case <-captured:
		case <-time.After(time.Minute):
			t.Fatalf("no frame captured after step %d", i+1)
		}
	}
	sub.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	p := record.NewPlayer(bytes.NewReader(buf.Bytes()))
	frames := 0
	for {
		_, _, err := p.NextFrame()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		frames++
	}

	// The first frame, one after each step that changed the screen; the
	// last (at the end) repeats the last step's and may cost nothing.
	if frames < steps+1 {
		t.Errorf("%d frames for %d steps at one frame in 1000 s, want at least %d", frames, steps, steps+1)
	}
}

// countingCapturer is a Capturer that says when it captured.
type countingCapturer struct {
	shinken.Capturer
	captured chan struct{}
}

func (c countingCapturer) Capture(ctx context.Context, s aci.Scope) (shinken.Frame, error) {
	f, err := c.Capturer.Capture(ctx, s)
	c.captured <- struct{}{}
	return f, err
}
