package osexec

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"shinken.dev/go/shinken"
)

// readAhead is how many chunk buffers a process owns while it is consumed
// through Next: one the caller holds, and the rest for the two readers to
// fill ahead of it. It is what bounds a process's memory.
const readAhead = 4

// A Process is a running command started by [Executor.Start]. It implements
// [shinken.Process].
//
// Next is for one goroutine at a time; Wait and Kill may be called from any
// goroutine, in any order, any number of times.
type Process struct {
	e     *Executor
	pid   int
	start time.Time

	stdout, stderr *os.File // read ends of the output pipes
	stdin          *os.File // write end of the input pipe; nil for /dev/null
	stdinDone      chan struct{}

	out         chan shinken.OutputChunk // unbuffered: a chunk is always in someone's hand
	free        chan []byte              // buffers the caller is done with
	nbufs       atomic.Int32             // buffers this process has taken
	held        []byte                   // the buffer of the chunk Next returned last
	live        atomic.Int32             // readers still running
	readersDone chan struct{}            // closed when both readers have stopped

	discardOnce sync.Once
	discard     chan struct{} // closed by Wait: read the rest and throw it away

	mu       sync.Mutex
	exited   bool // the leader has exited (it may not be reaped yet)
	reaped   bool // its pid is free again: the group must not be signalled
	killedBy killer
	cause    error // context.Cause of ctx when it killed the group

	timer   *time.Timer
	stopCtx func() bool

	done   chan struct{} // closed when everything below is set
	status shinken.ExitStatus
	err    error
}

// killer says who killed a process group first.
type killer uint8

const (
	notKilled killer = iota
	byKill
	byDeadline
	byContext
)

var _ shinken.Process = (*Process)(nil)

// start spawns argv and starts serving it. The spawn happens on a goroutine
// locked to its OS thread for as long as the child runs, because Linux
// sends the parent-death signal when the thread that forked the child
// exits, not the process: a thread recycled by the Go runtime would kill
// the child early.
func (e *Executor) start(ctx context.Context, path string, argv, env []string, dir string, stdin *string, timeout time.Duration) (*Process, error) {
	p := &Process{
		e:           e,
		stdinDone:   make(chan struct{}),
		out:         make(chan shinken.OutputChunk),
		free:        make(chan []byte, readAhead+2),
		readersDone: make(chan struct{}),
		discard:     make(chan struct{}),
		done:        make(chan struct{}),
	}
	var parent, child []*os.File
	fail := func(err error) (*Process, error) {
		for _, f := range append(parent, child...) {
			f.Close()
		}
		return nil, fmt.Errorf("osexec: %w", err)
	}
	var in *os.File
	var err error
	if stdin != nil && *stdin != "" {
		if in, p.stdin, err = os.Pipe(); err != nil {
			return fail(err)
		}
		parent = append(parent, p.stdin)
	} else if in, err = os.Open(os.DevNull); err != nil {
		return fail(err)
	}
	child = append(child, in)
	var outW, errW *os.File
	if p.stdout, outW, err = os.Pipe(); err != nil {
		return fail(err)
	}
	parent, child = append(parent, p.stdout), append(child, outW)
	if p.stderr, errW, err = os.Pipe(); err != nil {
		return fail(err)
	}
	parent, child = append(parent, p.stderr), append(child, errW)
	// Fd puts the child's ends in blocking mode, as programs expect of
	// their standard files; the parent's ends stay with the poller, so
	// that closing them interrupts a pending read or write.
	attr := &syscall.ProcAttr{
		Dir:   dir,
		Env:   env,
		Files: []uintptr{in.Fd(), outW.Fd(), errW.Fd()},
	}
	started := make(chan error, 1)
	go p.run(ctx, path, argv, attr, child, started, stdin, timeout)
	if err := <-started; err != nil {
		for _, f := range parent {
			f.Close()
		}
		return nil, err
	}
	return p, nil
}

// run spawns the child, starts the goroutines that serve it, then
// supervises it to the end. It keeps its OS thread locked until the child
// is reaped.
func (p *Process) run(ctx context.Context, path string, argv []string, attr *syscall.ProcAttr, child []*os.File, started chan<- error, stdin *string, timeout time.Duration) {
	runtime.LockOSThread()
	p.start = time.Now()
	pid, err := spawn(path, argv, attr, p.e.user)
	for _, f := range child {
		f.Close()
	}
	if err != nil {
		runtime.UnlockOSThread()
		started <- explainSpawn(err, path, attr.Dir)
		return
	}
	p.pid = pid
	p.live.Store(2)
	go p.copyOut(shinken.Stdout, p.stdout)
	go p.copyOut(shinken.Stderr, p.stderr)
	if p.stdin != nil {
		go p.feed(*stdin)
	} else {
		close(p.stdinDone)
	}
	if timeout > 0 {
		p.timer = time.AfterFunc(timeout, p.expire)
	}
	p.stopCtx = context.AfterFunc(ctx, func() { p.cancel(ctx) })
	started <- nil
	p.supervise()
}

// supervise waits for the leader to exit, gives the rest of its group
// WaitDelay to finish with the output pipes, reaps the leader, and waits
// for the output to be consumed or discarded.
func (p *Process) supervise() {
	waitErr := waitExit(p.pid)
	// The duration ends here, not at the reap, which may wait for
	// background processes that are not the command.
	end := time.Now()
	p.mu.Lock()
	p.exited = true
	killed := p.killedBy != notKilled
	p.mu.Unlock()

	// After a group kill only processes that left the group can still hold
	// the pipes: no grace for them.
	if !killed {
		grace := time.NewTimer(p.e.waitDelay)
		select {
		case <-p.readersDone:
		case <-grace.C:
		}
		grace.Stop()
	}

	// Kill before reaping: while the leader is an unreaped zombie its pid,
	// which names the group, cannot be reused, so the signal cannot reach a
	// stranger's group. Killing again after a kill catches a fork that
	// raced the first signal.
	p.mu.Lock()
	if killed || !p.e.keepBackground {
		killGroup(p.pid)
		killed = true
	}
	ws, reapErr := reap(p.pid)
	p.reaped = true
	by, cause := p.killedBy, p.cause
	p.mu.Unlock()
	runtime.UnlockOSThread()

	if !isClosed(p.readersDone) {
		p.releasePipes(killed)
	}

	if p.timer != nil {
		p.timer.Stop()
	}
	p.stopCtx()
	if p.stdin != nil {
		p.stdin.Close()
	}
	<-p.stdinDone
	p.stdout.Close()
	p.stderr.Close()
	for {
		select {
		case b := <-p.free:
			p.e.recycle(b)
			continue
		default:
		}
		break
	}

	p.status = shinken.ExitStatus{
		Code:     ws.code,
		Exited:   ws.exited,
		Signal:   ws.signal,
		TimedOut: by == byDeadline && ws.signal != 0,
		Duration: end.Sub(p.start),
	}
	switch {
	case waitErr != nil:
		p.err = fmt.Errorf("osexec: wait for pid %d: %w", p.pid, waitErr)
	case reapErr != nil:
		p.err = fmt.Errorf("osexec: reap pid %d: %w", p.pid, reapErr)
	case by == byContext && ws.signal != 0:
		p.err = fmt.Errorf("osexec: killed: %w", cause)
	}
	p.e.running.Add(-1)
	close(p.done)
}

// releasePipes waits for the readers to finish, cutting the pipes that are
// still held by processes other than the reaped leader. A pipe can stay
// open after the command for two reasons: the caller is slow, which is
// backpressure and must lose nothing, or a background process still holds
// the write end, which could last forever. Poll tells the two apart, since
// a pipe hangs up once it has no writer left. A held pipe is cut at once
// when it is empty; one that is still being written to is cut a WaitDelay
// later, which is the bound. After a group kill the dying processes need a
// moment to let go, so the first look comes a WaitDelay later.
func (p *Process) releasePipes(killed bool) {
	tick := time.NewTicker(p.e.waitDelay)
	defer tick.Stop()
	first := true
	if killed {
		select {
		case <-p.readersDone:
			return
		case <-tick.C:
		}
	}
	for {
		for _, f := range []*os.File{p.stdout, p.stderr} {
			if held, data := pipeState(f); held && (!data || !first) {
				f.SetReadDeadline(time.Unix(1, 0))
			}
		}
		first = false
		select {
		case <-p.readersDone:
			return
		case <-tick.C:
		}
	}
}

// copyOut reads one output pipe into chunks for Next, or into the void
// once Wait has asked for the rest to be discarded. It blocks while the
// caller holds the buffers, which is what pauses a child that writes
// faster than the caller reads.
func (p *Process) copyOut(ch shinken.OutputChannel, f *os.File) {
	defer func() {
		if p.live.Add(-1) == 0 {
			close(p.out)
			close(p.readersDone)
		}
	}()
	var buf []byte
	discarding := false
	for {
		if buf == nil {
			buf, discarding = p.buffer(discarding)
		}
		n, err := f.Read(buf)
		if n > 0 && !discarding {
			select {
			case p.out <- shinken.OutputChunk{Channel: ch, Data: buf[:n]}:
				buf = nil
			case <-p.discard:
				discarding = true
			}
		}
		if err != nil {
			// io.EOF, or the deadline set on a pipe held by a stranger.
			break
		}
	}
	if buf != nil {
		p.giveBack(buf)
	}
}

// buffer returns a buffer to read into: a free one, a new one while the
// process has fewer than readAhead, or else the next one the caller gives
// back. Once output is being discarded the caller gives none back, so the
// reader takes one of its own.
func (p *Process) buffer(discarding bool) ([]byte, bool) {
	select {
	case b := <-p.free:
		return b, discarding
	default:
	}
	if discarding || p.nbufs.Add(1) <= readAhead {
		return p.e.buffer(), discarding
	}
	p.nbufs.Add(-1)
	select {
	case b := <-p.free:
		return b, discarding
	case <-p.discard:
		return p.e.buffer(), true
	}
}

// giveBack returns a buffer to the process's free list.
func (p *Process) giveBack(b []byte) {
	select {
	case p.free <- b[:cap(b)]:
	default:
	}
}

// feed writes the input to the child and closes it, so that the child sees
// end of file. It runs on its own goroutine so that a child that does not
// read cannot block anyone; closing the pipe at the end interrupts it.
func (p *Process) feed(s string) {
	defer close(p.stdinDone)
	io.WriteString(p.stdin, s)
	p.stdin.Close()
}

// expire kills the group at the deadline.
func (p *Process) expire() { p.kill(byDeadline, nil) }

// cancel kills the group when the context is done.
func (p *Process) cancel(ctx context.Context) { p.kill(byContext, context.Cause(ctx)) }

func (p *Process) kill(by killer, cause error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return nil
	}
	if p.killedBy == notKilled && !p.exited {
		p.killedBy, p.cause = by, cause
	}
	if err := killGroup(p.pid); err != nil {
		return fmt.Errorf("osexec: kill group %d: %w", p.pid, err)
	}
	return nil
}

// Pid returns the process id of the command's leader, which is also the id
// of its process group.
func (p *Process) Pid() int { return p.pid }

// Next returns the next chunk of output, from either channel, in the order
// it was read; its Data is valid until the next call to Next. It returns
// io.EOF once both channels are closed and everything read has been
// returned. Until Next is called again, the process may be paused by a full
// pipe.
func (p *Process) Next() (shinken.OutputChunk, error) {
	if p.held != nil {
		p.giveBack(p.held)
		p.held = nil
	}
	c, ok := <-p.out
	if !ok {
		return shinken.OutputChunk{}, io.EOF
	}
	p.held = c.Data
	return c, nil
}

// Wait waits for the process to end, reaps it and releases what serves it.
// Output not yet returned by Next is read and discarded, so that the child
// runs to completion instead of blocking on a full pipe; a caller that
// wants the output calls Next until io.EOF first.
//
// The status says how the leader ended: TimedOut with Signal 9 after a
// deadline kill, Signal 9 after Kill or a cancelled context. In that last
// case Wait also returns an error wrapping the context's cause. Otherwise
// the error is non-nil only if the process could not be waited for.
func (p *Process) Wait() (shinken.ExitStatus, error) {
	p.discardOnce.Do(func() { close(p.discard) })
	<-p.done
	return p.status, p.err
}

// Kill sends SIGKILL to the process's whole group. It is safe to call at
// any time, more than once, from any goroutine; once the process has been
// reaped it does nothing.
func (p *Process) Kill() error { return p.kill(byKill, nil) }

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
