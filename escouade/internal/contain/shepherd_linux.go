package contain

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/internal/strictjson"
)

// Where no cgroup can be made, a program that may start others (a command
// plugin, proc/spawn's programs, launch.shared's process) is started by a
// shepherd: the program that links the Host, started again (EngineMain
// runs it, as it runs the engines), which makes itself a child subreaper
// (PR_SET_CHILD_SUBREAPER) and starts the program with its standard
// input, output and error handed straight through, no byte copied. A
// subreaper adopts every orphan among its descendants, so a grandchild
// that left the process group (setsid, setpgid, a double fork) stays
// below the shepherd, where it can be found. When the program ends, when
// the Host asks (the end of the shepherd's lifeline, a pipe only the Host
// writes), or when the Host dies (the lifeline ends, and a parent-death
// signal comes), the shepherd kills every process below it and sweeps what
// it adopts until it has no child left, then tells the Host how the
// program ended and exits: nothing the program started outlives it.
//
// The subreaper is the shepherd's, not the Host's: PR_SET_CHILD_SUBREAPER
// holds for a whole process, and in the Host it would adopt the orphans of
// everything the embedding program starts. The engines of run.js and
// run.wasm plugins start nothing (their code has no way to) and get no
// shepherd.
//
// Where the Host may make a pid namespace, the shepherd is the init of
// one (pidns_linux.go), and its program an ordinary process below it: no
// process below can kill the shepherd (an init gets from its own
// namespace only the signals it handles, SIGKILL never), and whatever
// ends it (the Host, the user from outside, a fault) ends with it every
// process in the namespace, the kernel's doing.
//
// Where it may not, what the shepherd cannot stop is a descendant that
// kills it: the program runs with the user's rights, as the shepherd
// does. The Host then kills the process group, and an escapee of a
// program that did that survives, as it would with no shepherd. A cgroup
// has no such gap, which is why a shepherd is used only where no cgroup
// can be made.

// shepherdEnv is the variable a Host sets, with the engine's runtime
// knobs and nothing else, in a shepherd's environment: EngineMain runs the
// shepherd when it holds shepherdVersion.
const shepherdEnv = "ESCOUADE_SHEPHERD"

// shepherdBootMax bounds the shepherd's first line: the program's path,
// arguments, folder and environment.
const shepherdBootMax = 4 << 20

// shepherdWait bounds how long the Host waits for a shepherd to start its
// program, and to end once asked: a shepherd that does neither is killed
// with its process group.
const shepherdWait = 10 * time.Second

// shepherdBoot is what a shepherd is to start, the line the Host writes
// on its lifeline.
type shepherdBoot struct {
	Path string   `json:"path"`
	Args []string `json:"args"`
	Dir  string   `json:"dir"`
	Env  []string `json:"env"`
	// Files counts the descriptors from 5 on, the shepherd's, that are
	// the program's from 3 on (exec.Cmd's ExtraFiles).
	Files int `json:"files,omitempty"`
	// Mounts asks for a /proc and a cgroup hierarchy of the namespace's
	// own (mounts_linux.go): the shepherd is the init of pid, mount and
	// cgroup namespaces of its own.
	Mounts bool `json:"mounts,omitempty"`
}

// shepherdFilesMax bounds the descriptors a shepherd hands its program.
const shepherdFilesMax = 16

// shepherdFirstFile is the shepherd's first descriptor that is its
// program's: 3 and 4 are its lifeline and its replies.
const shepherdFirstFile = 5

// shepherdReply is a line of the shepherd to the Host: first the
// program's pid, or why it could not start; last how it ended.
type shepherdReply struct {
	Pid    int    `json:"pid,omitempty"`
	Error  string `json:"error,omitempty"`
	Ended  bool   `json:"ended,omitempty"`
	Code   int    `json:"code,omitempty"`   // its exit status, when it exited
	Signal int    `json:"signal,omitempty"` // the signal that killed it, or 0
	// Left counts the processes below the shepherd that it could not
	// kill within shepherdWait (another user's: a setuid program), left
	// to the system when it exits.
	Left int `json:"left,omitempty"`
	// Alive says the program itself is among them.
	Alive bool `json:"alive,omitempty"`
	// Mounts says, with the pid, why the program has the machine's /proc
	// and cgroup hierarchy rather than its own, when it was asked for.
	Mounts string `json:"mounts,omitempty"`
}

// A shepherd is the Host's side of one shepherd process.
type shepherd struct {
	target *exec.Cmd // what the shepherd starts
	mounts bool      // it makes the namespace's own mounts
	life   *os.File  // the Host's end of the lifeline; closing it is a kill
	reply  *os.File  // the Host's end of the shepherd's lines
	lines  *bufio.Reader
	pid    int           // the program's, once started
	pidfd  int           // the program's pidfd, or -1: the Host's signals reach it at once
	booted chan struct{} // closed once boot returned

	lifeOnce sync.Once
}

// shepherded returns the command that starts target under a shepherd, and
// the shepherd; the caller starts the command, then calls boot.
func shepherded(target *exec.Cmd, mounts bool) (*exec.Cmd, *shepherd, error) {
	exe, err := SelfPath()
	if err != nil {
		return nil, nil, err
	}
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	replyR, replyW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		return nil, nil, err
	}
	env := []string{shepherdEnv + "=" + shepherdVersion}
	for _, k := range RuntimeVars {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	attr := syscall.SysProcAttr{}
	if target.SysProcAttr != nil {
		attr = *target.SysProcAttr
	}
	// The Host's death is a sweep, not a kill: SIGKILL would leave the
	// adopted to init.
	attr.Pdeathsig = syscall.SIGUSR1
	cmd := &exec.Cmd{
		Path:        exe,
		Args:        []string{"escouade-shepherd", target.Path},
		Env:         env,
		Dir:         string(os.PathSeparator),
		Stdin:       target.Stdin,
		Stdout:      target.Stdout,
		Stderr:      target.Stderr,
		ExtraFiles:  append([]*os.File{lifeR, replyW}, target.ExtraFiles...),
		SysProcAttr: &attr,
		WaitDelay:   target.WaitDelay,
	}
	return cmd, &shepherd{target: target, mounts: mounts, life: lifeW, reply: replyR, lines: bufio.NewReader(replyR), pidfd: -1, booted: make(chan struct{})}, nil
}

// started closes the shepherd's ends of the pipes, held by the shepherd
// now (or by nobody, when it did not start); the program's own files are
// its caller's.
func (s *shepherd) started(cmd *exec.Cmd) {
	for _, f := range cmd.ExtraFiles[:shepherdFirstFile-3] {
		f.Close()
	}
}

// boot gives the shepherd its program and waits for it to start.
func (s *shepherd) boot() error {
	env := s.target.Env
	if env == nil {
		env = os.Environ()
	}
	if len(s.target.ExtraFiles) > shepherdFilesMax {
		return errors.New("the shepherd: too many files for the program")
	}
	line, err := json.Marshal(shepherdBoot{Path: s.target.Path, Args: s.target.Args, Dir: s.target.Dir, Env: env, Files: len(s.target.ExtraFiles), Mounts: s.mounts})
	if err != nil {
		return err
	}
	if len(line) >= shepherdBootMax {
		return errors.New("the program's arguments and environment are too long")
	}
	deadline := time.Now().Add(shepherdWait)
	s.life.SetWriteDeadline(deadline)
	if _, err := s.life.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("the shepherd: %w", err)
	}
	s.reply.SetReadDeadline(deadline)
	r, err := s.next()
	if err != nil {
		return fmt.Errorf("the shepherd: %w", err)
	}
	if r.Error != "" {
		return errors.New(r.Error)
	}
	if r.Pid <= 0 {
		return errors.New("the shepherd: no pid")
	}
	s.pid = r.Pid
	if s.mounts && r.Mounts != "" {
		refusePrivateMounts(errors.New(r.Mounts))
	}
	if fd, err := unix.PidfdOpen(r.Pid, 0); err == nil {
		s.pidfd = fd
	}
	return nil
}

// signal sends sig to the program itself, at once, where it has a pidfd
// (the shepherd hands it to the program's group too, later).
func (s *shepherd) signal(sig syscall.Signal) {
	if s.pidfd >= 0 {
		unix.PidfdSendSignal(s.pidfd, sig, nil, 0)
	}
}

// next reads a line of the shepherd.
func (s *shepherd) next() (*shepherdReply, error) {
	line, err := s.lines.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	return parseShepherdReply(line)
}

// parseShepherdReply decodes a line of a shepherd, strictly, and checks
// that what it says can be so.
func parseShepherdReply(line []byte) (*shepherdReply, error) {
	var r shepherdReply
	if err := strictjson.Unmarshal(line, &r); err != nil {
		return nil, fmt.Errorf("a line of the shepherd: %w", err)
	}
	if r.Pid < 0 || r.Code < 0 || r.Code > 255 || r.Signal < 0 || r.Signal > 64 || r.Left < 0 {
		return nil, errors.New("a line of the shepherd: out of range")
	}
	return &r, nil
}

// readShepherdBoot reads the shepherd's first line, strictly: a program
// to start, with its arguments.
func readShepherdBoot(r *bufio.Reader) (*shepherdBoot, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return nil, fmt.Errorf("the shepherd's first line: %w", err)
	}
	var boot shepherdBoot
	if err := strictjson.Unmarshal(line, &boot); err != nil {
		return nil, fmt.Errorf("the shepherd's first line: %w", err)
	}
	if boot.Path == "" || len(boot.Args) == 0 {
		return nil, errors.New("the shepherd's first line: no program")
	}
	if boot.Files < 0 || boot.Files > shepherdFilesMax {
		return nil, errors.New("the shepherd's first line: files out of range")
	}
	return &boot, nil
}

// kill asks the shepherd to kill everything below it now.
func (s *shepherd) kill() { s.lifeOnce.Do(func() { s.life.Close() }) }

// ended reads, once the shepherd is dead, how the program ended, and
// releases the pipes. It returns nil when the shepherd did not say (it
// was killed).
func (s *shepherd) ended() *shepherdReply {
	s.kill()
	s.reply.SetReadDeadline(time.Now().Add(shepherdWait))
	var end *shepherdReply
	for {
		r, err := s.next()
		if err != nil {
			break
		}
		if r.Ended {
			end = r
		}
	}
	s.reply.Close()
	if s.pidfd >= 0 {
		unix.Close(s.pidfd)
		s.pidfd = -1
	}
	return end
}

// ending is how a shepherd's program ended, as its reply says.
func (r *shepherdReply) ending() Ending {
	end := Ending{Exited: true, Code: r.Code, How: "exit status " + strconv.Itoa(r.Code)}
	if r.Signal != 0 {
		end = Ending{How: "signal: " + syscall.Signal(r.Signal).String()}
	}
	if r.Alive {
		end = Ending{How: "it could not be killed (another user's process: a setuid program)"}
	}
	if r.Left > 0 {
		end.How += fmt.Sprintf("; %d processes it started could not be killed (another user's), and outlive it", r.Left)
	}
	return end
}

// RunShepherd is the life of a shepherd's process; it returns its exit
// status.
func RunShepherd() int {
	os.Unsetenv(shepherdEnv)
	// Not dumpable: no process of the user's without CAP_SYS_PTRACE (the
	// program, what it starts, another uid in its user namespace) may
	// ptrace the shepherd or read its memory, environment or descriptors
	// in /proc. Only its program's exec resets its own flag.
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	// The program's parent-death signal fires when the thread that started
	// it ends: this one, locked for the process's whole life.
	runtime.LockOSThread()
	// Descriptors 3 and 4 are the shepherd's alone, never the program's.
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	life := os.NewFile(3, "escouade-shepherd-life")
	reply := os.NewFile(4, "escouade-shepherd-reply")
	say := func(r shepherdReply) {
		b, _ := json.Marshal(r)
		reply.Write(append(b, '\n'))
	}
	fail := func(err error) int {
		say(shepherdReply{Error: err.Error()})
		return exitBoot
	}

	// SIGTERM, sent to the process group by Stop, is the program's to
	// hear; the shepherd outlives it to sweep. SIGUSR1 is the Host's death.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("the shepherd cannot be a subreaper: %w", err))
	}
	lines := bufio.NewReaderSize(life, shepherdBootMax)
	boot, err := readShepherdBoot(lines)
	if err != nil {
		return fail(err)
	}
	proc, refused := "/proc", ""
	if boot.Mounts {
		fd, why, err := makePrivateMounts()
		if err != nil {
			return fail(err)
		}
		if why != nil {
			refused = why.Error()
		}
		if fd >= 0 {
			proc = "/proc/self/fd/" + strconv.Itoa(fd) // closed once the pid is known
		}
	}
	dropAmbient() // from the thread that starts the program
	files := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	for i := range boot.Files {
		// Handed to the program at 3 on, and only there.
		syscall.CloseOnExec(shepherdFirstFile + i)
		files = append(files, os.NewFile(uintptr(shepherdFirstFile+i), "escouade-shepherd-file"))
	}
	program, err := os.StartProcess(boot.Path, boot.Args, &os.ProcAttr{
		Dir:   boot.Dir,
		Env:   boot.Env,
		Files: files,
		// A session of its own, like every program the Host starts: no
		// controlling terminal to type into (TIOCSTI).
		Sys: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	})
	for _, f := range files[3:] {
		f.Close()
	}
	if err != nil {
		return fail(err)
	}
	target := program.Pid // in the shepherd's pid namespace
	program.Release()     // reaped below, with the adopted
	// The Host names the program by its pid in /proc, which is the
	// Host's: the same as target, unless the shepherd is the init of a
	// pid namespace of its own.
	init := os.Getpid() == 1
	hostPid := target
	if init {
		if hostPid = hostPIDOfChild(proc, target); hostPid == 0 {
			syscall.Kill(target, syscall.SIGKILL)
			return fail(errors.New("the shepherd cannot see its program in /proc"))
		}
	}
	if proc != "/proc" {
		// The machine's /proc, held for hostPIDOfChild: a root program
		// would find it in /proc/1/fd.
		fd, _ := strconv.Atoi(proc[len("/proc/self/fd/"):])
		unix.Close(fd)
	}
	say(shepherdReply{Pid: hostPid, Mounts: refused})
	// The program's input and output are its own: the shepherd lets go of
	// them (its standard error stays, for the Go runtime's last words).
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		unix.Dup3(int(null.Fd()), 0, 0)
		unix.Dup3(int(null.Fd()), 1, 0)
		null.Close()
	}

	// Reap every child, the program and the adopted, until none is left.
	programEnded := make(chan syscall.WaitStatus, 1)
	noChild := make(chan struct{})
	go func() {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			switch {
			case errors.Is(err, syscall.EINTR):
			case err != nil: // ECHILD: nothing below is left
				close(noChild)
				return
			case pid == target:
				programEnded <- ws
			}
		}
	}()
	// The lifeline ends when the Host asks for the kill, or dies.
	lifeEnded := make(chan struct{})
	go func() {
		io.Copy(io.Discard, lines)
		close(lifeEnded)
	}()

	var ws syscall.WaitStatus
	reaped, ended := false, false
	for !ended {
		select {
		case ws = <-programEnded:
			reaped, ended = true, true
		case <-lifeEnded:
			ended = true
		case sig := <-sigs:
			ended = sig == syscall.SIGUSR1
			if !ended {
				// Stop's SIGTERM to the shepherd's group is the program's:
				// its session, so its group, is its own.
				syscall.Kill(-target, sig.(syscall.Signal))
			}
		}
	}
	// Within half the Host's wait, so that the shepherd says what is left
	// before the Host gives up on it.
	left := sweep(noChild, time.Now().Add(shepherdWait/2), init)
	if !reaped {
		select {
		case ws = <-programEnded: // killed by the sweep
			reaped = true
		default:
		}
	}
	end := shepherdReply{Ended: true, Code: ws.ExitStatus(), Left: left}
	switch {
	case !reaped && init:
		// What the sweep could not kill (another user's), the kernel
		// kills as the namespace's init exits, now.
		end = shepherdReply{Ended: true, Signal: int(syscall.SIGKILL)}
	case !reaped:
		end = shepherdReply{Ended: true, Left: left, Alive: true}
	case ws.Signaled():
		end = shepherdReply{Ended: true, Signal: int(ws.Signal()), Left: left}
	}
	say(end)
	return 0
}

// sweep kills every process below the shepherd until it has no child left
// (noChild closed): a subreaper without a child has no descendant, since
// each orphan below it is adopted by it. A fork that races a pass is
// caught by the next one. Past deadline it gives up on what it cannot
// kill (another user's process: a setuid program), and returns how many
// processes are left below. A shepherd that is the init of its pid
// namespace (init) kills all of the namespace at once (kill -1), and
// leaves nothing: what it could not kill, the kernel kills as it exits.
func sweep(noChild <-chan struct{}, deadline time.Time, init bool) (left int) {
	pause := time.Millisecond
	for {
		select {
		case <-noChild:
			return 0
		default:
		}
		if init {
			if time.Now().After(deadline) {
				return 0
			}
			syscall.Kill(-1, syscall.SIGKILL)
		} else {
			below := descendants(os.Getpid())
			if time.Now().After(deadline) {
				return len(below)
			}
			for _, pid := range below {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		t := time.NewTimer(pause)
		select {
		case <-noChild:
			t.Stop()
			return 0
		case <-t.C: // the killed are on their way out, or a fork raced us
		}
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// descendants returns the processes below pid, or none when /proc
// cannot be read.
func descendants(pid int) []int {
	below, _ := procfs.Descendants(pid)
	return below
}
