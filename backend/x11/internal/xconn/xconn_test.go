package xconn

import (
	"bytes"
	"encoding/binary"
	"github.com/jezek/xgb"
	"log"
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestParseDisplay(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Display
	}{
		{":0", Display{network: "unix", number: "0"}},
		{":12.1", Display{network: "unix", number: "12", Screen: 1}},
		{"unix:3", Display{network: "unix", number: "3"}},
		{"host:2.0", Display{network: "tcp", host: "host", number: "2"}},
		{"tcp/10.0.0.1:1", Display{network: "tcp", host: "10.0.0.1", number: "1"}},
		{"/tmp/launch-x/org.x:0", Display{network: "unix", socket: "/tmp/launch-x/org.x", number: "0"}},
	} {
		got, err := ParseDisplay(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseDisplay(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "0", ":", ":x", ":1.y", "host:-1"} {
		if _, err := ParseDisplay(bad); err == nil {
			t.Errorf("ParseDisplay(%q): %v", bad, err)
		}
	}
}

func xauthBytes(entries ...xauthEntry) []byte {
	var b bytes.Buffer
	field := func(s []byte) {
		binary.Write(&b, binary.BigEndian, uint16(len(s)))
		b.Write(s)
	}
	for _, e := range entries {
		binary.Write(&b, binary.BigEndian, e.family)
		field(e.address)
		field([]byte(e.number))
		field([]byte(e.name))
		field(e.data)
	}
	return b.Bytes()
}

// TestXauthority parses an authority file and picks cookies as libXau
// would.
func TestXauthority(t *testing.T) {
	const mit = "MIT-MAGIC-COOKIE-1"
	entries := []xauthEntry{
		{family: familyLocal, address: []byte("otherhost"), number: "1", name: mit, data: []byte("other-host")},
		{family: familyLocal, address: []byte("myhost"), number: "1", name: "XDM-AUTHORIZATION-1", data: []byte("not-mit")},
		{family: familyLocal, address: []byte("myhost"), number: "1", name: mit, data: []byte("local-1")},
		{family: familyInternet, address: net.IPv4(10, 0, 0, 5).To4(), number: "2", name: mit, data: []byte("inet-2")},
		{family: familyWild, number: "", name: mit, data: []byte("wild-any")},
	}
	path := filepath.Join(t.TempDir(), "Xauthority")
	if err := os.WriteFile(path, xauthBytes(entries...), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readXauthority(path)
	if err != nil || len(got) != len(entries) {
		t.Fatalf("readXauthority: %d entries, %v", len(got), err)
	}
	pick := func(display string, remote net.IP) string {
		d, err := ParseDisplay(display)
		if err != nil {
			t.Fatal(err)
		}
		return string(cookieFor(got, d, "myhost", remote))
	}
	if c := pick(":1", nil); c != "local-1" {
		t.Errorf(":1 got %q", c)
	}
	if c := pick(":7", nil); c != "wild-any" {
		t.Errorf(":7 got %q", c)
	}
	if c := pick("10.0.0.5:2", net.IPv4(10, 0, 0, 5)); c != "inet-2" {
		t.Errorf("10.0.0.5:2 got %q", c)
	}
	if c := pick("10.0.0.6:2", net.IPv4(10, 0, 0, 6)); c != "wild-any" {
		t.Errorf("10.0.0.6:2 got %q", c)
	}
	if none, err := readXauthority(filepath.Join(t.TempDir(), "missing")); err != nil || none != nil {
		t.Errorf("missing file: %v %v", none, err)
	}
	truncated := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(truncated, xauthBytes(entries...)[:30], 0o600)
	if _, err := readXauthority(truncated); err == nil {
		t.Errorf("truncated file: %v", err)
	}
}

func TestSetupRequest(t *testing.T) {
	cookie := []byte("0123456789abcdef")
	b := setupRequest(cookie)
	if b[0] != 'l' || binary.LittleEndian.Uint16(b[2:]) != 11 || binary.LittleEndian.Uint16(b[6:]) != 18 ||
		binary.LittleEndian.Uint16(b[8:]) != 16 || string(b[12:30]) != "MIT-MAGIC-COOKIE-1" ||
		string(b[32:48]) != string(cookie) || len(b) != 48 {
		t.Fatalf("setup request % x", b)
	}
	if b := setupRequest(nil); len(b) != 12 || b[6] != 0 || b[8] != 0 {
		t.Fatalf("setup request without cookie % x", b)
	}
}

// TestQuietXGB drops xgb's line about the authority it looked for (always
// false here: the setup request is replaced) and passes on every other.
func TestQuietXGB(t *testing.T) {
	saved := xgb.Logger
	defer func() { xgb.Logger = saved }()
	var buf bytes.Buffer
	xgb.Logger = log.New(&buf, "XGB: ", 0)
	quiet()
	xgb.Logger.Printf("Could not get authority info: %v", "open: no such file")
	xgb.Logger.Println("Trying connection without authority info...")
	xgb.Logger.Printf("A read error is unrecoverable: %s", "EOF")
	if got := buf.String(); got != "XGB: A read error is unrecoverable: EOF\n" {
		t.Fatalf("xgb's logger wrote %q", got)
	}
}
