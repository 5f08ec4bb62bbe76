package guard_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/escouade/gate/gatetest"
	"shinken.dev/go/escouade/guard"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/citest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// TestGateCorpus runs the gate's corpora for real with the shipped guard
// as the judge, configured for a realistic agent whose writable root is
// each case's scratch folder: no hostile line it allows touches its
// victim, and every benign line is allowed and runs.
func TestGateCorpus(t *testing.T) {
	citest.NeedPrograms(t, agentAllow...)
	var mu sync.Mutex
	guards := map[string]*guard.Guard{} // by case folder
	judge := func(req protocol.PermissionRequest) bool {
		cwd, _ := req.Input["cwd"].(string)
		// The case's folder holds the victim; a case may run in a folder
		// beneath it.
		for cwd != "/" && cwd != "." {
			if _, err := os.Stat(filepath.Join(cwd, "victim")); err == nil {
				break
			}
			cwd = filepath.Dir(cwd)
		}
		if cwd == "/" || cwd == "." {
			return false
		}
		mu.Lock()
		g := guards[cwd]
		mu.Unlock()
		if g == nil {
			var err error
			if g, err = guard.New(&guard.Policy{Allow: agentAllow, Write: []string{filepath.Join(cwd, "scratch")}}); err != nil {
				t.Error(err)
				return false
			}
			mu.Lock()
			guards[cwd] = g
			mu.Unlock()
		}
		return g.Judge(req).Verdict == protocol.Allow
	}
	e := osexec.New(nil)
	run := func(ctx context.Context, req aci.ExecRequest) (int, error) {
		p, err := e.Start(ctx, req)
		if err != nil {
			return 0, err
		}
		out, err := shinken.Collect(p, 1<<20)
		return out.Status.Code, err
	}
	t.Run("hostile", func(t *testing.T) { gatetest.Hostile(t, "../gate/testdata/hostile", judge, run) })
	t.Run("benign", func(t *testing.T) { gatetest.Benign(t, "../gate/testdata/benign", judge, run) })
}
