package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// browser is headless Chromium driven over the DevTools protocol: just the
// calls the page tests need, on one page target.
type browser struct {
	t       *testing.T
	cmd     *exec.Cmd
	ws      *websocket.Conn
	session string

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan cdpReply
	done    chan struct{}
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

var devtoolsLine = regexp.MustCompile(`DevTools listening on (ws://\S+)`)

// chromiumPath finds Chromium, failing under CI when it is missing.
func chromiumPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed (scripts/test installs it)")
		}
		t.Skip("chromium is not installed; scripts/test installs it")
	}
	return p
}

// startBrowser starts Chromium and opens url in a page.
func startBrowser(t *testing.T, url string) *browser {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(chromiumPath(t), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1700,1000",
		"--remote-debugging-port=0", "about:blank")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, cmd: cmd, pending: map[int64]chan cdpReply{}, done: make(chan struct{})}
	exited := make(chan struct{})
	found := make(chan string, 1)
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := devtoolsLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
		cmd.Wait()
	}()
	t.Cleanup(func() {
		if b.ws != nil {
			b.ws.CloseNow()
			<-b.done
		}
		cmd.Process.Kill()
		<-exited
	})
	var wsURL string
	select {
	case wsURL = <-found:
	case <-exited:
		t.Fatal("chromium exited before listening")
	case <-time.After(60 * time.Second):
		t.Fatal("chromium printed no DevTools address")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b.ws, _, err = websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.ws.SetReadLimit(-1)
	go b.read()
	var target struct {
		TargetID string `json:"targetId"`
	}
	b.call("Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct {
		SessionID string `json:"sessionId"`
	}
	b.call("Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	b.session = att.SessionID
	b.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": 1700, "height": 1000, "deviceScaleFactor": 1, "mobile": false}, nil)
	b.call("Page.navigate", map[string]any{"url": url}, nil)
	return b
}

func (b *browser) read() {
	defer close(b.done)
	for {
		_, data, err := b.ws.Read(context.Background())
		if err != nil {
			return
		}
		var m struct {
			ID int64 `json:"id"`
			cdpReply
		}
		if json.Unmarshal(data, &m) != nil || m.ID == 0 {
			continue // an event
		}
		b.mu.Lock()
		ch := b.pending[m.ID]
		delete(b.pending, m.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- m.cdpReply
		}
	}
}

// call sends one command to the page (or the browser before attaching)
// and decodes its result into out.
func (b *browser) call(method string, params any, out any) {
	b.t.Helper()
	if err := b.try(method, params, out); err != nil {
		b.t.Fatalf("%s: %v", method, err)
	}
}

func (b *browser) try(method string, params any, out any) error {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpReply, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if b.session != "" {
		msg["sessionId"] = b.session
	}
	data, _ := json.Marshal(msg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.ws.Write(ctx, websocket.MessageText, data); err != nil {
		return err
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return fmt.Errorf("%s", r.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-b.done:
		return fmt.Errorf("the browser connection closed")
	}
}

// eval evaluates a JavaScript expression in the page, awaiting a promise,
// and decodes its value into out.
func (b *browser) eval(expr string, out any) {
	b.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	b.call("Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &r)
	if r.Exception != nil {
		b.t.Fatalf("eval %s: %s %s", expr, r.Exception.Text, r.Exception.Exception.Description)
	}
	if out != nil && len(r.Result.Value) > 0 {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			b.t.Fatalf("eval %s: %v (%s)", expr, err, r.Result.Value)
		}
	}
}

// waitFor polls a JavaScript condition until it holds, in the page's own
// event loop (a promise resolved on the first animation frame that sees
// it), for up to a minute.
func (b *browser) waitFor(cond string) {
	b.t.Helper()
	var ok bool
	b.eval(`new Promise((resolve) => {
		const end = performance.now() + 60000;
		const check = () => {
			let v = false;
			try { v = !!(`+cond+`); } catch (e) {}
			if (v || performance.now() > end) resolve(v); else requestAnimationFrame(check);
		};
		check();
	})`, &ok)
	if !ok {
		b.t.Fatalf("timed out waiting for %s", cond)
	}
}

func (b *browser) mouse(typ string, x, y float64) {
	b.t.Helper()
	p := map[string]any{"type": typ, "x": x, "y": y}
	if typ != "mouseMoved" {
		p["button"], p["clickCount"] = "left", 1
	}
	b.call("Input.dispatchMouseEvent", p, nil)
}

func (b *browser) click(x, y float64) {
	b.t.Helper()
	b.mouse("mouseMoved", x, y)
	b.mouse("mousePressed", x, y)
	b.mouse("mouseReleased", x, y)
}

// key presses one key as a keyboard would: key is the DOM key value; a
// printable one carries its text.
func (b *browser) key(key string, text bool) {
	b.t.Helper()
	down := map[string]any{"type": "keyDown", "key": key}
	if text {
		down["text"] = key
	} else {
		down["type"] = "rawKeyDown"
	}
	b.call("Input.dispatchKeyEvent", down, nil)
	b.call("Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": key}, nil)
}

// screenshot saves the page as a PNG.
func (b *browser) screenshot(path string) {
	b.t.Helper()
	var r struct {
		Data []byte `json:"data"`
	}
	b.call("Page.captureScreenshot", map[string]any{"format": "png"}, &r)
	if err := os.WriteFile(path, r.Data, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// setFile puts a file in the page's file input matching selector.
func (b *browser) setFile(selector, path string) {
	b.t.Helper()
	var doc struct {
		Root struct {
			NodeID int `json:"nodeId"`
		} `json:"root"`
	}
	b.call("DOM.getDocument", map[string]any{}, &doc)
	var q struct {
		NodeID int `json:"nodeId"`
	}
	b.call("DOM.querySelector", map[string]any{"nodeId": doc.Root.NodeID, "selector": selector}, &q)
	b.call("DOM.setFileInputFiles", map[string]any{"nodeId": q.NodeID, "files": []string{path}}, nil)
}
