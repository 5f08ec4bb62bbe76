package escouade

import (
	"bytes"
	"log/slog"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"shinken.dev/go/escouade/internal/contain"
	"shinken.dev/go/escouade/internal/fence"
	"shinken.dev/go/escouade/manifest"
)

// A sharedProcess is the process of launch.shared: the Host starts it with
// the plugin, reads the port it listens on in its output, and opens that
// port to the plugin (local:shared) while it lives. Its output goes to the
// journal; it ends with the plugin.
type sharedProcess struct {
	p       *Plugin
	listens *regexp.Regexp
	g       *contain.Group

	mu    sync.Mutex
	port  string // "" until read, and again once it ended
	alive bool
	done  chan struct{}
}

func startShared(p *Plugin, sp *manifest.SharedProcess) *sharedProcess {
	s := &sharedProcess{p: p, listens: regexp.MustCompile(sp.Listens), done: make(chan struct{})}
	path := sp.Command[0]
	if strings.ContainsRune(path, '/') {
		if !filepath.IsAbs(path) {
			path = filepath.Join(p.dir, path)
		}
	} else if lp, err := exec.LookPath(path); err == nil {
		path = lp
	}
	// alive from the start: the output may be read before startGroup
	// returns.
	s.alive = true
	out := &portWriter{s: s}
	cmd := &exec.Cmd{
		Path: path, Args: sp.Command, Dir: p.dir, Env: fence.MinimalEnv(),
		Stdout: out, Stderr: out,
		WaitDelay: p.h.opts.StopGrace,
	}
	g, err := contain.Start(cmd, true)
	if err != nil {
		p.j.say(slog.LevelError, "launch.shared: the process could not start", slog.String("error", err.Error()))
		s.alive = false
		close(s.done)
		return s
	}
	p.h.sayNamespaces(p.j)
	s.mu.Lock()
	s.g, s.alive = g, true
	s.mu.Unlock()
	p.j.say(slog.LevelInfo, "launch.shared: process started", slog.Int("pid", g.Pid()))
	go func() {
		<-g.Done()
		out.flush()
		s.mu.Lock()
		s.alive, s.port = false, ""
		s.mu.Unlock()
		how := g.Result().How
		p.j.say(slog.LevelWarn, "launch.shared: the process ended; local:shared is closed", slog.String("status", how))
		close(s.done)
	}()
	return s
}

// Port returns the port the process said it listens on, while it lives
// and, on Linux, while one of its processes is seen to listen there.
func (s *sharedProcess) Port() (string, bool) {
	s.mu.Lock()
	port, ok, g := s.port, s.alive && s.port != "", s.g
	s.mu.Unlock()
	if !ok || g == nil {
		return "", false
	}
	n, _ := strconv.Atoi(port)
	if !contain.ListensOn(g, n) {
		s.p.j.say(slog.LevelWarn, "local:shared: the shared process does not listen on the port it printed; refused", slog.String("port", port))
		return "", false
	}
	return port, true
}

// line hears a line of the process's output.
func (s *sharedProcess) line(l []byte) {
	s.mu.Lock()
	if s.port == "" && s.alive {
		if m := s.listens.FindSubmatch(l); m != nil {
			if n, err := strconv.Atoi(string(m[1])); err == nil && n > 0 && n < 65536 {
				s.port = strconv.Itoa(n)
				s.mu.Unlock()
				s.p.j.say(slog.LevelInfo, "launch.shared: listening", slog.Int("port", n))
				return
			}
		}
	}
	s.mu.Unlock()
	text, long := cut(l)
	attrs := []slog.Attr{slog.String("stream", "launch.shared")}
	if long {
		attrs = append(attrs, slog.Bool("cut", true))
	}
	s.p.j.limited(s.p.j.lines, slog.LevelInfo, text, attrs...)
}

// stop ends the process: SIGTERM to its group, then SIGKILL.
func (s *sharedProcess) stop() {
	if s.g == nil {
		return
	}
	s.g.Signal(syscall.SIGTERM)
	t := time.NewTimer(s.p.h.opts.StopGrace)
	defer t.Stop()
	select {
	case <-s.done:
		return
	case <-t.C:
	}
	s.g.Signal(syscall.SIGKILL)
	<-s.done
}

// portWriter splits the process's output in lines, each bounded.
type portWriter struct {
	s       *sharedProcess
	mu      sync.Mutex
	partial []byte
}

func (w *portWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if room := maxJournalLine + 1 - len(w.partial); room > 0 {
				w.partial = append(w.partial, b[:min(room, len(b))]...)
			}
			break
		}
		if room := maxJournalLine + 1 - len(w.partial); room > 0 {
			w.partial = append(w.partial, b[:min(room, i)]...)
		}
		w.s.line(w.partial)
		w.partial = w.partial[:0]
		b = b[i+1:]
	}
	return n, nil
}

func (w *portWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.s.line(w.partial)
		w.partial = w.partial[:0]
	}
}
