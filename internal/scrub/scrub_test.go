package scrub

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const (
	secret    = "s3cr3t-value-9c1e"
	helperEnv = "SCRUB_TEST_HELPER"
)

// TestMain lets the test binary be the process that scrubs itself: a
// process's own start-up blocks are only set by exec.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		keep := strings.Clone(os.Args[len(os.Args)-1])
		v, ok, err := Env("SCRUB_TEST_SECRET")
		if err == nil {
			err = Arg(keep)
		}
		environ, _ := os.ReadFile("/proc/self/environ")
		cmdline, _ := os.ReadFile("/proc/self/cmdline")
		switch {
		case err != nil:
			os.Stdout.WriteString("error: " + err.Error())
		case !ok || v != secret || keep != secret || os.Getenv("SCRUB_TEST_SECRET") != "":
			os.Stdout.WriteString("wrong value: " + v)
		case bytes.Contains(environ, []byte(secret)), bytes.Contains(cmdline, []byte("="+secret)), bytes.HasSuffix(cmdline, []byte(secret+"\x00")):
			os.Stdout.WriteString("still readable")
		case !bytes.Contains(cmdline, []byte("\x00a"+secret+"\x00")):
			os.Stdout.WriteString("an argument that only holds the secret was changed")
		case !bytes.Contains(environ, []byte("SCRUB_TEST_OTHER=kept\x00")):
			os.Stdout.WriteString("another variable was lost")
		default:
			os.Stdout.WriteString("ok")
		}
		return
	}
	os.Exit(m.Run())
}

// TestScrub: a process started with a secret in its environment and on
// its command line no longer shows it in /proc/self/environ or cmdline
// once it called Env and Arg, and keeps the values it cloned.
func TestScrub(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-x="+secret, "a"+secret, secret)
	cmd.Env = append(os.Environ(), helperEnv+"=1", "SCRUB_TEST_SECRET="+secret, "SCRUB_TEST_OTHER=kept")
	out, err := cmd.Output()
	if err != nil || string(out) != "ok" {
		t.Fatalf("helper: %v, %q", err, out)
	}
}
