package escouade

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"shinken.dev/go/escouade/internal/contain"
)

// A command is a plugin run as a program (run.command): in its own process
// group, killed with its parent, its stdin and stdout the protocol's lines,
// its stderr drained into the journal.
type command struct {
	in     *os.File // the Host's end of the plugin's stdin
	out    *os.File // the Host's end of the plugin's stdout
	stderr *stderrWriter
	g      *contain.Group
	exited chan struct{}

	mu  sync.Mutex
	how string // how it ended

	inOnce, outOnce sync.Once
}

// commandLauncher starts the program argv names, the same file at each
// restart (heldProgram), let go of with the plugin.
func commandLauncher(argv []string) launcher {
	hp := &heldProgram{}
	var once sync.Once
	return func(inst *instance) (process, error) {
		once.Do(func() {
			inst.p.mu.Lock()
			inst.p.releases = append(inst.p.releases, hp.close)
			inst.p.mu.Unlock()
		})
		return startCommand(inst.p, argv, hp)
	}
}

func startCommand(p *Plugin, argv []string, hp *heldProgram) (*command, error) {
	path := argv[0]
	if strings.ContainsRune(path, '/') {
		if !filepath.IsAbs(path) {
			path = filepath.Join(p.dir, path)
		}
	} else {
		lp, err := exec.LookPath(path)
		if err != nil {
			return nil, err
		}
		path = lp
	}
	prog, moved, err := hp.open(path)
	if err != nil {
		return nil, err
	}
	if moved {
		p.j.say(slog.LevelWarn, "the plugin's program was replaced on disk: the file of its first start runs",
			slog.String("path", path), slog.String("sha256", hp.identity().SHA256))
	}
	var extra []*os.File
	if execHeld {
		path, extra = heldPath, []*os.File{prog}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	c := &command{in: inW, out: outR, stderr: &stderrWriter{j: p.j}, exited: make(chan struct{})}
	cmd := &exec.Cmd{
		Path:       path,
		Args:       argv,
		Dir:        p.dir,
		Env:        commandEnv(p.m),
		Stdin:      inR,
		Stdout:     outW,
		ExtraFiles: extra,
		// Not an *os.File: exec drains it on a goroutine of its own, always,
		// so that a full pipe never wedges the plugin.
		Stderr: c.stderr,
		// A grandchild that escaped the group and holds stderr must not hold
		// up Wait.
		WaitDelay: p.h.opts.StopGrace,
	}
	c.g, err = contain.Start(cmd, true)
	inR.Close() // the child holds its own copies
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	p.h.sayNamespaces(p.j)
	go c.wait()
	return c, nil
}

// wait notes how the program ended, once its stderr is drained.
func (c *command) wait() {
	<-c.g.Done()
	c.stderr.close()
	how := c.g.Result().How
	c.mu.Lock()
	c.how = how
	c.mu.Unlock()
	close(c.exited)
}

func (c *command) stdout() io.Reader     { return c.out }
func (c *command) stdin() io.Writer      { return c.in }
func (c *command) closeInput()           { c.inOnce.Do(func() { c.in.Close() }) }
func (c *command) terminate()            { c.g.Signal(syscall.SIGTERM) }
func (c *command) kill()                 { c.g.Signal(syscall.SIGKILL) }
func (c *command) done() <-chan struct{} { return c.exited }

func (c *command) release() {
	c.closeInput()
	c.outOnce.Do(func() { c.out.Close() })
}

func (c *command) status() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.how == "" {
		return fmt.Sprintf("process group %d still running", c.g.PGID())
	}
	return c.how
}
