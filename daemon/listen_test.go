package daemon

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mdlayher/vsock"
)

// TestListenVsockAddress: a bad vsock address is refused with a message
// naming the form; a listener on port 0 names the port it took, or, on a
// machine without a vsock device, the error says what is missing.
func TestListenVsockAddress(t *testing.T) {
	if _, err := listen("vsock:seven"); err == nil || !strings.Contains(err.Error(), "vsock:PORT") {
		t.Fatalf("bad port: %v", err)
	}
	l, err := listen("vsock:0")
	if err != nil {
		if !strings.Contains(err.Error(), "vsock device") {
			t.Fatalf("vsock listen failed without saying why: %v", err)
		}
		t.Logf("no vsock device here (%v): the error is what is checked", err)
		return
	}
	defer l.Close()
	port := l.Addr().(*vsock.Addr).Port
	if want := "vsock:" + strconv.FormatUint(uint64(port), 10) + " (path /aci)"; l.url(PathACI) != want || l.tcp {
		t.Errorf("named %q (tcp %v), want %q", l.url(PathACI), l.tcp, want)
	}
}
