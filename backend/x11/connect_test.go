package x11

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"shinken.dev/go/internal/xvfb"
)

// TestOpenAuthority connects with the session's authority file, and fails
// to connect with a wrong cookie or none.
func TestOpenAuthority(t *testing.T) {
	s := newSession(t, &xvfb.Options{Width: 320, Height: 240, NoWM: true}, nil)
	ctx := ctxT(t)
	dir := t.TempDir()
	wrong := filepath.Join(dir, "wrong")
	// One entry for any display (family Wild), with a wrong cookie.
	var entry []byte
	entry = binary.BigEndian.AppendUint16(entry, 65535)
	for _, field := range []string{"", "", "MIT-MAGIC-COOKIE-1", "0000000000000000"} {
		entry = binary.BigEndian.AppendUint16(entry, uint16(len(field)))
		entry = append(entry, field...)
	}
	os.WriteFile(wrong, entry, 0o600)
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
