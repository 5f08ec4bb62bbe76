package jsonrpc

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// Calls with different timeouts share one timer: a short one made after a
// long one still times out first, and each fails with its own method.
func TestCallTimeoutsShareOneTimer(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	never := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		<-release
		return nil, nil
	})
	timeouts := map[string]time.Duration{"long": time.Hour, "short": 30 * time.Millisecond, "mid": 60 * time.Millisecond}
	a, _ := pair(t, nil, never, &Options{Timeout: func(m string) time.Duration { return timeouts[m] }}, &Options{Workers: 8})

	longDone := make(chan error, 1)
	go func() {
		_, err := a.Call(context.Background(), "long", nil)
		longDone <- err
	}()
	var wg sync.WaitGroup
	errs := map[string]error{}
	var mu sync.Mutex
	for _, m := range []string{"mid", "short"} {
		wg.Go(func() {
			_, err := a.Call(context.Background(), m, nil)
			mu.Lock()
			errs[m] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	for m, err := range errs {
		var want = "jsonrpc: no answer in time: " + m + " answered nothing within " + timeouts[m].String()
		if !errors.Is(err, ErrTimeout) || err.Error() != want {
			t.Errorf("%s: %v, want %q", m, err, want)
		}
	}
	select {
	case err := <-longDone:
		t.Fatalf("the hour-long call ended: %v", err)
	default:
	}
	// A new call after the others expired arms the timer again.
	if _, err := a.Call(context.Background(), "short", nil); !errors.Is(err, ErrTimeout) {
		t.Errorf("second short call: %v", err)
	}
}

func TestHandlerContext(t *testing.T) {
	t.Run("deadline without Done", func(t *testing.T) {
		h := newHandlerContext(context.Background(), time.Now().Add(-time.Millisecond))
		if err := h.Err(); err != context.DeadlineExceeded {
			t.Errorf("Err = %v", err)
		}
		select {
		case <-h.Done():
		default:
			t.Error("Done open past the deadline")
		}
		h.release()
		if err := h.Err(); err != context.DeadlineExceeded {
			t.Errorf("Err after release = %v", err)
		}
	})
	t.Run("Done closes at the deadline", func(t *testing.T) {
		h := newHandlerContext(context.Background(), time.Now().Add(20*time.Millisecond))
		defer h.release()
		if d, ok := h.Deadline(); !ok || d.IsZero() {
			t.Error("no deadline")
		}
		if h.Err() != nil {
			t.Fatal("done too early")
		}
		<-h.Done()
		if err := h.Err(); err != context.DeadlineExceeded {
			t.Errorf("Err = %v", err)
		}
	})
	t.Run("parent cancelled", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
		h := newHandlerContext(parent, time.Now().Add(time.Hour))
		defer h.release()
		if h.Value(ctxKey{}) != "v" {
			t.Error("value lost")
		}
		child, stop := context.WithTimeout(h, time.Hour) // derived contexts follow it
		defer stop()
		done := h.Done()
		cancel()
		<-done
		<-child.Done()
		if err := h.Err(); err != context.Canceled {
			t.Errorf("Err = %v", err)
		}
	})
	t.Run("released", func(t *testing.T) {
		h := newHandlerContext(context.Background(), time.Now().Add(time.Hour))
		done := h.Done()
		h.release()
		<-done
		if err := h.Err(); err != context.Canceled {
			t.Errorf("Err = %v", err)
		}
		h.release() // twice is fine
	})
}

type ctxKey struct{}
