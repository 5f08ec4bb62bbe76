package contain

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// TestShepherdSpawnsEveryTime: a program started under a shepherd, in a
// pid namespace where the Host may make one, starts every time: 1,000
// starts, four at once, on whatever load the machine carries. Each
// program leaves an orphan and exits at once, which the shepherd, the
// namespace's init, adopts: when that came before the shepherd looked
// for its program's pid, the start failed (issue 43: proc/spawn failed 1
// in 5 runs with "sh could not start").
func TestShepherdSpawnsEveryTime(t *testing.T) {
	reexec.Store(true)
	defer reexec.Store(false)
	defer SetMode("shepherd")()
	const starts, atOnce = 1000, 4
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
