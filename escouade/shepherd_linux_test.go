package escouade_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shinken.dev/go/escouade"
)

// TestShepherdSaysHowItEnded: through a shepherd, a program's end reaches
// the plugin as it would without one (its exit status; null when a signal
// killed it), a program that cannot start fails its start and leaves no
// shepherd behind, and the programs' standard streams are theirs.
func TestShepherdSaysHowItEnded(t *testing.T) {
	defer escouade.SetContainment("shepherd")()
	before := len(processesBelow(os.Getpid()))
	v := newValidator(t)
	h, _, _, _ := procHost(t)
	lp := startLinePlugin(t, h, v, "ends", `,"permissions":{"commands":["sh -c *"]}`, "")
	for _, tc := range []struct {
		script string
		code   any
	}{
		{"exit 0", 0.0},
		{"exit 3", 3.0},
		{"kill -KILL $$", nil},
		{"kill -TERM $$", nil},
		{"kill -SEGV $$", nil},
	} {
		if _, code := lp.run(t, map[string]any{"command": "sh", "args": []string{"-c", tc.script}}); code != tc.code {
			t.Errorf("%s: code %v, want %v", tc.script, code, tc.code)
		}
	}
	// Its input and output are the program's own: what it reads is what
	// the plugin wrote, and its output ends when it does.
	var r struct{ Proc int64 }
	if err := lp.call("proc/spawn", map[string]any{"command": "sh", "args": []string{"-c", "read x; echo got $x; echo err >&2"}}, &r); err != nil {
		t.Fatal(err)
	}
	if err := lp.call("proc/write", map[string]any{"proc": r.Proc, "data": "hello\n"}, nil); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for {
		n := lp.next(t, "", func(n note) bool { return num(n.params["proc"]) == r.Proc })
		if n.method == "proc/exit" {
			break
		}
		if n.params["stream"] != "stderr" {
			out.WriteString(n.params["data"].(string))
		}
	}
	if out.String() != "got hello\n" {
		t.Errorf("the program wrote %q", out.String())
	}

	// A run.command that is no program fails Start, with no shepherd left.
	dir := writePlugin(t, "noexec", `"run":{"command":["./plugin.sh"]}`, map[string]string{"plugin.sh": "not a program"})
	if err := os.Chmod(filepath.Join(dir, "plugin.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "exec format error") {
		t.Errorf("Start of a program that is none: %v", err)
	}
	lp.p.Stop(context.Background())
	waitFor(t, "no shepherd left", func() bool { return len(processesBelow(os.Getpid())) <= before })
}

// TestShepherdKilled: where the shepherd is no pid namespace's init (the
// Host may make none), a program that kills its shepherd ends with it (its
// parent-death signal), the journal says that what it started may outlive
// it, and the Host carries on. Where it is one, the program cannot:
// TestHostileShepherdRegicide.
func TestShepherdKilled(t *testing.T) {
	defer escouade.SetContainment("shepherd")()
	defer escouade.SetPIDNamespaces(false)()
	before := len(processesBelow(os.Getpid()))
	v := newValidator(t)
	withTranscript(t, v)
	h, j := newHost(t, &escouade.Options{CrashBudget: 1})
	p := startCommand(t, h, v, "parricide", "", "parricide")
	waitFor(t, "the journal says the shepherd was killed", func() bool {
		for _, e := range j.find("parricide", "plugin ended unasked") {
			if strings.Contains(fmt.Sprint(e.attrs["status"]), "its shepherd was killed") {
				return true
			}
		}
		return false
	})
	p.Stop(context.Background())
	waitFor(t, "no process of the plugin left", func() bool { return len(processesBelow(os.Getpid())) <= before })
}
