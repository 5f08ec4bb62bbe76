package session

import (
	"fmt"
	"slices"
	"time"
)

// supervise restarts the parts that die until the session closes.
func (s *Session) supervise() {
	defer close(s.superv)
	for {
		select {
		case <-s.ctx.Done():
			return
		case pr := <-s.exits:
			s.mu.Lock()
			current := pr.part != nil && pr.part.proc == pr && !pr.stopped
			failed := s.failed != nil
			s.mu.Unlock()
			if current && !failed {
				s.recover(pr)
			}
		}
	}
}

// recover handles the death of pr: it finds the first part that does not
// answer among those pr's part needs (a window manager dies because its X
// server did), stops the parts that depend on that one, and starts them all
// again in order, within the restart budget.
func (s *Session) recover(pr *proc) {
	p := pr.part
	err := fmt.Errorf("session: %s exited (%s): %s", p.name, pr.cmd.ProcessState, pr.stderrText())
	// Readiness says what in words (a probe may show it to anyone); the
	// log and the event have the exit status and the part's output.
	s.mu.Lock()
	s.notReady = &PartError{Part: p.name, Reason: "exited: restarting it", Err: err}
	s.mu.Unlock()
	s.log.Warn("session part exited", "part", p.name, "state", pr.cmd.ProcessState.String(), "stderr", pr.stderrText())
	s.emit(Event{Part: p.name, Kind: EventExited, Err: err})
	var onBus map[int]bool
	for {
		root := s.rootCause(p)
		if !s.spend(root) {
			s.giveUp(root, fmt.Errorf("session: %s died more than %d times in %v: %w", root.name, s.opts.MaxRestarts, s.opts.RestartWindow, err))
			return
		}
		set := s.dependents(root)
		// Who was on the accessibility bus, before it is restarted (the
		// first time round: a failed try may have started a new one).
		s.mu.Lock()
		if onBus == nil && s.peers != nil && slices.ContainsFunc(set, func(q *part) bool { return q.name == PartA11yBus }) {
			onBus = s.peers.processes()
		}
		s.mu.Unlock()
		for i := len(set) - 1; i >= 0; i-- {
			if cur := set[i].proc; cur != nil {
				s.mu.Lock()
				cur.stopped = true
				s.mu.Unlock()
				cur.stop()
			}
		}
		var names []Part
		var startErr error
		for _, q := range set {
			if startErr = s.startPart(s.ctx, q); startErr != nil {
				break
			}
			names = append(names, q.name)
		}
		if s.ctx.Err() != nil {
			return
		}
		if startErr != nil {
			// Try again, from whatever does not answer now, while the budget
			// lasts.
			s.log.Warn("session part restart failed", "part", root.name, "err", startErr)
			err = startErr
			p = root
			continue
		}
		if slices.ContainsFunc(set, func(q *part) bool { return q.name != PartWindowManager }) {
			s.restartApps()
		}
		if onBus != nil {
			s.noteLost(onBus)
		}
		s.mu.Lock()
		s.notReady = nil
		s.mu.Unlock()
		s.log.Info("session part restarted", "part", root.name, "restarted", names)
		s.emit(Event{Part: root.name, Kind: EventRestarted, Restarted: names})
		return
	}
}

// rootCause returns the first part p needs that does not answer, or p.
func (s *Session) rootCause(p *part) *part {
	for _, q := range s.parts {
		if q == p {
			break
		}
		if !slices.Contains(p.needs, q.name) {
			continue
		}
		dead := q.proc == nil || !q.proc.running() || (q.alive != nil && !q.alive())
		if dead {
			return s.rootCause(q)
		}
	}
	return p
}

// dependents returns root and every part that needs it, directly or not,
// in start order.
func (s *Session) dependents(root *part) []*part {
	set := []*part{root}
	in := map[Part]bool{root.name: true}
	for _, q := range s.parts {
		for _, n := range q.needs {
			if in[n] && !in[q.name] {
				in[q.name] = true
				set = append(set, q)
			}
		}
	}
	return set
}

// spend records a restart of p, reporting false when the budget is spent.
func (s *Session) spend(p *part) bool {
	if s.opts.MaxRestarts < 0 {
		return false
	}
	now := time.Now()
	kept := p.restarts[:0]
	for _, t := range p.restarts {
		if now.Sub(t) < s.opts.RestartWindow {
			kept = append(kept, t)
		}
	}
	p.restarts = kept
	if len(p.restarts) >= s.opts.MaxRestarts {
		return false
	}
	p.restarts = append(p.restarts, now)
	return true
}

func (s *Session) giveUp(p *part, err error) {
	s.mu.Lock()
	s.failed = err
	s.gaveUp = &PartError{Part: p.name, Reason: "died more often than the restart budget allows: given up", Err: err}
	s.mu.Unlock()
	close(s.done)
	s.log.Error("session gave up", "part", p.name, "err", err)
	s.emit(Event{Part: p.name, Kind: EventGaveUp, Err: err})
}

func (s *Session) emit(e Event) {
	if s.opts.OnEvent != nil {
		s.opts.OnEvent(e)
	}
}
