package contain

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// TestShepherdSpawnsEveryTime: a program started under a shepherd, in a
// pid namespace where the Host may make one, starts every time: 250
// starts, four at once (1,000 were run under the stress script when the
// race was fixed; each start costs ~0.4 s of a loaded 2-core machine), on whatever load the machine carries. Each
// program leaves an orphan and exits at once, which the shepherd, the
// namespace's init, adopts: when that came before the shepherd looked
// for its program's pid, the start failed (issue 43: proc/spawn failed 1
// in 5 runs with "sh could not start").
func TestShepherdSpawnsEveryTime(t *testing.T) {
	reexec.Store(true)
	defer reexec.Store(false)
	defer SetMode("shepherd")()
	const starts, atOnce = 250, 4
	var wg sync.WaitGroup
	errs := make(chan error, starts)
	next := make(chan int, starts)
	for i := range starts {
		next <- i
	}
	close(next)
	for range atOnce {
		wg.Go(func() {
			for i := range next {
				var out bytes.Buffer
				cmd := newCmd("/bin/sh", "-c", "sleep 300 >/dev/null 2>&1 & echo ok")
				cmd.Stdout = &out
				g, err := Start(cmd, true)
				if err != nil {
					errs <- fmt.Errorf("start %d: %w", i, err)
					continue
				}
				<-g.Done()
				if end := g.Result(); !end.Exited || end.Code != 0 || out.String() != "ok\n" {
					errs <- fmt.Errorf("start %d ended %+v, wrote %q", i, end, out.String())
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 10 {
			t.Error(err)
		}
	}
	if n > 0 {
		t.Errorf("%d of %d starts failed (in a pid namespace: %v)", n, starts, PIDNamespaces())
	}
}

// TestShepherdNotDumpable: a shepherd's program, with the user's rights
// and no more, cannot read its shepherd's environment or memory in /proc,
// nor so ptrace it (the same check guards both): the shepherd is not
// dumpable. Root may (CAP_SYS_PTRACE), so the check runs as nobody, from
// a copy of this test binary, in a user and pid namespace of its own
// where the kernel makes one, else with the shepherd alone.
func TestShepherdNotDumpable(t *testing.T) {
	if asNobody(t, "TestShepherdNotDumpable") {
		shepherdNotDumpable(t)
	}
}

func shepherdNotDumpable(t *testing.T) {
	reexec.Store(true)
	defer reexec.Store(false)
	defer SetMode("shepherd")()
	defer func() { pidnsRefused.Store(nil) }()
	// The shepherd is the program's parent, as /proc (the Host's) numbers
	// it; the program tries what strace -p would need.
	var out bytes.Buffer
	cmd := newCmd("/bin/sh", "-c", `read -r _ _ _ pp _ </proc/self/stat
for f in environ mem; do
	if head -c1 /proc/$pp/$f >/dev/null 2>&1; then echo "$f readable"; else echo "$f refused"; fi
done`)
	cmd.Stdout = &out
	g, err := Start(cmd, true)
	if err != nil {
		t.Fatal(err)
	}
	<-g.Done()
	if got := out.String(); got != "environ refused\nmem refused\n" {
		t.Errorf("the program, on its shepherd (in a pid namespace: %v): %q", g.ns, got)
	}
}
