package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// running is the example binary, running.
type running struct {
	cmd    *exec.Cmd
	aci    string // ws:// URL of the ACI
	page   string // http:// URL of the page, token included
	stderr *bytes.Buffer
	exited chan error
}

// built holds each package's binary, built once per test process: a
// build is mostly its link, seconds each, and 45 tests ask for one.
var built struct {
	sync.Mutex
	dir  string
	bins map[string]string
}

// build puts pkg's binary at dir/out (a copy of its one build), and
// returns that path.
func build(t *testing.T, dir, pkg, out string) string {
	t.Helper()
	built.Lock()
	defer built.Unlock()
	src, ok := built.bins[pkg]
	if !ok {
		if built.dir == "" {
			d, err := os.MkdirTemp("", "example-bins-")
			if err != nil {
				t.Fatal(err)
			}
			built.dir, built.bins = d, map[string]string{}
		}
		src = filepath.Join(built.dir, strconv.Itoa(len(built.bins)))
		cmd := exec.Command("go", "build", "-o", src, pkg)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("go build %s: %v", pkg, err)
		}
		built.bins[pkg] = src
	}
	bin := filepath.Join(dir, out)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// removeBuilt removes the builds once the tests ran.
type removeBuilt struct{ *testing.M }

func (m removeBuilt) Run() int {
	code := m.M.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	return code
}

var urlLine = regexp.MustCompile(`(?m)^(ACI|page):\s+(\S+)`)

// start runs the daemon with args on a free port and waits for its URLs.
func start(t *testing.T, bin string, args ...string) *running {
	t.Helper()
	return startCmd(t, exec.Command(bin, append([]string{"-listen", "127.0.0.1:0", "-token", "tok"}, args...)...))
}

// startCmd runs the daemon command and waits for its URLs.
func startCmd(t *testing.T, cmd *exec.Cmd) *running {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &running{cmd: cmd, stderr: &bytes.Buffer{}, exited: make(chan error, 1)}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-d.exited
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		d.exited <- cmd.Wait()
	}()
	deadline := time.After(30 * time.Second)
	for d.aci == "" || d.page == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("daemon exited early:\n%s", d.stderr)
			}
			if m := urlLine.FindStringSubmatch(l); m != nil {
				if m[1] == "ACI" {
					d.aci = m[2]
				} else {
					d.page = m[2]
				}
			}
		case <-deadline:
			t.Fatalf("daemon printed no URLs:\n%s", d.stderr)
		}
	}
	go func() {
		for range lines {
		}
	}()
	return d
}

// stop sends SIGTERM and checks the clean exit.
func (d *running) stop(t *testing.T) {
	t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.exited:
		d.exited <- err // for the cleanup
		if err != nil {
			t.Fatalf("daemon exit: %v\n%s", err, d.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("daemon did not exit after SIGTERM:\n%s", d.stderr)
	}
}

func dial(t *testing.T, ctx context.Context, d *running) *client.Client {
	t.Helper()
	proxy := schematest.NewProxy(t, strings.TrimSuffix(d.aci, "/aci"))
	c, err := client.Dial(ctx, proxy.URL+"/aci", &client.DialOptions{Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDaemon builds the daemon, drives every verb once through the Client
// (every message validated against the schema), then stops it with SIGTERM.
func TestDaemon(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	d := start(t, bin, "-size", "1024x768", "-drain-timeout", "500ms")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := dial(t, ctx, d)

	if sz, err := c.ScreenSize(ctx); err != nil || sz.W != 1024 || sz.H != 768 {
		t.Fatalf("screen size %+v %v", sz, err)
	}
	ws, err := c.ListWindows(ctx)
	if err != nil || len(ws) != 2 {
		t.Fatalf("windows %+v %v (notes and form should be open)", ws, err)
	}
	if _, err := c.Platform(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.Ready(ctx); err != nil || !ok {
		t.Fatalf("ready %v %v", ok, err)
	}
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref := map[string]string{}
	for _, el := range obs.Elements {
		ref[el.Role+" "+el.Name] = el.Ref
	}
	steps := []struct {
		name string
		do   func() error
	}{
		{"click", func() error { return c.Click(ctx, aci.Ref(ref["text Name"])) }},
		{"type_text", func() error { return c.TypeText(ctx, "Ada") }},
		{"key", func() error { return c.Key(ctx, "End") }},
		{"double_click", func() error { return c.DoubleClick(ctx, aci.Ref(ref["text Email"])) }},
		{"set_value", func() error { return c.SetValue(ctx, aci.Ref(ref["text Email"]), "ada@example.com") }},
		{"invoke_action", func() error {
			return c.InvokeAction(ctx, aci.Ref(ref["check box Subscribe to the newsletter"]), "toggle")
		}},
		{"right_click", func() error { return c.RightClick(ctx, aci.Px(600, 600)) }},
		{"move", func() error { return c.Move(ctx, aci.Norm(0.5, 0.5)) }},
		{"scroll", func() error { return c.Scroll(ctx, aci.Px(100, 100), 0, 1) }},
		{"drag", func() error { return c.Drag(ctx, aci.Px(700, 600), aci.Px(800, 650), 30*time.Millisecond) }},
		{"mouse_down", func() error { return c.MouseDown(ctx, aci.Px(900, 700), "") }},
		{"mouse_up", func() error { return c.MouseUp(ctx, aci.Px(900, 700), "") }},
		{"wait", func() error { return c.Wait(ctx, 10*time.Millisecond) }},
		{"clipboard_set", func() error { return c.ClipboardSet(ctx, "copied") }},
		{"clipboard_get", func() error {
			s, err := c.ClipboardGet(ctx)
			if err == nil && s != "copied" {
				err = errors.New("clipboard holds " + s)
			}
			return err
		}},
		{"launch_app", func() error { return c.LaunchApp(ctx, "notes") }},
		{"activate_window", func() error { return c.ActivateWindowTitled(ctx, "form") }},
		{"invoke submit", func() error { return c.InvokeAction(ctx, aci.Ref(ref["push button Submit"]), "") }},
		{"screenshot", func() error {
			_, err := c.Screenshot(ctx, &client.ScreenshotRequest{Format: aci.FormatJPEG})
			return err
		}},
		{"exec", func() error {
			res, err := c.Exec(ctx, &aci.ExecRequest{Argv: []string{"echo", "hi"}})
			if err == nil && res.Stdout != "hi\n" {
				err = errors.New("exec printed " + res.Stdout)
			}
			return err
		}},
		{"screencast", func() error {
			sc, err := c.Screencast(ctx, &client.ScreencastRequest{FPS: 10, Delta: true})
			if err != nil {
				return err
			}
			if _, err := sc.Next(ctx); err != nil {
				return err
			}
			return sc.Stop(ctx)
		}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	after, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(after.TreeText, "Submitted: Ada <ada@example.com>, newsletter: yes.") {
		t.Fatalf("the form was not filled as driven:\n%s", after.TreeText)
	}

	// A command still running when the drain's deadline passes is killed,
	// and its connection closed with 1001.
	st, err := c.ExecStream(ctx, &aci.ExecRequest{Argv: []string{"tail", "-f", "/dev/null"}})
	if err != nil {
		t.Fatal(err)
	}
	d.stop(t)
	if _, err := st.Next(ctx); !errors.Is(err, aci.ErrClosed) {
		t.Fatalf("a running exec after shutdown: %v", err)
	}
	if !strings.Contains(d.stderr.String(), "shutting down") {
		t.Errorf("no shutdown in the log:\n%s", d.stderr)
	}
}

// TestDaemonPluginGate runs the daemon with a plugin that denies deleting
// files, asks about xterm and allows the rest, and no shipped guard: the
// plugin's own answers are what it checks (TestDaemonGuard composes the
// two).
func TestDaemonPluginGate(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	plugins := filepath.Join(dir, "plugins")
	pdir := filepath.Join(plugins, "policy")
	os.MkdirAll(pdir, 0o755)
	build(t, pdir, "./testdata/policy", "policy")
	manifest, _ := os.ReadFile("testdata/policy/plugin.json")
	os.WriteFile(filepath.Join(pdir, "plugin.json"), manifest, 0o644)
	// Faulty plugins beside it keep neither it nor the daemon from
	// starting: a manifest that does not hold, two folders with one id.
	for name, m := range map[string]string{
		"broken": `{"id":"broken"}`,
		"twin-a": `{"id":"twin","version":"1.0.0","protocolVersion":1,"run":{"command":["true"]}}`,
		"twin-b": `{"id":"twin","version":"1.0.0","protocolVersion":1,"run":{"command":["true"]}}`,
	} {
		os.MkdirAll(filepath.Join(plugins, name), 0o755)
		os.WriteFile(filepath.Join(plugins, name, "plugin.json"), []byte(m), 0o644)
	}

	d := start(t, bin, "-no-guard", "-plugins", plugins, "-project", "demo")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := dial(t, ctx, d)

	res, err := c.Exec(ctx, &aci.ExecRequest{Argv: []string{"echo", "allowed"}})
	if err != nil || res.Stdout != "allowed\n" {
		t.Fatalf("allowed exec: %v", err)
	}
	_, err = c.Exec(ctx, &aci.ExecRequest{Argv: []string{"rm", "-rf", "/tmp/nothing-here"}})
	var e *aci.Error
	if !errors.As(err, &e) || e.Code != aci.CodePermissionDenied || e.Detail != "no deleting files here" {
		t.Fatalf("denied exec: %v", err)
	}
	// The plugin reads input.command only: every form of exec reaches it
	// as one command line.
	for _, a := range []*aci.ExecRequest{
		{Shell: "rm -rf /tmp/nothing-here"},
		{Argv: []string{"sh", "-c", "echo forbidden"}},
		{Shell: `sh -c "echo forbidden"`},
		{Argv: []string{"echo", "forbidden"}, Dir: "/"},
	} {
		if _, err := c.Exec(ctx, a); !errors.Is(err, aci.ErrPermissionDenied) {
			t.Errorf("exec %+v: %v, want a refusal", a, err)
		}
	}
	// An ask with no person to ask is a refusal by default.
	if err := c.LaunchApp(ctx, "xterm"); !errors.Is(err, aci.ErrPermissionDenied) {
		t.Fatalf("asked launch: %v", err)
	}
	if err := c.LaunchApp(ctx, "notes"); err != nil {
		t.Fatalf("allowed launch: %v", err)
	}
	d.stop(t)
	for _, want := range []string{"plugin not started", "broken", "twin"} {
		if !strings.Contains(d.stderr.String(), want) {
			t.Errorf("the log does not journal the faulty plugins (%s):\n%s", want, d.stderr)
		}
	}
	facts, _ := os.ReadFile(filepath.Join(pdir, "facts.log"))
	for _, want := range []string{`request.permission {"request":{"id":`, `"tool":"exec"`, `"command":"sh -c 'echo forbidden'"`, `request.answered {`, `"decision":"deny"`} {
		if !strings.Contains(string(facts), want) {
			t.Errorf("facts.log lacks %s:\n%s", want, facts)
		}
	}
}

// TestPage opens the page in headless Chromium and checks from a
// screenshot that the desktop is shown.
func TestPage(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed (scripts/test installs it)")
		}
		t.Skip("chromium is not installed; scripts/test installs it")
	}
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	d := start(t, bin)
	// Virtual time does not wait for the network, so a loaded machine may
	// shoot before the first frame: try again with longer budgets.
	var n int
	var shot string
	for i, budget := range []string{"8000", "20000", "40000"} {
		shot = filepath.Join(dir, fmt.Sprintf("page%d.png", i))
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
			"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--user-data-dir="+filepath.Join(dir, fmt.Sprintf("profile%d", i)), "--window-size=1600,900",
			"--run-all-compositor-stages-before-draw", "--virtual-time-budget="+budget,
			"--screenshot="+shot, d.page)
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		img, err := decodePNG(shot)
		if err != nil {
			t.Fatal(err)
		}
		// The canvas sits at the page's left; the desktop's blue background
		// and its windows must be there, not the canvas's black.
		if n = countBluish(img, image.Rect(20, 60, 1000, 700)); n >= 1000 {
			break
		}
	}
	if n < 1000 {
		keep := filepath.Join(os.TempDir(), "shinken-page-failure.png")
		data, _ := os.ReadFile(shot)
		os.WriteFile(keep, data, 0o644)
		t.Fatalf("the page shows no desktop (%d desktop-blue pixels); screenshot kept at %s", n, keep)
	}
	d.stop(t)
}

func decodePNG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return png.Decode(f)
}

func countBluish(img image.Image, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y += 4 {
		for x := r.Min.X; x < r.Max.X; x += 4 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if cb>>8 > 80 && cb > cr+cr/4 && cb > cg {
				n++
			}
		}
	}
	return n
}

// TestDaemonX11 serves a real X session (Xvfb, openbox, a session bus and
// the accessibility bus) and fills a zenity entry through the ACI alone:
// observe, set the entry by its ref, invoke OK; zenity prints the value.
func TestDaemonX11(t *testing.T) {
	sess := atspitest.Start(t)
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	zenity := sess.Launch(t, "zenity", "--entry", "--title", "Shinken", "--text", "Your name?")

	cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-token", "tok", "-backend", "x11")
	cmd.Env = append(sess.Env(), "AT_SPI_BUS_ADDRESS="+sess.A11yBus)
	d := startCmd(t, cmd)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := dial(t, ctx, d)

	var entry, ok string
	deadline := time.Now().Add(20 * time.Second)
	for entry == "" || ok == "" {
		if time.Now().After(deadline) {
			t.Fatal("zenity's entry and OK button never showed in the tree")
		}
		obs, err := c.Observe(ctx, &client.ObserveRequest{Settle: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		for _, el := range obs.Elements {
			switch {
			case el.Role == "text" && entry == "":
				entry = el.Ref
			case el.Role == "push button" && el.Name == "OK":
				ok = el.Ref
			}
		}
	}
	if err := c.SetValue(ctx, aci.Ref(entry), "Grace Hopper ✓"); err != nil {
		t.Fatal(err)
	}
	shot, err := c.Screenshot(ctx, &client.ScreenshotRequest{Scope: aci.ScopeActiveWindow})
	if err != nil || shot.Width < 100 {
		t.Fatalf("window screenshot: %v", err)
	}
	if err := c.InvokeAction(ctx, aci.Ref(ok), ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-zenity.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("zenity did not exit after OK")
	}
	if got := strings.TrimSpace(zenity.Stdout()); got != "Grace Hopper ✓" {
		t.Fatalf("zenity printed %q", got)
	}
	d.stop(t)
}
