package machine_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/backend/x11"
	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/internal/xvfb/xvfbtest"
	"shinken.dev/go/shinken/aci"
)

// TestOpenOpenerFails opens a file on an X11 desktop whose xdg-open (a
// stand-in on PATH) fails a moment after it starts, succeeds, or runs on
// as an opener that runs the application itself: the failure is an error
// with the opener's message, the others are opened.
func TestOpenOpenerFails(t *testing.T) {
	srv := xvfbtest.Start(t, nil)
	bin := t.TempDir()
	opener := filepath.Join(bin, "xdg-open")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx := t.Context()
	b, err := x11.Open(ctx, &x11.Options{Display: srv.Display, Xauthority: srv.Xauthority, LaunchEnv: []string{xvfb.MarkerVar + "=" + srv.Marker}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	env := append(os.Environ(), "DISPLAY="+srv.Display, "XAUTHORITY="+srv.Xauthority, xvfb.MarkerVar+"="+srv.Marker)
	c := windowRig(t, b, env, nil)
	target := filepath.Join(t.TempDir(), "doc.txt")
	os.WriteFile(target, []byte("x"), 0o644)
	ran := filepath.Join(t.TempDir(), "ran")
	for _, tc := range []struct {
		name, script string
		fails        bool
	}{
		{"fails", `sleep 0.2; echo "xdg-open: no method available for opening '$1'" >&2; exit 3`, true},
		{"hands over", `echo "$1" >` + ran + `; exit 0`, false},
		// It runs until the test removes ran, then exits.
		{"runs the application", `echo $$ >` + ran + `.pid; echo "$1" >` + ran + `; while [ -e ` + ran + ` ]; do sleep 0.05; done`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(ran)
			if err := os.WriteFile(opener, []byte("#!/bin/sh\n"+tc.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			err := c.Open(ctx, target)
			if tc.fails {
				if !errors.Is(err, aci.ErrBackend) || !strings.Contains(err.Error(), "no method available") {
					t.Fatalf("an opener that failed: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(ran); err != nil || strings.TrimSpace(string(b)) != target {
				t.Fatalf("the opener was given %q (%v), want %q", b, err, target)
			}
			os.Remove(ran)
			if b, err := os.ReadFile(ran + ".pid"); err == nil {
				pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				deadline := time.Now().Add(time.Minute)
				for procfs.Alive(pid) {
					if time.Now().After(deadline) {
						t.Fatalf("the opener %d did not end", pid)
					}
					time.Sleep(10 * time.Millisecond) // polling for the opener's end, within the hang guard
				}
			}
		})
	}
}
