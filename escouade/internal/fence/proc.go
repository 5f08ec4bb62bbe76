package fence

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"shinken.dev/go/escouade/internal/contain"
	"shinken.dev/go/escouade/internal/fields"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/logtext"
	"shinken.dev/go/internal/strictjson"
)

// The fences of proc/*.
const (
	maxProcs  = 4        // programs at once
	maxProcIn = 1 << 20  // bytes of proc/write the program has not read yet
	procChunk = 32 << 10 // bytes read from a program at once
)

// MaxProcOut is how many bytes of proc/out may be written to a plugin
// whose wire is watched (a Tap) and not yet read by it: past it the
// program is not read until the plugin catches up.
const MaxProcOut = 256 << 10

// A program is one run by proc/spawn.
type program struct {
	id     int64
	r      *Instance
	g      *contain.Group
	stdin  *os.File
	stdout *os.File
	stderr *os.File

	mu       sync.Mutex
	cond     sync.Cond
	inBuf    []byte
	inClose  bool // close was asked: stdin ends once inBuf is written
	inDone   bool // stdin is closed, or broke
	ended    bool // the leader ended
	feedDone chan struct{}

	afterAnswer func(context.Context) // waits until the plugin has the answer to proc/spawn
}

// procSpawnResult is the answer to proc/spawn.
type procSpawnResult struct {
	Proc int64 `json:"proc"`
}

type procSpawnParams struct {
	command string
	args    []string
	dir     string
	agent   string
	project string
	env     map[string]string
}

// procSpawnJSON is the params of proc/spawn as they are written, decoded
// by name.
type procSpawnJSON struct {
	Command string            `json:"command" wire:"required"`
	Args    []string          `json:"args"`
	Dir     *string           `json:"dir"` // agent or project; nil for the temporary folder
	Agent   string            `json:"agent"`
	Project string            `json:"project"`
	Env     map[string]string `json:"env"`
}

func parseProcSpawn(params []byte) (*procSpawnParams, error) {
	var pj procSpawnJSON
	if err := decodeParams(params, &pj); err != nil {
		return nil, err
	}
	ps := &procSpawnParams{command: pj.Command, args: pj.Args, agent: pj.Agent, project: pj.Project, env: pj.Env}
	if pj.Dir != nil {
		if *pj.Dir != "agent" && *pj.Dir != "project" {
			return nil, fields.Errorf("dir", "want agent or project")
		}
		ps.dir = *pj.Dir
	}
	for i, w := range append([]string{ps.command}, ps.args...) {
		if strings.ContainsRune(w, 0) {
			if i == 0 {
				return nil, fields.Errorf("command", "a NUL")
			}
			return nil, fields.Errorf("args", "a NUL in an argument")
		}
	}
	return ps, nil
}

// commandAllowed reports whether words, a program and its arguments, are
// an entry of permissions.commands word for word; an entry whose last word
// is * lets more words follow.
func commandAllowed(entries []string, words []string) bool {
	for _, e := range entries {
		ew := strings.Split(e, " ")
		if ew[len(ew)-1] == "*" {
			if prefix := ew[:len(ew)-1]; len(words) >= len(prefix) && slices.Equal(words[:len(prefix)], prefix) {
				return true
			}
			continue
		}
		if slices.Equal(words, ew) {
			return true
		}
	}
	return false
}

// programEnv builds a program's environment: base without Escouade's
// variables, and extra over it.
func programEnv(base []string, extra map[string]string) []string {
	env := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(strings.ToUpper(k), "ESCOUADE_") {
			continue
		}
		if _, over := extra[k]; over {
			continue
		}
		env = append(env, kv)
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// sessionBusVar is where a program finds the user's session bus.
const sessionBusVar = "DBUS_SESSION_BUS_ADDRESS"

// withoutSessionBus returns env without the session bus's address, unless
// permitted (permissions.env) names it: through the bus a program asks
// other processes of the user, outside every fence, to act (D-Bus
// activation starts a service outside the plugin's processes). The bus's
// socket still answers at its usual place ($XDG_RUNTIME_DIR/bus) to a
// process that looks for it: REFERENCE.md says so.
func withoutSessionBus(env, permitted []string) []string {
	if slices.Contains(permitted, sessionBusVar) {
		return env
	}
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, sessionBusVar+"=") })
}

// lookPath finds name in the folders of pathList, as a shell would, but
// for absolute folders only: "." and relative entries would run what
// happens to lie where the program runs.
func lookPath(name, pathList string) (string, error) {
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// procDir chooses where a program runs: the agent's folder, a project's,
// or the plugin's temporary folder.
func (p *Plugin) procDir(ctx context.Context, ps *procSpawnParams, agent *Agent) (string, error) {
	switch ps.dir {
	case "agent":
		if agent == nil {
			return "", fields.Errorf("agent", "dir agent names the agent")
		}
		if agent.Project != "" {
			if info, err := p.h.Project(ctx, agent.Project); err == nil && info.Private && !info.On {
				return "", errorf(protocol.CodeRefused, "refused: « Projet privé »: the agent works on a private project the plugin is not on for")
			}
		}
		if agent.Roots.Agent == "" {
			return "", errorf(protocol.CodeFailed, "failed: the agent has no folder")
		}
		return agent.Roots.Agent, nil
	case "project":
		id := ps.project
		if id == "" && agent != nil {
			id = agent.Project
		}
		if id == "" {
			return "", fields.Errorf("project", "dir project names the project, or an agent that works on one")
		}
		info, err := p.h.Project(ctx, id)
		if err != nil {
			return "", errorf(protocol.CodeRefused, "refused: no project %s", logtext.Quote(id))
		}
		if info.Private && !info.On {
			return "", errorf(protocol.CodeRefused, "refused: « Projet privé »: the plugin is not on for project %s", id)
		}
		if info.Root == "" {
			return "", errorf(protocol.CodeFailed, "failed: project %s has no folder", id)
		}
		return info.Root, nil
	}
	dir, err := p.h.TempDir()
	if err != nil {
		return "", errorf(protocol.CodeFailed, "failed: the plugin's temporary folder cannot be made")
	}
	return dir, nil
}

func procSpawn(ctx context.Context, r *Instance, c Call, params []byte) (any, error) {
	p := r.p
	ps, err := parseProcSpawn(params)
	if err != nil {
		return nil, err
	}
	if ps.command == "" || strings.ContainsAny(ps.command, `/\`) {
		return nil, errorf(protocol.CodeRefused, "refused: %s: a program is named, found on the PATH, never given as a path", logtext.Quote(ps.command))
	}
	words := append([]string{ps.command}, ps.args...)
	if !commandAllowed(p.cfg.Commands, words) {
		return nil, errorf(protocol.CodeRefused, "refused: %s is not an entry of permissions.commands, word for word", logtext.Quote(strings.Join(words, " ")))
	}
	for k, v := range ps.env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return nil, fields.Errorf("env."+k, "not a variable's name and value")
		}
		if why := p.envRefusal(k); why != "" {
			return nil, errorf(protocol.CodeRefused, "refused: env %s: %s", k, why)
		}
		if why := valueRefusal(k, v); why != "" {
			return nil, errorf(protocol.CodeRefused, "refused: env %s: %s", k, why)
		}
	}
	var agent *Agent
	if ps.agent != "" {
		if agent, err = p.h.Agent(ps.agent); err != nil {
			return nil, err
		}
	}
	dir, err := p.procDir(ctx, ps, agent)
	if err != nil {
		return nil, err
	}
	base := MinimalEnv()
	if agent != nil && agent.Env != nil {
		base = withoutSessionBus(agent.Env, p.cfg.Env)
	}
	if why := p.treeRefusal(ps.command, dir, agent); why != "" {
		return nil, errorf(protocol.CodeRefused, "refused: %s", why)
	}
	env := programEnv(base, ps.env)
	if ps.command == "git" {
		env = gitEnv(env, gitTop(dir, agent))
	}
	path, err := lookPath(ps.command, envValue(env, "PATH"))
	if err != nil {
		return nil, errorf(protocol.CodeFailed, "failed: %s is not found on the PATH", ps.command)
	}

	// The plugin knows the program by the id its answer gives: what the
	// program wrote, and its end, wait for that answer (echo has written
	// and ended before it is, on a loaded machine).
	afterAnswer := c.AfterAnswer()
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		return nil, errorf(protocol.CodeFailed, "failed: the instance is ending")
	case len(r.procs)+r.starting >= maxProcs:
		r.mu.Unlock()
		return nil, errorf(protocol.CodeRefused, "refused: %d programs at once at most", maxProcs)
	}
	r.starting++ // holds the place while it starts
	pr := &program{id: r.nextID(), r: r, feedDone: make(chan struct{}), afterAnswer: afterAnswer}
	pr.cond.L = &pr.mu
	r.mu.Unlock()

	err = pr.start(path, words, dir, env)
	r.mu.Lock()
	r.starting--
	if err == nil {
		r.procs[pr.id] = pr
		r.wg.Add(1)
		if r.closed {
			pr.kill() // the instance ended while it started
		}
	}
	r.mu.Unlock()
	if err != nil {
		p.h.Say(slog.LevelWarn, "proc/spawn: the program could not start", slog.String("command", ps.command), slog.String("error", err.Error()))
		return nil, errorf(protocol.CodeFailed, "failed: %s could not start", ps.command)
	}
	p.h.Say(slog.LevelInfo, "proc/spawn", slog.Int64("proc", pr.id), slog.String("command", ps.command),
		slog.Any("args", ps.args), slog.String("dir", dir))
	if err := contain.PIDNamespaceRefused(); err != nil && !p.nsSaid.Swap(true) {
		p.h.Say(slog.LevelWarn, "the kernel refused a pid namespace: programs start without one, and what they start may outlive them by leaving their cgroup",
			slog.String("error", err.Error()))
	}
	go pr.run()
	return procSpawnResult{Proc: pr.id}, nil
}

// start starts the program with three pipes: no shell, its own group.
func (pr *program) start(path string, argv []string, dir string, env []string) error {
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return err
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Dir: dir, Env: env, Stdin: inR, Stdout: outW, Stderr: errW}
	pr.g, err = contain.Start(cmd, true)
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return err
	}
	pr.stdin, pr.stdout, pr.stderr = inW, outR, errR
	return nil
}

// run carries the program's output to the plugin and, after all of it,
// its end; both after the answer that names the program.
func (pr *program) run() {
	r := pr.r
	defer r.wg.Done()
	pr.afterAnswer(r.ctx)
	var readers sync.WaitGroup
	readers.Add(2)
	go pr.pump("stdout", pr.stdout, &readers)
	go pr.pump("stderr", pr.stderr, &readers)
	go pr.feed()

	<-pr.g.Done()
	pr.mu.Lock()
	pr.ended = true
	pr.cond.Broadcast()
	pr.mu.Unlock()
	// The group is dead, so its pipes end, unless a process that left the
	// group holds them: a read that waits past the grace is cut off.
	grace := time.Now().Add(r.p.cfg.StopGrace)
	pr.stdout.SetReadDeadline(grace)
	pr.stderr.SetReadDeadline(grace)
	readers.Wait()
	<-pr.feedDone
	pr.stdout.Close()
	pr.stderr.Close()

	var code *int
	if end := pr.g.Result(); end.Exited {
		code = &end.Code
	}
	r.mu.Lock()
	delete(r.procs, pr.id)
	r.mu.Unlock()
	r.notify("proc/exit", procExitParams{Proc: pr.id, Code: code})
}

// procExitParams are the params of proc/exit: Code is nil when the program
// was killed.
type procExitParams struct {
	Proc int64 `json:"proc"`
	Code *int  `json:"code"`
}

// pump reads one of the program's outputs and sends it, as text cut
// between characters, no faster than the plugin reads it.
func (pr *program) pump(stream string, f *os.File, wg *sync.WaitGroup) {
	defer wg.Done()
	r := pr.r
	tap := r.tap
	buf := make([]byte, procChunk+utf8Carry)
	carry := 0
	for {
		if tap != nil {
			if err := tap.WaitRoom(r.ctx, pr.id, MaxProcOut); err != nil {
				return
			}
		}
		pr.mu.Lock()
		ended := pr.ended
		pr.mu.Unlock()
		if ended {
			f.SetReadDeadline(time.Now().Add(r.p.cfg.StopGrace))
		}
		n, err := f.Read(buf[carry : carry+procChunk])
		data := buf[:carry+n]
		cut := len(data)
		if err == nil {
			cut = utf8Cut(data)
		}
		if cut > 0 {
			if pr.send(stream, data[:cut]) != nil {
				return
			}
		}
		carry = copy(buf, data[cut:])
		if err != nil {
			return
		}
	}
}

// utf8Carry is room for the bytes of a character cut by a read.
const utf8Carry = 4

// send sends one proc/out notification.
func (pr *program) send(stream string, data []byte) error {
	b := make([]byte, 0, len(data)+48)
	b = append(b, `{"proc":`...)
	b = strconv.AppendInt(b, pr.id, 10)
	b = append(b, `,"stream":`...)
	b = strictjson.AppendString(b, stream)
	b = append(b, `,"data":`...)
	b = strictjson.AppendString(b, string(data)) // invalid UTF-8 becomes U+FFFD
	b = append(b, '}')
	conn := pr.r.conn
	send := func() error { return conn.Notify("proc/out", json.RawMessage(b)) }
	if tap := pr.r.tap; tap != nil {
		return tap.SendOut(send, pr.id, b)
	}
	return send()
}

// feed writes what proc/write gave on the program's input.
func (pr *program) feed() {
	defer close(pr.feedDone)
	defer pr.stdin.Close()
	for {
		pr.mu.Lock()
		for len(pr.inBuf) == 0 && !pr.inClose && !pr.ended {
			pr.cond.Wait()
		}
		if len(pr.inBuf) == 0 || pr.ended {
			pr.inDone = true
			pr.inBuf = nil
			pr.mu.Unlock()
			return
		}
		chunk := pr.inBuf[:min(len(pr.inBuf), procChunk)]
		pr.mu.Unlock()
		// The program ending breaks the pipe; the group's death is noticed
		// by run, which wakes this loop.
		_, err := pr.stdin.Write(chunk)
		pr.mu.Lock()
		pr.inBuf = pr.inBuf[len(chunk):]
		if err != nil {
			pr.inDone = true
			pr.inBuf = nil
			pr.mu.Unlock()
			return
		}
		pr.mu.Unlock()
	}
}

// kill ends the program and its group; proc/exit follows, code null.
func (pr *program) kill() { pr.g.Signal(syscall.SIGKILL) }

func (r *Instance) program(id int64) (*program, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pr, ok := r.procs[id]
	if !ok {
		return nil, errorf(protocol.CodeFailed, "failed: no program %d is running", id)
	}
	return pr, nil
}

func procWrite(_ context.Context, r *Instance, _ Call, params []byte) (any, error) {
	var wp struct {
		Proc  int64  `json:"proc" wire:"required"`
		Data  string `json:"data"`
		Close bool   `json:"close"`
	}
	if err := decodeParams(params, &wp); err != nil {
		return nil, err
	}
	id, data, closeIn := wp.Proc, wp.Data, wp.Close
	pr, err := r.program(id)
	if err != nil {
		return nil, err
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	switch {
	case pr.inDone || pr.ended || (pr.inClose && (data != "" || closeIn)):
		return nil, errorf(protocol.CodeFailed, "failed: the input of program %d is closed", id)
	case len(pr.inBuf)+len(data) > maxProcIn:
		return nil, errorf(protocol.CodeFailed, "failed: program %d has 1 MiB of input it has not read", id)
	}
	pr.inBuf = append(pr.inBuf, data...)
	pr.inClose = closeIn
	pr.cond.Broadcast()
	return nil, nil
}

func procKill(_ context.Context, r *Instance, _ Call, params []byte) (any, error) {
	var kp struct {
		Proc int64 `json:"proc" wire:"required"`
	}
	if err := decodeParams(params, &kp); err != nil {
		return nil, err
	}
	id := kp.Proc
	pr, err := r.program(id)
	if err != nil {
		return nil, err
	}
	pr.kill()
	return nil, nil
}
