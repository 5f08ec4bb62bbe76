package escouade

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"shinken.dev/go/escouade/protocol"
	"sync"
	"time"
)

// A funcProcess is a plugin run in-process, over two pipes in memory: a
// RunFunc, a WebAssembly module, a script. It has the lifecycle of a
// command; only "kill" is weaker for a RunFunc: a goroutine cannot be
// killed, so it is told (its context ends) and cut off (its input fails).
// A module and a script end when their context ends.
type funcProcess struct {
	toPlugin   *pipe
	fromPlugin *pipe
	tap        *wireTap
	cancel     context.CancelFunc
	exited     chan struct{}
	mu         sync.Mutex
	how        string
}

// pipeSize is how many bytes an in-memory pipe holds before a write waits.
const pipeSize = 1 << 20

func funcLauncher(run RunFunc) launcher {
	return func(inst *instance) (process, error) {
		return startFunc(inst, run), nil
	}
}

// startFunc runs run on a goroutine of its own, once inst is ready.
func startFunc(inst *instance, run RunFunc) *funcProcess {
	ctx, cancel := context.WithCancel(context.Background())
	f := &funcProcess{
		toPlugin:   newPipe(pipeSize),
		fromPlugin: newPipe(pipeSize),
		cancel:     cancel,
		exited:     make(chan struct{}),
	}
	f.tap = newWireTap(f.toPlugin)
	go f.run(ctx, inst.ready, run)
	return f
}

func (f *funcProcess) run(ctx context.Context, ready <-chan struct{}, run RunFunc) {
	how := "returned"
	defer func() {
		// A panic ends this plugin, not the Host.
		if r := recover(); r != nil {
			how = fmt.Sprintf("panicked: %v", r)
		}
		f.fromPlugin.closeWrite() // its output ends with it
		f.tap.close()
		f.mu.Lock()
		f.how = how
		f.mu.Unlock()
		close(f.exited)
	}()
	select {
	case <-ready:
	case <-ctx.Done():
		how = "killed before it started"
		return
	}
	if err := run(ctx, pipeReader{f.toPlugin}, pipeWriter{f.fromPlugin}); err != nil {
		how = "returned: " + err.Error()
	}
}

func (f *funcProcess) stdout() io.Reader     { return pipeReader{f.fromPlugin} }
func (f *funcProcess) stdin() io.Writer      { return f.tap }
func (f *funcProcess) wire() *wireTap        { return f.tap }
func (f *funcProcess) closeInput()           { f.toPlugin.closeWrite() }
func (f *funcProcess) terminate()            { f.cancel() }
func (f *funcProcess) done() <-chan struct{} { return f.exited }

func (f *funcProcess) kill() {
	f.cancel()
	f.toPlugin.closeRead()
}

func (f *funcProcess) release() {
	f.cancel()
	f.toPlugin.closeRead()
	f.toPlugin.closeWrite()
	f.fromPlugin.closeRead()
	f.tap.close()
}

func (f *funcProcess) status() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.how
}

// A pipe is a one-way byte stream in memory that holds up to max bytes, so
// that a writer goes on while the reader is busy, unlike io.Pipe.
type pipe struct {
	mu      sync.Mutex
	cond    sync.Cond
	buf     []byte
	r       int // read offset in buf
	max     int
	rclosed bool // the reader is gone: writes fail
	wclosed bool // the writer is done: reads drain, then io.EOF
	// onRead hears how many bytes the reader took, outside the lock.
	onRead func(n int)
}

func newPipe(max int) *pipe {
	p := &pipe{max: max}
	p.cond.L = &p.mu
	return p
}

func (p *pipe) read(b []byte) (int, error) {
	p.mu.Lock()
	for p.r == len(p.buf) && !p.wclosed && !p.rclosed {
		p.cond.Wait()
	}
	if p.rclosed {
		p.mu.Unlock()
		return 0, io.ErrClosedPipe
	}
	if p.r == len(p.buf) {
		p.mu.Unlock()
		return 0, io.EOF
	}
	n := copy(b, p.buf[p.r:])
	p.r += n
	if p.r == len(p.buf) {
		p.buf, p.r = p.buf[:0], 0
	}
	p.cond.Broadcast()
	onRead := p.onRead
	p.mu.Unlock()
	if onRead != nil {
		onRead(n)
	}
	return n, nil
}

func (p *pipe) write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for len(b) > 0 {
		for len(p.buf)-p.r >= p.max && !p.rclosed && !p.wclosed {
			p.cond.Wait()
		}
		if p.rclosed || p.wclosed {
			return n, io.ErrClosedPipe
		}
		if p.r > 0 && p.r >= len(p.buf)/2 {
			p.buf = p.buf[:copy(p.buf, p.buf[p.r:])]
			p.r = 0
		}
		k := min(len(b), p.max-(len(p.buf)-p.r))
		p.buf = append(p.buf, b[:k]...)
		b = b[k:]
		n += k
		p.cond.Broadcast()
	}
	return n, nil
}

func (p *pipe) closeRead() {
	p.mu.Lock()
	p.rclosed = true
	p.buf, p.r = nil, 0
	p.mu.Unlock()
	p.cond.Broadcast()
}

func (p *pipe) closeWrite() {
	p.mu.Lock()
	p.wclosed = true
	p.mu.Unlock()
	p.cond.Broadcast()
}

// pipeReader is a pipe's reading end; Close lets go of the pipe.
type pipeReader struct{ p *pipe }

func (r pipeReader) Read(b []byte) (int, error) { return r.p.read(b) }
func (r pipeReader) Close() error               { r.p.closeRead(); return nil }

// pipeWriter is a pipe's writing end; Close ends the stream.
type pipeWriter struct{ p *pipe }

func (w pipeWriter) Write(b []byte) (int, error) { return w.p.write(b) }
func (w pipeWriter) Close() error                { w.p.closeWrite(); return nil }

// A wireTap stands between the Host's connection and the pipe into an
// in-process plugin, and watches the lines go by, so that the Host knows
// two things no connection can tell it:
//
//   - when the answer to a request was written: the first net/chunk of a
//     stream, the first ws/message of a socket, must come after the answer
//     that names it;
//   - how much of a program's output (proc/out) is written but not yet read
//     by the plugin: past 256 KiB the Host stops reading the program.
//
// The connection writes whole lines, in the order they were queued, so a
// line is recognised by how it begins.
type wireTap struct {
	p *pipe     // the pipe into an in-process plugin, which says what it read
	w io.Writer // or the pipe into an engine's process: what it took was read

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at each change
	closed  bool
	start   bool   // the next byte written begins a line
	written uint64 // bytes written into the pipe
	read    uint64 // bytes the plugin read
	queued  []outLine
	marks   []outLine // written, not yet read, in order
	waiting map[int64]int
	answers map[string]chan struct{} // request ids whose answers are awaited
}

// An outLine is one proc/out line: its program, its size, and where it
// ends in the stream once written.
type outLine struct {
	proc int64
	size int
	end  uint64
}

var (
	outPrefix    = []byte(`{"jsonrpc":"2.0","method":"proc/out"`)
	answerPrefix = []byte(`{"jsonrpc":"2.0","id":`)
	// outOverhead is the size of a proc/out line but for its params.
	outOverhead = len(outPrefix) + len(`,"params":`) + len("}\n")
)

func newWireTap(p *pipe) *wireTap {
	t := &wireTap{p: p, start: true, changed: make(chan struct{}), waiting: map[int64]int{}, answers: map[string]chan struct{}{}}
	p.onRead = t.consumed
	return t
}

// newWriterTap returns a tap in front of w, the pipe into an engine's
// process: what the pipe took counts as read. The process reads a line at
// a time, so what it has not taken waits in the pipe's buffer, as much
// again as the bound of proc/out at most.
func newWriterTap(w io.Writer) *wireTap {
	return &wireTap{w: w, start: true, changed: make(chan struct{}), waiting: map[int64]int{}, answers: map[string]chan struct{}{}}
}

// signal wakes every waiter; t.mu must be held.
func (t *wireTap) signal() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// Write forwards the connection's lines into the pipe, noting the proc/out
// lines and the answers awaited.
func (t *wireTap) Write(b []byte) (int, error) {
	t.mu.Lock()
	off := 0
	for off < len(b) {
		nl := bytes.IndexByte(b[off:], '\n')
		end := len(b)
		if nl >= 0 {
			end = off + nl + 1
		}
		if t.start {
			t.note(b[off:end], t.written+uint64(end))
		}
		t.start = nl >= 0
		off = end
	}
	t.written += uint64(len(b))
	t.mu.Unlock()
	if t.p != nil {
		return t.p.write(b)
	}
	n, err := t.w.Write(b)
	t.consumed(n)
	return n, err
}

// note looks at a line that begins, ending at end in the stream; t.mu must
// be held.
func (t *wireTap) note(line []byte, end uint64) {
	switch {
	case bytes.HasPrefix(line, outPrefix):
		if len(t.queued) > 0 {
			ol := t.queued[0]
			t.queued = t.queued[1:]
			ol.end = end
			t.marks = append(t.marks, ol)
		}
	case len(t.answers) == 0:
	case bytes.HasPrefix(line, answerPrefix):
		rest := line[len(answerPrefix):]
		for id, ch := range t.answers {
			if len(rest) > len(id) && rest[len(id)] == ',' && string(rest[:len(id)]) == id {
				close(ch)
				delete(t.answers, id)
				break
			}
		}
	case len(line) > 0 && line[0] == '[':
		// A batch's answers: rare enough to look for each id awaited.
		for id, ch := range t.answers {
			if bytes.Contains(line, append(append(append([]byte(nil), answerPrefix...), id...), ',')) {
				close(ch)
				delete(t.answers, id)
			}
		}
	}
}

// consumed hears that the plugin read n bytes.
func (t *wireTap) consumed(n int) {
	t.mu.Lock()
	t.read += uint64(n)
	freed := false
	for len(t.marks) > 0 && t.marks[0].end <= t.read {
		ol := t.marks[0]
		t.marks = t.marks[1:]
		if t.waiting[ol.proc] -= ol.size; t.waiting[ol.proc] <= 0 {
			delete(t.waiting, ol.proc)
		}
		freed = true
	}
	if freed {
		t.signal()
	}
	t.mu.Unlock()
}

// answered returns a channel closed once the answer to the request id
// (raw JSON, as the plugin wrote it) has been written to the plugin.
func (t *wireTap) answered(id []byte) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch, ok := t.answers[string(id)]
	if !ok {
		ch = make(chan struct{})
		if t.closed {
			close(ch)
		} else {
			t.answers[string(id)] = ch
		}
	}
	return ch
}

// SendOut sends one proc/out notification, with params already encoded,
// and counts it as waiting to be read (fence.Tap).
func (t *wireTap) SendOut(send func() error, proc int64, params []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := send(); err != nil {
		return err
	}
	size := outOverhead + len(params)
	t.queued = append(t.queued, outLine{proc: proc, size: size})
	t.waiting[proc] += size
	return nil
}

// WaitRoom waits until less than limit bytes of proc's output wait to be
// read by the plugin, or ctx ends, or the tap closes (fence.Tap).
func (t *wireTap) WaitRoom(ctx context.Context, proc int64, limit int) error {
	for {
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			return protocol.ErrClosed
		}
		if t.waiting[proc] < limit {
			t.mu.Unlock()
			return nil
		}
		ch := t.changed
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// pending returns how many bytes of proc's output wait to be read.
func (t *wireTap) pending(proc int64) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.waiting[proc]
}

// close wakes every waiter for good.
func (t *wireTap) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.closed = true
	for id, ch := range t.answers {
		close(ch)
		delete(t.answers, id)
	}
	t.signal()
}

// A call is one of the plugin's requests as a method sees it: which
// instance, and how to know that its answer reached the plugin.
type call struct {
	inst *instance
	id   []byte // the request's id, by a line; nil by escouade.call
	// done is closed once the answer is in the plugin's hands, for a
	// request by escouade.call: the host function has returned.
	done <-chan struct{}
}

// answered returns a channel closed once the answer to c reached the
// plugin, or at the latest after answerWait: what a method sends after
// its answer (a stream's chunks) waits for it.
func (c *call) answered() <-chan struct{} {
	switch {
	case c.done != nil:
		return c.done
	case c.id != nil && c.inst.tap != nil:
		return c.inst.tap.answered(c.id)
	}
	ch := make(chan struct{})
	close(ch)
	return ch
}

// answerWait bounds how long a method's follow-up waits for its answer to
// be written: an answer the connection could not write never comes.
const answerWait = 10 * time.Second

// AfterAnswer returns a function that waits until c's answer reached the
// plugin, answerWait at most, or ctx ends (fence.Call). It must be called
// before the method returns, so that the answer is watched for before it
// is written.
func (c *call) AfterAnswer() func(ctx context.Context) {
	answered := c.answered()
	return func(ctx context.Context) {
		t := time.NewTimer(answerWait)
		defer t.Stop()
		select {
		case <-answered:
		case <-t.C:
		case <-ctx.Done():
		}
	}
}
