package main

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/daemon"

	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// benchBin builds the daemon once per benchmark.
func benchBin(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	bin := filepath.Join(dir, "example")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// bootDaemon starts the daemon and returns it once /readyz answers 200,
// with the time that took.
func bootDaemon(b *testing.B, bin string, args ...string) (*exec.Cmd, string, time.Duration) {
	b.Helper()
	start := time.Now()
	cmd := exec.Command(bin, append([]string{"-listen", "127.0.0.1:0", "-token", "tok", "-log", "warn"}, args...)...)
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	base := ""
	for base == "" && sc.Scan() {
		if m := urlLine.FindStringSubmatch(sc.Text()); m != nil && m[1] == "ACI" {
			base = "http" + strings.TrimSuffix(strings.TrimPrefix(m[2], "ws"), daemon.PathACI)
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if base == "" {
		cmd.Process.Kill()
		cmd.Wait()
		b.Fatalf("no ACI URL: %s", stderr.String())
	}
	for {
		resp, err := http.Get(base + daemon.PathReadyz)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return cmd, base, time.Since(start)
			}
		}
		if time.Since(start) > time.Minute {
			b.Fatalf("not ready after a minute: %s", stderr.String())
		}
		time.Sleep(time.Millisecond) // a probe's poll
	}
}

func stopDaemon(b *testing.B, cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		b.Fatalf("daemon exit: %v", err)
	}
}

// bootXvfb is the reference for -session: a bare Xvfb, started until it
// accepts connections (it writes its display number once it does).
func bootXvfb(b *testing.B) time.Duration {
	b.Helper()
	start := time.Now()
	r, w, _ := os.Pipe()
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	w.Close()
	bufio.NewReader(r).ReadString('\n')
	took := time.Since(start)
	r.Close()
	cmd.Process.Kill()
	cmd.Wait()
	return took
}

func p50(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// BenchmarkColdStart measures start to /readyz 200: the headless daemon,
// and -session (Xvfb, window manager, session bus, AT-SPI bus, first
// capture), each beside its reference in the same run: a bare /bin/true
// exec for headless, a bare Xvfb start for -session. Run with
// -benchtime=10x for the p50 of 10.
func BenchmarkColdStart(b *testing.B) {
	bin := benchBin(b)
	b.Run("headless", func(b *testing.B) {
		var ds, refs []time.Duration
		for b.Loop() {
			cmd, _, took := bootDaemon(b, bin)
			ds = append(ds, took)
			stopDaemon(b, cmd)
			start := time.Now()
			exec.Command("/bin/true").Run()
			refs = append(refs, time.Since(start))
		}
		b.ReportMetric(float64(p50(ds).Microseconds())/1000, "ms-p50-ready")
		b.ReportMetric(float64(p50(refs).Microseconds())/1000, "ms-p50-true")
		b.ReportMetric(float64(p50(ds))/float64(p50(refs)), "x-true")
	})
	b.Run("session", func(b *testing.B) {
		if _, err := exec.LookPath("Xvfb"); err != nil {
			b.Skip("no Xvfb")
		}
		var ds, refs []time.Duration
		for b.Loop() {
			cmd, _, took := bootDaemon(b, bin, "-backend", "x11", "-session")
			ds = append(ds, took)
			stopDaemon(b, cmd)
			refs = append(refs, bootXvfb(b))
		}
		b.ReportMetric(float64(p50(ds).Microseconds())/1000, "ms-p50-ready")
		b.ReportMetric(float64(p50(refs).Microseconds())/1000, "ms-p50-xvfb")
		b.ReportMetric(float64(p50(ds))/float64(p50(refs)), "x-xvfb")
	})
}

// rssOf returns a process's resident set size in KiB.
func rssOf(b *testing.B, pid int) float64 {
	b.Helper()
	kb, err := procfs.KiB(pid, "status", "VmRSS:")
	if err != nil {
		b.Fatal(err)
	}
	return float64(kb)
}

// descendantsRSS sums the RSS of pid's descendants, in KiB.
func descendantsRSS(b *testing.B, pid int) float64 {
	b.Helper()
	below, err := procfs.Descendants(pid)
	if err != nil {
		b.Fatal(err)
	}
	total := 0.0
	for _, p := range below {
		kb, _ := procfs.KiB(p, "status", "VmRSS:") // 0 for one gone since
		total += float64(kb)
	}
	return total
}

// BenchmarkIdleRSS measures the daemon's idle memory on headless and with
// -session (the daemon, and the desktop's processes beside it), then the
// memory each of 20 extra idle sessions adds.
func BenchmarkIdleRSS(b *testing.B) {
	bin := benchBin(b)
	for _, mode := range []struct {
		name string
		args []string
	}{{"headless", nil}, {"session", []string{"-backend", "x11", "-session"}}} {
		b.Run(mode.name, func(b *testing.B) {
			for b.Loop() {
				cmd, base, _ := bootDaemon(b, bin, mode.args...)
				// One screenshot, so that the capture and encode buffers are
				// part of idle.
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				aciURL := "ws" + strings.TrimPrefix(base, "http") + daemon.PathACI
				first, err := client.Dial(ctx, aciURL, &client.DialOptions{Token: "tok"})
				if err != nil {
					b.Fatal(err)
				}
				first.Screenshot(ctx, nil)
				idle := rssOf(b, cmd.Process.Pid)
				desktop := descendantsRSS(b, cmd.Process.Pid)
				const extra = 20
				var cs []*client.Client
				for range extra {
					c, err := client.Dial(ctx, aciURL, &client.DialOptions{Token: "tok"})
					if err != nil {
						b.Fatal(err)
					}
					cs = append(cs, c)
				}
				with := rssOf(b, cmd.Process.Pid)
				b.ReportMetric(idle/1024, "MiB-daemon")
				b.ReportMetric(desktop/1024, "MiB-desktop-procs")
				b.ReportMetric((with-idle)/extra, "KiB-per-session")
				for _, c := range cs {
					c.Close()
				}
				first.Close()
				cancel()
				stopDaemon(b, cmd)
			}
		})
	}
}

// BenchmarkGuardedDefault measures what the default guard costs the
// daemon, beside -no-guard in the same run, each iteration booting both:
// start to /readyz 200 (the guard pins its programs, hashing each), and
// the p50 of 20 execs of echo over ACI (the gate's view and the guard's
// judgment on every one). Run with -benchtime=10x.
func BenchmarkGuardedDefault(b *testing.B) {
	bin := benchBin(b)
	ctx := context.Background()
	modes := [2][]string{nil, {"-no-guard"}}
	var ready, execs [2][]time.Duration
	for b.Loop() {
		for i, args := range modes {
			cmd, base, took := bootDaemon(b, bin, args...)
			ready[i] = append(ready[i], took)
			c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+daemon.PathACI, &client.DialOptions{Token: "tok"})
			if err != nil {
				b.Fatal(err)
			}
			for range 20 {
				start := time.Now()
				if _, err := c.Exec(ctx, &aci.ExecRequest{Argv: []string{"echo", "hi"}}); err != nil {
					b.Fatal(err)
				}
				execs[i] = append(execs[i], time.Since(start))
			}
			c.Close()
			stopDaemon(b, cmd)
		}
	}
	b.ReportMetric(float64(p50(ready[0]).Microseconds())/1000, "ms-p50-ready-guard")
	b.ReportMetric(float64(p50(ready[1]).Microseconds())/1000, "ms-p50-ready-noguard")
	b.ReportMetric(float64(p50(ready[0]))/float64(p50(ready[1])), "x-ready")
	b.ReportMetric(float64(p50(execs[0]).Microseconds()), "us-p50-exec-guard")
	b.ReportMetric(float64(p50(execs[1]).Microseconds()), "us-p50-exec-noguard")
	b.ReportMetric(float64(p50(execs[0]))/float64(p50(execs[1])), "x-exec")
}
