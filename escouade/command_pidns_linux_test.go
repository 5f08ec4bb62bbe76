package escouade_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"shinken.dev/go/escouade"
)

// shellPlugin answers initialize, then ignores shutdown and the end of its
// input, and waits in a loop of sleeps (the Host gives it no PATH): a
// plugin that ends on SIGTERM's default action alone, or on its trap when
// trap is set. It writes the lines both ways to transcript, as the test
// plugins do, for the schema's check.
func shellPlugin(trap bool, transcript string) string {
	script := `while read -r line; do
  printf '<%s\n' "$line" >>"$1"
  case $line in *'"initialize"'*)
    id=${line#*'"id":'}; id=${id%%[!0-9]*}
    answer='{"jsonrpc":"2.0","id":'$id',"result":{"protocolVersion":1,"capabilities":{}}}'
    printf '>%s\n' "$answer" >>"$1"
    printf '%s\n' "$answer";;
  esac
done
while :; do /bin/sleep 1; done`
	if trap {
		script = "trap 'exit 0' TERM\n" + script
	}
	argv, _ := json.Marshal([]string{"/bin/sh", "-c", script, "shell-plugin", transcript})
	return `"run":{"command":` + string(argv) + `}`
}

// TestNamespaceInitSignals: a command plugin in a pid namespace is not its
// init (its shepherd is, which hands it the Host's SIGTERM): a shell
// plugin with no trap that outlives its input ends by the stop's SIGTERM,
// as without a namespace. (Were it the init, which a Host that cannot
// start a shepherd makes it, it would get SIGTERM only if it handled it.)
func TestNamespaceInitSignals(t *testing.T) {
	defer escouade.SetContainment("auto")()
	needPIDNamespaces(t)
	for _, tc := range []struct {
		name      string
		ns, trap  bool
		sigkilled bool
	}{
		{"namespace", true, false, false},
		{"namespace-trap", true, true, false},
		{"no-namespace", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer escouade.SetPIDNamespaces(tc.ns)()
			v := newValidator(t)
			transcript := filepath.Join(t.TempDir(), "transcript")
			// The SIGTERM step's grace is a hang guard: the test asks
			// whether SIGTERM ends the plugin, not how fast a loaded
			// machine runs its handler. The plugin ignores its closed
			// input, so that step's wait is short.
			h, j := newHost(t, &escouade.Options{StopGrace: 2 * time.Minute})
			escouade.SetInputGrace(h, 200*time.Millisecond)
			p, err := h.Start(context.Background(), writePlugin(t, "shell", shellPlugin(tc.trap, transcript), nil))
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			j.wait(t, "shell", "did not end when its input closed: SIGTERM")
			killed := len(j.find("shell", "did not end on SIGTERM: SIGKILL")) > 0
			if killed != tc.sigkilled {
				t.Errorf("ended by SIGKILL: %v, want %v; the journal holds:\n%s", killed, tc.sigkilled, j.dump())
			}
			v.transcript(transcript)
		})
	}
}
