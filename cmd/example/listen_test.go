package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mdlayher/vsock"
)

// TestListenVsock: a bad vsock address is refused with a message naming
// the form; where the kernel has vsock loopback, the daemon's listener
// serves HTTP over it, and elsewhere the failure says what is missing.
func TestListenVsock(t *testing.T) {
	if _, _, _, err := listen("vsock:seven"); err == nil || !strings.Contains(err.Error(), "vsock:PORT") {
		t.Fatalf("bad port: %v", err)
	}
	l, aci, _, err := listen("vsock:17040")
	if err != nil {
		if !strings.Contains(err.Error(), "vsock device") {
			t.Fatalf("vsock listen failed without saying why: %v", err)
		}
		t.Logf("no vsock here (%v): the error is what the test checks", err)
		return
	}
	defer l.Close()
	if aci != "vsock:17040 (path /aci)" {
		t.Errorf("printed %q", aci)
	}
	srv := &http.Server{Handler: http.HandlerFunc(healthz), ReadHeaderTimeout: time.Second}
	go srv.Serve(l)
	defer srv.Shutdown(context.Background())
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return vsock.Dial(vsock.Local, 17040, nil)
	}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("http://vsock" + pathHealthz)
	if err != nil {
		t.Logf("listening works but loopback dialing does not here: %v", err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz over vsock: %d", resp.StatusCode)
	}
}
