package escouade_test

import (
	"strings"
	"testing"

	"shinken.dev/go/escouade"
)

// TestHostileFloodAnswerEcho: a run.js plugin with no permissions asks,
// back to back, for a secret named by a MiB of DEL (0x7f), and calls log
// with a level of a MiB of it. Each is refused, as it should be; but the
// refusal must not repeat what it refuses whole, as jsonrpc's errors name
// a key by its first 64 bytes: quoted with %q, a DEL is written \x7f and
// then escaped again in JSON, so that each answer is five times the line
// that asked for it (a 1 MiB line makes a 5 MiB answer the Host builds
// and writes, a line of the 8 MiB cap a 40 MiB one), an amplification of
// the Host's memory and writes of the kind the batch bound stopped. A
// method of a MiB is named whole by its methodNotFound too.
func TestHostileFloodAnswerEcho(t *testing.T) {
	const huge = `const huge = "\x7f".repeat(1 << 20);`
	probes := []struct{ name, src, says string }{
		{"secret-key", jsFlood(huge, `escouade.secret(huge).catch((e) => escouade.log("info", "rejected " + e.codeName))`), "rejected notYours"},
		{"log-level", jsFlood(huge, `escouade.call("log", { level: huge, message: "x" }).catch((e) => escouade.log("info", "rejected " + e.codeName))`), "rejected invalidParams"},
		// No amplification, but the same echo: a method of a MiB is named
		// whole in its methodNotFound, where a key is named by 64 bytes.
		{"method-name", jsFlood(`const huge = "m".repeat(1 << 20);`, `escouade.call(huge).catch((e) => escouade.log("info", "rejected " + e.codeName))`), "rejected methodNotFound"},
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			for _, pr := range probes {
				t.Run(pr.name, func(t *testing.T) {
					r := runJSFlood(t, eng.engine, pr.src, pr.says, "")
					_, longest := r.rec.hostLines("")
					t.Logf("%v; the Host's longest line: %d bytes", r.cost, longest)
					if longest > 64<<10 {
						t.Errorf("the Host answered a request of 1 MiB with a line of %d bytes: a refusal repeats what it refuses", longest)
					}
					if eng.engine == escouade.EngineIsolated && r.cost.alloc > 256<<20 {
						t.Errorf("%d refusals made the Host allocate %d MiB", floodLines, r.cost.alloc>>20)
					}
					afterFlood(t, r.h, r.j, r.p)
				})
			}
		})
	}
}

// TestHostileFloodABIMethod: a module calls escouade.call with a method
// named by 17 MiB, which REFERENCE.md says is answered methodNotFound. In
// the Host's process it is (naming the method whole: 17 MiB). Isolated,
// the engine's process sends the call over its control channel as one
// line, past what a line of it may hold (16 MiB): the Host discards the
// line and answers it with a null id, which the engine's process skips,
// waiting for its own answer without end, its control channel held; the
// module never returns from its call, and a call is a wait, which no
// turn's bound ends.
func TestHostileFloodABIMethod(t *testing.T) {
	warmFloodModule(t)
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			h, j, rec := floodHost(t, eng.engine)
			p := startFloodWASM(t, h, "abi-method")
			floodSaid(t, j, rec, p.ID(), "flood done")
			if e := j.find(p.ID(), "flood done"); !strings.Contains(e[0].msg, "code -32601") {
				t.Errorf("the module said %q, want methodNotFound (-32601)", e[0].msg)
			}
			if _, longest := rec.hostLines(""); longest > 64<<10 {
				t.Errorf("the Host answered with a line of %d bytes", longest)
			}
			afterFlood(t, h, j, p)
		})
	}
}
