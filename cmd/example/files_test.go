package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/backend/x11/atspi/atspitest"
)

// bigFileMiB is the size of the file TestMCPFilesTypeScript moves: 12 MiB
// (6 chunks in, 24 out, four times), or as many MiB as
// SHINKEN_BIG_FILE_MIB says (1024 for the gigabyte, about 17
// minutes a combination on a loaded 2-core machine: past go test's
// default timeout, so run it alone, with -timeout).
func bigFileMiB() int {
	if n, err := strconv.Atoi(os.Getenv("SHINKEN_BIG_FILE_MIB")); err == nil && n > 0 {
		return n
	}
	return 12
}

// manyEntries makes dir/many with n entries.
func manyEntries(t *testing.T, dir string, n int) {
	t.Helper()
	many := filepath.Join(dir, "many")
	if err := os.Mkdir(many, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(many, fmt.Sprintf("entry-%05d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var shaLine = regexp.MustCompile(`(?m)^sha256 ([0-9a-f]{64})$`)

// runFilesNode runs files_client.cjs and checks what it reports: the
// SHA-256 of the file it wrote matches the one it read back (checked on
// its side) and the one written on this machine, which it read while the
// file was there; 20,000 entries listed.
func runFilesNode(t *testing.T, env []string, args ...string) {
	t.Helper()
	node, modules := nodeSDK(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("testdata", "files_client.cjs")}, args...)...)
	cmd.Env = append(env, "NODE_PATH="+modules)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s", strings.Join(args[:4], " "), err, out.String())
	}
	text := out.String()
	t.Log(text)
	if !strings.HasSuffix(strings.TrimSpace(text), "ok") || !strings.Contains(text, "entries 20000\n") {
		t.Fatalf("node did not finish:\n%s", text)
	}
	m := shaLine.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no sha256 line:\n%s", text)
	}
	// The same bytes, made here: the file on disk was what the client sent.
	want := sha256.New()
	size := bigFileMiB() << 20
	for off := 0; off < size; off += 2 << 20 {
		want.Write(chunkAt(off, min(2<<20, size-off)))
	}
	if got := hex.EncodeToString(want.Sum(nil)); got != m[1] {
		t.Fatalf("the client's sha256 %s, the contents' %s", m[1], got)
	}
}

// chunkAt is files_client.cjs's chunkAt: the file's contents from off.
func chunkAt(off, n int) []byte {
	b := make([]byte, n)
	x := uint32(off / 4)
	for i := 0; i < n; i += 4 {
		x = (x^(x>>13))*0x5bd1e995 + uint32(i)
		b[i], b[i+1], b[i+2], b[i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
	}
	return b
}

// TestMCPFilesTypeScript moves a big file (bigFileMiB) into the computer and back out
// in chunks, and lists 20,000 entries in pages, with the official
// TypeScript SDK's client: over -mcp stdio and over /mcp, on the headless
// desktop and on X11 (a real X session). (The official Python SDK is not
// installable here, so it is not tried.) The shipped guard judges every
// call, as by default; the folder is the agent's to change (-write).
func TestMCPFilesTypeScript(t *testing.T) {
	bin := build(t, t.TempDir(), ".", "example")
	mib := fmt.Sprint(bigFileMiB())
	t.Run("headless", func(t *testing.T) {
		t.Run("stdio", func(t *testing.T) {
			dir := t.TempDir()
			manyEntries(t, dir, 20000)
			runFilesNode(t, os.Environ(), "stdio", bin, "tok", dir, mib, "-write", dir)
		})
		t.Run("http", func(t *testing.T) {
			dir := t.TempDir()
			manyEntries(t, dir, 20000)
			d := start(t, bin, "-write", dir)
			runFilesNode(t, os.Environ(), "http", mcpURL(d.aci), "tok", dir, mib)
			d.stop(t)
		})
	})
	t.Run("x11", func(t *testing.T) {
		sess := atspitest.Start(t)
		env := append(sess.Env(), "AT_SPI_BUS_ADDRESS="+sess.A11yBus)
		t.Run("stdio", func(t *testing.T) {
			dir := t.TempDir()
			manyEntries(t, dir, 20000)
			runFilesNode(t, env, "stdio", bin, "tok", dir, mib, "-backend", "x11", "-write", dir)
		})
		t.Run("http", func(t *testing.T) {
			dir := t.TempDir()
			manyEntries(t, dir, 20000)
			cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-token", "tok", "-backend", "x11", "-write", dir)
			cmd.Env = env
			d := startCmd(t, cmd)
			runFilesNode(t, env, "http", mcpURL(d.aci), "tok", dir, mib)
			d.stop(t)
		})
	})
}
