package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/daemon"

	"github.com/mdlayher/vsock"

	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// vsockLoopbackVar is set to 1 by the test command when it made the
// kernel's vsock loopback available (module vsock_loopback): then the ACI
// session over vsock must run, and its failure is the test's.
const vsockLoopbackVar = "SHINKEN_VSOCK_LOOPBACK"

// TestACIOverSockets runs an ACI session end to end (hello, screenshot,
// observe, exec, every message validated against the schema) and /healthz
// over the daemon's socket listeners: a unix socket always, and vsock
// where the kernel can connect to its own listeners (loopback, context id
// 1). The test command loads vsock_loopback where it can and says so in
// SHINKEN_VSOCK_LOOPBACK; without it, a machine whose vsock cannot reach
// itself (a VM guest without the loopback transport) runs the listener
// and reports the dial's error.
func TestACIOverSockets(t *testing.T) {
	bin := build(t, t.TempDir(), ".", "example")
	t.Run("unix", func(t *testing.T) {
		sock := filepath.Join(t.TempDir(), "aci.sock")
		d := startListening(t, bin, "unix:"+sock)
		if want := "unix:" + sock + " (path /aci)"; d.aci != want {
			t.Fatalf("printed %q, want %q", d.aci, want)
		}
		sessionOver(t, d, func(ctx context.Context) (net.Conn, error) {
			var nd net.Dialer
			return nd.DialContext(ctx, "unix", sock)
		})
	})
	t.Run("vsock", func(t *testing.T) {
		required := os.Getenv(vsockLoopbackVar) == "1"
		if _, err := os.Stat("/dev/vsock"); err != nil {
			if required {
				t.Fatalf("%s=1 but no /dev/vsock: %v", vsockLoopbackVar, err)
			}
			t.Logf("no vsock device (%v): TestListenVsockAddress checks the error; no session over vsock here", err)
			return
		}
		d := startListening(t, bin, "vsock:0")
		m := regexp.MustCompile(`^vsock:(\d+) \(path /aci\)$`).FindStringSubmatch(d.aci)
		if m == nil {
			t.Fatalf("printed %q", d.aci)
		}
		port, _ := strconv.ParseUint(m[1], 10, 32)
		dialer := func(context.Context) (net.Conn, error) { return vsock.Dial(vsock.Local, uint32(port), nil) }
		c, err := dialer(context.Background())
		if err != nil {
			if required {
				t.Fatalf("%s=1 but dialing the daemon's vsock port %d on context id 1 failed: %v", vsockLoopbackVar, port, err)
			}
			// The daemon listens; only this machine cannot reach itself.
			t.Logf("the daemon listens on vsock port %d, but this kernel cannot dial its own listeners (no vsock loopback transport): %v", port, err)
			d.stop(t)
			return
		}
		c.Close()
		sessionOver(t, d, dialer)
	})
}

// sessionOver drives a session and /healthz through dial, then stops d.
func sessionOver(t *testing.T, d *running, dial func(ctx context.Context) (net.Conn, error)) {
	t.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) }}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	resp, err := hc.Get("http://sandbox" + daemon.PathHealthz)
	if err != nil {
		t.Fatalf("/healthz: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %d", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	proxy := schematest.NewProxyVia(t, "ws://sandbox", hc)
	c, err := client.Dial(ctx, proxy.URL+daemon.PathACI, &client.DialOptions{Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Screenshot(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if obs, err := c.Observe(ctx, nil); err != nil || len(obs.Elements) == 0 {
		t.Fatalf("observe: %v", err)
	}
	res, err := c.Exec(ctx, &aci.ExecRequest{Argv: []string{"echo", "over the socket"}})
	if err != nil || res.Stdout != "over the socket\n" {
		t.Fatalf("exec: %+v %v", res, err)
	}
	c.Close()
	// The welcome, the screenshot (a binary frame), the observation and
	// the exec's result.
	if text, binary := proxy.Counts(); text+binary < 4 {
		t.Errorf("%d text and %d binary messages validated", text, binary)
	}
	d.stop(t)
}

// startListening runs the daemon on listen (a unix or vsock address,
// which prints no page URL) and waits for its ACI line.
func startListening(t *testing.T, bin, listen string) *running {
	t.Helper()
	cmd := exec.Command(bin, "-listen", listen, "-token", "tok")
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
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := urlLine.FindStringSubmatch(sc.Text()); m != nil && m[1] == "ACI" {
				found <- strings.TrimSpace(strings.TrimPrefix(sc.Text(), "ACI:"))
			}
		}
		close(found)
		d.exited <- cmd.Wait()
	}()
	select {
	case line, ok := <-found:
		if !ok {
			t.Fatal(errors.New("the daemon exited before naming its ACI address"))
		}
		d.aci = line
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon named no ACI address within 30 s")
	}
	return d
}
