package wiretest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"shinken.dev/go/internal/procfs"
)

// TestPipelinedCalls sends 600 calls on one connection without waiting for
// any reply: queries, screenshots, waits, clipboard, execs and pointer
// moves, some with observe-after-act. Every call_id gets exactly one reply,
// the moves are acked in the order they were sent (input runs in arrival
// order), and the pointer ends where the last move put it.
func TestPipelinedCalls(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	const n = 600
	kinds := map[string]string{}
	var moves []string
	lastX := 0
	for i := range n {
		id := "p" + strconv.Itoa(i)
		var m map[string]any
		switch i % 8 {
		case 0:
			m = map[string]any{"type": "query", "call_id": id, "q": []string{"platform", "screen_size", "ready", "list_windows"}[i/8%4]}
			kinds[id] = "result"
		case 1:
			m = map[string]any{"type": "action", "call_id": id, "action": map[string]any{"verb": "screenshot", "max_long_edge": 32 + i%50}}
			kinds[id] = "observation"
		case 2:
			m = map[string]any{"type": "action", "call_id": id, "action": map[string]any{"verb": "wait", "ms": i % 7}}
			kinds[id] = "ack"
		case 3:
			m = map[string]any{"type": "action", "call_id": id, "action": map[string]any{"verb": "clipboard_set", "text": id}}
			kinds[id] = "ack"
		case 4:
			m = map[string]any{"type": "action", "call_id": id, "action": map[string]any{"verb": "clipboard_get"}}
			kinds[id] = "result"
		case 5:
			m = map[string]any{"type": "action", "call_id": id, "action": map[string]any{"verb": "exec", "argv": []string{"echo", id}}}
			kinds[id] = "result"
		default:
			lastX = 1 + i
			a := map[string]any{"verb": "move", "target": px(float64(lastX), 7)}
			if i%16 == 6 {
				a["observe"] = map[string]any{"max_long_edge": 16}
			}
			m = map[string]any{"type": "action", "call_id": id, "action": a}
			kinds[id] = "ack"
			moves = append(moves, id)
		}
		w.send(m)
	}
	ctx := ctxT(t, 60*time.Second)
	got := map[string]*frame{}
	for len(got) < n {
		f, err := w.take(ctx, func(f *frame) bool { return f.isReply() })
		if err != nil {
			t.Fatalf("%d of %d replies: %v", len(got), n, err)
		}
		id := f.id()
		if kinds[id] == "" {
			t.Fatalf("a reply to an unknown call: %s", f)
		}
		if prev := got[id]; prev != nil {
			if !(prev.M.Type == "ack" && f.M.Type == "observation") {
				t.Errorf("two replies to %s: %s and %s", id, prev, f)
			}
			continue
		}
		got[id] = f
		if f.M.Type != kinds[id] {
			t.Errorf("%s answered with %s, want a %s", id, f, kinds[id])
		}
		if f.M.OK != nil && !*f.M.OK && errCode(f.M.Error) != "too_many_execs" {
			t.Errorf("%s failed: %s", id, f)
		}
	}
	// Moves are acked in the order they were sent.
	for i := 1; i < len(moves); i++ {
		if got[moves[i]].N < got[moves[i-1]].N {
			t.Errorf("%s was acked before %s, which was sent first", moves[i], moves[i-1])
			break
		}
	}
	// Each observe-after-act arrives after its ack; no extra replies.
	if err := w.ping(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for _, f := range w.snapshot() {
		if f.M.Type == "observation" && f.M.Cause != "" {
			if a := got[f.M.Cause]; a == nil || a.M.Type != "ack" || a.N > f.N {
				t.Errorf("observation %s not after its call's ack", f.M.Cause)
			}
			continue
		}
		t.Errorf("unexpected message: %s", f)
	}
	shot := w.do("final", map[string]any{"verb": "screenshot", "max_long_edge": 16})
	if len(shot.M.Pointer) != 2 || shot.M.Pointer[0] != lastX || shot.M.Pointer[1] != 7 {
		t.Errorf("pointer %v after the moves, want [%d 7]", shot.M.Pointer, lastX)
	}
}

// TestManyConnections runs 12 clients at once, each with its own mix of
// calls and a screencast on every third, and checks that every call is
// answered on its own connection.
func TestManyConnections(t *testing.T) {
	d := startDaemon(t)
	const clients, calls = 12, 40
	wires := make([]*wire, clients)
	for i := range wires {
		wires[i], _ = dialWire(t, d, &helloOpts{binary: i%2 == 1})
	}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for ci, w := range wires {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- runClient(w, ci, calls)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// runClient makes calls calls on w, one at a time, and checks each reply.
func runClient(w *wire, ci, calls int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	call := func(id string, m map[string]any) (*frame, error) {
		m["call_id"] = id
		if err := w.trySend(m); err != nil {
			return nil, err
		}
		f, err := w.reply(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("client %d: %s: %w", ci, id, err)
		}
		if f.M.OK != nil && !*f.M.OK {
			return nil, fmt.Errorf("client %d: %s failed: %s", ci, id, f)
		}
		return f, nil
	}
	if ci%3 == 0 {
		if _, err := call(fmt.Sprintf("c%d-cast", ci), map[string]any{"type": "action",
			"action": map[string]any{"verb": "start_screencast", "fps": 10, "max_long_edge": 100, "delta": true}}); err != nil {
			return err
		}
	}
	for j := range calls {
		id := fmt.Sprintf("c%d-%d", ci, j)
		var m map[string]any
		switch j % 5 {
		case 0:
			m = map[string]any{"type": "action", "action": map[string]any{"verb": "screenshot", "max_long_edge": 100 + ci}}
		case 1:
			m = map[string]any{"type": "action", "action": map[string]any{"verb": "type_text", "text": strconv.Itoa(ci)}}
		case 2:
			m = map[string]any{"type": "action", "action": map[string]any{"verb": "exec", "argv": []string{"echo", id}}}
		case 3:
			m = map[string]any{"type": "action", "action": map[string]any{"verb": "observe"}}
		case 4:
			m = map[string]any{"type": "query", "q": "list_windows"}
		}
		f, err := call(id, m)
		if err != nil {
			return err
		}
		if j%5 == 2 {
			var er struct{ Stdout string }
			json.Unmarshal(f.M.Value, &er)
			if er.Stdout != id+"\n" {
				return fmt.Errorf("client %d: exec %s printed %q", ci, id, er.Stdout)
			}
		}
		w.drop(func(f *frame) bool { return f.M.Stream != "" })
	}
	if ci%3 == 0 {
		if _, err := call(fmt.Sprintf("c%d-uncast", ci), map[string]any{"type": "action", "action": map[string]any{"verb": "stop_screencast"}}); err != nil {
			return err
		}
	}
	return nil
}

// stallBound is the most a daemon's RSS may grow, in KiB, for one client
// that never reads: the writer's queue is bounded, and one connection's
// replies in flight must not hold more than this.
const stallBound = 512 << 10

// TestStalledReader connects a client that asks for a 30 fps full-size
// screencast, a flood of full-size screenshots and a streamed exec of
// 200 MB, and never reads a byte. Meanwhile another client must keep
// getting answers promptly, and the daemon's resident memory must stay
// bounded. Runs the daemon built without the race detector, so the
// figures are real.
func TestStalledReader(t *testing.T) {
	d := startBin(t, plainBin, "-log", "warn")
	healthy, _ := dialWire(t, d, nil)
	// Warm up: the daemon's steady state before the flood.
	for i := range 5 {
		mustOK(t, healthy.do(fmt.Sprintf("warm%d", i), map[string]any{"verb": "screenshot", "format": []string{"png", "jpeg"}[i%2], "quality": 100}), "observation")
	}
	base, err := procfs.KiB(d.pid, "status", "VmRSS:")
	if err != nil {
		t.Fatal(err)
	}

	stalled := dialRaw(t, d)
	ctx := ctxT(t, 60*time.Second)
	hello := `{"type":"hello","v":0,"client":{"name":"stalled","version":"0"},"token":"` + token + `","accept":{"binary_frames":true}}`
	if err := stalled.Write(ctx, websocket.MessageText, []byte(hello)); err != nil {
		t.Fatal(err)
	}
	// The welcome is read; nothing after it ever is.
	if _, _, err := stalled.Read(ctx); err != nil {
		t.Fatal(err)
	}
	floodCtx, stopFlood := context.WithCancel(ctx)
	floodDone := make(chan struct{})
	go func() {
		defer close(floodDone)
		send := func(s string) bool { return stalled.Write(floodCtx, websocket.MessageText, []byte(s)) == nil }
		send(`{"type":"action","call_id":"cast","action":{"verb":"start_screencast","fps":30}}`)
		send(`{"type":"action","call_id":"yes","action":{"verb":"exec","argv":["head","-c","200000000","/dev/zero"],"stream":true}}`)
		for i := 0; ; i++ {
			format := `"format":"png"`
			if i%2 == 1 {
				format = `"format":"jpeg","quality":100`
			}
			// Type between screenshots, so frames differ and none is a
			// cheap repeat.
			if !send(fmt.Sprintf(`{"type":"action","call_id":"t%d","action":{"verb":"type_text","text":"%d"}}`, i, i%10)) ||
				!send(fmt.Sprintf(`{"type":"action","call_id":"s%d","action":{"verb":"screenshot",%s}}`, i, format)) {
				return
			}
		}
	}()
	t.Cleanup(func() {
		stopFlood()
		<-floodDone
	})

	// For 8 s, the healthy client works, and memory is sampled.
	peak := base
	end := time.Now().Add(8 * time.Second)
	worst := time.Duration(0)
	for i := 0; time.Now().Before(end); i++ {
		start := time.Now()
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := healthy.ping(cctx, float64(i))
		cancel()
		if err != nil {
			t.Fatalf("the healthy client got no pong while another stalls: %v", err)
		}
		f := healthy.do(fmt.Sprintf("h%d", i), map[string]any{"verb": "screenshot", "max_long_edge": 200})
		mustOK(t, f, "observation")
		worst = max(worst, time.Since(start))
		if kb, err := procfs.KiB(d.pid, "status", "VmRSS:"); err == nil {
			peak = max(peak, kb)
		}
	}
	if worst > 3*time.Second {
		t.Errorf("a healthy client's round trip took %v while another client stalled", worst)
	}
	t.Logf("RSS: %d MiB before the flood, peak %d MiB during it; worst healthy round trip %v", base>>10, peak>>10, worst)
	if peak-base > stallBound {
		t.Errorf("RSS grew by %d MiB while a client stalled (bound %d MiB)", (peak-base)>>10, stallBound>>10)
	}
	stopFlood()
	<-floodDone
	stalled.CloseNow()
	// The daemon lets go of the stalled client's exec.
	poll(t, 15*time.Second, "the stalled client's exec ends", func() bool { return len(children(d.pid)) == 0 })
	w2, _ := dialWire(t, d, nil)
	if err := w2.ping(ctxT(t, 10*time.Second), 1); err != nil {
		t.Fatal(err)
	}
}

// TestStalledReaderAmplification puts 8 MiB on the clipboard, then sends
// small clipboard_get calls and never reads: each 60-byte call makes an
// 8 MiB reply. The daemon's memory must stay bounded all the same (see
// stallBound), while another client is served.
func TestStalledReaderAmplification(t *testing.T) {
	d := startBin(t, plainBin, "-log", "warn")
	healthy, _ := dialWire(t, d, nil)
	base, err := procfs.KiB(d.pid, "status", "VmRSS:")
	if err != nil {
		t.Fatal(err)
	}
	stalled := dialRaw(t, d)
	ctx := ctxT(t, 60*time.Second)
	for _, m := range []string{
		`{"type":"hello","v":0,"client":{"name":"stalled","version":"0"},"token":"` + token + `"}`,
		`{"type":"action","call_id":"set","action":{"verb":"clipboard_set","text":"` + strings.Repeat("c", 8<<20) + `"}}`,
	} {
		if err := stalled.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := stalled.Read(ctx); err != nil { // the welcome, the ack
			t.Fatal(err)
		}
	}
	floodCtx, stopFlood := context.WithCancel(ctx)
	floodDone := make(chan struct{})
	go func() {
		defer close(floodDone)
		for i := 0; ; i++ {
			m := fmt.Sprintf(`{"type":"action","call_id":"g%d","action":{"verb":"clipboard_get"}}`, i)
			if stalled.Write(floodCtx, websocket.MessageText, []byte(m)) != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		stopFlood()
		<-floodDone
	})
	peak := base
	end := time.Now().Add(8 * time.Second)
	for i := 0; time.Now().Before(end); i++ {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := healthy.ping(cctx, float64(i))
		cancel()
		if err != nil {
			t.Fatalf("the healthy client got no pong: %v", err)
		}
		if kb, err := procfs.KiB(d.pid, "status", "VmRSS:"); err == nil {
			peak = max(peak, kb)
		}
		pollWait()
	}
	t.Logf("RSS: %d MiB before, peak %d MiB while one client stalled on 60-byte clipboard_get calls", base>>10, peak>>10)
	if peak-base > stallBound {
		t.Errorf("RSS grew by %d MiB for one stalled client (bound %d MiB): the replies waiting for one "+
			"client must be bounded in bytes, not only in messages", (peak-base)>>10, stallBound>>10)
	}
}

// TestDropMidExec starts execs (buffered and streamed, one with a
// background job in its group, one flooding output) and drops the
// connection, abruptly or with a close frame: every process the execs
// started must be gone soon after, children of the daemon and their
// process groups alike.
func TestDropMidExec(t *testing.T) {
	d := startDaemon(t)
	for _, abrupt := range []bool{true, false} {
		t.Run(fmt.Sprintf("abrupt=%v", abrupt), func(t *testing.T) {
			w, _ := dialWire(t, d, &helloOpts{binary: abrupt})
			w.act("bg", map[string]any{"verb": "exec", "shell": "sleep 300 & sleep 301; echo never", "stream": true})
			w.act("buf", map[string]any{"verb": "exec", "argv": []string{"sleep", "302"}})
			w.act("flood", map[string]any{"verb": "exec", "argv": []string{"yes"}, "stream": true})
			w.act("bufsh", map[string]any{"verb": "exec", "shell": "sleep 303 & sleep 304 & wait"})
			var groups []int
			poll(t, 15*time.Second, "4 execs running, each leading its own process group", func() bool {
				kids := children(d.pid)
				groups = groups[:0]
				for _, k := range kids {
					// Between fork and exec a child is still in the
					// daemon's group; wait until it leads its own.
					if k.PGID != k.PID {
						return false
					}
					groups = append(groups, k.PGID)
				}
				return len(kids) == 4
			})
			members := 0
			poll(t, 15*time.Second, "the background jobs running", func() bool {
				members = 0
				for _, g := range groups {
					members += len(inGroup(g))
				}
				return members >= 8
			})
			if abrupt {
				w.ws.CloseNow()
			} else {
				w.ws.Close(websocket.StatusNormalClosure, "bye")
			}
			poll(t, 15*time.Second, "every exec process gone", func() bool {
				if len(children(d.pid)) > 0 {
					return false
				}
				for _, g := range groups {
					if len(inGroup(g)) > 0 {
						return false
					}
				}
				return true
			})
			// The daemon serves on.
			w2, _ := dialWire(t, d, nil)
			if err := w2.ping(ctxT(t, 10*time.Second), 1); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestShutdownKillsExecs sends SIGTERM to the daemon while execs run: it
// must exit cleanly, having killed their process groups.
func TestShutdownKillsExecs(t *testing.T) {
	// The drain lets calls in flight finish up to -drain-timeout; these
	// never would, so a short one: then the runtime kills them.
	d := startDaemon(t, "-drain-timeout", "500ms")
	w, _ := dialWire(t, d, nil)
	w.act("a", map[string]any{"verb": "exec", "shell": "sleep 310 & sleep 311; echo never", "stream": true})
	w.act("b", map[string]any{"verb": "exec", "argv": []string{"sleep", "312"}})
	var groups []int
	poll(t, 15*time.Second, "2 execs running, each leading its own process group", func() bool {
		groups = groups[:0]
		for _, k := range children(d.pid) {
			if k.PGID != k.PID {
				return false // forked, not yet in its own group
			}
			groups = append(groups, k.PGID)
		}
		return len(groups) == 2
	})
	poll(t, 15*time.Second, "the background job running", func() bool { return len(inGroup(groups[0]))+len(inGroup(groups[1])) >= 3 })
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("the daemon did not exit on SIGTERM with execs running")
	}
	if !d.state.Success() {
		t.Errorf("exit %v", d.state)
	}
	code, reason, err := w.closed(ctxT(t, 10*time.Second))
	if err != nil || code != websocket.StatusGoingAway {
		t.Errorf("the client saw %d %q %v, want 1001 going away", code, reason, err)
	}
	poll(t, 10*time.Second, "the exec groups gone", func() bool {
		for _, g := range groups {
			if len(inGroup(g)) > 0 {
				return false
			}
		}
		return true
	})
	d.checkLog(t)
	d.stopped = true // the exit was this test's doing
}

// TestExecBackgroundJobOutlivesSession starts a background job from a
// buffered exec whose shell returns at once, then ends the session. The
// job is in the exec's process group: it must be gone soon after, at the
// latest with the session (a closed connection leaks nothing), or it would
// live on outside every exec limit.
func TestExecBackgroundJobOutlivesSession(t *testing.T) {
	t.Parallel() // it waits 5 s for the job to go
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	// The job writes its pid as the test's /proc names it ($! names it in
	// the command's own pid namespace), and the command waits for it.
	r := w.do("bg", map[string]any{"verb": "exec", "shell": `f=$(mktemp); (read -r p _ </proc/self/stat; echo $p >"$f.t"; mv "$f.t" "$f"; exec sleep 320 >/dev/null 2>&1) & until [ -s "$f" ]; do :; done; cat "$f"; rm -f "$f"`, "timeout_ms": 5000})
	mustOK(t, r, "result")
	var er struct{ Stdout string }
	json.Unmarshal(r.M.Value, &er)
	pid, err := strconv.Atoi(strings.TrimSpace(er.Stdout))
	if err != nil {
		t.Fatalf("exec printed %q", er.Stdout)
	}
	// The job is ours: end it whatever the outcome.
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	w.ws.Close(websocket.StatusNormalClosure, "bye")
	deadline := time.Now().Add(5 * time.Second)
	for procfs.Alive(pid) && time.Now().Before(deadline) {
		pollWait()
	}
	if procfs.Alive(pid) {
		t.Errorf("pid %d, started in an exec's process group, still runs 5 s after its session closed", pid)
	}
}

// TestShutdownWithLiveConnections stops the daemon with SIGTERM while
// sessions are open and new ones keep arriving: every open session gets a
// 1001 close, the daemon exits cleanly, and its race detector stays quiet
// (Close must not wait on connections it may still be adding).
func TestShutdownWithLiveConnections(t *testing.T) {
	d := startDaemon(t)
	var live []*wire
	for range 4 {
		w, _ := dialWire(t, d, nil)
		live = append(live, w)
	}
	// Dialers keep connecting while the daemon shuts down.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				ws, _, err := websocket.Dial(ctx, d.url, nil)
				cancel()
				if err != nil {
					if !d.alive() {
						return
					}
					continue
				}
				ws.Write(context.Background(), websocket.MessageText,
					[]byte(`{"type":"hello","v":0,"client":{"name":"late","version":"0"},"token":"`+token+`"}`))
				ws.CloseNow()
			}
		}()
	}
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
	})
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("the daemon did not exit on SIGTERM")
	}
	d.stopped = true
	d.checkLog(t)
	if !d.state.Success() {
		t.Errorf("exit %v", d.state)
	}
	for i, w := range live {
		code, _, err := w.closed(ctxT(t, 10*time.Second))
		if err != nil || code != websocket.StatusGoingAway {
			t.Errorf("session %d ended with %d %v, want 1001", i, code, err)
		}
	}
}

// TestHeldButtonReleasedOnDisconnect presses the left button on a title bar
// and leaves without releasing it. Input is a device every session shares:
// the button a departed session left down must not turn the next client's
// pointer moves into a window drag.
func TestHeldButtonReleasedOnDisconnect(t *testing.T) {
	d := startDaemon(t)
	a, _ := dialWire(t, d, nil)
	var form windowInfo
	for _, win := range listWindows(t, a, "lw") {
		if win.Title == "Form" {
			form = win
		}
	}
	title := px(float64(form.BBox[0]+form.BBox[2]/3), float64(form.BBox[1]+8))
	mustOK(t, a.do("down", map[string]any{"verb": "mouse_down", "target": title}), "ack")
	a.ws.Close(websocket.StatusNormalClosure, "bye")
	<-a.done

	b, _ := dialWire(t, d, nil)
	mustOK(t, b.do("move", map[string]any{"verb": "move", "target": px(900, 600)}), "ack")
	for _, win := range listWindows(t, b, "lw") {
		if win.ID == form.ID && (win.BBox[0] != form.BBox[0] || win.BBox[1] != form.BBox[1]) {
			t.Errorf("a new session's pointer move dragged the window from %v to %v: the button the last session held is still down",
				form.BBox[:2], win.BBox[:2])
		}
	}
}

// TestSlowReaderCatchesUp has a client ask for more than the daemon queues
// for one connection (12 clipboard reads of 3 MiB and 12 full screenshots)
// without reading, then read: every call is answered, in full, once the
// client catches up. Backpressure may pause the client; it must never lose
// or wedge its calls.
func TestSlowReaderCatchesUp(t *testing.T) {
	d := startDaemon(t)
	ws := dialRaw(t, d)
	ctx := ctxT(t, 120*time.Second)
	for _, m := range []string{
		`{"type":"hello","v":0,"client":{"name":"slow","version":"0"},"token":"` + token + `"}`,
		`{"type":"action","call_id":"set","action":{"verb":"clipboard_set","text":"` + strings.Repeat("s", 3<<20) + `"}}`,
	} {
		if err := ws.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ws.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Write everything from another goroutine: the daemon may stop reading
	// until this side reads.
	const n = 12
	var written atomic.Int64
	wrote := make(chan error, 1)
	go func() {
		for i := range n {
			for _, m := range []string{
				fmt.Sprintf(`{"type":"action","call_id":"g%d","action":{"verb":"clipboard_get"}}`, i),
				fmt.Sprintf(`{"type":"action","call_id":"s%d","action":{"verb":"screenshot"}}`, i),
			} {
				if err := ws.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
					wrote <- err
					return
				}
				written.Add(1)
			}
		}
		wrote <- nil
	}()
	// Start reading once the writes are done, or have made no progress
	// for a second (the daemon stopped reading): by then its replies have
	// piled up past its budget.
	last, still := int64(-1), time.Now()
	for done := false; !done; {
		select {
		case err := <-wrote:
			if err != nil {
				t.Fatal(err)
			}
			wrote <- nil
			done = true
		default:
			if w := written.Load(); w != last {
				last, still = w, time.Now()
			} else if time.Since(still) > time.Second {
				done = true
			}
			pollWait()
		}
	}
	got := map[string]bool{}
	for len(got) < 2*n {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("after %d of %d replies: %v", len(got), 2*n, err)
		}
		f, verr := decodeFrame(typ, data)
		if verr != nil {
			t.Fatal(verr)
		}
		id := f.id()
		if got[id] {
			t.Fatalf("two replies to %s", id)
		}
		got[id] = true
		if f.M.OK != nil && !*f.M.OK || f.M.Type == "result" && len(f.M.Value) < 3<<20 {
			t.Errorf("%s: %s", id, f)
		}
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
}

// TestScreencastLimit starts screencasts until the daemon refuses one: the
// refusal is an ok=false ack, and stopping frees the slots.
func TestScreencastLimit(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	n := 0
	for ; n < 50; n++ {
		r := w.do(fmt.Sprintf("c%d", n), map[string]any{"verb": "start_screencast", "fps": 1, "max_long_edge": 16})
		if r.M.OK != nil && !*r.M.OK {
			if r.M.Type != "ack" {
				t.Errorf("refusal %s", r)
			}
			break
		}
	}
	if n == 50 {
		t.Fatalf("50 screencasts on one connection and no refusal")
	}
	mustOK(t, w.do("stop", map[string]any{"verb": "stop_screencast"}), "ack")
	mustOK(t, w.do("again", map[string]any{"verb": "start_screencast", "fps": 1, "max_long_edge": 16}), "ack")
	t.Logf("the daemon runs %d screencasts per connection", n)
}
