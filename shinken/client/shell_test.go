package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// readUntil reads the shell's output until it contains want (which the
// terminal's echo of the input must not contain).
func readUntil(t *testing.T, sh *client.Shell, want string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var all strings.Builder
	for !strings.Contains(all.String(), want) {
		if err := sh.Wait(ctx); err != nil {
			t.Fatalf("waiting for %q: %v; got %q", want, err, all.String())
		}
		out, _ := sh.Read()
		all.WriteString(out)
	}
	return all.String()
}

// TestShell drives a shell across writes: its cwd and variables persist,
// it has a terminal, and Close ends it and its jobs.
func TestShell(t *testing.T) {
	c, deny := execRig(t)
	ctx := t.Context()
	dir := t.TempDir()
	sh, err := c.StartShell(ctx, &client.ShellOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Write(ctx, "cd /tmp && X=42\n"); err != nil {
		t.Fatal(err)
	}
	if err := sh.Write(ctx, "echo \"at $(pwd) x=$X\"; [ -t 0 ] && echo on-a-\"t\"ty\n"); err != nil {
		t.Fatal(err)
	}
	out := readUntil(t, sh, "on-a-tty")
	if !strings.Contains(out, "at /tmp x=42") {
		t.Fatalf("the shell did not keep its state:\n%s", out)
	}
	if err := sh.Write(ctx, "sleep 1234.5 &\necho start\"\"ed\n"); err != nil {
		t.Fatal(err)
	}
	readUntil(t, sh, "started")
	deny.Store(true)
	if err := sh.Write(ctx, "echo refused\n"); !errors.Is(err, aci.ErrPermissionDenied) {
		t.Fatalf("a write the Authorizer refuses: %v", err)
	}
	deny.Store(false)
	if err := sh.Close(ctx); err != nil {
		t.Fatal(err)
	}
	<-sh.Done()
	if exit, err := sh.Exit(); exit == nil || err != nil {
		t.Fatalf("exit %+v, %v", exit, err)
	}
	if err := sh.Write(ctx, "echo late\n"); !errors.Is(err, client.ErrShellEnded) {
		t.Fatalf("a write after Close: %v", err)
	}
	// The background job died with the shell.
	res, err := c.Exec(ctx, &aci.ExecRequest{Shell: "pgrep -f 'sleep 1234[.]5' || true"})
	if err != nil || strings.TrimSpace(res.Stdout) != "" {
		t.Fatalf("the shell's job outlived it: %q %v", res.Stdout, err)
	}
}

// TestShellExits sees a shell that exits by itself end.
func TestShellExits(t *testing.T) {
	c, _ := execRig(t)
	ctx := t.Context()
	sh, err := c.StartShell(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Write(ctx, "exit 3\n"); err != nil {
		t.Fatal(err)
	}
	<-sh.Done()
	if err := sh.Wait(ctx); !errors.Is(err, client.ErrShellEnded) {
		sh.Read()
		if err := sh.Wait(ctx); !errors.Is(err, client.ErrShellEnded) {
			t.Fatalf("wait after the end: %v", err)
		}
	}
	sh.Close(ctx)
}
