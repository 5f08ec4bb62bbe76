package shinkentest_test

import (
	"context"
	"errors"
	"image"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/shinkentest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counterApp is the fixture LaunchFixture looks for: a button, an entry and
// a label counting the button's activations.
func counterApp(w *headless.Window) {
	n := 0
	var count *headless.Label
	w.AddButton("Count", func() {
		n++
		count.SetText(strconv.Itoa(n))
	})
	w.AddEntry("Text")
	count = w.AddLabel("0")
}

// broken is a headless desktop with one contract broken on purpose.
type broken struct {
	*headless.Desktop
	bug   string
	frame *image.RGBA // redraw-in-place: the one image every capture reuses
}

func (b *broken) Type(ctx context.Context, text string) error {
	if b.bug == "type-ascii-only" {
		text = strings.Map(func(r rune) rune {
			if r > 127 {
				return -1
			}
			return r
		}, text)
	}
	return b.Desktop.Type(ctx, text)
}

func (b *broken) Capture(ctx context.Context, scope aci.Scope) (shinken.Frame, error) {
	f, err := b.Desktop.Capture(ctx, scope)
	switch {
	case b.bug == "window-source" && scope != aci.ScopeScreen:
		f.Source = f.Source.Add(image.Pt(1, 0))
	case b.bug == "capture-unsupported":
		return shinken.Frame{}, errors.ErrUnsupported
	case b.bug == "redraw-in-place" && err == nil && scope == aci.ScopeScreen:
		if b.frame == nil || b.frame.Rect != f.Image.Rect {
			b.frame = image.NewRGBA(f.Image.Rect)
		}
		copy(b.frame.Pix, f.Image.Pix)
		f.Image = b.frame
	}
	return f, err
}

func (b *broken) PointerPosition(ctx context.Context) (image.Point, error) {
	p, err := b.Desktop.PointerPosition(ctx)
	if b.bug == "pointer-off-by-one" {
		p.X++
	}
	return p, err
}

func (b *broken) Pointer(ctx context.Context, ev shinken.PointerEvent) error {
	err := b.Desktop.Pointer(ctx, ev)
	if b.bug == "click-twice" && ev.Kind == shinken.PointerUp {
		_ = b.Desktop.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerDown, X: ev.X, Y: ev.Y})
		err = b.Desktop.Pointer(ctx, ev)
	}
	return err
}

func (b *broken) Key(ctx context.Context, ev shinken.KeyEvent) error {
	if b.bug == "modifiers-ignored" && strings.HasPrefix(ev.Key, "Control") {
		return nil
	}
	return b.Desktop.Key(ctx, ev)
}

func (b *broken) Perform(ctx context.Context, id string, act shinken.ElementAction) error {
	err := b.Desktop.Perform(ctx, id, act)
	if b.bug == "errors-swallowed" {
		return nil
	}
	return err
}

func (b *broken) SetClipboardText(ctx context.Context, text string) error {
	if b.bug == "clipboard-lossy" {
		text = strings.ToValidUTF8(strings.Map(func(r rune) rune {
			if r > 127 {
				return '?'
			}
			return r
		}, text), "")
	}
	return b.Desktop.SetClipboardText(ctx, text)
}

func (b *broken) Activate(ctx context.Context, id uint64) error {
	if b.bug == "activate-noop" {
		return nil
	}
	return b.Desktop.Activate(ctx, id)
}

func (b *broken) Watch(ctx context.Context) <-chan struct{} {
	if b.bug == "watch-silent" {
		ch := make(chan struct{})
		context.AfterFunc(ctx, func() { close(ch) })
		return ch
	}
	return b.Desktop.Watch(ctx)
}

// TestHelperBrokenBackend runs the suite against a broken backend. It does
// nothing unless TestSuiteCatchesBugs runs it as a child process, in the
// manner of os/exec's helper-process tests.
func TestHelperBrokenBackend(t *testing.T) {
	bug := os.Getenv("SHINKENTEST_BUG")
	if bug == "" {
		return
	}
	shinkentest.RunWith(t, func(t *testing.T) shinken.Backend {
		d := headless.New(nil)
		d.Register(shinkentest.FixtureApp, counterApp)
		return &broken{Desktop: d, bug: bug}
	}, &shinkentest.Options{Timeout: 200 * time.Millisecond})
}

// TestSuiteCatchesBugs checks that each contract's case notices a backend
// that breaks it, and that an unsupported feature skips rather than fails.
func TestSuiteCatchesBugs(t *testing.T) {
	for _, c := range []struct {
		bug, cases, want string
	}{
		{"type-ascii-only", "TypeText", "FAIL"},
		{"window-source", "CaptureWindow|CaptureActiveWindow", "FAIL"},
		{"pointer-off-by-one", "PointerPosition", "FAIL"},
		{"click-twice", "ClickButton", "FAIL"},
		{"modifiers-ignored", "KeyCombos|ClipboardKeys", "FAIL"},
		{"errors-swallowed", "InvokeAction|StaleElement", "FAIL"},
		{"clipboard-lossy", "Clipboard", "FAIL"},
		{"activate-noop", "Windows", "FAIL"},
		{"watch-silent", "Watch", "FAIL"},
		{"capture-unsupported", "CaptureScreen|CaptureWindow", "SKIP"},
		{"redraw-in-place", "FrameKeepsPixels", "FAIL"},
		{"redraw-in-place", "Wire", "FAIL"},
	} {
		t.Run(c.bug+"/"+c.cases, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperBrokenBackend$/^("+c.cases+")$", "-test.v")
			cmd.Env = append(os.Environ(), "SHINKENTEST_BUG="+c.bug)
			out, err := cmd.CombinedOutput()
			failed := err != nil
			if failed != (c.want == "FAIL") {
				t.Fatalf("child failed: %v, want %v\n%s", failed, c.want == "FAIL", out)
			}
			if c.cases == "Wire" && !strings.Contains(string(out), "--- FAIL: TestHelperBrokenBackend/Wire/FrameKeepsPixels ") {
				t.Errorf("the wire run did not fail FrameKeepsPixels:\n%s", out)
			}
			for name := range strings.SplitSeq(c.cases, "|") {
				line := "--- " + c.want + ": TestHelperBrokenBackend/" + name + " "
				if !strings.Contains(string(out), line) {
					t.Errorf("no %q in the child's output:\n%s", line, out)
				}
			}
		})
	}
}
