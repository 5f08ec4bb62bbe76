package escouade

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// A funcProcess is a plugin run in-process by a RunFunc, over two pipes in
// memory. It has the lifecycle of a command; only "kill" is weaker: a
// goroutine cannot be killed, so it is told (its context ends) and cut off
// (its input fails).
type funcProcess struct {
	toPlugin   *pipe
	fromPlugin *pipe
	cancel     context.CancelFunc
	exited     chan struct{}
	mu         sync.Mutex
	how        string
}

// pipeSize is how many bytes an in-memory pipe holds before a write waits.
const pipeSize = 1 << 20

func funcLauncher(run RunFunc) launcher {
	return func(p *Plugin) (process, error) {
		ctx, cancel := context.WithCancel(context.Background())
		f := &funcProcess{
			toPlugin:   newPipe(pipeSize),
			fromPlugin: newPipe(pipeSize),
			cancel:     cancel,
			exited:     make(chan struct{}),
		}
		go f.run(ctx, run)
		return f, nil
	}
}

func (f *funcProcess) run(ctx context.Context, run RunFunc) {
	how := "returned"
	defer func() {
		// A panic ends this plugin, not the Host.
		if r := recover(); r != nil {
			how = fmt.Sprintf("panicked: %v", r)
		}
		f.fromPlugin.closeWrite() // its output ends with it
		f.mu.Lock()
		f.how = how
		f.mu.Unlock()
		close(f.exited)
	}()
	if err := run(ctx, pipeReader{f.toPlugin}, pipeWriter{f.fromPlugin}); err != nil {
		how = "returned: " + err.Error()
	}
}

func (f *funcProcess) stdout() io.Reader     { return pipeReader{f.fromPlugin} }
func (f *funcProcess) stdin() io.Writer      { return pipeWriter{f.toPlugin} }
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
}

func newPipe(max int) *pipe {
	p := &pipe{max: max}
	p.cond.L = &p.mu
	return p
}

func (p *pipe) read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.r == len(p.buf) && !p.wclosed && !p.rclosed {
		p.cond.Wait()
	}
	if p.rclosed {
		return 0, io.ErrClosedPipe
	}
	if p.r == len(p.buf) {
		return 0, io.EOF
	}
	n := copy(b, p.buf[p.r:])
	p.r += n
	if p.r == len(p.buf) {
		p.buf, p.r = p.buf[:0], 0
	}
	p.cond.Broadcast()
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
