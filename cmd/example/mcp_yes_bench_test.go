package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/internal/procfs"
)

// BenchmarkShellYes runs `yes` for 60 s at the MCP shell (-mcp stdio, the
// official Go SDK's client, the call waiting for the end) while it samples
// the daemon's resident memory every 50 ms. It reports the daemon's RSS
// before the run (the shell started, warmed by a first call), its peak
// during the run (the sampled VmRSS, and the kernel's VmHWM), and after;
// the ratios are against the RSS before. The call must answer the last
// bytes with a cut note, and the session must answer a call after it.
func BenchmarkShellYes(b *testing.B) {
	bin := benchBin(b)
	const seconds = 60
	for range b.N {
		b.StopTimer()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.Command(bin, "-no-guard", "-mcp", "stdio", "-token", "tok", "-log", "warn")
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
		sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		call := func(input string, waitMS int) (string, ShellOut) {
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"input": input, "wait_ms": waitMS}})
			if err != nil || res.IsError {
				b.Fatalf("shell %q: %v %+v", input, err, res)
			}
			var out ShellOut
			raw, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(raw, &out)
			return res.Content[0].(*mcp.TextContent).Text, out
		}
		pid := cmd.Process.Pid
		call("echo ready", 10000)
		before := rssOf(b, pid)

		var peak float64
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Go(func() {
			t := time.NewTicker(50 * time.Millisecond)
			defer t.Stop()
			for {
				if kb, err := procfs.KiB(pid, "status", "VmRSS:"); err == nil && float64(kb) > peak {
					peak = float64(kb)
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		})
		b.StartTimer()
		text, out := call("timeout 60 yes", (seconds+30)*1000)
		b.StopTimer()
		close(stop)
		wg.Wait()
		hwm, err := procfs.KiB(pid, "status", "VmHWM:")
		if err != nil {
			b.Fatal(err)
		}
		if out.ExitCode == nil || *out.ExitCode != 124 || out.Cut == 0 || !strings.Contains(text, "y\n") || !strings.Contains(text, "cut") {
			b.Fatalf("yes answered exit %v, %d bytes cut, %d bytes of text ending %q", out.ExitCode, out.Cut, len(text), text[max(0, len(text)-80):])
		}
		if text, _ := call("echo still-here", 10000); !strings.Contains(text, "still-here") {
			b.Fatalf("after yes the shell answered %q", text)
		}
		after := rssOf(b, pid)
		sess.Close()
		cmd.Wait()
		cancel()

		b.ReportMetric(before/1024, "MiB-before")
		b.ReportMetric(peak/1024, "MiB-peak")
		b.ReportMetric(float64(hwm)/1024, "MiB-hwm")
		b.ReportMetric(after/1024, "MiB-after")
		b.ReportMetric(peak/before, "x-peak")
		b.ReportMetric(after/before, "x-after")
		b.ReportMetric(float64(out.Cut)/(1<<20)/seconds, "MiB/s-cut")
	}
}

// ShellOut is what the benchmark reads of the shell tool's structured
// content.
type ShellOut struct {
	ExitCode *int `json:"exit_code"`
	Cut      int  `json:"cut"`
}
