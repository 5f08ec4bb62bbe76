package hosttool_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"shinken.dev/go/internal/hosttool"
)

// runScript runs one of the command scripts to its end on this machine,
// as the runtime's exec does, and answers its output.
func runScript(ctx context.Context, t *testing.T, s *hosttool.Script, args ...string) string {
	t.Helper()
	argv := s.Argv(args...)
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", s.Tool, args, err, out)
	}
	return string(out)
}

// TestCommandInputBeforeItReads sends a background command input and ends
// that input while its holder is held up right after giving the handle
// (as a loaded machine holds it up): the command still reads the input
// whole, then end of file, and ends, and its holder leaves no helper
// behind. The holder used to open the command's input only after giving
// the handle: input sent before was lost, and an eof that came before the
// command opened its input left the command waiting for a writer that
// never came, running for ever.
func TestCommandInputBeforeItReads(t *testing.T) {
	tmp := t.TempDir()
	// A hang guard: the command ends as soon as it has read its input.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// The holder's standard output is a full pipe: it blocks on writing
	// the handle, at the point where it has given it, until the pipe is
	// drained.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	size, err := unix.FcntlInt(w.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	argv := hosttool.CommandStart.Argv(strconv.Itoa(hosttool.MinChunk), "argv", "sort")
	holder := exec.Command(argv[0], argv[1:]...)
	holder.Env = append(os.Environ(), "TMPDIR="+tmp)
	holder.Stdout = w
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its group: the holder, its helper, the command
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var waitErr error
	ended := make(chan struct{})
	go func() { waitErr = holder.Wait(); close(ended) }()
	defer func() {
		syscall.Kill(-holder.Process.Pid, syscall.SIGKILL)
		<-ended
	}()

	// Wait until the holder is blocked writing the handle to its full
	// standard output: it has made the folder and given the handle.
	blocked := strconv.Itoa(unix.SYS_WRITE) + " 0x1 "
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(holder.Process.Pid) + "/syscall")
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(string(b), blocked) {
			break
		}
		select {
		case <-ended:
			t.Fatalf("the holder ended before giving the handle: %v", waitErr)
		case <-ctx.Done():
			t.Fatalf("the holder never wrote its handle: %s", b)
		case <-time.After(5 * time.Millisecond):
		}
	}
	dirs, err := filepath.Glob(filepath.Join(tmp, "shinken-cmd.*"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("the command's folders: %q %v", dirs, err)
	}
	d := dirs[0]

	// Input and its end, both before the holder goes on: neither may wait
	// for the holder, nor be lost.
	runScript(ctx, t, hosttool.CommandInput, d, "b\na\n")
	runScript(ctx, t, hosttool.CommandControl, d, "eof")

	br := bufio.NewReader(r)
	if _, err := br.Discard(size); err != nil {
		t.Fatal(err)
	}
	if line, err := br.ReadString('\n'); err != nil || line != d+"\n" {
		t.Fatalf("the handle %q %v, want %s", line, err, d)
	}
	select {
	case <-ended:
		if waitErr != nil {
			t.Fatalf("the holder: %v", waitErr)
		}
	case <-ctx.Done():
		t.Fatalf("the command did not end: %s", runScript(context.Background(), t, hosttool.CommandRead, d, "0", "100"))
	}
	if got := runScript(ctx, t, hosttool.CommandRead, d, "0", "100"); got != "exit:0 0 4 4\na\nb\n" {
		t.Errorf("read %q, want its exit and its output sorted", got)
	}
	// Nothing the holder started outlives it (its helper that reads the
	// control words used to).
	for {
		err := syscall.Kill(-holder.Process.Pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("a process of the holder's group still runs: %v", err)
		case <-time.After(5 * time.Millisecond): // polling for the group to empty
		}
	}
}
