package shinkentest

import (
	"context"
	"fmt"
	"image"
	"image/draw"
	"log/slog"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// Serve serves b (opts may be nil) on a test HTTP server and returns a
// Client connected to it, all closed when the test ends; under CI it traces.
func Serve(t testing.TB, b shinken.Backend, opts *shinken.RuntimeOptions) *client.Client {
	t.Helper()
	return serveTraced(t, b, opts, nil, onCI())
}

// onCI reports whether the tests run under CI, where Serve traces.
func onCI() bool { return os.Getenv("CI") == "true" }

// ServeTraced is Serve tracing if and only if trace is true, whatever CI says.
func ServeTraced(t testing.TB, b shinken.Backend, opts *shinken.RuntimeOptions, trace bool) *client.Client {
	t.Helper()
	return serveTraced(t, b, opts, nil, trace)
}

// serveTraced is Serve dialling through proxy when it is set (see
// [Options.Proxy]), tracing the session when trace is set.
func serveTraced(t testing.TB, b shinken.Backend, opts *shinken.RuntimeOptions, proxy func(testing.TB, string) string, trace bool) *client.Client {
	t.Helper()
	ro := shinken.RuntimeOptions{}
	if opts != nil {
		ro = *opts
	}
	if trace && ro.Feed == nil {
		ro.Feed = shinken.NewFeed()
	}
	c := serve(t, b, &ro, proxy)
	if trace {
		startTrace(t, b, ro.Feed)
	}
	return c
}

// serve is Serve, dialling the URL proxy makes of the runtime's when proxy
// is set (see [Options.Proxy]).
func serve(t testing.TB, b shinken.Backend, opts *shinken.RuntimeOptions, proxy func(testing.TB, string) string) *client.Client {
	t.Helper()
	o := shinken.RuntimeOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Token == "" {
		o.Token = "shinkentest"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	rt := shinken.NewRuntime(b, &o)
	srv := httptest.NewServer(rt)
	ctx, cancel := context.WithTimeout(context.Background(), defaultTimeout)
	defer cancel()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	if proxy != nil {
		url = proxy(t, url)
	}
	c, err := client.Dial(ctx, url, &client.DialOptions{Token: o.Token})
	if err != nil {
		srv.Close()
		rt.Close()
		t.Fatalf("shinkentest: dial the runtime: %v", err)
	}
	t.Cleanup(func() {
		c.Close()
		rt.Close()
		srv.Close()
	})
	return c
}

// wire is a backend seen from the agent's side: each interface of the real
// backend is served back through a Runtime and a Client, so the same cases
// check what an agent observes, not only what the backend returns. (A
// backend that redraws a returned image in place passes every direct case,
// but through the Runtime its screenshot keeps its old hash.)
type wire struct {
	real shinken.Backend
	c    *client.Client

	mu   sync.Mutex
	held []string // keys pressed and not yet released
	sent bool     // the held combo was sent
}

func newWire(t *testing.T, real shinken.Backend, proxy func(testing.TB, string) string) *wire {
	return &wire{real: real, c: serve(t, real, nil, proxy)}
}

func (w *wire) shot(ctx context.Context, scope aci.Scope) (*client.Shot, error) {
	return w.c.Screenshot(ctx, &client.ScreenshotRequest{Scope: scope, Format: aci.FormatPNG})
}

func (w *wire) Display(ctx context.Context) (shinken.Display, error) {
	s, err := w.shot(ctx, aci.ScopeScreen)
	if err != nil {
		return shinken.Display{}, err
	}
	return shinken.Display{W: s.Display.W, H: s.Display.H, DPR: s.Display.DPR}, nil
}

func (w *wire) Capture(ctx context.Context, scope aci.Scope) (shinken.Frame, error) {
	s, err := w.shot(ctx, scope)
	if err != nil {
		return shinken.Frame{}, err
	}
	sr := s.Display.SourceRect
	if s.Display.Delivered.W != sr.W || s.Display.Delivered.H != sr.H {
		return shinken.Frame{}, fmt.Errorf("shinkentest: the runtime downscaled a %dx%d capture to %dx%d", sr.W, sr.H, s.Display.Delivered.W, s.Display.Delivered.H)
	}
	img, err := s.Image()
	if err != nil {
		return shinken.Frame{}, err
	}
	rgba := image.NewRGBA(image.Rect(0, 0, img.Bounds().Dx(), img.Bounds().Dy()))
	draw.Draw(rgba, rgba.Rect, img, img.Bounds().Min, draw.Src)
	return shinken.Frame{
		Image:   rgba,
		Source:  image.Rect(sr.X, sr.Y, sr.X+sr.W, sr.Y+sr.H),
		Display: shinken.Display{W: s.Display.W, H: s.Display.H, DPR: s.Display.DPR},
	}, nil
}

var buttonNames = map[shinken.Button]aci.PointerButton{
	shinken.ButtonLeft: aci.PointerLeft, shinken.ButtonMiddle: aci.PointerMiddle, shinken.ButtonRight: aci.PointerRight,
}

func (w *wire) Pointer(ctx context.Context, ev shinken.PointerEvent) error {
	at := aci.Px(float64(ev.X), float64(ev.Y))
	switch ev.Kind {
	case shinken.PointerMove:
		return w.c.Move(ctx, at)
	case shinken.PointerDown:
		// Keys pressed and not yet sent are held for the gesture: the
		// mouse_down carries them, and they stay down until its mouse_up.
		w.mu.Lock()
		keys := ""
		if !w.sent && len(w.held) > 0 {
			keys, w.sent = strings.Join(w.held, "+"), true
		}
		w.mu.Unlock()
		if keys != "" {
			_, err := w.c.Do(ctx, &aci.Action{Verb: aci.VerbMouseDown, Target: at, Button: buttonNames[ev.Button], Keys: keys})
			return err
		}
		return w.c.MouseDown(ctx, at, buttonNames[ev.Button])
	case shinken.PointerUp:
		return w.c.MouseUp(ctx, at, buttonNames[ev.Button])
	default:
		return w.c.Scroll(ctx, at, float64(ev.DX), float64(ev.DY))
	}
}

// Key turns presses and releases back into the key verb's combos: the keys
// held when the first of them is released are one combo.
func (w *wire) Key(ctx context.Context, ev shinken.KeyEvent) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ev.Down {
		w.held = append(w.held, ev.Key)
		w.sent = false
		return nil
	}
	var err error
	if !w.sent && len(w.held) > 0 {
		err = w.c.Key(ctx, strings.Join(w.held, "+"))
		w.sent = true
	}
	if i := slices.Index(w.held, ev.Key); i >= 0 {
		w.held = slices.Delete(w.held, i, i+1)
	}
	return err
}

func (w *wire) Type(ctx context.Context, text string) error { return w.c.TypeText(ctx, text) }

// Snapshot observes through the runtime. Node IDs are element refs. The
// wire carries no tree structure, so each window, frame or dialog is a root
// and the elements after it, in the observation's pre-order, its children.
func (w *wire) Snapshot(ctx context.Context, opts shinken.SnapshotOptions) (*shinken.Tree, error) {
	o, err := w.c.Observe(ctx, &client.ObserveRequest{Desktop: opts.Scope == shinken.TreeDesktop})
	if err != nil {
		return nil, err
	}
	t := &shinken.Tree{}
	root := -1
	for i, e := range o.Elements {
		n := shinken.Node{
			ID: e.Ref, Parent: root, Role: e.Role, Name: e.Name, Description: e.Description,
			Value: e.Value, States: e.States, Actions: e.Actions, Focused: e.Focused,
		}
		switch {
		case e.Role == "frame" || e.Role == "window" || e.Role == "dialog":
			n.Parent, root = -1, i
			if t.Window == "" {
				t.Window = e.Name
			}
		case root >= 0:
			n.Depth = 1
		}
		if len(e.BBox) == 4 {
			x, y := int(e.BBox[0]), int(e.BBox[1])
			n.BBox = image.Rect(x, y, x+int(e.BBox[2]), y+int(e.BBox[3]))
		}
		t.Nodes = append(t.Nodes, n)
	}
	return t, nil
}

func (w *wire) Perform(ctx context.Context, ref string, act shinken.ElementAction) error {
	if act.Op == shinken.OpSetValue {
		return w.c.SetValue(ctx, aci.Ref(ref), act.Text)
	}
	return w.c.InvokeAction(ctx, aci.Ref(ref), act.Action)
}

func (w *wire) ClipboardText(ctx context.Context) (string, error) { return w.c.ClipboardGet(ctx) }

func (w *wire) SetClipboardText(ctx context.Context, text string) error {
	return w.c.ClipboardSet(ctx, text)
}

func (w *wire) Windows(ctx context.Context) ([]shinken.Window, error) {
	list, err := w.c.ListWindows(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]shinken.Window, 0, len(list))
	for _, wi := range list {
		win := shinken.Window{ID: wi.ID, Title: wi.Title, App: wi.App, PID: wi.PID, Active: wi.Active != nil && *wi.Active}
		if len(wi.BBox) == 4 {
			win.BBox = image.Rect(wi.BBox[0], wi.BBox[1], wi.BBox[0]+wi.BBox[2], wi.BBox[1]+wi.BBox[3])
		}
		out = append(out, win)
	}
	return out, nil
}

func (w *wire) Activate(ctx context.Context, id uint64) error { return w.c.ActivateWindow(ctx, id) }

func (w *wire) Launch(ctx context.Context, app string, args []string) error {
	return w.c.LaunchApp(ctx, app, args...)
}

func (w *wire) PointerPosition(ctx context.Context) (image.Point, error) {
	s, err := w.shot(ctx, aci.ScopeScreen)
	if err != nil {
		return image.Point{}, err
	}
	if s.Pointer == nil {
		return image.Point{}, fmt.Errorf("shinkentest: the screenshot reports no pointer")
	}
	return *s.Pointer, nil
}

func (w *wire) Platform() aci.Platform { return w.c.Welcome().Server.Platform }
