package shinken

import (
	"encoding/base64"
	"errors"
	"io"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"shinken.dev/go/internal/hosttool"
	"shinken.dev/go/internal/logtext"
	"shinken.dev/go/shinken/aci"
)

// exec runs the exec verb: buffered (one result holding an ExecResult) or
// streamed (an ack, exec_output chunks, then exactly one exec_exit).
// exec runs the command and answers it. It returns the error the call was
// refused or failed with, nil when the command ran (whatever its exit).
func (c *conn) exec(callID string, a *aci.Action) error {
	rt := c.rt
	streamed := a.Stream != nil && *a.Stream
	failSpawn := func(err error) {
		if streamed {
			c.send(&aci.ExecExit{CallID: callID, ExitCode: nil, Error: aci.WireError(err)})
			return
		}
		c.fail(callID, "action", aci.VerbExec, err)
	}
	// A refusal before anything runs is the reply the form promises: a
	// result for the buffered form, an ack for the streamed one.
	refuse := func(err error) {
		if streamed {
			c.send(&aci.Ack{CallID: callID, OK: false, Error: aci.WireError(err)})
			return
		}
		c.fail(callID, "action", aci.VerbExec, err)
	}
	if err := rt.authorize(c.ctx, c, a); err != nil {
		refuse(err)
		return err
	}
	release, err := c.reserveExec()
	if err != nil {
		refuse(err)
		return err
	}
	// The slot is freed before the final reply is sent, so that a client
	// that starts its next exec on that reply finds it free.
	var once sync.Once
	free := func() { once.Do(release) }
	defer free()

	req := aci.ExecRequest{Argv: a.Argv, Env: a.Env, Stdin: a.Stdin, Timeout: rt.opts.Exec.DefaultTimeout}
	if a.Shell != nil {
		req.Shell = *a.Shell
	}
	if a.Cwd != nil {
		req.Dir = *a.Cwd
	}
	if a.TimeoutMS != nil {
		req.Timeout = millis(*a.TimeoutMS, rt.opts.Exec.MaxTimeout)
	}
	if a.TimeoutMS != nil && isShellStart(a) {
		// The machine tools' shell lives as long as its session: its
		// client ends it when idle, and the executor's own maximum
		// bounds it; the exec limit does not.
		req.Timeout = millis(*a.TimeoutMS, maxShellLife)
	} else {
		req.Timeout = min(req.Timeout, rt.opts.Exec.MaxTimeout)
	}

	if streamed {
		// The ack comes first, so that a spawn failure is an exec_exit, as
		// the schema describes for the streamed form.
		c.ack(callID)
	}
	start := time.Now()
	p, err := rt.executor.Start(c.ctx, req)
	if err != nil {
		// An executor's own codes (too_many_execs, invalid_action...) pass
		// through; anything uncoded is a spawn failure.
		var e *aci.Error
		if !errors.As(err, &e) {
			err = &aci.Error{Code: aci.CodeExecSpawnFailed, Detail: err.Error(), Err: err}
		}
		free()
		failSpawn(err)
		c.emitExec(callID, a, start, "spawn_failed", nil, err)
		return err
	}
	if streamed {
		budget := rt.opts.Exec.StreamBudget
		if isShellStart(a) {
			// A held shell or background command streams for its whole
			// life, and its client keeps only a bounded tail: a total
			// budget would silence it for good (its prompts included)
			// once it had printed that much.
			budget = math.MaxInt64
		}
		code, outcome := c.streamExec(callID, p, start, budget, free)
		c.emitExec(callID, a, start, outcome, code, nil)
		return nil
	}
	res, err := Collect(p, rt.opts.Exec.OutputBudget)
	if err != nil && c.ctx.Err() == nil && !res.Status.TimedOut {
		c.log.Info("exec output error", logtext.String("call_id", callID), "err", err)
	}
	free()
	r := execResult(res, start)
	c.result(callID, r)
	c.emitExec(callID, a, start, execOutcome(res.Status), r.ExitCode, nil)
	return nil
}

// reserveExec takes an exec slot on this connection and on the runtime.
func (c *conn) reserveExec() (func(), error) {
	rt := c.rt
	c.mu.Lock()
	if int(c.execs) >= rt.opts.Exec.MaxPerConn {
		c.mu.Unlock()
		return nil, aci.Errorf(aci.CodeTooManyExecs, "this connection already runs %d execs", rt.opts.Exec.MaxPerConn)
	}
	if rt.execs.Add(1) > int64(rt.opts.Exec.MaxTotal) {
		rt.execs.Add(-1)
		c.mu.Unlock()
		return nil, aci.Errorf(aci.CodeTooManyExecs, "the runtime already runs %d execs", rt.opts.Exec.MaxTotal)
	}
	c.execs++
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.execs--
		c.mu.Unlock()
		rt.execs.Add(-1)
	}, nil
}

// Collected is the buffered result of a process: what [Collect] kept of
// each channel, whether it had to cut, and how the process ended.
type Collected struct {
	Stdout, Stderr                   []byte
	StdoutTruncated, StderrTruncated bool  // the channel wrote more than the budget: exactly then
	StdoutBytes, StderrBytes         int64 // everything the channel wrote, kept or not
	Status                           ExitStatus
}

// Collect reads p to the end, keeping up to budget bytes of each channel
// (reading past it, so that the child never blocks on a full pipe), then
// waits for it. The error is Next's first but io.EOF, or Wait's.
func Collect(p Process, budget int) (Collected, error) {
	budget = max(budget, 0)
	var o Collected
	var err error
	for {
		c, nerr := p.Next()
		if nerr != nil {
			if nerr != io.EOF {
				err = nerr
			}
			break
		}
		kept, total, cut := &o.Stdout, &o.StdoutBytes, &o.StdoutTruncated
		if c.Channel == Stderr {
			kept, total, cut = &o.Stderr, &o.StderrBytes, &o.StderrTruncated
		}
		*total += int64(len(c.Data))
		if room := budget - len(*kept); room > 0 {
			*kept = append(*kept, c.Data[:min(room, len(c.Data))]...)
		}
		*cut = *total > int64(budget)
	}
	st, werr := p.Wait()
	o.Status = st
	if err == nil {
		err = werr
	}
	return o, err
}

// OutputText returns b as UTF-8, each run of invalid bytes replaced by
// U+FFFD; when truncated is set, a character cut at b's end is dropped.
func OutputText(b []byte, truncated bool) string {
	if truncated {
		b = b[:len(b)-incompleteTail(b)]
	}
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// incompleteTail returns the length of the valid but unfinished UTF-8
// sequence at the end of b, 0 if there is none.
func incompleteTail(b []byte) int {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}

func execResult(r Collected, start time.Time) *aci.ExecResult {
	res := &aci.ExecResult{
		TimedOut:        r.Status.TimedOut,
		Stdout:          OutputText(r.Stdout, r.StdoutTruncated),
		Stderr:          OutputText(r.Stderr, r.StderrTruncated),
		StdoutTruncated: r.StdoutTruncated,
		StderrTruncated: r.StderrTruncated,
		DurationMS:      durMS(r.Status, start),
	}
	res.ExitCode, res.Signal = exitFields(r.Status)
	return res
}

func exitFields(st ExitStatus) (code, sig *int) {
	if st.Exited {
		c := st.Code
		code = &c
	}
	if st.Signal != 0 {
		s := st.Signal
		sig = &s
	}
	return code, sig
}

func durMS(st ExitStatus, start time.Time) float64 {
	d := st.Duration
	if d <= 0 {
		d = time.Since(start)
	}
	return float64(d.Microseconds()) / 1000
}

// streamExec forwards output as it comes. Each chunk waits for room in the
// connection's queue before the next is read, so a slow client stops the
// reading of the child's pipe, and the child pauses on a full pipe: memory
// stays bounded.
// It returns the exit code, nil when the process did not exit by itself,
// and how it ended (see EventExec).
func (c *conn) streamExec(callID string, p Process, start time.Time, budget int64, free func()) (*int, string) {
	rt := c.rt
	var seq uint64
	var total int64
	truncated := false
	chunk := rt.opts.Exec.ChunkSize
	for {
		ch, err := p.Next()
		if err != nil {
			if err != io.EOF && c.ctx.Err() == nil {
				c.log.Info("exec output error", logtext.String("call_id", callID), "err", err)
			}
			break
		}
		data := ch.Data
		if room := budget - total; int64(len(data)) > room {
			truncated = true
			data = data[:max(room, 0)]
		}
		total += int64(len(data))
		name := "stdout"
		if ch.Channel == Stderr {
			name = "stderr"
		}
		for len(data) > 0 {
			n := min(len(data), chunk)
			if !c.sendExecChunk(callID, seq, name, data[:n]) {
				p.Kill()
				st, _ := p.Wait()
				return nil, execOutcome(st)
			}
			seq++
			data = data[n:]
		}
	}
	st, _ := p.Wait()
	code, sig := exitFields(st)
	free()
	c.send(&aci.ExecExit{CallID: callID, ExitCode: code, Signal: sig, TimedOut: st.TimedOut, DurationMS: durMS(st, start), Truncated: truncated})
	return code, execOutcome(st)
}

func (c *conn) sendExecChunk(callID string, seq uint64, channel string, data []byte) bool {
	if c.binary {
		hdr := &aci.BinaryExecOutputHeader{CallID: callID, Seq: seq, Channel: channel, Data: aci.ByteRange{Off: 0, Len: len(data)}}
		frame, err := aci.AppendBinaryFrame(make([]byte, 0, len(data)+128), hdr, data)
		if err != nil {
			return false
		}
		return c.enqueue(outgoing{typ: websocket.MessageBinary, data: frame})
	}
	return c.send(&aci.ExecOutput{CallID: callID, Seq: seq, Channel: channel, DataB64: base64.StdEncoding.EncodeToString(data)})
}

// maxShellLife bounds the machine tools' shell, which Exec.MaxTimeout
// does not.
const maxShellLife = 24 * time.Hour

// isShellStart says a is the machine tools' shell start or a background
// command's, word for word.
func isShellStart(a *aci.Action) bool {
	if a.Argv == nil {
		return false
	}
	return hosttool.Held(a.Argv, a.Env, a.Stdin)
}
