package imaging

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// parallel runs f(0), …, f(n-1) on up to GOMAXPROCS goroutines, the caller
// being one of them, and returns when all have returned. Work is handed out
// one index at a time so that uneven items (a band of photo next to a band
// of flat fill) still keep every core busy.
func parallel(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			f(i)
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}
