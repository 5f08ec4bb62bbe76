package escouade_test

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/protocol"
)

// hostCPU is the CPU time this process (the Host, and the test around it)
// has used.
func hostCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestHostileDecoderFloods: a command plugin writes, back to back, the
// lines that once cost the Host the most per byte it read. An object of
// 90,000 keys took 12 s of the Host's CPU in a quadratic duplicate check;
// a batch of half a million 1s made half a million errors, held in one
// answer (the Host's RSS went 13 MiB to 686 MiB). Now each line is refused
// with one error (an object holds at most strictjson.MaxKeys keys, a batch
// jsonrpc.MaxBatch messages), the Host's CPU and memory for the whole flood
// stay small, the plugin still decides, and Close keeps its deadline.
func TestHostileDecoderFloods(t *testing.T) {
	for _, tt := range []struct{ mode, entry string }{
		{"flood-keys", "not JSON"},
		{"flood-batch", "not JSON-RPC 2.0"},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			v := newValidator(t)
			withTranscript(t, v)
			h, j := newHost(t, &escouade.Options{Projects: projects()})
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			cpu := hostCPU(t)
			startCommand(t, h, v, "flood", `,"permissions":{"decide":true}`, tt.mode)
			waitFor(t, "every line answered", func() bool { return len(j.find("flood", tt.entry)) >= floodLines })
			used := hostCPU(t) - cpu
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d lines of a MiB: %v of the Host's CPU, %d MiB allocated", floodLines, used, alloc>>20)
			// Reading 20 MiB costs a fraction of this; the flood once cost
			// 12 s a line, and 47 MiB of answer a line.
			if used > 5*time.Second {
				t.Errorf("the flood took %v of the Host's CPU", used)
			}
			if alloc > 256<<20 {
				t.Errorf("the flood made the Host allocate %d MiB", alloc>>20)
			}
			if n := len(j.find("flood", tt.entry)); n != floodLines {
				t.Errorf("%d lines answered, want one answer each: %d", n, floodLines)
			}
			d, err := h.Decide(context.Background(), protocol.PermissionRequest{ID: "r", Kind: "command", Input: map[string]any{"command": "ls"}}, escouade.About{Project: "p"})
			if err != nil || d.Verdict != protocol.Allow {
				t.Errorf("Decide after the flood = %+v, %v", d, err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := h.Close(ctx); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}
