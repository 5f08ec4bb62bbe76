package contain

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkStartNamespaces starts sh -c true and waits for its end, held
// by a cgroup where one can be made, three ways interleaved in one loop so
// that each sees the same machine: no namespace (the reference), a pid
// namespace, and a pid namespace in a user namespace of its own (the way
// of a Host without CAP_SYS_ADMIN that allows them, forced here whatever
// this process holds). It reports each way's median and its ratio to the
// reference's.
func BenchmarkStartNamespaces(b *testing.B) {
	defer SetMode("auto")()
	old := mayMakePIDNamespace
	defer func() { mayMakePIDNamespace = old; pidnsRefused.Store(nil) }()
	type way struct {
		name       string
		ns, userNS bool
		durations  []time.Duration
	}
	ways := []*way{{name: "none"}, {name: "pidns", ns: true}, {name: "userns+pidns", ns: true, userNS: true}}
	b.ResetTimer()
	for range b.N {
		for _, w := range ways {
			privileged := old()
			mayMakePIDNamespace = func() bool { return privileged && !w.userNS }
			restoreNS := SetPIDNamespaces(w.ns)
			restoreUser := SetUserNamespaces(w.userNS)
			t0 := time.Now()
			g, err := Start(newCmd("/bin/sh", "-c", "true"), true)
			if err != nil {
				b.Fatal(err)
			}
			<-g.Done()
			w.durations = append(w.durations, time.Since(t0))
			restoreUser()
			restoreNS()
			if g.ns != w.ns {
				b.Fatalf("%s: in a namespace: %v (refused: %v)", w.name, g.ns, PIDNamespaceRefused())
			}
		}
	}
	b.StopTimer()
	for _, w := range ways {
		b.ReportMetric(medianMS(w.durations), w.name+"-ms")
	}
	for _, w := range ways[1:] {
		b.ReportMetric(medianMS(w.durations)/medianMS(ways[0].durations), w.name+"/none")
	}
}

// newCmd returns a command for Start.
func newCmd(path string, args ...string) *exec.Cmd {
	return &exec.Cmd{Path: path, Args: append([]string{path}, args...)}
}

// BenchmarkStartShepherd starts sh -c true and waits for its end, the
// way a command plugin or a proc/spawn program starts, two ways
// interleaved in one loop: as before a shepherd stood above every program
// (the reference: a cgroup where one can be made, the program the init
// of its pid namespace where the Host may make one), and with the
// shepherd (this test binary started again) above it, its namespace's
// init. It reports each way's median and the ratio.
func BenchmarkStartShepherd(b *testing.B) {
	defer SetMode("auto")()
	defer reexec.Store(false)
	type way struct {
		name      string
		shepherd  bool
		durations []time.Duration
	}
	ways := []*way{{name: "program"}, {name: "shepherd", shepherd: true}}
	b.ResetTimer()
	for range b.N {
		for _, w := range ways {
			reexec.Store(w.shepherd)
			t0 := time.Now()
			g, err := Start(newCmd("/bin/sh", "-c", "true"), true)
			if err != nil {
				b.Fatal(err)
			}
			<-g.Done()
			w.durations = append(w.durations, time.Since(t0))
			if (g.sh != nil) != w.shepherd {
				b.Fatalf("%s: shepherd %v", w.name, g.sh != nil)
			}
		}
	}
	b.StopTimer()
	for _, w := range ways {
		b.ReportMetric(medianMS(w.durations), w.name+"-ms")
	}
	b.ReportMetric(medianMS(ways[1].durations)/medianMS(ways[0].durations), "shepherd/program")
}

// BenchmarkStartPrivateMounts starts sh -c true and waits for its end,
// four ways interleaved in one loop: under a shepherd as before, with the
// machine's /proc and cgroup hierarchy (the reference); under a shepherd
// that makes the mount and cgroup namespaces' own (mounts_linux.go); and
// the same two under the fixed init of a Host without EngineMain. It
// reports each way's median and its ratio to the reference.
func BenchmarkStartPrivateMounts(b *testing.B) {
	defer SetMode("auto")()
	defer reexec.Store(false)
	type way struct {
		name             string
		shepherd, mounts bool
		durations        []time.Duration
	}
	ways := []*way{{name: "shepherd", shepherd: true}, {name: "shepherd+mounts", shepherd: true, mounts: true},
		{name: "init"}, {name: "init+mounts", mounts: true}}
	b.ResetTimer()
	for range b.N {
		for _, w := range ways {
			reexec.Store(w.shepherd)
			restore := SetPrivateMounts(w.mounts)
			t0 := time.Now()
			g, err := Start(newCmd("/bin/sh", "-c", "true"), true)
			if err != nil {
				b.Fatal(err)
			}
			<-g.Done()
			w.durations = append(w.durations, time.Since(t0))
			restore()
			if (g.sh != nil) != w.shepherd || !g.ns || g.Result().Code != 0 {
				b.Fatalf("%s: shepherd %v, namespace %v, ended %+v", w.name, g.sh != nil, g.ns, g.Result())
			}
		}
	}
	b.StopTimer()
	if err := PrivateMountsRefused(); err != nil {
		b.Fatalf("the mounts were refused: %v", err)
	}
	for _, w := range ways {
		b.ReportMetric(medianMS(w.durations), w.name+"-ms")
	}
	for _, w := range ways[1:] {
		b.ReportMetric(medianMS(w.durations)/medianMS(ways[0].durations), w.name+"/shepherd")
	}
}

// BenchmarkStartSealedInit starts sh -c true and waits for its end, below
// the fixed init of a Host without EngineMain nor CAP_SYS_ADMIN (a pid
// namespace in a user namespace of its own, forced here whatever this
// process holds), two ways interleaved in one loop: the init as one
// /bin/sh (the reference, as before), and in two steps, /bin/sh then its
// sealed memfd copy, which makes it undumpable. It reports each way's
// median and the ratio. Both ways have the machine's mounts, as when it
// was first measured.
func BenchmarkStartSealedInit(b *testing.B) {
	defer SetMode("auto")()
	defer SetPrivateMounts(false)()
	old, oldSealed := mayMakePIDNamespace, sealedShell
	defer func() { mayMakePIDNamespace, sealedShell = old, oldSealed; pidnsRefused.Store(nil) }()
	mayMakePIDNamespace = func() bool { return false }
	noSeal := func() (*os.File, error) { return nil, errors.New("the reference: one step") }
	type way struct {
		name      string
		sealed    bool
		durations []time.Duration
	}
	sealed := 0
	seal := func() (*os.File, error) {
		f, err := oldSealed()
		if err == nil {
			sealed++
		}
		return f, err
	}
	ways := []*way{{name: "init"}, {name: "sealed-init", sealed: true}}
	b.ResetTimer()
	for range b.N {
		for _, w := range ways {
			sealedShell = noSeal
			if w.sealed {
				sealedShell = seal
			}
			cmd := newCmd("/bin/sh", "-c", "true")
			t0 := time.Now()
			g, err := Start(cmd, true)
			if err != nil {
				b.Fatal(err)
			}
			<-g.Done()
			w.durations = append(w.durations, time.Since(t0))
			if !g.ns || g.Result().Code != 0 || cmd.SysProcAttr.Cloneflags&syscall.CLONE_NEWUSER == 0 {
				b.Fatalf("%s: namespace %v, ended %+v", w.name, g.ns, g.Result())
			}
		}
	}
	b.StopTimer()
	if sealed != b.N {
		b.Fatalf("%d of %d inits were sealed", sealed, b.N)
	}
	for _, w := range ways {
		b.ReportMetric(medianMS(w.durations), w.name+"-ms")
	}
	b.ReportMetric(medianMS(ways[1].durations)/medianMS(ways[0].durations), "sealed-init/init")
}

// BenchmarkStartUserNSMountsInit starts sh -c true and waits for its end,
// below the fixed init of a Host without EngineMain nor CAP_SYS_ADMIN (a
// pid namespace in a user namespace of its own, forced here whatever this
// process holds), undumpable (its sealed copy), two ways interleaved in
// one loop: with the machine's /proc and cgroup hierarchy (the reference,
// as before), and with mounts of its own, the program started through
// setpriv. It reports each way's median and the ratio.
func BenchmarkStartUserNSMountsInit(b *testing.B) {
	defer SetMode("auto")()
	old := mayMakePIDNamespace
	defer func() { mayMakePIDNamespace = old; pidnsRefused.Store(nil) }()
	mayMakePIDNamespace = func() bool { return false }
	if err := userNSMountsRefused(); err != nil {
		b.Fatal(err)
	}
	type way struct {
		name      string
		mounts    bool
		durations []time.Duration
	}
	ways := []*way{{name: "init"}, {name: "init+mounts", mounts: true}}
	b.ResetTimer()
	for range b.N {
		for _, w := range ways {
			restore := SetPrivateMounts(w.mounts)
			cmd := newCmd("/bin/sh", "-c", "true")
			t0 := time.Now()
			g, err := Start(cmd, true)
			if err != nil {
				b.Fatal(err)
			}
			<-g.Done()
			w.durations = append(w.durations, time.Since(t0))
			restore()
			attr := cmd.SysProcAttr
			// CAP_SETPCAP is the init's where it makes the mounts, for setpriv.
			if !g.ns || g.Result().Code != 0 || attr.Cloneflags&syscall.CLONE_NEWUSER == 0 || slices.Contains(attr.AmbientCaps, unix.CAP_SETPCAP) != w.mounts {
				b.Fatalf("%s: namespace %v, ended %+v, ambient %v", w.name, g.ns, g.Result(), attr.AmbientCaps)
			}
		}
	}
	b.StopTimer()
	if err := PrivateMountsRefused(); err != nil {
		b.Fatalf("the mounts were refused: %v", err)
	}
	for _, w := range ways {
		b.ReportMetric(medianMS(w.durations), w.name+"-ms")
	}
	b.ReportMetric(medianMS(ways[1].durations)/medianMS(ways[0].durations), "init+mounts/init")
}

// medianMS is the median of ds, in milliseconds (ds is sorted).
func medianMS(ds []time.Duration) float64 {
	slices.Sort(ds)
	return float64(ds[len(ds)/2].Nanoseconds()) / 1e6
}
