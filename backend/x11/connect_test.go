package x11

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"shinken.dev/go/internal/xvfb"
)

func TestParseDisplay(t *testing.T) {
	for _, c := range []struct {
		in   string
		want displayName
	}{
		{":0", displayName{network: "unix", number: "0"}},
		{":12.1", displayName{network: "unix", number: "12", screen: 1}},
		{"unix:3", displayName{network: "unix", number: "3"}},
		{"host:2.0", displayName{network: "tcp", host: "host", number: "2"}},
		{"tcp/10.0.0.1:1", displayName{network: "tcp", host: "10.0.0.1", number: "1"}},
		{"/tmp/launch-x/org.x:0", displayName{network: "unix", socket: "/tmp/launch-x/org.x", number: "0"}},
	} {
		got, err := parseDisplay(c.in)
		if err != nil || got != c.want {
			t.Errorf("parseDisplay(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "0", ":", ":x", ":1.y", "host:-1"} {
		if _, err := parseDisplay(bad); !errors.Is(err, ErrConnect) {
			t.Errorf("parseDisplay(%q): %v", bad, err)
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
		d, err := parseDisplay(display)
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
	if _, err := readXauthority(truncated); !errors.Is(err, ErrConnect) {
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

// TestOpenAuthority connects with the session's authority file, and fails
// to connect with a wrong cookie or none.
func TestOpenAuthority(t *testing.T) {
	s := newSession(t, &xvfb.Options{Width: 320, Height: 240, NoWM: true}, nil)
	ctx := ctxT(t)
	dir := t.TempDir()
	wrong := filepath.Join(dir, "wrong")
	os.WriteFile(wrong, xauthBytes(xauthEntry{family: familyWild, name: "MIT-MAGIC-COOKIE-1", data: []byte("0000000000000000")}), 0o600)
	for _, path := range []string{wrong, filepath.Join(dir, "missing")} {
		b, err := Open(ctx, &Options{Display: s.srv.Display, Xauthority: path})
		if err == nil {
			b.Close()
			t.Fatalf("Open with authority %s succeeded", path)
		}
		if !errors.Is(err, ErrConnect) {
			t.Fatalf("Open with authority %s: %v", path, err)
		}
	}
	if _, err := Open(ctx, &Options{Display: ":99999"}); !errors.Is(err, ErrConnect) {
		t.Fatalf("Open of a display that does not exist: %v", err)
	}
	good, err := Open(ctx, &Options{Display: s.srv.Display, Xauthority: s.srv.Xauthority})
	if err != nil {
		t.Fatal(err)
	}
	d, err := good.Display(ctx)
	if err != nil || d.W != 320 || d.H != 240 {
		t.Fatalf("display %+v %v", d, err)
	}
	good.Close()
	good.Close() // twice is fine
}
